"""Assembles the process: the gateway runtime and its /v1 app, websockets, Django, lifespan."""

from __future__ import annotations

import asyncio
import contextlib
import functools
import gc
import logging
from collections.abc import Awaitable, Callable
from functools import partial
from importlib import import_module
from types import SimpleNamespace
from typing import Any, TypeVar

from asgiref.sync import sync_to_async
from django.conf import settings
from django.db import connections

from accounts.caller import (
    CallerContext,
    caller_for_owned_token,
    caller_for_token,
    caller_for_user,
    flush_token_usage,
    invalidate_callers,
    sessions_ended,
)
from aiplane import changes
from aiplane.catalog import all_settings, on_settings_changed
from gateway.admin import activity_store
from gateway.admin.selectors import load_topology
from gateway.admin.services import save_discovery
from gateway.allowances.counters import CounterStore, MemoryCounters
from gateway.dataplane.app import GatewayApp
from gateway.dataplane.drain import DrainSettings
from gateway.dataplane.health import PATHS as HEALTH_PATHS
from gateway.dataplane.health import Health
from gateway.dataplane.server_protocol import Bounds
from gateway.observability import collector, records
from gateway.observability.activity_writer import ProcessWriter
from gateway.runtime.runtime import Runtime, current_runtime

log = logging.getLogger("aiplane")
T = TypeVar("T")

ASGIApp = Callable[
    [dict[str, Any], Callable[..., Awaitable[Any]], Callable[..., Awaitable[Any]]], Awaitable[None]
]


class DatabaseThread:
    """One worker thread for the gateway's background database work, with a lasting connection.

    Reconnecting for every batch (SQLite registers its SQL functions in Python on each new
    connection) holds the GIL for a millisecond and shows up as the gateway's tail latency; one
    thread keeps one connection, closed when the runtime stops.
    """

    def __init__(self) -> None:
        from concurrent.futures import ThreadPoolExecutor

        self.executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="aiplane-db")

    async def __call__(self, fn: Callable[..., T], *args: Any) -> T:
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self.executor, functools.partial(_kept, fn, *args))

    async def close(self) -> None:
        loop = asyncio.get_running_loop()
        await loop.run_in_executor(self.executor, connections.close_all)


def _kept(fn: Callable[..., T], *args: Any) -> T:
    """Run on the database thread; drop the connection only when it broke or grew too old."""
    from django.db import close_old_connections

    try:
        return fn(*args)
    except Exception:
        close_old_connections()
        raise


def _db(fn: Callable[..., T]) -> Callable[..., T]:
    """Run a database call from a worker thread and close that thread's connection after.

    Worker threads are not request threads, so nothing else would ever close their connections
    (and PostgreSQL would keep them, e.g. refusing to drop a test database).
    """

    @functools.wraps(fn)
    def run(*args: Any, **kwargs: Any) -> T:
        try:
            return fn(*args, **kwargs)
        finally:
            connections.close_all()

    return run


async def _database_answers() -> None:
    """/readyz's database check: a trivial query from a worker thread (at most one a second)."""
    await asyncio.to_thread(_select_one)


@_db
def _select_one() -> None:
    with connections["default"].cursor() as cursor:
        cursor.execute("SELECT 1")


@_db
def _session_user_id(session_key: str) -> int | None:
    """The signed-in user of a browser session (the playground), verified like Django does."""
    from django.contrib.auth import get_user

    engine = import_module(settings.SESSION_ENGINE)
    request = SimpleNamespace(session=engine.SessionStore(session_key))
    user = get_user(request)  # type: ignore[arg-type]
    return user.pk if user.is_authenticated else None


async def caller_for_session(session_key: str, token_id: int | None = None) -> CallerContext | None:
    """The signed-in person, as themselves or as one of their own tokens (`token_id`)."""
    user_id = await sync_to_async(_session_user_id, thread_sensitive=False)(session_key)
    if user_id is None:
        return None
    if token_id is not None:
        return await caller_for_owned_token(user_id, token_id)
    return await caller_for_user(user_id)


def write_activity(rows: list[records.Row]) -> list[records.Rejected]:
    """The thread writer: stores the batch but the rows the database refuses, and returns
    those; a database fault raises, and the recorder keeps the batch (see `activity_rows.store`)."""
    return activity_store.write_batch(rows)


async def _flush_usage_loop(db: DatabaseThread) -> None:
    while True:
        await asyncio.sleep(5.0)
        try:
            await db(flush_token_usage)
        except Exception:
            log.exception("could not store token last-used times")


