"""The gateway's process state: registry snapshot, admission queue, settings, background loops.

One `Runtime` lives on the server's event loop, one per process. Django views (running in worker
threads) reach it through `current_runtime()` and the `*_threadsafe` methods, which hand plain
data over to the loop.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Awaitable, Callable, Coroutine, Sequence
from typing import Any

import aiohttp
import httpx
from asgiref.sync import sync_to_async

from accounts.allowances import Counted
from gateway.admission.queue import AdmissionQueue
from gateway.admission.types import Observer, Slot
from gateway.allowances.counters import CounterStore, MemoryCounters
from gateway.core.redaction import NO_SECRETS, Secrets
from gateway.dialects.stored_state import MemoryOwners, Owners
from gateway.engines.detection import ProbeFailure, check_models, detect_engine
from gateway.engines.health import HealthTracker, check_health
from gateway.observability.queue_metrics import QueueMetrics
from gateway.runtime.capacity import Capacity
from gateway.runtime.count_seats import CountSeats
from gateway.runtime.last_errors import LastErrors
from gateway.runtime.registry import Snapshot, Topology
from gateway.runtime.settings import GatewaySettings
from gateway.runtime.upstream import connector

log = logging.getLogger("aiplane.gateway")

DISPATCH_INTERVAL = 0.25  # the priority-ordered pass that picks up capacity and health changes

HEALTH_INTERVAL = 5.0

DETECT_INTERVAL = 60.0

RELOAD_INTERVAL = 10.0  # changes made through this process apply at once; others' within this

USAGE_FLUSH_INTERVAL = 5.0

_current: Runtime | None = None


def current_runtime() -> Runtime | None:
    """This process's runtime while it runs; None before it starts (a management command).

    The one accessor for code outside the loop; the runtime that starts becomes it, so a test
    that serves its own application swaps it in by starting it (`swap_runtime` for others).
    """
    return _current


def swap_runtime(runtime: Runtime | None) -> Runtime | None:
    """Make `runtime` this process's runtime; returns the one it replaces."""
    global _current
    before, _current = _current, runtime
    return before


