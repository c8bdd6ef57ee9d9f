"""Waiting for a slot end to end: deadlines, zero budgets, disconnects, slots freed on every path.

A *gated* engine (SimConfig slots=0) holds whatever reaches it until the test opens the gate, so
"the only slot is busy" is a state the test controls rather than a race against a timer.
Disconnects use a raw socket: closing it is exactly what a client that goes away does.
"""

from __future__ import annotations

import socket
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest

from aiplane.catalog import settings_update
from tests.support.drive import (
    HTTP,
    chat,
    configure,
    engine_records,
    engine_stats,
    hold_the_slot,
    labels_seen,
    open_raw,
    wait_idle,
    wait_until,
)
from tests.support.factories import make_group, make_token_with_secret, make_user
from tests.support.live import add_backend, live_gateway

# The database only sets the test up (waiting for slots happens in the admission queue):
# the PostgreSQL pass of `make test` leaves it to the SQLite pass.
pytestmark = pytest.mark.database_neutral


def read_until(sock: socket.socket, marker: bytes) -> bytes:
    data = b""
    while marker not in data:
        chunk = sock.recv(65536)
        if not chunk:
            raise AssertionError(f"connection closed before {marker!r}; got {data!r}")
        data += chunk
    return data


def slot(gateway: Any, name: str) -> Any:
    return gateway.runtime.slots[name]


@pytest.fixture
def key(transactional_db: None) -> str:
    alice = make_user("alice")
    return make_token_with_secret(alice, name="laptop")[1]


@pytest.fixture
def gated(make_sim: Any) -> Any:
    """An engine that holds every request until its slots are raised; behind a one-slot backend."""
    engine = make_sim(slots=0, tokens=3, token_delay=0.005)
    add_backend("solo", engine.url, max_inflight=1)
    return engine


# ----- deadlines ----------------------------------------------------------------------------


def test_a_capacity_timeout_is_a_503_with_retry_after(gateway, gated, key):
    settings_update(values={"gateway.upstream_wait_secs": 1})
    with ThreadPoolExecutor(max_workers=1) as pool:
        blocker = hold_the_slot(pool, gateway, gated, key)

        r = chat(gateway, key, "too-late")

        assert r.status_code == 503
        assert r.headers["retry-after"] == "1"
        assert r.json() == {
            "error": {
                "message": "No capacity for 'sim-small' within 1 seconds; try again later.",
                "type": "api_error",
                "param": None,
                "code": "capacity_timeout",
            }
        }
        assert gateway.runtime.queue.waiting == 0
        configure(gated, slots=1)
        assert blocker.result().status_code == 200
    assert labels_seen(gated) == ["blocker"]
    wait_idle(gateway, "solo")


def test_a_zero_budget_still_tries_once(gateway, gated, key):
    settings_update(values={"gateway.upstream_wait_secs": 0})
    configure(gated, slots=1)

    # A free slot: admitted on the one attempt.
    r = chat(gateway, key, "free")
    assert r.status_code == 200, r.text
    wait_idle(gateway, "solo")

    configure(gated, slots=0)
    with ThreadPoolExecutor(max_workers=1) as pool:
        blocker = hold_the_slot(pool, gateway, gated, key)

        r = chat(gateway, key, "busy")

        # Refused while the slot is still held: it did not wait for it.
        assert r.status_code == 503
        assert r.json()["error"]["code"] == "capacity_timeout"
        assert "retry-after" in r.headers
        assert slot(gateway, "solo").inflight == 1
        assert engine_stats(gated)["waiting"] == 1
        assert gateway.runtime.queue.waiting == 0
        configure(gated, slots=1)
        assert blocker.result().status_code == 200
    assert labels_seen(gated) == ["free", "blocker"]
    wait_idle(gateway, "solo")