async def _prune_activity_loop(db: DatabaseThread) -> None:
    """Apply activity.retention_days and audit.retention_days hourly (and once at start)."""
    from aiplane import audit
    from aiplane.catalog import setting

    def prune() -> int:
        return activity_store.prune(setting("activity.retention_days")) + audit.prune(
            setting("audit.retention_days")
        )

    while True:
        try:
            await db(prune)
        except Exception:
            log.exception("could not prune old activity records or audit rows")
        await asyncio.sleep(3600)


def observability_enabled() -> bool:
    """AIPLANE_OBSERVABILITY=off drops activity records and queue metrics (to measure their
    cost; the live queue view then sees no changes either)."""
    import os

    return os.environ.get("AIPLANE_OBSERVABILITY", "on").lower() not in {"off", "0", "false"}


def activity_writer(db: DatabaseThread) -> records.Writer | None:
    """Where activity records go: a child process unless told otherwise or impossible.

    AIPLANE_ACTIVITY_WRITER=process (the default) stores them from `gateway.activity_writer`'s
    child process, =thread from this process's database thread (what an in-memory SQLite
    database needs); AIPLANE_OBSERVABILITY=off drops them.
    """
    import os

    from gateway.observability.activity_writer import in_process_only

    if not observability_enabled():
        return None
    mode = os.environ.get("AIPLANE_ACTIVITY_WRITER", "process").lower()
    if mode not in {"process", "thread"}:
        raise ValueError(f"AIPLANE_ACTIVITY_WRITER must be process or thread, not {mode!r}")
    if mode == "thread" or in_process_only(connections["default"].settings_dict):
        return partial(db, write_activity)
    return ProcessWriter()


def build_runtime() -> tuple[Runtime, records.Recorder]:
    db = DatabaseThread()
    writer = activity_writer(db)
    recorder = records.Recorder(writer)

    async def stop() -> None:
        # The recorder's last flush has run by now (jobs stop first): let the child finish.
        if isinstance(writer, ProcessWriter):
            await writer.close()
        await db.close()

    url = changes.redis_url()
    runtime = Runtime(
        load_topology=load_topology,
        load_settings=all_settings,
        save_discovery=save_discovery,
        jobs=[recorder.run, partial(_flush_usage_loop, db), partial(_prune_activity_loop, db)],
        run_db=db,
        on_stop=stop,
        observe=observability_enabled(),
        make_queue=partial(_shared_queue, url) if url else None,
    )
    if url:
        from gateway.admission.shared.link import SharedLink
        from gateway.admission.shared.queue import SharedAdmissionQueue

        queue = runtime.queue if isinstance(runtime.queue, SharedAdmissionQueue) else None
        link = SharedLink(
            url,
            prefix=changes.prefix(),
            queue=queue,
            apply_change=partial(_apply_change, runtime),
            channel=changes.channel(),
            parse=changes.parse,
        )
        runtime.jobs += [link.listen, link.keep]
        runtime.link = link  # type: ignore[attr-defined]
    runtime.allowances = allowance_counters()
    if url:
        from gateway.core.redis_clients import connect_async
        from gateway.runtime.state_owners import SharedOwners

        runtime.owners = SharedOwners(connect_async(url, connections=16), prefix=changes.prefix())
    _listen_for_settings()
    return runtime, recorder


def _shared_queue(url: str, observer: Any) -> Any:
    """AIPLANE_REDIS_URL: this process's queue shares its line and limits with the others."""
    from gateway.admission.shared.queue import SharedAdmissionQueue
    from gateway.core.redis_clients import connect

    queue = SharedAdmissionQueue(
        connect(url),
        prefix=changes.prefix(),
        process=changes.process_name(),
        observer=observer,
        lease_secs=settings.AIPLANE_REDIS_LEASE_SECS,
    )
    queue.use_async(url)
    return queue


async def _apply_change(runtime: Runtime, kind: str) -> None:
    """Another process changed identities, settings or the topology: apply it here at once."""
    if kind == changes.CALLERS:
        invalidate_callers()
    elif kind == changes.SESSIONS:
        sessions_ended()
    elif kind == changes.SETTINGS:
        invalidate_callers()
        runtime.apply_settings(await runtime.run_db(all_settings))
    elif kind == changes.TOPOLOGY:
        runtime.install(await runtime.run_db(load_topology))


