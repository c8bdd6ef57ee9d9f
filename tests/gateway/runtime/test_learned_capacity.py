"""max_inflight "auto" against an engine with a real batch (the sim's simulated GPU): the limit
found from the engine's own gauges, followed when the engine's capacity changes, never above
it at the engine, and metrics that go wrong falling back to latency, closed while they do
(gateway/runtime/capacity.py, gateway/engines/capacity.py)."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest

from tests.support.drive import HTTP, engine_stats, key_for, scrape, wait_until
from tests.support.live import add_backend

pytestmark = pytest.mark.timeout(120)


class Load:
    """`n` clients sending short streams back to back until stopped."""

    def __init__(self, gateway: Any, key: str, n: int, tokens: int = 12) -> None:
        self.stop = threading.Event()
        self.answers: list[int] = []
        body = {
            "model": "sim-small",
            "messages": [{"role": "user", "content": "hi"}],
            "max_tokens": tokens,
            "stream": True,
        }

        def client() -> None:
            while not self.stop.is_set():
                with HTTP.stream(
                    "POST", gateway.v1 + "/chat/completions", json=body,
                    headers={"Authorization": f"Bearer {key}"},
                ) as answer:  # fmt: skip
                    answer.read()
                    self.answers.append(answer.status_code)

        self.threads = [threading.Thread(target=client, daemon=True) for _ in range(n)]

    def __enter__(self) -> Load:
        for t in self.threads:
            t.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop.set()
        for t in self.threads:
            t.join(30)


@pytest.fixture
def gpu_engine(make_sim: Any) -> Iterator[Any]:
    # An engine of 6 sequences a step, identified as vLLM, with vLLM's /metrics.
    yield make_sim(
        tokens=12, server_info="vllm", metrics="vllm", gpu_batch=6, gpu_step_ms=4,
        gpu_step_ms_per_seq=0.5,
    )  # fmt: skip


def _limit(gateway: Any) -> int:
    return gateway.runtime.slots["gpu"].max_inflight


def _learned(gateway: Any) -> Any:
    wait_until(lambda: "gpu" in gateway.runtime.capacity.learned, "the controller starts")
    return gateway.runtime.capacity.learned["gpu"].controller


def test_auto_finds_the_engines_batch_and_the_engine_never_queues_for_long(gateway, gpu_engine):
    add_backend("gpu", gpu_engine.url, max_inflight="auto", capacity_ceiling=64)
    key = key_for("ann")
    assert _limit(gateway) == 1  # a cold start, at its floor

    with Load(gateway, key, 16):
        wait_until(lambda: _limit(gateway) >= 6, "the limit grows to the batch", timeout=30)
        time.sleep(2)  # slow start's overshoot, and its fall, are behind it
        HTTP.post(gpu_engine.url + "/sim/reset")
        waiting, limits = [], []
        for _ in range(30):
            time.sleep(0.1)
            waiting.append(engine_stats(gpu_engine)["gpu_waiting"])
            limits.append(_limit(gateway))
        stats = engine_stats(gpu_engine)
    assert all(4 <= limit <= 8 for limit in limits), limits
    assert stats["gpu_max_running_seen"] == 6  # the engine kept busy
    # Its own queue is empty but for the moments a probe passes the edge (16 clients would
    # keep 10 there with a fixed limit of 16).
    assert sorted(waiting)[len(waiting) // 2] == 0, waiting
    assert max(waiting) <= 4, waiting
    assert _learned(gateway).mode == "metrics"


def test_when_the_engines_capacity_halves_the_limit_follows(gateway, gpu_engine):
    add_backend("gpu", gpu_engine.url, max_inflight="auto")
    key = key_for("ann")
    with Load(gateway, key, 16):
        wait_until(lambda: _limit(gateway) >= 6, "the limit grows to the batch", timeout=30)
        HTTP.post(gpu_engine.url + "/sim/config", json={"gpu_batch": 3})
        wait_until(lambda: _limit(gateway) <= 4, "the limit falls with the engine", timeout=10)


def test_the_limit_never_leaves_its_floor_and_ceiling(gateway, gpu_engine):
    add_backend("gpu", gpu_engine.url, max_inflight="auto", capacity_floor=2, capacity_ceiling=3)
    key = key_for("ann")
    assert _limit(gateway) == 2
    with Load(gateway, key, 12):
        wait_until(lambda: _limit(gateway) == 3, "the limit reaches its ceiling", timeout=30)
        time.sleep(1)
        assert _limit(gateway) == 3
        assert engine_stats(gpu_engine)["gpu_max_running_seen"] <= 3


@pytest.mark.parametrize("fault", ["garbage", "huge", "hang", "negative", "nan", "error"])
def test_metrics_that_go_wrong_close_the_gate_and_hand_over_to_latency(gateway, gpu_engine, fault):
    add_backend("gpu", gpu_engine.url, max_inflight="auto")
    key = key_for("ann")
    with Load(gateway, key, 12) as load:
        wait_until(lambda: _limit(gateway) >= 6, "the limit grows to the batch", timeout=30)
        before = _limit(gateway)
        HTTP.post(gpu_engine.url + "/sim/config", json={"metrics_fault": fault})
        wait_until(lambda: _learned(gateway).mode == "latency", "latency mode", timeout=10)
        # Held at what runs, never opened by the failure (latency may have added one since:
        # it grows by one a clean window; slow start may have left it above the batch).
        assert _limit(gateway) <= before + 1
        listed = gateway.runtime.capacity.describe("gpu", gateway.runtime.slots["gpu"])
        assert listed["metrics_error"]
        HTTP.post(gpu_engine.url + "/sim/config", json={"metrics_fault": "none"})
        wait_until(lambda: _learned(gateway).mode == "metrics", "metrics mode again", timeout=10)
    assert set(load.answers) == {200}  # the requests never noticed


def test_an_engine_without_metrics_is_served_by_latency_alone(gateway, make_sim):
    engine = make_sim(tokens=12, gpu_batch=4, gpu_step_ms=4)  # no /metrics: a 404
    add_backend("gpu", engine.url, max_inflight="auto", capacity_ceiling=32)
    key = key_for("ann")
    with Load(gateway, key, 8) as load:
        wait_until(lambda: _limit(gateway) >= 3, "the limit grows on latency", timeout=40)
    assert _learned(gateway).mode == "latency"
    assert gateway.runtime.capacity.learned["gpu"].error.startswith("no metrics")
    assert set(load.answers) == {200}


def test_the_learned_limit_is_on_the_metrics_and_the_admin_api(gateway, gpu_engine, carol, login):
    add_backend("gpu", gpu_engine.url, max_inflight="auto")
    key = key_for("ann")
    with Load(gateway, key, 8):
        wait_until(lambda: _limit(gateway) >= 4, "the limit grows", timeout=30)
        seen = scrape(gateway)
    assert seen[("aiplane_backend_capacity", frozenset({("backend", "gpu")}))] >= 4
    assert ("aiplane_backend_capacity_changes_total", frozenset({("backend", "gpu")})) in seen
    assert ("aiplane_backend_engine_waiting", frozenset({("backend", "gpu")})) in seen
    listed = login(carol).get("/api/v0/admin/backends").json()["backends"][0]
    assert listed["max_inflight"] == "auto"
    assert listed["capacity"]["limit"] >= 4
    assert listed["capacity"]["reason"] in ("metrics", "ceiling")
    assert listed["capacity"]["engine_running"] is not None


def test_an_engine_whose_gauges_hide_its_queue_is_caught_by_its_latency(gateway, make_sim):
    engine = make_sim(
        tokens=12, server_info="vllm", metrics="vllm", metrics_fault="zero-waiting",
        gpu_batch=3, gpu_step_ms=6, gpu_step_ms_per_seq=0.5,
    )  # fmt: skip
    add_backend("gpu", engine.url, max_inflight="auto", capacity_ceiling=64)
    key = key_for("ann")
    with Load(gateway, key, 24):
        wait_until(lambda: _learned(gateway).mode == "latency", "the lie caught", timeout=40)
        wait_until(lambda: _limit(gateway) < 24, "the limit falls", timeout=40)