@pytest.mark.parametrize(("asked", "within"), [("0.3", "0.3 seconds"), ("300ms", "0.3 seconds")])
def test_a_request_may_shorten_its_own_wait_and_is_told_so(gateway, gated, key, asked, within):
    with ThreadPoolExecutor(max_workers=1) as pool:
        blocker = hold_the_slot(pool, gateway, gated, key)

        r = chat(gateway, key, "in-a-hurry", headers={"X-AIplane-Max-Wait": asked})

        assert r.status_code == 503
        assert r.json()["error"]["message"] == (
            f"No capacity for 'sim-small' within {within}; try again later."
        )
        assert 300 <= int(r.headers["x-aiplane-queue-wait-ms"]) < 120_000
        configure(gated, slots=1)
        answered = blocker.result()
    assert answered.status_code == 200
    assert int(answered.headers["x-aiplane-queue-wait-ms"]) >= 0
    assert labels_seen(gated) == ["blocker"]
    wait_idle(gateway, "solo")


def test_a_request_cannot_lengthen_its_wait_past_the_gateways(gateway, gated, key):
    settings_update(values={"gateway.upstream_wait_secs": 1})
    with ThreadPoolExecutor(max_workers=1) as pool:
        blocker = hold_the_slot(pool, gateway, gated, key)
        r = chat(gateway, key, "greedy", headers={"X-AIplane-Max-Wait": "3600"})
        assert r.status_code == 503
        assert "within 1 seconds" in r.json()["error"]["message"]
        configure(gated, slots=1)
        assert blocker.result().status_code == 200
    wait_idle(gateway, "solo")


@pytest.mark.parametrize("bad", ["soon", "-1", "1e3", "5 min", "nan", "1" * 12, "0x10", ""])
def test_a_malformed_max_wait_is_a_400_naming_the_header(gateway, gated, key, bad):
    r = chat(gateway, key, "x", headers={"X-AIplane-Max-Wait": bad})
    assert r.status_code == 400
    error = r.json()["error"]
    assert (error["code"], error["param"]) == ("invalid_max_wait", "X-AIplane-Max-Wait")
    assert gateway.runtime.queue.waiting == 0
    assert labels_seen(gated) == []


# ----- capacity changes ----------------------------------------------------------------------


def test_raising_a_backends_capacity_admits_a_waiter_without_a_release(gateway, gated, key):
    from gateway.admin.services import backend_save

    with ThreadPoolExecutor(max_workers=2) as pool:
        blocker = hold_the_slot(pool, gateway, gated, key)
        waiter = pool.submit(chat, gateway, key, "waiter")
        wait_until(lambda: gateway.runtime.queue.waiting == 1, "the request waits")

        backend_save(data={"name": "solo", "max_inflight": 2})

        # Admitted into the new room while the first request still holds its slot.
        wait_until(lambda: engine_stats(gated)["waiting"] == 2, "the waiter reaches the engine")
        assert gateway.runtime.queue.waiting == 0
        assert slot(gateway, "solo").inflight == 2
        configure(gated, slots=2)
        assert blocker.result().status_code == 200
        assert waiter.result().status_code == 200
    wait_idle(gateway, "solo")


def test_a_waiter_whose_backend_is_disabled_keeps_waiting_and_runs_once_it_is_re_enabled(
    gateway, gated, key
):
    from gateway.admin.services import backend_save

    with ThreadPoolExecutor(max_workers=2) as pool:
        blocker = hold_the_slot(pool, gateway, gated, key)
        waiter = pool.submit(chat, gateway, key, "waiter")
        wait_until(lambda: gateway.runtime.queue.waiting == 1, "the request waits")
        backend_save(data={"name": "solo", "enabled": False})
        configure(gated, slots=1)
        assert blocker.result().status_code == 200
        # The slot is free but the backend is in maintenance: the waiter stays in line.
        assert gateway.runtime.queue.waiting == 1
        assert labels_seen(gated) == ["blocker"]

        backend_save(data={"name": "solo", "enabled": True})

        assert waiter.result().status_code == 200
    assert labels_seen(gated) == ["blocker", "waiter"]
    wait_idle(gateway, "solo")


def test_a_request_for_a_model_whose_backends_are_all_disabled_is_refused_at_once(
    gateway, make_sim, key
):
    engine = make_sim(tokens=1, token_delay=0)
    add_backend("solo", engine.url, enabled=False)

    r = chat(gateway, key)

    assert r.status_code == 503, r.text
    assert r.headers["retry-after"] == "5"
    assert r.json()["error"]["code"] == "no_healthy_backend"
    assert "'sim-small'" in r.json()["error"]["message"]
    assert gateway.runtime.queue.waiting == 0
    assert engine_records(engine) == []


