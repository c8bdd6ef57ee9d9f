"""The live queue for administrators: the /ws/queue websocket and GET /api/v0/admin/queue."""

from __future__ import annotations

import json
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest
from django.test import Client
from websockets.exceptions import InvalidStatus
from websockets.sync.client import ClientConnection, connect

from tests.support.drive import (
    chat,
    configure,
    engine_stats,
    key_for,
    labels_seen,
    wait_until,
    waiting,
)
from tests.support.errors import NOT_ADMIN, NOT_SIGNED_IN
from tests.support.live import add_backend

QUEUE = "/api/v0/admin/queue"
EMPTY = {"low": 0, "medium": 0, "high": 0}


@pytest.fixture
def engine(make_sim: Any) -> Any:
    return make_sim(slots=1, tokens=2, token_delay=0)


@pytest.fixture
def solo(gateway: Any, engine: Any) -> Any:
    add_backend("solo", engine.url, max_inflight=1)
    return gateway


def open_socket(gateway: Any, client: Client | None = None) -> ClientConnection:
    """Connect to /ws/queue with the client's session cookie, as the browser page does."""
    headers = {}
    if client is not None:
        headers["Cookie"] = f"sessionid={client.cookies['sessionid'].value}"
    return connect(
        gateway.url.replace("http://", "ws://") + "/ws/queue",
        additional_headers=headers,
        origin=gateway.url,  # the page's own origin, as a browser sends it
        open_timeout=5,
    )


def next_state(ws: ClientConnection, timeout: float = 5.0) -> dict[str, Any]:
    return json.loads(ws.recv(timeout=timeout))


def state_where(ws: ClientConnection, predicate: Any, what: str) -> dict[str, Any]:
    """Read pushed states until one matches; the page refreshes once a second at most."""
    for _ in range(10):
        state = next_state(ws)
        if predicate(state):
            return state
    raise AssertionError(f"no pushed state showed {what}")


def test_an_anonymous_websocket_is_refused_before_it_is_accepted(solo: Any) -> None:
    with pytest.raises(InvalidStatus) as refused:
        open_socket(solo)
    assert refused.value.response.status_code == 403


def test_a_non_administrators_websocket_is_refused(
    solo: Any, alice: Any, login: Any, carol: Any
) -> None:
    with pytest.raises(InvalidStatus) as refused:
        open_socket(solo, login(alice))
    assert refused.value.response.status_code == 403


def test_a_forged_session_cookie_is_refused(solo: Any, carol: Any) -> None:
    forged = Client()
    forged.cookies["sessionid"] = "not-a-session-key"
    with pytest.raises(InvalidStatus) as refused:
        open_socket(solo, forged)
    assert refused.value.response.status_code == 403


def test_an_administrator_gets_the_state_at_once_and_an_update_when_a_waiter_comes_and_goes(
    solo: Any, engine: Any, carol: Any, login: Any
) -> None:
    key = key_for("alice")
    with open_socket(solo, login(carol)) as ws:
        assert next_state(ws, timeout=2) == {
            "priority_enabled": False,
            "scheduler": "strict",
            "lines": [],
            "backends": [
                {
                    "name": "solo",
                    "inflight": 0,
                    "max_inflight": 1,
                    "healthy": True,
                    "enabled": True,
                    "capacity": None,
                }
            ],
            "depth": EMPTY,
            "waiters": [],
            "recent": [],
        }
        with ThreadPoolExecutor(max_workers=2) as pool:
            configure(engine, slots=0)
            blocker = pool.submit(chat, solo, key, "blocker")
            wait_until(lambda: engine_stats(engine)["waiting"] == 1, "the blocker holds the slot")
            queued = pool.submit(chat, solo, key, "in line")
            wait_until(lambda: waiting(solo) == 1, "a request waits")

            arrived = state_where(ws, lambda s: s["depth"]["medium"] == 1, "the waiter")
            assert arrived["backends"][0]["inflight"] == 1
            [waiter] = arrived["waiters"]
            assert waiter["class"] == "medium"
            assert (waiter["model"], waiter["user"], waiter["token"]) == (
                "sim-small",
                "alice",
                "alice-token",
            )
            assert waiter["age_secs"] >= 0
            assert waiter["estimated_wait_secs"] is None  # the backend took one: no pace yet

            configure(engine, slots=1)
            assert blocker.result().status_code == 200
            assert queued.result().status_code == 200
        left = state_where(ws, lambda s: s["depth"]["medium"] == 0, "the waiter leaving")
        assert left["waiters"] == []
        assert left["depth"] == EMPTY
        # Recent dispatches, newest first: the waiter, then the blocker that went at once.
        recent = left
        assert [(d["user"], d["model"], d["backend"], d["class"]) for d in recent["recent"]] == [
            ("alice", "sim-small", "solo", "medium"),
            ("alice", "sim-small", "solo", "medium"),
        ]
        assert recent["recent"][0]["waited_secs"] > 0
        assert recent["recent"][1]["waited_secs"] == 0


