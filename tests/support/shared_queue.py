"""Shared admission queues, links and the changes they hear, for the tests that drive them on a
private Redis step by step."""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from typing import Any

from aiplane import changes
from gateway.admission.shared.link import SharedLink
from gateway.admission.shared.queue import SharedAdmissionQueue
from gateway.admission.types import Route, Slot, Target
from gateway.core.redis_clients import connect
from tests.support.redis_server import RedisServer


def queue_on(server: RedisServer, prefix: str) -> SharedAdmissionQueue:
    # Long timeouts: a slow (or paused) server must never count as an outage here.
    queue = SharedAdmissionQueue(connect(server.url, timeout=30.0), prefix=prefix)
    queue.use_async(server.url, timeout=30.0)
    return queue


def route_to(slot: Slot) -> Route:
    """A route to one backend's slot, as the runtime builds one for a model."""
    return Route(key="r", primary=(Target(slot, "m"),), fallback=(), strategy="least_inflight")


def link_on(
    url: str,
    *,
    prefix: str,
    queue: SharedAdmissionQueue | None,
    apply_change: Callable[[str], Awaitable[None]],
) -> SharedLink:
    """A process's link to Redis, hearing changes on the channel the wiring gives it."""
    return SharedLink(
        url,
        prefix=prefix,
        queue=queue,
        apply_change=apply_change,
        channel=changes.channel(),
        parse=changes.parse,
    )


def announcements(server: RedisServer, act: Callable[[], Any]) -> list[str]:
    """The kinds of change announced on the changes channel while `act` runs."""
    client = connect(server.url)
    pubsub = client.pubsub(ignore_subscribe_messages=True)
    pubsub.subscribe(changes.channel())
    pubsub.get_message(timeout=5)  # the subscription's confirmation
    act()
    client.publish(changes.channel(), json.dumps({"kind": "end"}))  # after everything `act` said
    kinds = []
    while (message := pubsub.get_message(timeout=10)) is not None:
        kind = json.loads(message["data"])["kind"]
        if kind == "end":
            break
        kinds.append(kind)
    pubsub.close()
    return kinds