# ----- disconnects --------------------------------------------------------------------------


@pytest.fixture(params=["httptools", "h11", "uvicorn-own"])
def served(request, transactional_db) -> Any:
    """The gateway under each HTTP protocol it may be served with: the bounded ones of
    `manage.py serve` (which tell the app of a disconnect themselves) and uvicorn's own (where
    the app learns it from `receive()`, as under daphne)."""
    from aiplane.wiring import configured_bounds

    if request.param == "uvicorn-own":
        config: dict[str, Any] = {"http": "httptools"}
    else:
        config = {"bounds": configured_bounds(), "http": request.param}
    with live_gateway(**config) as live:
        yield live


@pytest.mark.parametrize("prompt", [0, 600_000], ids=["small-body", "large-body"])
def test_a_client_that_leaves_while_waiting_is_removed_under_every_http_protocol(
    served, gated, key, prompt
):
    """A large body is read in pieces between which uvicorn pauses reading the socket; the
    last piece pauses it too, and a paused socket hides the client's leaving."""
    with ThreadPoolExecutor(max_workers=1) as pool:
        blocker = hold_the_slot(pool, served, gated, key)
        sock = open_raw(served, key, "gone", prompt_padding="x" * prompt)
        wait_until(lambda: served.runtime.queue.waiting == 1, "the request waits")

        sock.close()

        # The slot is still held, so only the disconnect can have emptied the queue.
        wait_until(lambda: served.runtime.queue.waiting == 0, "the waiter is removed")
        assert slot(served, "solo").inflight == 1
        configure(gated, slots=1)
        assert blocker.result().status_code == 200
        # A request answered in full is not taken for a leaver afterwards: the next one on a
        # kept-alive connection is served, and the slot comes back.
        assert chat(served, key, "next").status_code == 200
    wait_idle(served, "solo")
    assert labels_seen(gated) == ["blocker", "next"]


def test_a_client_that_leaves_mid_stream_closes_the_upstream_request_and_frees_the_slot(
    gateway, make_sim, key
):
    engine = make_sim(tokens=2000, token_delay=0.01)  # 20 s if nobody stopped it
    add_backend("streamer", engine.url, max_inflight=1)
    sock = open_raw(gateway, key, "long", stream=True)
    read_until(sock, b"tok1 ")
    assert slot(gateway, "streamer").inflight == 1
    assert engine_stats(engine)["cancelled"] == 0

    sock.close()

    wait_until(lambda: engine_stats(engine)["cancelled"] == 1, "the engine saw the cancel")
    wait_idle(gateway, "streamer")
    assert engine_stats(engine)["inflight"] == 0
    [record] = engine_records(engine)
    assert record["cancelled"] is True
    # The freed slot serves the next caller.
    assert chat(gateway, key, "next", max_tokens=1).status_code == 200


# ----- slots ----------------------------------------------------------------------------------


