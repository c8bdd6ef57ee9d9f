"""Changes made in one process, applied by every other: published on Redis, heard by each runtime.

Tokens, users, groups and memberships (the caller cache), operator settings, the topology and
browser sessions ended (the live queue's websockets check their right again) are announced
after commit on the channel ``<prefix>changes``; every gateway process listening there applies
them at once (gateway/admission/shared/link.py). Without AIPLANE_REDIS_URL nothing is published and
the periodic reload (gateway/runtime/runtime.py) stays the only way changes made elsewhere arrive.
"""

from __future__ import annotations

import json
import logging
import os
import threading
import uuid
from collections.abc import Callable
from typing import Any

from django.conf import settings
from django.db import transaction

from gateway.core.redis_clients import connect

log = logging.getLogger("aiplane.gateway")

CALLERS, SETTINGS, TOPOLOGY = "callers", "settings", "topology"
SESSIONS = "sessions"  # a browser session ended: rights granted to sessions are checked again

_name = ("", 0)


def process_name() -> str:
    """This process's name, in the shared line and on the channel (to skip its own
    announcements); a worker forked by `serve --workers` gets its own."""
    global _name
    if _name[1] != os.getpid():
        _name = (f"{os.getpid()}-{uuid.uuid4().hex[:8]}", os.getpid())
    return _name[0]


_lock = threading.Lock()
_client: Any = None
_client_url = ""


def redis_url() -> str:
    return str(getattr(settings, "AIPLANE_REDIS_URL", "") or "")


def prefix() -> str:
    return str(getattr(settings, "AIPLANE_REDIS_PREFIX", "aiplane:"))


def channel() -> str:
    return prefix() + "changes"


def publish(kind: str) -> None:
    """Tell the other processes (from a Django thread, after commit); never fails the caller."""
    url = redis_url()
    if not url:
        return
    global _client, _client_url
    try:
        with _lock:
            if _client is None or _client_url != url:
                _client = connect(url)
                _client_url = url
            client = _client
        client.publish(channel(), json.dumps({"from": process_name(), "kind": kind}))
    except Exception as err:  # Redis down: the periodic reload still brings it, later
        log.warning("could not announce a %s change on Redis: %s", kind, err)


class _Once:
    """One run of `fn` for the transaction that asked for it, however often it asked."""

    __slots__ = ("done", "fn")

    def __init__(self, fn: Callable[[], None]) -> None:
        self.fn, self.done = fn, False

    def run(self) -> None:
        if not self.done:
            self.done = True
            self.fn()


def once_on_commit(key: str, fn: Callable[[], None], using: str | None = None) -> None:
    """Run `fn` after the current transaction commits, once per commit however many of its
    writes ask (a group rename saves the group and each pool naming it: one reload, one
    announcement); outside a transaction at once.

    Every ask registers a callback, so a savepoint rolled back with the first ask still
    leaves the later ones; the first callback that runs does the work.
    """
    connection = transaction.get_connection(using)
    if not connection.in_atomic_block:
        fn()
        return
    pending: dict[str, _Once] = connection.__dict__.setdefault("_aiplane_once", {})
    once = pending.get(key)
    if once is None or once.done:
        once = pending[key] = _Once(fn)
    once.fn = fn  # a transaction rolled back left its batch unrun: this one takes it over
    transaction.on_commit(once.run, using=using)


def parse(data: bytes) -> str | None:
    """The kind of a change another process announced; None for our own or a malformed one."""
    try:
        message = json.loads(data)
    except ValueError:
        return None
    if not isinstance(message, dict) or message.get("from") == process_name():
        return None
    kind = message.get("kind")
    return kind if kind in (CALLERS, SETTINGS, TOPOLOGY, SESSIONS) else None
