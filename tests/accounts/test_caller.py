"""The gateway's entry into identity: bearer token -> CallerContext, cached and invalidated."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Coroutine
from datetime import timedelta
from typing import Any, TypeVar

import pytest
from asgiref.sync import sync_to_async
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from accounts import caller, services
from accounts.caller import (
    CallerContext,
    caller_for_token,
    caller_for_user,
    flush_token_usage,
    invalidate_callers,
    note_token_used,
    pending_token_usage,
)
from accounts.models import ApiToken, GatewayGroup
from accounts.priority import Priority
from aiplane.catalog import settings_update
from tests.support.factories import make_group, make_token_with_secret, make_user

pytestmark = pytest.mark.django_db(transaction=True)

T = TypeVar("T")


def run(coroutine: Coroutine[Any, Any, T]) -> T:
    return asyncio.run(coroutine)


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def clock(monkeypatch: pytest.MonkeyPatch) -> Clock:
    fake = Clock()
    monkeypatch.setattr(caller, "_clock", fake)
    return fake


@pytest.fixture
def loads(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Every digest the cache had to load from the database."""
    seen: list[str] = []
    real = caller._load_token

    def counting(digest: str) -> Any:
        seen.append(digest)
        return real(digest)

    monkeypatch.setattr(caller, "_load_token", counting)
    return seen


def test_a_token_resolves_to_its_callers_context(alice: Any) -> None:
    everyone = make_group("everyone", is_default=True)
    research = make_group("research", priority="high", members=[alice])
    token, plaintext = make_token_with_secret(
        alice, name="batch", priority="low", model_allowlist=["qwen", "llama"]
    )
    assert run(caller_for_token(plaintext)) == CallerContext(
        user_id=alice.pk,
        username="alice",
        token_id=token.pk,
        token_name="batch",
        groups=frozenset({everyone.pk, research.pk}),  # by id: a rename changes no access
        is_admin=False,
        model_allowlist=frozenset({"qwen", "llama"}),
        priority=Priority.LOW,
        inherited=Priority.HIGH,
    )


def test_a_token_without_an_override_runs_at_the_inherited_priority(carol: Any) -> None:
    _, plaintext = make_token_with_secret(carol)
    context = run(caller_for_token(plaintext))
    assert context is not None
    assert (context.priority, context.inherited, context.is_admin) == (
        Priority.MEDIUM,
        Priority.MEDIUM,
        True,
    )
    assert context.model_allowlist is None


@pytest.mark.parametrize(
    ("override", "by_admin", "group", "expected"),
    [
        ("high", False, None, Priority.MEDIUM),  # owner's override capped at the ceiling now
        ("high", False, "high", Priority.HIGH),
        ("high", True, None, Priority.HIGH),  # an administrator's grant is taken as is
        ("low", False, "high", Priority.LOW),
    ],
)
def test_the_effective_class_caps_owner_overrides_at_the_current_groups(
    alice: Any, override: str, by_admin: bool, group: str | None, expected: Priority
) -> None:
    if group:
        make_group("g", priority=group, members=[alice])
    _, plaintext = make_token_with_secret(alice, priority=override, set_by_admin=by_admin)
    context = run(caller_for_token(plaintext))
    assert context is not None and context.priority is expected


def test_unknown_revoked_expired_and_inactive_tokens_have_no_caller(alice: Any, bob: Any) -> None:
    _, revoked = make_token_with_secret(alice, revoked=True)
    _, expired = make_token_with_secret(alice, expires_at=timezone.now() - timedelta(seconds=1))
    _, inactive = make_token_with_secret(make_user("eve", is_active=False))
    unknown = "gwk_" + "0" * 64
    for plaintext in (revoked, expired, inactive, unknown):
        assert run(caller_for_token(plaintext)) is None


@pytest.mark.parametrize("junk", ["", "Bearer x", "gwk_123", "gwk_" + "G" * 64, "sk-" + "a" * 64])
def test_a_malformed_token_is_refused_without_a_lookup(junk: str, loads: list[str]) -> None:
    assert run(caller_for_token(junk)) is None
    assert loads == []


def test_answers_are_served_from_the_cache(alice: Any, loads: list[str]) -> None:
    _, plaintext = make_token_with_secret(alice)
    first = run(caller_for_token(plaintext))
    with CaptureQueriesContext(connection) as queries:
        again = run(caller_for_token(plaintext))
    assert again == first
    assert len(loads) == 1
    assert len(queries) == 0


def test_unknown_tokens_are_cached_too(loads: list[str]) -> None:
    unknown = "gwk_" + "1" * 64
    assert run(caller_for_token(unknown)) is None
    assert run(caller_for_token(unknown)) is None
    assert len(loads) == 1


