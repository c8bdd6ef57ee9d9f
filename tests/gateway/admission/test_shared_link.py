"""Changes announced on Redis: applied beside the grant wake-ups, coalesced, announced once."""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import Callable
from typing import Any

from gateway.admin import selectors, services
from gateway.admission.types import ADMITTED, Slot
from gateway.core.classes import LOW
from gateway.core.redis_clients import connect
from tests.support.redis_server import RedisServer
from tests.support.shared_queue import announcements, link_on, queue_on, route_to


async def _until(condition: Callable[[], bool], secs: float = 10.0) -> None:
    """Wait for `condition` (a bound for a hung test, not a timing threshold)."""

    async def poll() -> None:
        while not condition():
            await asyncio.sleep(0.005)

    await asyncio.wait_for(poll(), secs)


def _announce(server: RedisServer, kind: str) -> None:
    from aiplane import changes

    message = json.dumps({"from": "another process", "kind": kind})
    connect(server.url).publish(changes.channel(), message)


@contextlib.asynccontextmanager
async def _listening(link: Any) -> Any:
    task = asyncio.ensure_future(link.listen())
    try:
        await asyncio.wait_for(link.listening.wait(), 10)
        yield link
    finally:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task


async def test_a_grant_wake_up_is_taken_while_a_slow_topology_reload_runs(
    redis_server: RedisServer, redis_prefix: str, settings: Any
) -> None:
    from aiplane import changes

    settings.AIPLANE_REDIS_PREFIX = redis_prefix  # the changes channel is this test's own
    here, other = queue_on(redis_server, redis_prefix), queue_on(redis_server, redis_prefix)
    running = await other.submit_async(other.waiter(route_to(Slot("b", 1)), cls=LOW, budget=60))
    assert running is not None
    waiting = here.waiter(route_to(Slot("b", 1)), cls=LOW, budget=60)
    assert await here.submit_async(waiting) is None
    await here.settled()
    reloading, done = asyncio.Event(), asyncio.Event()

    async def reload(kind: str) -> None:
        reloading.set()
        await done.wait()  # a reload that reads a slow database

    link = link_on(redis_server.url, prefix=redis_prefix, queue=here, apply_change=reload)
    async with _listening(link):
        _announce(redis_server, changes.TOPOLOGY)
        await asyncio.wait_for(reloading.wait(), 10)
        # The other process frees the slot: Redis hands it to `waiting` and wakes this one.
        # Nothing else takes grants here (no 250 ms pass runs): only the wake-up can admit it.
        running.release()
        await other.settled()
        await _until(lambda: waiting.state == ADMITTED)
        done.set()
    await here.close()
    await other.close()


async def test_topology_changes_announced_during_a_reload_make_one_more_reload_not_one_each(
    redis_server: RedisServer, redis_prefix: str, settings: Any
) -> None:
    from aiplane import changes

    settings.AIPLANE_REDIS_PREFIX = redis_prefix
    applied: list[str] = []
    first, done = asyncio.Event(), asyncio.Event()

    async def apply(kind: str) -> None:
        applied.append(kind)
        if kind == changes.TOPOLOGY:
            first.set()
            await done.wait()

    link = link_on(redis_server.url, prefix=redis_prefix, queue=None, apply_change=apply)
    async with _listening(link):
        _announce(redis_server, changes.TOPOLOGY)
        await asyncio.wait_for(first.wait(), 10)
        for _ in range(5):
            _announce(redis_server, changes.TOPOLOGY)
        _announce(redis_server, changes.CALLERS)
        # The callers' change came after the five on the one subscription: they were heard.
        await _until(lambda: changes.CALLERS in applied)
        assert applied.count(changes.TOPOLOGY) == 1
        done.set()
        await _until(lambda: not link.applying)
    assert applied.count(changes.TOPOLOGY) == 2  # the one running, then one for all five


def test_a_group_rename_announces_one_topology_change_and_reloads_once(
    transactional_db: None, redis_server: RedisServer, redis_prefix: str, settings: Any
) -> None:
    from accounts.models import GatewayGroup
    from accounts.services import group_rename
    from aiplane import changes
    from gateway.runtime.runtime import Runtime, swap_runtime

    settings.AIPLANE_REDIS_URL = redis_server.url
    settings.AIPLANE_REDIS_PREFIX = redis_prefix
    group = GatewayGroup.objects.create(name="team")
    services.pool_save(
        data={"name": "a", "kind": "chat", "allowed_groups": ["team"]}, known_groups={"team"}
    )
    services.pool_save(
        data={"name": "b", "kind": "chat", "allowed_groups": ["team"]}, known_groups={"team"}
    )
    # This process's runtime, seen handed each topology (a spy: the real method runs too).
    installed: list[Any] = []
    runtime = Runtime(load_topology=selectors.load_topology, load_settings=dict, background=False)
    install = runtime.install_threadsafe

    def spy(loaded: Any, wait: float = 5.0) -> None:
        installed.append(loaded)
        install(loaded, wait)

    runtime.install_threadsafe = spy  # type: ignore[method-assign]
    before = swap_runtime(runtime)
    try:
        kinds = announcements(redis_server, lambda: group_rename(group=group, name="crew"))
    finally:
        swap_runtime(before)
    assert kinds.count(changes.TOPOLOGY) == 1, kinds
    assert kinds.count(changes.CALLERS) == 1, kinds
    assert len(installed) == 1
    assert {p.name: p.allowed_groups for p in installed[0].pools} == {
        "a": frozenset({"crew"}),
        "b": frozenset({"crew"}),
    }