def test_slots_are_released_on_every_path(gateway, make_sim, key):
    engine = make_sim(tokens=2, token_delay=0)
    add_backend("solo", engine.url, max_inflight=2)
    dead = socket.socket()
    dead.bind(("127.0.0.1", 0))
    closed_port = dead.getsockname()[1]
    dead.close()  # nothing listens there now
    add_backend("dead", f"http://127.0.0.1:{closed_port}", pool="dead", models=["sim-large"])

    # A batch of successes, streaming and not, more than the slots at once.
    with ThreadPoolExecutor(max_workers=8) as pool:
        results = list(
            pool.map(lambda i: chat(gateway, key, f"ok-{i}", stream=i % 2 == 0), range(16))
        )
    assert [r.status_code for r in results] == [200] * 16
    wait_idle(gateway, "solo")

    # Upstream errors: the engine's own refusal (400), its failure (500 -> 502), retried and
    # then failed (503, socket).
    for status in (500, 400, 503):
        configure(engine, fail_next=1, fail_status=status)
        r = chat(gateway, key, f"fail-{status}")
        assert r.status_code == {500: 502}.get(status, status), r.text
        wait_idle(gateway, "solo")
    r = chat(gateway, key, "dead", model="sim-large")
    assert r.status_code == 502, r.text
    wait_idle(gateway, "dead")

    # Timeouts while both slots are held.
    settings_update(values={"gateway.upstream_wait_secs": 1})
    configure(engine, slots=0, tokens=1)
    with ThreadPoolExecutor(max_workers=2) as pool:
        blockers = [pool.submit(chat, gateway, key, f"blocker-{i}") for i in range(2)]
        wait_until(lambda: engine_stats(engine)["waiting"] == 2, "both slots are held")
        r = chat(gateway, key, "timeout")
        assert r.status_code == 503
        assert slot(gateway, "solo").inflight == 2

        # A cancel while waiting.
        sock = open_raw(gateway, key, "leaves-waiting")
        wait_until(lambda: gateway.runtime.queue.waiting == 1, "the leaver waits")
        sock.close()
        wait_until(lambda: gateway.runtime.queue.waiting == 0, "the leaver is gone")

        configure(engine, slots=2)
        assert [b.result().status_code for b in blockers] == [200, 200]
    wait_idle(gateway, "solo")

    # A cancel while the engine still holds it (admitted, nothing sent back yet).
    configure(engine, slots=0)
    sock = open_raw(gateway, key, "leaves-admitted")
    wait_until(lambda: engine_stats(engine)["waiting"] == 1, "the engine holds it")
    sock.close()
    wait_until(lambda: engine_stats(engine)["waiting"] == 0, "the engine dropped it")
    wait_idle(gateway, "solo")

    # A cancel mid-stream.
    configure(engine, slots=2, tokens=2000, token_delay=0.01)
    sock = open_raw(gateway, key, "leaves-streaming", stream=True)
    read_until(sock, b"tok1 ")
    sock.close()
    wait_idle(gateway, "solo")

    wait_until(lambda: engine_stats(engine)["inflight"] == 0, "the engine is idle")
    assert slot(gateway, "solo").inflight == 0
    assert slot(gateway, "dead").inflight == 0
    assert gateway.runtime.queue.waiting == 0
    # Both slots are really free: two requests held by the engine run side by side.
    configure(engine, slots=0, tokens=1)
    with ThreadPoolExecutor(max_workers=2) as pool:
        pair = [pool.submit(chat, gateway, key, f"pair-{i}") for i in range(2)]
        wait_until(lambda: engine_stats(engine)["waiting"] == 2, "both reach the engine")
        configure(engine, slots=2)
        assert [f.result().status_code for f in pair] == [200, 200]
    wait_idle(gateway, "solo")


def test_a_running_request_keeps_its_slot_when_higher_priority_requests_arrive(gateway, make_sim):
    settings_update(values={"gateway.priority_enabled": True})
    low_user, high_user = make_user("lena"), make_user("hana")
    make_group("batch", priority="low", members=[low_user])
    make_group("interactive", priority="high", members=[high_user])
    low = make_token_with_secret(low_user, name="batch")[1]
    high = make_token_with_secret(high_user, name="chat")[1]
    engine = make_sim(tokens=150, token_delay=0.01)
    add_backend("solo", engine.url, max_inflight=1)

    payload = {
        "model": "sim-small",
        "stream": True,
        "messages": [{"role": "user", "content": "long-low"}],
    }
    with (
        ThreadPoolExecutor(max_workers=2) as pool,
        HTTP.stream(
            "POST",
            gateway.v1 + "/chat/completions",
            json=payload,
            headers={"Authorization": f"Bearer {low}"},
        ) as stream,
    ):
        assert stream.status_code == 200
        chunks = stream.iter_raw()
        body = next(chunks)
        highs = []
        for i in range(2):
            highs.append(pool.submit(chat, gateway, high, f"high-{i}", max_tokens=1))
            wait_until(lambda i=i: gateway.runtime.queue.waiting == i + 1, f"high-{i} waits")
        assert slot(gateway, "solo").inflight == 1
        for chunk in chunks:
            body += chunk
        assert [f.result().status_code for f in highs] == [200, 200]

    assert body.endswith(b"data: [DONE]\n\n")
    assert b"tok149 " in body
    assert engine_stats(engine)["cancelled"] == 0
    assert labels_seen(engine) == ["long-low", "high-0", "high-1"]
    wait_idle(gateway, "solo")
