"""Redis clients for every part of the gateway that uses AIPLANE_REDIS_URL: one way to connect."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable
from typing import Any, TypeVar

import redis
import redis.asyncio as aioredis
from redis.asyncio.retry import Retry as AsyncRetry
from redis.backoff import NoBackoff
from redis.retry import Retry

REDIS_TIMEOUT = 1.0  # a call that takes longer counts as an outage (no request hangs on it)
# A subscription quiet for this long is pinged; one that does not answer the next time is dead.
PUBSUB_QUIET_SECS = 1.0

# What counts as Redis being away, for every part that uses it: no answer (connection lost,
# timeout, a replica still loading) or an error for an answer (READONLY from a replica that a
# failover left the clients on, OOM). A missing script (NoScriptError) is the one error that
# is not: the caller loads the script and calls again.
AWAY: tuple[type[Exception], ...] = (redis.RedisError, OSError, asyncio.TimeoutError)

T = TypeVar("T")


async def answered(call: Awaitable[T]) -> T:
    """Await a redis-py call, then honour a cancel of the task it may have swallowed.

    A cancel that lands as a read times out can come back from redis-py as a timeout (an
    outage) or as a plain answer, while the task still counts the cancel: a loop around the
    call would then go on for ever, and a shutdown waits for it. Only for tasks of our own that
    never keep a cancel pending (`cancelling()` stays raised until `uncancel`).
    """
    try:
        answer = await call
    except Exception:
        _raise_if_cancelled()
        raise
    _raise_if_cancelled()
    return answer


def _raise_if_cancelled() -> None:
    task = asyncio.current_task()
    if task is not None and task.cancelling():
        raise asyncio.CancelledError


def connect(url: str, timeout: float = REDIS_TIMEOUT) -> redis.Redis:
    """A blocking client (Django threads, start-up): short timeouts, one reconnect on a stale
    connection (after a Redis restart every pooled connection is dead, and that alone is no
    outage)."""
    return redis.Redis.from_url(
        url,
        socket_timeout=timeout,
        socket_connect_timeout=timeout,
        retry=Retry(NoBackoff(), 1),
        retry_on_error=[redis.ConnectionError],
        health_check_interval=0,
    )


def connect_async(
    url: str, timeout: float = REDIS_TIMEOUT, *, connections: int | None = None
) -> Any:
    """The same for the event loop (redis.asyncio): what runs on the loop must use this one.

    With `connections`, callers share a pool of that many and wait (up to `timeout`) for a free
    one rather than fail: redis-py's default pool refuses its 101st concurrent caller, which
    requests that each take a connection for one round trip reach under load."""
    options: dict[str, Any] = {
        "socket_timeout": timeout,
        "socket_connect_timeout": timeout,
        "retry": AsyncRetry(NoBackoff(), 1),
        "retry_on_error": [redis.ConnectionError],
        "health_check_interval": 0,
    }
    if connections is None:
        return aioredis.Redis.from_url(url, **options)
    pool = aioredis.BlockingConnectionPool.from_url(
        url, max_connections=connections, timeout=timeout, **options
    )
    return aioredis.Redis.from_pool(pool)  # closing the client closes its pool


def connect_pubsub(url: str, timeout: float = REDIS_TIMEOUT) -> Any:
    """A client for one subscription (redis.asyncio): no read timeout, since a subscriber
    waits for messages as long as there are none; its reader pings a quiet connection itself
    (see gateway/admission/shared/link.py), as redis-py's health check sends pings but never misses
    their answer."""
    return aioredis.Redis.from_url(
        url, socket_timeout=None, socket_connect_timeout=timeout, health_check_interval=0
    )
