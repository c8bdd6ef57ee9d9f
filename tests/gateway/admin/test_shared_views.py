"""One process of a shared group: its live queue and metrics show every process, it applies
others' changes, and without AIPLANE_REDIS_URL nothing of it exists."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
import redis

from gateway.admission.queue import AdmissionQueue
from gateway.admission.shared.queue import SharedAdmissionQueue
from gateway.admission.types import Route, Slot, Target
from gateway.core.classes import HIGH, LOW
from gateway.core.redis_clients import connect
from tests.support.drive import scrape, wait_until
from tests.support.live import LiveGateway, add_backend


@pytest.fixture
def shared_gateway(
    transactional_db: None, settings: Any, redis_server: Any, redis_prefix: str
) -> Iterator[LiveGateway]:
    """The whole app, as the gateway fixture serves it, with AIPLANE_REDIS_URL set."""
    from django.core.asgi import get_asgi_application

    from aiplane.wiring import build_application, configured_bounds
    from gateway.dataplane.serving import GatewayServer

    settings.AIPLANE_REDIS_URL = redis_server.url
    settings.AIPLANE_REDIS_PREFIX = redis_prefix
    app = build_application(get_asgi_application())
    app.runtime.background = False
    with GatewayServer(app, bounds=configured_bounds()) as server:
        yield LiveGateway(url=server.url, app=app)


def _other_process(redis_server: Any, prefix: str) -> SharedAdmissionQueue:
    return SharedAdmissionQueue(connect(redis_server.url, timeout=5.0), prefix=prefix)


def test_without_a_redis_url_the_gateway_keeps_its_own_queue_and_publishes_nothing(
    gateway: LiveGateway,
) -> None:
    from aiplane import changes

    assert type(gateway.runtime.queue) is AdmissionQueue
    assert not hasattr(gateway.runtime, "link")
    assert changes.redis_url() == ""
    changes.publish(changes.CALLERS)  # no Redis named: nothing to do, nothing raised


def test_the_live_queue_and_metrics_show_every_processs_waiters_and_shared_in_flight(
    shared_gateway: LiveGateway, redis_server: Any, redis_prefix: str, make_sim: Any
) -> None:
    from gateway.observability.live_queue import queue_state

    engine = make_sim(slots=4)
    add_backend("solo", engine.url, max_inflight=1)
    rt = shared_gateway.runtime
    wait_until(lambda: "solo" in rt.slots, "the topology is installed")
    route = rt.snapshot.resolve("chat", "sim-small", frozenset())
    other = _other_process(redis_server, redis_prefix)
    assert other.submit(other.waiter(route, cls=LOW, budget=60)) is not None  # holds the slot
    waiting = [other.waiter(route, cls=c, budget=60) for c in (LOW, HIGH)]
    for w in waiting:
        assert other.submit(w) is None

    state = queue_state(rt)
    assert state["shared"] is True
    assert state["depth"] == {"low": 1, "medium": 0, "high": 1}
    assert {w["process"] for w in state["waiters"]} == {other.process}
    # One line (its backends), in the order Redis hands its slots out: high, then low.
    assert [(w["line"], w["position"], w["class"]) for w in state["waiters"]] == [
        ("solo", 1, "high"),
        ("solo", 2, "low"),
    ]
    assert [(line["id"], line["waiting"]) for line in state["lines"]] == [("solo", 2)]
    assert [b["inflight"] for b in state["backends"] if b["name"] == "solo"] == [1]
    assert rt.queue.waiting == 0  # none of them waits in this process

    scraped = scrape(shared_gateway)
    depth = {
        dict(labels)["class"]: value
        for (name, labels), value in scraped.items()
        if name == "aiplane_shared_queue_depth"
    }
    assert depth == {"low": 1.0, "medium": 0.0, "high": 1.0}
    assert scraped[("aiplane_shared_backend_inflight", frozenset({("backend", "solo")}))] == 1
    assert scraped[("aiplane_shared_admission_fallback", frozenset())] == 0
    assert scraped[("aiplane_shared_leases_lost_total", frozenset())] == 0


def test_the_admin_queue_api_lists_every_processs_waiters_by_their_shared_ids(
    shared_gateway: LiveGateway, redis_server: Any, redis_prefix: str, make_sim: Any, carol: Any,
    login: Any,
) -> None:
    # A shared waiter's id is its ref over the group ("<process>:<n>"), not a number: the API's
    # answer once failed to serialize it (a 500 whenever another process had a waiter).
    engine = make_sim(slots=4)
    add_backend("solo", engine.url, max_inflight=1)
    rt = shared_gateway.runtime
    wait_until(lambda: "solo" in rt.slots, "the topology is installed")
    route = rt.snapshot.resolve("chat", "sim-small", frozenset())
    other = _other_process(redis_server, redis_prefix)
    assert other.submit(other.waiter(route, cls=LOW, budget=60)) is not None
    waiter = other.waiter(route, cls=HIGH, budget=60)
    assert other.submit(waiter) is None

    answer = login(carol).get("/api/v0/admin/queue")
    assert answer.status_code == 200, answer.content
    [listed] = answer.json()["waiters"]
    assert (listed["id"], listed["process"], listed["class"]) == (waiter.ref, other.process, "high")


def test_a_topology_change_announced_by_another_process_is_installed_here_at_once(
    shared_gateway: LiveGateway, redis_server: Any, redis_prefix: str, make_sim: Any
) -> None:
    from gateway.models import Backend

    engine = make_sim(slots=4)
    add_backend("solo", engine.url, max_inflight=1)
    rt = shared_gateway.runtime
    wait_until(lambda: "solo" in rt.slots, "the topology is installed")
    wait_until(lambda: rt.link.listening.is_set(), "the runtime listens for changes")
    # Another process's write: the row changes without this process's own announcement.
    Backend.objects.filter(name="solo").update(max_inflight=7)
    with redis.Redis.from_url(redis_server.url) as client:
        client.publish(
            redis_prefix + "changes", json.dumps({"from": "another", "kind": "topology"})
        )
    # Nothing else reloads it here (no background loops): only the announcement can.
    wait_until(lambda: rt.slots["solo"].max_inflight == 7, "the change is installed", 5.0)


def test_the_models_and_backends_pages_show_the_in_flight_of_every_process(
    shared_gateway: LiveGateway,
    redis_server: Any,
    redis_prefix: str,
    make_sim: Any,
    carol_client: Any,
) -> None:
    engine = make_sim(slots=4)
    add_backend("solo", engine.url, max_inflight=2)
    rt = shared_gateway.runtime
    wait_until(lambda: "solo" in rt.slots, "the topology is installed")
    # Another process holds one of the two slots (its own view of the backend, not this one's).
    theirs = Route(key="r", primary=(Target(Slot("solo", 2), "sim-small"),), fallback=())
    other = _other_process(redis_server, redis_prefix)
    running = other.submit(other.waiter(theirs, cls=LOW, budget=60))
    assert running is not None

    models = carol_client.get("/api/v0/admin/models").json()["models"]
    [routes] = [m["routes"] for m in models if m["name"] == "sim-small"]
    assert [(r["inflight"], r["max_inflight"]) for r in routes] == [(1, 2)]
    backends = carol_client.get("/api/v0/admin/backends").json()["backends"]
    assert [b["inflight"] for b in backends if b["name"] == "solo"] == [1]
    assert rt.slots["solo"].inflight == 0  # none of it runs in this process

    running.release()
    wait_until(lambda: other.shared_state(["solo"], limit=0)["inflight"]["solo"] == 0, "freed")
    models = carol_client.get("/api/v0/admin/models").json()["models"]
    [routes] = [m["routes"] for m in models if m["name"] == "sim-small"]
    assert [r["inflight"] for r in routes] == [0]
