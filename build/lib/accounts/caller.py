"""The gateway's one entry into identity: bearer token (or session user) -> CallerContext.

Answers come from an in-process cache keyed by the token digest. Any change to groups,
memberships, tokens, users, profiles or operator settings bumps a generation counter (after
commit) and empties the cache; a short TTL is the backstop for changes made behind the ORM's back.
Misses load on a small dedicated thread pool, never on the event loop, and concurrent misses for
the same key share one load.

Whatever else holds a right decided from identity (the live queue's websockets) listens to the
same invalidation (`on_identity_changed`), and to sessions ending, which this cache never holds.
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from django.conf import settings
from django.contrib.auth.models import User
from django.db import close_old_connections
from django.db.models import Q
from django.utils import timezone

from accounts.allowances import Counted, Resolution, counted, resolve_allowance
from accounts.models import ApiToken
from accounts.priority import Priority, effective_class
from accounts.rbac import resolve
from accounts.tokens import digest_of, looks_like_token


@dataclass(frozen=True, slots=True)
class CallerContext:
    user_id: int
    username: str
    token_id: int | None
    token_name: str | None
    # The caller's groups by id, never by name: a route's key holds them
    # (gateway/runtime/registry.py), so a request waiting while its group is renamed still finds
    # its route.
    groups: frozenset[int]
    is_admin: bool
    model_allowlist: frozenset[str] | None  # None: every model the groups allow
    priority: Priority  # the effective class (owner-set overrides capped at the ceiling)
    inherited: Priority
    # The limits its requests are counted against, each with whose counter (empty: none).
    allowance: tuple[Counted, ...] = ()


@dataclass(frozen=True, slots=True)
class _Entry:
    generation: int
    deadline: float  # on _clock()
    context: CallerContext | None


_Loaded = tuple[CallerContext | None, datetime | None]

_clock: Callable[[], float] = time.monotonic  # tests replace it to move time
_MAX_ENTRIES = 50_000  # real callers: bounded by the tokens that exist
# "No such token" answers live apart, oldest dropped first: a flood of made-up tokens can only
# push out other made-up tokens, never a real caller's cached context.
_MAX_UNKNOWN = 10_000

_lock = threading.Lock()
_generation = 0
_entries: dict[str, _Entry] = {}
_unknown: OrderedDict[str, _Entry] = OrderedDict()
_flights: dict[tuple[asyncio.AbstractEventLoop, str, int], asyncio.Task[CallerContext | None]] = {}
_executor: ThreadPoolExecutor | None = None

_usage_lock = threading.Lock()
_usage: dict[int, float] = {}  # token id -> time of its last use (epoch seconds)

_listeners: list[Callable[[], None]] = []


def invalidate_callers() -> None:
    """Forget every cached answer; loads already running will not store theirs."""
    global _generation
    with _lock:
        _generation += 1
        _entries.clear()
        _unknown.clear()
    _tell_listeners()


def sessions_ended() -> None:
    """A browser session was deleted (signed out, flushed): nothing cached here holds one (a
    session is read on every request), but rights granted to a session are checked again."""
    _tell_listeners()


def on_identity_changed(listener: Callable[[], None]) -> None:
    """Call `listener` (from whatever thread the change lands on; it must return at once) on
    every invalidation and every session ended."""
    if listener not in _listeners:
        _listeners.append(listener)


def _tell_listeners() -> None:
    for listener in list(_listeners):
        listener()


def _ttl() -> float:
    return float(getattr(settings, "AIPLANE_CALLER_CACHE_TTL", 30.0))


def _pool() -> ThreadPoolExecutor:
    global _executor
    with _lock:
        if _executor is None:
            _executor = ThreadPoolExecutor(max_workers=4, thread_name_prefix="aiplane-caller")
        return _executor


def _load_token(digest: str) -> _Loaded:
    return _token_context(ApiToken.objects.select_related("owner").filter(digest=digest).first())


def _load_owned_token(key: str) -> _Loaded:
    user_id, _, token_id = key.partition(":")
    token = (
        ApiToken.objects.select_related("owner")
        .filter(pk=int(token_id), owner_id=int(user_id))
        .first()
    )
    return _token_context(token)


def _token_context(token: ApiToken | None) -> _Loaded:
    if token is None or token.revoked_at is not None or token.is_expired:
        return None, None
    owner = token.owner
    if not owner.is_active:
        return None, None
    resolved = resolve(owner)
    allowlist = token.model_allowlist
    context = CallerContext(
        user_id=owner.pk,
        username=owner.get_username(),
        token_id=token.pk,
        token_name=token.name,
        groups=resolved.group_ids,
        is_admin=resolved.is_admin,
        model_allowlist=None if allowlist is None else frozenset(allowlist),
        priority=effective_class(
            token.priority_class, token.priority_set_by_admin, resolved.inherited, resolved.is_admin
        ),
        inherited=resolved.inherited,
        allowance=counted(
            resolve_allowance(
                _token_allowance(token),
                token.allowance_set_by_admin,
                resolved.allowance,
                resolved.is_admin,
            ),
            user_id=owner.pk,
            token_id=token.pk,
        ),
    )
    return context, token.expires_at


def _token_allowance(token: ApiToken) -> Any:
    try:
        return token.allowance_limits
    except ValueError:
        return None  # unreadable (written behind the API's back): inherit rather than fail


def _load_user(user_id: str) -> _Loaded:
    user = User.objects.filter(pk=int(user_id), is_active=True).first()
    if user is None:
        return None, None
    resolved = resolve(user)
    context = CallerContext(
        user_id=user.pk,
        username=user.get_username(),
        token_id=None,
        token_name=None,
        groups=resolved.group_ids,
        is_admin=resolved.is_admin,
        model_allowlist=None,
        priority=resolved.inherited,
        inherited=resolved.inherited,
        allowance=counted(
            Resolution(person=resolved.allowance, token=()), user_id=user.pk, token_id=None
        ),
    )
    return context, None


def _in_worker(loader: Callable[[str], _Loaded], arg: str) -> _Loaded:
    # Worker threads are not request threads, so nobody else recycles their connections.
    close_old_connections()
    try:
        return loader(arg)
    finally:
        close_old_connections()


async def _load(
    key: str, generation: int, loader: Callable[[str], _Loaded], arg: str
) -> CallerContext | None:
    loop = asyncio.get_running_loop()
    context, expires_at = await loop.run_in_executor(_pool(), _in_worker, loader, arg)
    lifetime = _ttl()
    if expires_at is not None:
        lifetime = min(lifetime, (expires_at - timezone.now()).total_seconds())
    entry = _Entry(generation, _clock() + lifetime, context)
    with _lock:
        # A change committed while we were loading makes this answer possibly stale: drop it.
        if generation == _generation:
            if context is None:
                _unknown[key] = entry
                while len(_unknown) > _MAX_UNKNOWN:
                    _unknown.popitem(last=False)
            else:
                if len(_entries) >= _MAX_ENTRIES:
                    _entries.clear()
                _entries[key] = entry
    return context


async def _cached(key: str, loader: Callable[[str], _Loaded], arg: str) -> CallerContext | None:
    entry = _entries.get(key) or _unknown.get(key)
    generation = _generation
    if entry is not None and entry.generation == generation and _clock() < entry.deadline:
        return entry.context
    loop = asyncio.get_running_loop()
    flight_key = (loop, key, generation)
    task = _flights.get(flight_key)
    if task is None:
        task = loop.create_task(_load(key, generation, loader, arg))
        _flights[flight_key] = task
        task.add_done_callback(lambda _: _flights.pop(flight_key, None))
    # Shielded: one caller going away must not cancel the load the others wait for.
    return await asyncio.shield(task)


async def caller_for_token(plaintext: str) -> CallerContext | None:
    """The caller behind a bearer token; None for unknown, revoked, expired or inactive."""
    if not looks_like_token(plaintext):
        return None
    digest = digest_of(plaintext)
    context = await _cached("t:" + digest, _load_token, digest)
    if context is not None and context.token_id is not None:
        note_token_used(context.token_id)
    return context


async def caller_for_user(user_id: int) -> CallerContext | None:
    """A signed-in browser session (the playground): the user's inherited priority."""
    return await _cached(f"u:{user_id}", _load_user, str(user_id))


