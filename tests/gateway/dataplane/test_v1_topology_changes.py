"""Topology changes reach requests that are already waiting: revoked access, added backends.

A *gated* engine (SimConfig slots=0) holds whatever reaches it until the test opens the gate, so
"the only slot is busy" is a state the test controls; the change is made through the same
services the admin API uses, with no restart in between.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest

from gateway.admin import services
from tests.support.drive import (
    chat,
    configure,
    engine_stats,
    hold_the_slot,
    inflight,
    labels_seen,
    wait_idle,
    wait_until,
    waiting,
)
from tests.support.factories import make_group, make_token_with_secret, make_user
from tests.support.live import add_backend


@pytest.fixture
def alice_key(transactional_db: None) -> str:
    """alice, a member of 'research'; 'ops' exists too, with nobody in it."""
    alice = make_user("alice")
    make_group("research", members=[alice])
    make_group("ops")
    return make_token_with_secret(alice, name="laptop")[1]


@pytest.fixture
def gated(make_sim: Any, alice_key: str) -> Any:
    """A one-slot backend in a pool only 'research' may use, in front of an engine that holds."""
    engine = make_sim(slots=0, tokens=3, token_delay=0.005)
    add_backend(
        "solo", engine.url, pool="research-only", allowed_groups=["research"], max_inflight=1
    )
    return engine


def test_a_request_waiting_when_its_access_is_revoked_is_answered_at_once(
    gateway, gated, alice_key
):
    from gateway.admin.services import pool_save

    with ThreadPoolExecutor(max_workers=2) as pool:
        blocker = hold_the_slot(pool, gateway, gated, alice_key)
        waiter = pool.submit(chat, gateway, alice_key, "waiter")
        wait_until(lambda: waiting(gateway) == 1, "the second request waits")

        pool_save(data={"name": "research-only", "allowed_groups": ["ops"]}, known_groups={"ops"})

        # Answered while the slot is still held: neither a release nor its budget ended the wait.
        wait_until(waiter.done, "the waiting request is answered")
        assert inflight(gateway, "solo") == 1
        assert engine_stats(gated)["waiting"] == 1
        r = waiter.result()
        assert r.status_code == 503
        assert r.headers["retry-after"] == "5"
        assert r.json() == {
            "error": {
                "message": "The model 'sim-small' is no longer available to you.",
                "type": "api_error",
                "param": None,
                "code": "no_backend_available",
            }
        }
        assert waiting(gateway) == 0

        again = chat(gateway, alice_key, "again")
        assert again.status_code == 403
        assert again.json()["error"]["code"] == "model_not_allowed"

        # What was already running keeps running.
        configure(gated, slots=1)
        assert blocker.result().status_code == 200
    wait_idle(gateway, "solo")
    assert labels_seen(gated) == ["blocker"]


def test_a_request_waiting_on_a_busy_backend_is_served_by_one_newly_added_to_its_pool(
    gateway, gated, make_sim, alice_key
):
    spare = make_sim(tokens=1, token_delay=0)
    with ThreadPoolExecutor(max_workers=2) as pool:
        blocker = hold_the_slot(pool, gateway, gated, alice_key)
        waiter = pool.submit(chat, gateway, alice_key, "waiter")
        wait_until(lambda: waiting(gateway) == 1, "the second request waits")

        add_backend("spare", spare.url, pool="research-only", allowed_groups=["research"])

        r = waiter.result()
        assert r.status_code == 200, r.text
        assert r.headers["x-aiplane-backend"] == "spare"
        # The blocker still holds the first backend: only the new one can have served it.
        assert inflight(gateway, "solo") == 1
        configure(gated, slots=1)
        assert blocker.result().status_code == 200
    wait_idle(gateway, "solo", "spare")
    assert labels_seen(gated) == ["blocker"]
    assert labels_seen(spare) == ["waiter"]


def test_a_retry_whose_model_was_removed_meanwhile_is_not_sent_anywhere(alice_key, gateway):
    import threading

    from tests.support.drive import ScriptedEngine, json_answer

    go = threading.Event()
    overloaded = json_answer(503, {"error": {"message": "busy", "code": 503}})

    def answer(request: bytes) -> list[Any]:
        go.wait(10)  # the first replica holds its answer until the pool is gone
        return [overloaded]

    first, second = ScriptedEngine(answer), ScriptedEngine([overloaded])
    try:
        add_backend("a-first", first.url)
        add_backend("b-second", second.url)
        with ThreadPoolExecutor(max_workers=1) as pool:
            call = pool.submit(chat, gateway, alice_key)
            wait_until(lambda: len(first.requests) == 1, "the first replica has the request")
            services.pool_delete(name="default")
            go.set()
            r = call.result()
        assert r.status_code == 503, r.text
        assert r.json()["error"]["code"] == "no_backend_available"
        assert second.requests == []  # the removed route's other replica never got it
    finally:
        first.close()
        second.close()


def test_a_request_waiting_while_its_group_is_renamed_keeps_waiting_and_is_served(
    gateway, gated, alice_key
):
    from accounts.models import GatewayGroup
    from accounts.services import group_rename

    with ThreadPoolExecutor(max_workers=2) as pool:
        blocker = hold_the_slot(pool, gateway, gated, alice_key)
        waiter = pool.submit(chat, gateway, alice_key, "waiter")
        wait_until(lambda: waiting(gateway) == 1, "the second request waits")

        group_rename(group=GatewayGroup.objects.get(name="research"), name="science")
        # The renamed group is live (the pool now names it so) before the slot frees.
        wait_until(
            lambda: gateway.runtime.snapshot.pools["research-only"].allowed_groups == {"science"},
            "the rename is applied",
        )
        assert waiting(gateway) == 1
        assert not waiter.done()

        configure(gated, slots=2)
        assert blocker.result().status_code == 200
        r = waiter.result()
        assert r.status_code == 200, r.text
        assert r.headers["x-aiplane-backend"] == "solo"
    wait_idle(gateway, "solo")
    assert labels_seen(gated) == ["blocker", "waiter"]
    assert chat(gateway, alice_key, "after").status_code == 200