def test_the_admin_queue_api_shows_the_same_picture_as_the_websocket(
    solo: Any, engine: Any, carol: Any, login: Any
) -> None:
    admin = login(carol)
    key = key_for("alice")
    with ThreadPoolExecutor(max_workers=2) as pool:
        configure(engine, slots=0)
        blocker = pool.submit(chat, solo, key, "blocker")
        wait_until(lambda: engine_stats(engine)["waiting"] == 1, "the blocker holds the slot")
        queued = pool.submit(chat, solo, key, "in line")
        wait_until(lambda: waiting(solo) == 1, "a request waits")

        response = admin.get(QUEUE)
        assert response.status_code == 200
        picture = response.json()
        with open_socket(solo, admin) as ws:
            pushed = next_state(ws, timeout=2)
        for state in (picture, pushed):
            for waiter in state["waiters"]:
                waiter.pop("age_secs")
                waiter.pop("estimated_wait_secs")  # the pace is measured up to now
        assert picture == pushed
        assert picture["depth"] == {"low": 0, "medium": 1, "high": 0}
        assert picture["backends"] == [
            {
                "name": "solo",
                "inflight": 1,
                "max_inflight": 1,
                "healthy": True,
                "enabled": True,
                "capacity": None,
            }
        ]
        assert [(w["class"], w["user"], w["token"]) for w in picture["waiters"]] == [
            ("medium", "alice", "alice-token")
        ]

        configure(engine, slots=1)
        assert blocker.result().status_code == 200
        assert queued.result().status_code == 200


def test_the_queue_lists_waiters_in_dispatch_order_with_the_backends_they_wait_for(
    solo: Any, engine: Any, carol: Any, login: Any
) -> None:
    from aiplane.catalog import settings_update

    settings_update(values={"gateway.priority_enabled": True})
    admin = login(carol)
    blocker_key, bob_key = key_for("alice"), key_for("bob", "low")
    dave_key = key_for("dave", "high")
    with ThreadPoolExecutor(max_workers=3) as pool:
        configure(engine, slots=0)
        blocker = pool.submit(chat, solo, blocker_key, "blocker")
        wait_until(lambda: engine_stats(engine)["waiting"] == 1, "the blocker holds the slot")
        low = pool.submit(chat, solo, bob_key, "low, first")
        wait_until(lambda: waiting(solo) == 1, "bob's request waits")
        high = pool.submit(chat, solo, dave_key, "high, later")
        wait_until(lambda: waiting(solo) == 2, "dave's request waits too")

        picture = admin.get(QUEUE).json()
        # Arrival order is bob then dave; the slot goes to dave first, and the page says so.
        assert [(w["position"], w["user"], w["class"], w["line"]) for w in picture["waiters"]] == [
            (1, "dave", "high", "solo"),
            (2, "bob", "low", "solo"),
        ]
        assert all(w["waits_for"] == ["solo"] and w["score"] is None for w in picture["waiters"])
        assert picture["lines"] == [
            {"id": "solo", "backends": ["solo"], "models": ["sim-small"], "waiting": 2}
        ]
        assert picture["scheduler"] == "strict"

        configure(engine, slots=1)
        assert [f.result().status_code for f in (blocker, low, high)] == [200, 200, 200]
    assert labels_seen(engine)[1:] == ["high, later", "low, first"]


@pytest.mark.django_db
def test_the_admin_queue_api_is_for_administrators_only(
    alice_client: Client, anonymous: Client, carol: Any
) -> None:
    forbidden = alice_client.get(QUEUE)
    assert (forbidden.status_code, forbidden.json()) == (403, NOT_ADMIN)
    signed_out = anonymous.get(QUEUE)
    assert (signed_out.status_code, signed_out.json()) == (401, NOT_SIGNED_IN)