async def caller_for_owned_token(user_id: int, token_id: int) -> CallerContext | None:
    """A signed-in person running as one of their own tokens (the playground's choice): that
    token's class and allowlist; None when it is not theirs, revoked or expired."""
    context = await _cached(f"o:{user_id}:{token_id}", _load_owned_token, f"{user_id}:{token_id}")
    if context is not None:
        note_token_used(token_id)
    return context


def note_token_used(token_id: int, when: datetime | None = None) -> None:
    """Remember a use in memory; flush_token_usage() writes it later, off the hot path."""
    # A plain time stamp: timezone.now() reads a Django setting and builds an aware datetime
    # on every request, for a value written once per token and flush.
    moment = time.time() if when is None else when.timestamp()
    with _usage_lock:
        _usage[token_id] = moment


def flush_token_usage() -> int:
    """Write the remembered uses (one UPDATE per token); answer how many tokens were written."""
    with _usage_lock:
        batch = dict(_usage)
        _usage.clear()
    for token_id, stamp in batch.items():
        moment = datetime.fromtimestamp(stamp, tz=UTC)
        # update() sends no signal: a timestamp must not empty the caller cache.
        ApiToken.objects.filter(pk=token_id).filter(
            Q(last_used_at__isnull=True) | Q(last_used_at__lt=moment)
        ).update(last_used_at=moment)
    return len(batch)


def pending_token_usage() -> dict[int, datetime]:
    """A copy of the uses not yet flushed (for tests and diagnostics)."""
    with _usage_lock:
        return {token_id: datetime.fromtimestamp(t, tz=UTC) for token_id, t in _usage.items()}


def reset_token_usage() -> None:
    with _usage_lock:
        _usage.clear()