class Runtime:
    """Registry-owned queue and snapshot of one gateway process."""

    def __init__(
        self,
        *,
        load_topology: Callable[[], Topology],
        load_settings: Callable[[], dict[str, Any]],
        save_discovery: Callable[[str, dict[str, Any], list[str]], None] | None = None,
        on_tick: Callable[[], None] | None = None,
        jobs: list[Callable[[], Coroutine[Any, Any, None]]] | None = None,
        run_db: Callable[..., Awaitable[Any]] | None = None,
        on_stop: Callable[[], Awaitable[None]] | None = None,
        background: bool = True,
        observe: bool = True,
        make_queue: Callable[[Observer | None], AdmissionQueue] | None = None,
    ) -> None:
        self._load_topology = load_topology
        self._load_settings = load_settings
        self._save_discovery = save_discovery
        self._on_tick = on_tick
        self.background = background
        self.jobs = list(jobs or [])
        # How database work leaves the loop: a thread (wiring gives a dedicated one).
        self.run_db: Callable[..., Awaitable[Any]] = run_db or _in_thread
        self._on_stop = on_stop
        self.slots: dict[str, Slot] = {}
        self.metrics = QueueMetrics()
        self.metrics.on_change = self._wake_watchers
        # observe=False leaves the queue without metrics (to measure what they cost).
        observer = self.metrics if observe else None
        # make_queue: shared admission (gateway/admission/shared/queue.py), not the local queue.
        self.queue = (
            make_queue(observer) if make_queue is not None else AdmissionQueue(observer=observer)
        )
        # Allowance counters (gateway/allowances/counters.py): this process's own unless shared.
        self.allowances: CounterStore = MemoryCounters()
        # Who owns the Responses state backends keep (gateway/dialects/stored_state.py).
        self.owners: Owners = MemoryOwners()
        # count_tokens calls in flight at each backend (gateway/dataplane/count_tokens.py).
        self.counting = CountSeats()
        # Live views waiting for the queue to change (the admin websocket).
        self.watchers: set[asyncio.Event] = set()
        self._installed = Topology([], [], loaded_at=float("-inf"))
        self.snapshot = Snapshot(self._installed, self.slots)
        self.settings = GatewaySettings()
        self.timeouts = self.settings.timeouts()
        self.health = HealthTracker()
        # Learned limits of the max_inflight "auto" backends (gateway/runtime/capacity.py).
        self.capacity = Capacity()
        # Each backend's last failure (a probe or a request), for the administrators' Models page.
        self.errors = LastErrors(secrets_of=self._secrets_of)
        self.loop: asyncio.AbstractEventLoop | None = None
        self.session: aiohttp.ClientSession | None = None
        self.probe_client: httpx.AsyncClient | None = None
        self.started = False
        # A SIGTERM came (gateway/dataplane/drain.py): /readyz says no; once `closing`, the drain
        # was cut short and nothing more is admitted here.
        self.draining = False
        self.closing = False
        self._starting: asyncio.Future[None] | None = None
        self._tasks: list[asyncio.Task[None]] = []
        self._identifying: set[asyncio.Future[None]] = set()
        self.started_at = time.time()

    def _secrets_of(self, backend: str) -> Secrets:
        up = self.snapshot.upstreams.get(backend)
        return NO_SECRETS if up is None else up.secrets

    # ----- lifecycle -----------------------------------------------------------------------

    async def ensure_started(self) -> None:
        if self.started:
            return
        if self._starting is None:
            self._starting = asyncio.ensure_future(self._start())
        starting = self._starting
        try:
            await asyncio.shield(starting)
        except Exception:
            # A database blip at start-up must not stay the answer: the next caller tries again.
            if self._starting is starting:
                self._starting = None
            raise

    async def _start(self) -> None:
        self.loop = asyncio.get_running_loop()
        # A fresh thread, not Django's thread-sensitive one: a view may be waiting on us there.
        values = await self.run_db(self._load_settings)
        self.apply_settings(values)
        topology = await self.run_db(self._load_topology)
        self.install(topology)
        self.session = aiohttp.ClientSession(
            connector=connector(
                # Below the 5 s idle bound of uvicorn, which vLLM and SGLang serve with: a pooled
                # connection the engine already closed would fail a request that did no wrong.
                limit=0,
                ttl_dns_cache=300,
                keepalive_timeout=4,
            ),
            # Each dispatch brings its own bounds (the relay's Timeouts, from the settings).
            timeout=aiohttp.ClientTimeout(total=None, sock_connect=5, sock_read=None),
            auto_decompress=False,
            # One session serves every tenant: a backend's cookies must not follow other callers.
            cookie_jar=aiohttp.DummyCookieJar(),
        )
        self.probe_client = httpx.AsyncClient(timeout=httpx.Timeout(5.0))
        if self.background:
            # A backend whose models are not known yet would answer 404 to the first callers:
            # look before serving (briefly; the detection loop keeps trying afterwards).
            unknown = [u.name for u in self.snapshot.upstreams.values() if not u.models]
            if unknown:
                with contextlib.suppress(Exception):
                    await asyncio.wait_for(self.detect_all(unknown), timeout=5.0)
        self.started = True
        before = swap_runtime(self)
        if before is not None and before is not self and before.started:
            log.warning("a second gateway runtime started in this process; it replaces the first")
        self._spawn(self._dispatch_loop())
        self._spawn(self._capacity_loop())
        for job in self.jobs:
            self._spawn(job())
        if self.background:
            self._spawn(self._every(HEALTH_INTERVAL, self.probe_all_health, "health probes failed"))
            self._spawn(self._every(DETECT_INTERVAL, self.detect_all, "engine detection failed"))
            self._spawn(self._reload_loop())

    @property
    def topology_loaded(self) -> bool:
        """Has a topology from the database been installed (for /readyz)?"""
        return self._installed.loaded_at != float("-inf")

    def _spawn(self, coro: Coroutine[Any, Any, None]) -> None:
        self._tasks.append(asyncio.ensure_future(coro))

    async def stop(self) -> None:
        self.started = False
        if current_runtime() is self:
            swap_runtime(None)
        for task in [*self._tasks, *self._identifying]:
            task.cancel()
        for task in [*self._tasks, *self._identifying]:
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task
        self._tasks.clear()
        with contextlib.suppress(Exception):
            await self.queue.close()
        if self.session is not None:
            await self.session.close()
        if self.probe_client is not None:
            await self.probe_client.aclose()
        with contextlib.suppress(Exception):
            await self.allowances.aclose()
        with contextlib.suppress(Exception):
            await self.owners.aclose()
        if self._on_stop is not None:
            with contextlib.suppress(Exception):
                await self._on_stop()

    # ----- applying changes ----------------------------------------------------------------

    def install(self, topology: Topology) -> asyncio.Future[None] | None:
        """Swap in a new snapshot; waiting requests move to the new routes at once.

        A topology loaded before the one already installed is stale (two loads raced, e.g.
        the detection loop and an administrator's save) and is ignored. A backend that is new
        or has a new base URL is identified at once, so that automatic priority forwarding
        applies from its first request; the returned future ends when that is done.
        """
        if topology.loaded_at < self._installed.loaded_at:
            return None
        before = {b.name: b.base_url for b in self._installed.backends}
        self._installed = topology
        self.snapshot = Snapshot(topology, self.slots)
        for name, slot in self.slots.items():
            slot.healthy = self.health.is_healthy(name)
        self.queue.reroute(self.snapshot.route_for_key)
        fresh = [b.name for b in topology.backends if before.get(b.name) != b.base_url]
        for name in [*fresh, *(set(before) - {b.name for b in topology.backends})]:
            self.errors.forget(name)  # removed, or another server now: not its failures
        if not fresh or not self.started or self._save_discovery is None:
            return None
        for name in fresh:
            self.health.forget(name)  # another server now: it starts with a clean record
        identify = asyncio.ensure_future(self.detect_all(fresh))
        self._identifying.add(identify)
        identify.add_done_callback(self._identified)
        return identify

    def _identified(self, done: asyncio.Future[None]) -> None:
        self._identifying.discard(done)
        if not done.cancelled() and done.exception() is not None:
            log.warning("could not identify new backends: %r", done.exception())

    def apply_settings(self, values: dict[str, Any]) -> None:
        s = GatewaySettings.from_catalog(values)
        self.settings = s
        self.timeouts = s.timeouts()
        self.queue.configure(s.scheduler, self.snapshot.route_for_key)

    def _call_threadsafe(self, fn: Callable[[], Any], wait: float) -> None:
        """Run `fn` on the loop and wait (up to `wait` s) for it, and for the future it returns."""
        loop = self.loop
        if loop is None or loop.is_closed():
            return
        try:
            if asyncio.get_running_loop() is loop:
                fn()
                return
        except RuntimeError:
            pass  # not on any loop: the usual case, a Django worker thread
        done = asyncio.run_coroutine_threadsafe(_call(fn, wait), loop)
        with contextlib.suppress(Exception):
            done.result(timeout=wait + 1)

    def install_threadsafe(self, topology: Topology, wait: float = 5.0) -> None:
        """From a Django thread: install the topology on the loop and wait until it is live,
        new backends identified included (bounded: an unreachable one is tried again later)."""
        self._call_threadsafe(lambda: self.install(topology), wait)

    def allowance_standing(
        self, limits: Sequence[Counted], wait: float = 2.0
    ) -> list[tuple[int, int]] | None:
        """From a Django thread: (used, reserved) of each limit, read on the loop (where the
        counters live, and a shared store's client); None when the loop does not answer."""
        loop = self.loop
        if loop is None or loop.is_closed() or not self.started:
            return None
        with contextlib.suppress(RuntimeError):
            if asyncio.get_running_loop() is loop:
                return None  # waiting here would stop the very loop that must answer
        done = asyncio.run_coroutine_threadsafe(self.allowances.read(limits), loop)
        try:
            return done.result(timeout=wait)
        except Exception:
            done.cancel()
            return None

    def apply_settings_threadsafe(self, values: dict[str, Any], wait: float = 5.0) -> None:
        self._call_threadsafe(lambda: self.apply_settings(values), wait)

    def _wake_watchers(self) -> None:
        for event in self.watchers:
            event.set()

    def set_health(self, name: str, healthy: bool) -> None:
        slot = self.slots.get(name)
        if slot is None or slot.healthy == healthy:
            return
        slot.healthy = healthy
        log.warning("backend %s is now %s", name, "healthy" if healthy else "unhealthy")
        # Both ways: up admits waiters, down may open a route's offline fallback.
        self.queue.slot_changed(slot)

    # ----- background loops ----------------------------------------------------------------

    async def _dispatch_loop(self) -> None:
        while True:
            await asyncio.sleep(DISPATCH_INTERVAL)
            try:
                self.queue.dispatch_pass()
                if self._on_tick is not None:
                    self._on_tick()
            except Exception:
                log.exception("dispatch pass failed")

    async def _capacity_loop(self) -> None:
        """The learned limits of the `max_inflight: auto` backends (gateway/runtime/capacity.py),
        a few times a second, off the request path."""
        capacity = self.capacity
        while True:
            await asyncio.sleep(capacity.tuning.interval)
            upstreams = self.snapshot.upstreams.values()
            if not any(up.spec.capacity_auto for up in upstreams) and not capacity.learned:
                continue
            try:
                await capacity.tick(upstreams, self.queue, self.probe_client)
            except Exception:
                log.exception("the capacity pass failed")

    async def _reload_loop(self) -> None:
        """Pick up changes made elsewhere (another aiplane process on the same database)."""
        while True:
            await asyncio.sleep(RELOAD_INTERVAL)
            try:
                values = await self.run_db(self._load_settings)
                if GatewaySettings.from_catalog(values) != self.settings:
                    self.apply_settings(values)
                topology = await self.run_db(self._load_topology)
                if topology != self._installed:
                    self.install(topology)
            except Exception:
                log.exception("could not reload the topology and settings")

    async def _every(
        self, interval: float, work: Callable[[], Awaitable[object]], failed: str
    ) -> None:
        """`work` at once, then `interval` seconds after each round ends; a round that fails is
        logged as `failed`, and the next one comes all the same."""
        while True:
            try:
                await work()
            except Exception:
                log.exception(failed)
            await asyncio.sleep(interval)

    async def probe_all_health(self) -> None:
        client = self.probe_client
        if client is None:
            return
        ups = list(self.snapshot.upstreams.values())
        results = await asyncio.gather(
            *(
                check_health(client, u.spec.base_url, u.spec.api_key, u.spec.health_path)
                for u in ups
            )
        )
        for up, failed in zip(ups, results, strict=True):
            ok = failed is None
            if failed is not None:
                self.errors.note(up.name, failed, "health")
            if self.health.record(up.name, ok):
                self.set_health(up.name, self.health.is_healthy(up.name))

    async def detect_all(self, names: list[str] | None = None) -> None:
        """Identify each engine and list its models; store what changed, then rebuild."""
        await self.detect_report(names)

    async def detect_report(self, names: list[str] | None = None) -> dict[str, ProbeFailure | None]:
        """`detect_all`, returning per backend probed why its models list could not be read
        (None: it was), for an administrator's "Detect now"."""
        client = self.probe_client
        if client is None or self._save_discovery is None:
            return {}
        ups = [u for u in self.snapshot.upstreams.values() if names is None or u.name in names]
        now = time.time()
        profiles = await asyncio.gather(
            *(detect_engine(client, u.spec.base_url, u.spec.api_key, now=now) for u in ups)
        )
        checked = await asyncio.gather(
            *(check_models(client, u.spec.base_url, u.spec.api_key) for u in ups)
        )
        failures = {up.name: failure for up, (_, failure) in zip(ups, checked, strict=True)}
        models = [found for found, _ in checked]
        changed = False
        for up, profile, found in zip(ups, profiles, models, strict=True):
            old = up.spec.profile
            if not found:
                found = list(up.spec.discovered_models)  # unreachable: keep what we knew
            if profile.kind == "unknown" and old is not None:
                profile = old  # a backend that is down keeps its last identification
            same_profile = old is not None and _same_profile(old.to_json(), profile.to_json())
            if same_profile and found == up.spec.discovered_models:
                continue
            await self.run_db(self._save_discovery, up.name, profile.to_json(), found)
            changed = True
        if changed:
            topology = await self.run_db(self._load_topology)
            self.install(topology)
        return failures


def _same_profile(a: dict[str, Any], b: dict[str, Any]) -> bool:
    a = {k: v for k, v in a.items() if k != "detected_at"}
    b = {k: v for k, v in b.items() if k != "detected_at"}
    return a == b


async def _call(fn: Callable[[], Any], wait: float) -> None:
    pending = fn()
    if isinstance(pending, asyncio.Future):
        with contextlib.suppress(Exception):
            await asyncio.wait_for(asyncio.shield(pending), wait)


async def _in_thread(fn: Callable[..., Any], *args: Any) -> Any:
    return await sync_to_async(fn, thread_sensitive=False)(*args)
