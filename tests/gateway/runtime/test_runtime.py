"""The gateway runtime: start-up, the last-resort error envelope, ordered installs, settings."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest

from aiplane.catalog import CATALOG
from gateway.admission.schedulers import SchedulerConfig
from gateway.core.classes import HIGH, LOW
from gateway.dataplane.app import GatewayApp
from gateway.runtime.registry import BackendSpec, PoolSpec, Topology
from gateway.runtime.runtime import Runtime, current_runtime, swap_runtime

DEFAULTS: dict[str, Any] = {s.key: s.default for s in CATALOG}


class FakeClock:
    """The queue's clock, moved by hand."""

    def __init__(self, t: float = 0.0) -> None:
        self.t = t

    def __call__(self) -> float:
        return self.t


def empty() -> Topology:
    return Topology([], [])


def one_backend(*, enabled: bool = True, loaded_at: float = 0.0) -> Topology:
    """One single-slot backend serving 'm' in an open pool."""
    return Topology(
        backends=[
            BackendSpec(
                id=1,
                name="gpu1",
                base_url="http://127.0.0.1:9/v1",
                max_inflight=1,
                enabled=enabled,
                served_models=["m"],
            )
        ],
        pools=[PoolSpec(name="default", backends=["gpu1"], everyone=True)],
        loaded_at=loaded_at,
    )


def runtime(load_settings: Callable[[], dict[str, Any]] = lambda: dict(DEFAULTS)) -> Runtime:
    return Runtime(load_topology=empty, load_settings=load_settings, background=False)


# ----- start-up -------------------------------------------------------------------------------


async def test_a_failed_start_up_is_tried_again_by_the_next_caller() -> None:
    calls: list[str] = []

    def load_settings() -> dict[str, Any]:
        calls.append("load")
        if len(calls) == 1:
            raise ConnectionError("the database is restarting")
        return dict(DEFAULTS)

    rt = runtime(load_settings)
    try:
        with pytest.raises(ConnectionError):
            await rt.ensure_started()
        assert rt.started is False

        await rt.ensure_started()

        assert rt.started is True
        assert calls == ["load", "load"]
    finally:
        await rt.stop()


# ----- the last-resort envelope --------------------------------------------------------------


async def test_an_unexpected_error_on_the_v1_path_is_a_500_in_the_openai_envelope() -> None:
    async def broken_lookup(token: str) -> Any:
        raise RuntimeError("the database went away")

    rt = runtime()
    await rt.ensure_started()
    app = GatewayApp(rt, caller_for_token=broken_lookup)
    sent: list[dict[str, Any]] = []

    async def receive() -> dict[str, Any]:
        return {"type": "http.request", "body": b"{}", "more_body": False}

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    scope = {
        "type": "http",
        "method": "POST",
        "path": "/v1/chat/completions",
        "headers": [(b"authorization", b"Bearer gwk_whatever")],
    }
    try:
        await app(scope, receive, send)
    finally:
        await rt.stop()

    start, body = sent
    assert start["type"] == "http.response.start"
    assert start["status"] == 500
    assert (b"content-type", b"application/json") in start["headers"]
    assert body["type"] == "http.response.body"
    assert json.loads(body["body"]) == {
        "error": {
            "message": "The gateway failed; try again.",
            "type": "server_error",
            "param": None,
            "code": "internal_error",
        }
    }


# ----- installs -------------------------------------------------------------------------------


def test_a_topology_loaded_before_the_installed_one_does_not_replace_it() -> None:
    rt = runtime()
    older = one_backend(enabled=True, loaded_at=1.0)
    newer = one_backend(enabled=False, loaded_at=2.0)  # an administrator's maintenance switch

    rt.install(newer)
    rt.install(older)  # e.g. the detection loop's read, which started before the save

    assert rt.slots["gpu1"].enabled is False
    assert rt.snapshot.upstreams["gpu1"].spec.enabled is False


def test_a_topology_loaded_later_still_replaces_the_installed_one() -> None:
    rt = runtime()
    rt.install(one_backend(enabled=False, loaded_at=1.0))

    rt.install(one_backend(enabled=True, loaded_at=2.0))

    assert rt.slots["gpu1"].enabled is True


# ----- settings -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("before", "after", "first", "second"),
    [("strict", "serial", LOW, HIGH), ("serial", "strict", HIGH, LOW)],
)
def test_changing_the_scheduler_through_the_settings_rekeys_who_already_waits(
    before: str, after: str, first: int, second: int
) -> None:
    rt = runtime()
    rt.apply_settings({**DEFAULTS, "gateway.priority_enabled": True, "gateway.scheduler": before})
    rt.install(one_backend())
    # A monotonic clock some hours after boot: serial's keys are then far from strict's.
    clock = FakeClock(50_000.0)
    rt.queue.clock = clock
    queue = rt.queue
    route = rt.snapshot.resolve("chat", "m", frozenset())
    running = queue.submit(queue.waiter(route, cls=HIGH, budget=120))
    assert running is not None
    early = queue.waiter(route, cls=first, budget=120)
    queue.submit(early)

    rt.apply_settings({**DEFAULTS, "gateway.priority_enabled": True, "gateway.scheduler": after})

    assert queue.config.name == after
    clock.t += 1
    late = queue.waiter(rt.snapshot.resolve("chat", "m", frozenset()), cls=second, budget=120)
    queue.submit(late)
    running.release()
    high, low = (early, late) if first == HIGH else (late, early)
    assert high.acquired is not None and high.acquired.backend == "gpu1"
    assert low.acquired is None and queue.waiting == 1


def test_the_scheduler_settings_are_one_shape_read_from_the_catalog() -> None:
    rt = runtime()
    values = {
        **DEFAULTS,
        "gateway.priority_enabled": True,
        "gateway.scheduler": "serial",
        "gateway.aging_divisor_secs": 30,
        "gateway.affinity_bonus": 7,
        "gateway.max_waiters": 5,
    }
    rt.apply_settings(values)

    assert rt.settings.scheduler == SchedulerConfig(
        name="serial", aging_divisor=30.0, affinity_bonus=7.0, max_waiters=5, prioritize=True
    )
    assert rt.queue.config == rt.settings.scheduler
    assert rt.settings.priority_enabled is True
    # The queue holds its own copy: tuning it leaves the settings as the catalog said.
    rt.queue.config.max_waiters = 9
    assert rt.settings.scheduler.max_waiters == 5


# ----- one runtime per process ----------------------------------------------------------------


async def test_the_started_runtime_is_the_processs_runtime_until_it_stops() -> None:
    before = swap_runtime(None)
    rt = runtime()
    try:
        assert current_runtime() is None
        await rt.ensure_started()
        assert current_runtime() is rt

        await rt.stop()
        assert current_runtime() is None
    finally:
        await rt.stop()
        swap_runtime(before)
