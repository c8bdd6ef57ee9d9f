"""The live queue's right to watch is held, not granted once: a socket whose session stops being
an administrator's (demoted, signed out, deactivated, its password changed) is closed with a
policy code at once, while GET /api/v0/admin/queue refuses the same session; one that keeps the
right keeps receiving."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.contrib.sessions.models import Session
from django.test import Client
from websockets.exceptions import ConnectionClosed
from websockets.sync.client import ClientConnection

from accounts.models import GatewayGroup
from tests.gateway.admin.test_live_queue import QUEUE, next_state, open_socket, state_where
from tests.gateway.admin.test_shared_views import shared_gateway  # noqa: F401 - a fixture
from tests.support.drive import chat, configure, engine_stats, key_for, wait_until, waiting
from tests.support.factories import make_group, make_user
from tests.support.live import LiveGateway, add_backend
from tests.support.shared_queue import announcements

LOST_ADMIN, SIGNED_OUT = 4403, 4401


@pytest.fixture
def engine(make_sim: Any) -> Any:
    return make_sim(slots=1, tokens=2, token_delay=0)


@pytest.fixture
def solo(gateway: LiveGateway, engine: Any) -> LiveGateway:
    add_backend("solo", engine.url, max_inflight=1)
    return gateway


@pytest.fixture
def dave(administrators: Any) -> Any:
    """A second administrator, who changes carol's rights."""
    return make_user("dave", groups=[administrators])


@pytest.fixture
def only_on_change(monkeypatch: pytest.MonkeyPatch) -> None:
    """No periodic check within the test: only the change itself can close the socket."""
    from gateway.admin import consumers

    monkeypatch.setattr(consumers, "RECHECK_SECS", 3600.0, raising=False)


@pytest.fixture
def often(monkeypatch: pytest.MonkeyPatch) -> None:
    """The periodic check several times a second (the test waits for what it finds)."""
    from gateway.admin import consumers

    monkeypatch.setattr(consumers, "RECHECK_SECS", 0.1, raising=False)


@pytest.fixture
def checks(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[str | None]]:
    """The session keys the sockets' checks read, in order."""
    from accounts.standing import session_standing
    from gateway.admin import consumers

    seen: list[str | None] = []

    def counted(session_key: str | None) -> Any:
        seen.append(session_key)
        return session_standing(session_key)

    monkeypatch.setattr(consumers, "session_standing", counted, raising=False)
    yield seen


def closed_with(ws: ClientConnection, within: float = 30.0) -> int | None:
    """Read until the server closes the socket; its close code (`within`: a bound for a hang)."""
    deadline = time.monotonic() + within
    try:
        while (left := deadline - time.monotonic()) > 0:
            ws.recv(timeout=left)
    except ConnectionClosed as closed:
        return closed.rcvd.code if closed.rcvd is not None else None
    except TimeoutError:
        pass
    raise AssertionError("the socket stayed open")


def remove_from_admins_through_the_api(carol: Any, dave: Any, login: Callable[..., Client]) -> None:
    response = login(dave).put(
        "/api/v0/admin/groups",
        {"name": "administrators", "members": ["dave"]},
        content_type="application/json",
    )
    assert response.status_code == 200, response.content


def turn_the_admin_flag_off(carol: Any, dave: Any, login: Callable[..., Client]) -> None:
    group = GatewayGroup.objects.get(name="administrators")
    group.is_admin = False
    group.save()


def remove_from_admins_in_the_orm(carol: Any, dave: Any, login: Callable[..., Client]) -> None:
    GatewayGroup.objects.get(name="administrators").members.remove(carol)