def allowance_counters() -> CounterStore:
    """AIPLANE_REDIS_URL: allowances count on Redis, over every process; else in this one."""
    url = settings.AIPLANE_REDIS_URL
    if not url:
        return MemoryCounters()
    from gateway.allowances.shared import SharedCounters, connect

    return SharedCounters(connect(url), prefix=settings.AIPLANE_REDIS_PREFIX)


_listening = False


def _listen_for_settings() -> None:
    """One listener for the process: every live runtime takes the new values."""
    global _listening
    if _listening:
        return
    _listening = True

    def apply(values: dict[str, Any]) -> None:
        from gateway.runtime.runtime import current_runtime

        rt = current_runtime()
        if rt is not None:
            rt.apply_settings_threadsafe(values)

    on_settings_changed(apply)


def build_application(django_app: ASGIApp) -> ASGIApp:
    from channels.auth import AuthMiddlewareStack
    from channels.routing import URLRouter
    from django.urls import path

    from aiplane.origins import SameOriginWebsockets
    from gateway.admin.consumers import QueueConsumer

    collector.register(current_runtime)
    runtime, recorder = build_runtime()
    gateway = GatewayApp(
        runtime,
        caller_for_token=caller_for_token,
        caller_for_session=caller_for_session,
        recorder=recorder,
    )
    # Only our own pages (exactly our origin, or a trusted one) may open a websocket with the
    # visitor's session.
    websockets = SameOriginWebsockets(
        AuthMiddlewareStack(URLRouter([path("ws/queue", QueueConsumer.as_asgi())]))
    )

    health = Health(runtime, database=_database_answers)

    async def application(scope: dict[str, Any], receive: Any, send: Any) -> None:
        kind = scope["type"]
        if kind == "http":
            if scope["path"].startswith("/v1/"):
                await gateway(scope, receive, send)
            elif scope["path"] in HEALTH_PATHS:
                await health(scope, receive, send)  # before start-up too: it says "starting"
            else:
                if not runtime.started:
                    await runtime.ensure_started()  # daphne has no lifespan: start on first use
                await django_app(scope, receive, send)
        elif kind == "websocket":
            if not runtime.started:
                await runtime.ensure_started()
            await websockets(scope, receive, send)
        elif kind == "lifespan":
            await _lifespan(runtime, receive, send)

    application.runtime = runtime  # type: ignore[attr-defined]
    application.gateway = gateway  # type: ignore[attr-defined]
    return application


async def _lifespan(runtime: Runtime, receive: Any, send: Any) -> None:
    while True:
        message = await receive()
        if message["type"] == "lifespan.startup":
            try:
                await runtime.ensure_started()
                # Everything loaded so far lives for the whole process: keep the collector from
                # walking it on every full collection (those walks are the p99 latency spikes).
                gc.collect()
                gc.freeze()
            except Exception as err:
                log.exception("gateway start-up failed")
                await send({"type": "lifespan.startup.failed", "message": str(err)})
                return
            await send({"type": "lifespan.startup.complete"})
        elif message["type"] == "lifespan.shutdown":
            with contextlib.suppress(Exception):
                await runtime.stop()
            await send({"type": "lifespan.shutdown.complete"})
            return


def configured_drain() -> DrainSettings:
    """AIPLANE_DRAIN_TIMEOUT and AIPLANE_DRAIN_GRACE, checked."""
    timeout, grace = settings.AIPLANE_DRAIN_TIMEOUT, settings.AIPLANE_DRAIN_GRACE
    if not (timeout > 0 and 0 <= grace <= timeout):
        raise ValueError(
            f"AIPLANE_DRAIN_TIMEOUT must be above 0 and AIPLANE_DRAIN_GRACE between 0 and it "
            f"(they are {timeout:g} and {grace:g})"
        )
    return DrainSettings(timeout=timeout, grace=grace)


def configured_bounds() -> Bounds:
    """The bounds of aiplane/settings.py (AIPLANE_HEADER_TIMEOUT and friends)."""
    from django.conf import settings

    return Bounds(
        header=settings.AIPLANE_HEADER_TIMEOUT,
        body=settings.AIPLANE_BODY_TIMEOUT,
        body_idle=settings.AIPLANE_BODY_IDLE_TIMEOUT,
        keepalive=settings.AIPLANE_KEEPALIVE_TIMEOUT,
        max_connections=settings.AIPLANE_MAX_CONNECTIONS,
    )