def test_a_flood_of_made_up_tokens_never_evicts_a_real_caller(
    alice: Any, loads: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(caller, "_MAX_UNKNOWN", 20)
    _, plaintext = make_token_with_secret(alice)
    run(caller_for_token(plaintext))
    for n in range(100):
        assert run(caller_for_token(f"gwk_{n:064x}")) is None
    assert len(caller._unknown) == 20  # the oldest made-up ones went first
    with CaptureQueriesContext(connection) as queries:
        assert run(caller_for_token(plaintext)) is not None
    assert len(queries) == 0


def _group_priority(group: GatewayGroup, alice: Any) -> None:
    group.priority = Priority.HIGH
    group.save()


def _join_group(group: GatewayGroup, alice: Any) -> None:
    make_group("vip", priority="high").members.add(alice)


def _default_group(group: GatewayGroup, alice: Any) -> None:
    make_group("everyone", is_default=True, priority="high")


def _system_default(group: GatewayGroup, alice: Any) -> None:
    group.members.remove(alice)
    settings_update(values={"gateway.priority_default": "high"})


def _through_the_service(group: GatewayGroup, alice: Any) -> None:
    services.group_put(name=group.name, fields={"priority": Priority.HIGH})


@pytest.mark.parametrize(
    "change",
    [_group_priority, _join_group, _default_group, _system_default, _through_the_service],
    ids=["group-priority", "membership", "default-group", "system-default", "service"],
)
def test_a_group_change_is_visible_on_the_next_call(
    alice: Any, change: Callable[[GatewayGroup, Any], None]
) -> None:
    group = make_group("research", priority="medium", members=[alice])
    _, plaintext = make_token_with_secret(alice)
    before = run(caller_for_token(plaintext))
    assert before is not None and before.priority is Priority.MEDIUM
    change(group, alice)
    after = run(caller_for_token(plaintext))
    assert after is not None and after.priority is Priority.HIGH


def test_leaving_the_group_lowers_a_capped_override_on_the_next_call(alice: Any) -> None:
    group = make_group("research", priority="high", members=[alice])
    _, plaintext = make_token_with_secret(alice, priority="high")
    assert run(caller_for_token(plaintext)).priority is Priority.HIGH  # type: ignore[union-attr]
    group.members.remove(alice)
    assert run(caller_for_token(plaintext)).priority is Priority.MEDIUM  # type: ignore[union-attr]


def test_revoking_or_rotating_stops_the_old_secret_at_once(alice: Any) -> None:
    token, plaintext = make_token_with_secret(alice)
    assert run(caller_for_token(plaintext)) is not None
    _, new_plaintext = services.token_rotate(token=token)
    assert run(caller_for_token(plaintext)) is None
    assert run(caller_for_token(new_plaintext)) is not None
    services.token_revoke(token=token, actor=alice)
    assert run(caller_for_token(new_plaintext)) is None


def test_a_new_token_is_found_even_after_its_digest_was_cached_as_unknown(alice: Any) -> None:
    token, plaintext = make_token_with_secret(alice)
    digest = token.digest
    token.delete()
    assert run(caller_for_token(plaintext)) is None
    ApiToken.objects.create(owner=alice, name="again", prefix=plaintext[:12], digest=digest)
    assert run(caller_for_token(plaintext)) is not None


def test_deactivating_the_owner_stops_their_tokens_on_the_next_call(alice: Any) -> None:
    _, plaintext = make_token_with_secret(alice)
    assert run(caller_for_token(plaintext)) is not None
    services.user_update(user=alice, is_active=False)
    assert run(caller_for_token(plaintext)) is None


def test_the_ttl_is_the_backstop_for_changes_behind_the_orms_back(
    alice: Any, clock: Clock, settings: Any
) -> None:
    settings.AIPLANE_CALLER_CACHE_TTL = 30
    group = make_group("research", priority="medium", members=[alice])
    _, plaintext = make_token_with_secret(alice)
    assert run(caller_for_token(plaintext)).priority is Priority.MEDIUM  # type: ignore[union-attr]
    GatewayGroup.objects.filter(pk=group.pk).update(priority=Priority.HIGH)  # sends no signal
    clock.now += 29
    assert run(caller_for_token(plaintext)).priority is Priority.MEDIUM  # type: ignore[union-attr]
    clock.now += 2
    assert run(caller_for_token(plaintext)).priority is Priority.HIGH  # type: ignore[union-attr]


def test_a_token_expiring_before_the_ttl_is_not_served_past_its_expiry(alice: Any) -> None:
    _, plaintext = make_token_with_secret(alice, expires_at=timezone.now() + timedelta(seconds=0.5))
    assert run(caller_for_token(plaintext)) is not None
    time.sleep(0.6)
    assert run(caller_for_token(plaintext)) is None


def test_an_answer_loaded_across_a_change_is_not_cached(
    alice: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    _, plaintext = make_token_with_secret(alice)
    real = caller._load_token
    calls: list[str] = []

    def racing(digest: str) -> Any:
        calls.append(digest)
        answer = real(digest)
        if len(calls) == 1:
            invalidate_callers()  # a change commits while this load is in flight
        return answer

    monkeypatch.setattr(caller, "_load_token", racing)
    run(caller_for_token(plaintext))
    run(caller_for_token(plaintext))
    run(caller_for_token(plaintext))
    assert len(calls) == 2


async def test_concurrent_misses_share_one_load(
    alice: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    _, plaintext = await _token_for(alice)
    real = caller._load_token
    calls: list[str] = []

    def slow(digest: str) -> Any:
        calls.append(digest)
        time.sleep(0.05)  # widen the window in which the others arrive
        return real(digest)

    monkeypatch.setattr(caller, "_load_token", slow)
    answers = await asyncio.gather(*(caller_for_token(plaintext) for _ in range(20)))
    assert len(calls) == 1
    assert len({a.token_id for a in answers if a is not None}) == 1


async def test_a_cancelled_caller_does_not_cancel_the_shared_load(
    alice: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    _, plaintext = await _token_for(alice)
    real = caller._load_token

    def slow(digest: str) -> Any:
        time.sleep(0.1)
        return real(digest)

    monkeypatch.setattr(caller, "_load_token", slow)
    leaving = asyncio.ensure_future(caller_for_token(plaintext))
    staying = asyncio.ensure_future(caller_for_token(plaintext))
    await asyncio.sleep(0.01)
    leaving.cancel()
    assert (await staying) is not None


async def test_the_lookup_never_touches_the_database_on_the_event_loop(alice: Any) -> None:
    # Django raises SynchronousOnlyOperation for ORM calls made from a running event loop.
    _, plaintext = await _token_for(alice)
    assert (await caller_for_token(plaintext)) is not None
    assert (await caller_for_user(alice.pk)) is not None


async def _token_for(owner: Any) -> tuple[ApiToken, str]:
    def create() -> tuple[ApiToken, str]:
        try:
            return make_token_with_secret(owner)
        finally:
            # asgiref's worker thread keeps its connection otherwise, and PostgreSQL then
            # refuses to drop the test database at the end of the session.
            connection.close()

    return await sync_to_async(create)()


def test_a_browser_session_runs_at_the_users_inherited_priority(alice: Any) -> None:
    research = make_group("research", priority="high", members=[alice])
    assert run(caller_for_user(alice.pk)) == CallerContext(
        user_id=alice.pk,
        username="alice",
        token_id=None,
        token_name=None,
        groups=frozenset({research.pk}),
        is_admin=False,
        model_allowlist=None,
        priority=Priority.HIGH,
        inherited=Priority.HIGH,
    )


def test_an_unknown_or_inactive_user_has_no_session_caller(alice: Any) -> None:
    assert run(caller_for_user(999999)) is None
    services.user_update(user=alice, is_active=False)
    assert run(caller_for_user(alice.pk)) is None


def test_uses_are_noted_in_memory_and_flushed_in_one_update_per_token(
    alice: Any, loads: list[str]
) -> None:
    first, one = make_token_with_secret(alice)
    second, two = make_token_with_secret(alice)
    for plaintext in (one, two, one):
        run(caller_for_token(plaintext))
    assert set(pending_token_usage()) == {first.pk, second.pk}
    assert ApiToken.objects.filter(last_used_at__isnull=False).count() == 0
    with CaptureQueriesContext(connection) as queries:
        assert flush_token_usage() == 2
    assert len(queries) == 2
    assert ApiToken.objects.filter(last_used_at__isnull=False).count() == 2
    assert pending_token_usage() == {}
    run(caller_for_token(one))
    assert len(loads) == 2  # writing last_used_at did not empty the cache


def test_a_late_flush_never_moves_last_used_backwards(alice: Any) -> None:
    token, _ = make_token_with_secret(alice)
    now = timezone.now()
    note_token_used(token.pk, now)
    flush_token_usage()
    note_token_used(token.pk, now - timedelta(minutes=5))
    flush_token_usage()
    token.refresh_from_db()
    assert token.last_used_at == now