@pytest.mark.parametrize(
    "demote",
    [remove_from_admins_through_the_api, remove_from_admins_in_the_orm, turn_the_admin_flag_off],
)
def test_a_demoted_administrators_socket_is_closed_with_4403_as_the_api_refuses_them(
    solo: LiveGateway,
    carol: Any,
    dave: Any,
    login: Callable[..., Client],
    only_on_change: None,
    demote: Callable[..., None],
) -> None:
    admin = login(carol)
    with open_socket(solo, admin) as ws:
        next_state(ws)
        demote(carol, dave, login)
        assert closed_with(ws) == LOST_ADMIN
    assert admin.get(QUEUE).status_code == 403


def test_a_superuser_made_an_ordinary_user_has_the_socket_closed_with_4403(
    solo: LiveGateway, login: Callable[..., Client], only_on_change: None
) -> None:
    erin = make_user("erin", is_superuser=True)
    session = login(erin)
    with open_socket(solo, session) as ws:
        next_state(ws)
        erin.is_superuser = False
        erin.save()
        assert closed_with(ws) == LOST_ADMIN
    assert session.get(QUEUE).status_code == 403


def test_signing_out_closes_the_socket_with_4401(
    solo: LiveGateway, carol: Any, login: Callable[..., Client], only_on_change: None
) -> None:
    admin = login(carol)
    with open_socket(solo, admin) as ws:
        next_state(ws)
        assert admin.post("/api/v0/session/logout").status_code in (200, 204)
        assert closed_with(ws) == SIGNED_OUT


def test_a_flushed_session_closes_the_socket_with_4401(
    solo: LiveGateway, carol: Any, login: Callable[..., Client], only_on_change: None
) -> None:
    admin = login(carol)
    with open_socket(solo, admin) as ws:
        next_state(ws)
        admin.session.flush()  # the session store's own deletion, as logout() does it
        assert closed_with(ws) == SIGNED_OUT


def test_deactivating_the_user_closes_the_socket_with_4401_as_the_api_answers_401(
    solo: LiveGateway, carol: Any, login: Callable[..., Client], only_on_change: None
) -> None:
    admin = login(carol)
    with open_socket(solo, admin) as ws:
        next_state(ws)
        carol.is_active = False
        carol.save()
        assert closed_with(ws) == SIGNED_OUT
    assert admin.get(QUEUE).status_code == 401


def test_a_password_changed_elsewhere_closes_the_sockets_of_the_old_session_with_4401(
    solo: LiveGateway, carol: Any, login: Callable[..., Client], only_on_change: None
) -> None:
    admin = login(carol)
    with open_socket(solo, admin) as ws:
        next_state(ws)
        carol.set_password("a quite different passphrase")
        carol.save()  # the session's auth hash no longer matches
        assert closed_with(ws) == SIGNED_OUT
    assert admin.get(QUEUE).status_code == 401


def test_a_demotion_made_behind_the_orms_back_is_found_by_the_periodic_check(
    solo: LiveGateway, carol: Any, login: Callable[..., Client], often: None
) -> None:
    admin = login(carol)
    with open_socket(solo, admin) as ws:
        next_state(ws)
        GatewayGroup.objects.filter(name="administrators").update(is_admin=False)  # no signal
        assert closed_with(ws) == LOST_ADMIN


def test_a_session_that_expires_is_found_by_the_periodic_check(
    solo: LiveGateway, carol: Any, login: Callable[..., Client], often: None
) -> None:
    from django.utils import timezone

    admin = login(carol)
    with open_socket(solo, admin) as ws:
        next_state(ws)
        key = admin.cookies["sessionid"].value
        Session.objects.filter(session_key=key).update(expire_date=timezone.now())
        assert closed_with(ws) == SIGNED_OUT


def test_a_socket_that_keeps_its_right_is_checked_again_and_keeps_receiving(
    solo: LiveGateway,
    engine: Any,
    carol: Any,
    alice: Any,
    login: Callable[..., Client],
    only_on_change: None,
    checks: list[str | None],
) -> None:
    admin, other = login(carol), login(alice)
    key = admin.cookies["sessionid"].value
    with open_socket(solo, admin) as ws:
        next_state(ws)
        # Changes that leave carol an administrator: each one is checked, none closes her socket.
        make_group("readers", members=[alice])
        other.post("/api/v0/session/logout")
        wait_until(lambda: checks.count(key) >= 2, "the socket's right is checked again")
        queue_key = key_for("bob")
        with ThreadPoolExecutor(max_workers=2) as pool:
            configure(engine, slots=0)
            blocker = pool.submit(chat, solo, queue_key, "blocker")
            wait_until(lambda: engine_stats(engine)["waiting"] == 1, "the blocker holds the slot")
            queued = pool.submit(chat, solo, queue_key, "in line")
            wait_until(lambda: waiting(solo) == 1, "a request waits")
            arrived = state_where(ws, lambda s: s["depth"]["medium"] == 1, "the waiter")
            assert [w["user"] for w in arrived["waiters"]] == ["bob"]
            configure(engine, slots=1)
            assert blocker.result().status_code == 200
            assert queued.result().status_code == 200
    assert admin.get(QUEUE).status_code == 200


def test_a_deleted_user_cannot_reconnect(
    solo: LiveGateway, carol: Any, login: Callable[..., Client], only_on_change: None
) -> None:
    from websockets.exceptions import InvalidStatus

    admin = login(carol)
    with open_socket(solo, admin) as ws:
        next_state(ws)
        User.objects.filter(pk=carol.pk).delete()
        assert closed_with(ws) == SIGNED_OUT
    with pytest.raises(InvalidStatus) as refused:
        open_socket(solo, admin)
    assert refused.value.response.status_code == 403


# ----- across processes: the change is made by another gateway process on the same Redis ------


def _announce_from_another_process(server: Any, kind: str) -> None:
    import json

    from aiplane import changes
    from gateway.core.redis_clients import connect

    connect(server.url).publish(
        changes.channel(), json.dumps({"from": "another process", "kind": kind})
    )


def test_an_identity_change_another_process_announces_closes_the_socket_here(
    shared_gateway: LiveGateway,  # noqa: F811
    redis_server: Any,
    carol: Any,
    login: Callable[..., Client],
    only_on_change: None,
) -> None:
    link = shared_gateway.runtime.link
    wait_until(link.listening.is_set, "the gateway listens to the changes channel")
    admin = login(carol)
    with open_socket(shared_gateway, admin) as ws:
        next_state(ws)
        # What the other process committed (its own signal ran there, not here).
        GatewayGroup.objects.filter(name="administrators").update(is_admin=False)
        _announce_from_another_process(redis_server, "callers")
        assert closed_with(ws) == LOST_ADMIN


def test_a_sign_out_in_another_process_closes_the_socket_here(
    shared_gateway: LiveGateway,  # noqa: F811
    redis_server: Any,
    carol: Any,
    login: Callable[..., Client],
    only_on_change: None,
) -> None:
    link = shared_gateway.runtime.link
    wait_until(link.listening.is_set, "the gateway listens to the changes channel")
    admin = login(carol)
    with open_socket(shared_gateway, admin) as ws:
        next_state(ws)
        sessions = Session.objects.filter(session_key=admin.cookies["sessionid"].value)
        sessions._raw_delete(sessions.db)  # deleted there: no signal here
        _announce_from_another_process(redis_server, "sessions")
        assert closed_with(ws) == SIGNED_OUT


def test_signing_out_announces_that_a_session_ended_to_the_other_processes(
    transactional_db: None,
    redis_server: Any,
    redis_prefix: str,
    settings: Any,
    carol: Any,
    login: Callable[..., Client],
) -> None:
    settings.AIPLANE_REDIS_URL = redis_server.url
    settings.AIPLANE_REDIS_PREFIX = redis_prefix
    admin = login(carol)
    kinds = announcements(redis_server, lambda: admin.post("/api/v0/session/logout"))
    assert kinds == ["sessions"]
