"""The audit log of administrative changes: one `record` call inside each change's transaction.

A service that changes settings, groups, users, tokens, backends or pools (or, later, allowances)
takes a snapshot of the object before and after and calls

    audit.record(actor, "group.update", group.name, before, after)

inside its own `transaction.atomic`: the row commits with the change or not at all, and a row
that cannot be written rolls the change back. Snapshots are plain JSON; secrets never enter
them (a set secret is `MASKED`, a replaced one adds `"<field>_replaced": true`).
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any

from django.db import transaction
from django.utils import timezone

if TYPE_CHECKING:
    from aiplane.models import AuditEntry

MASKED = "********"

# Every action, "<kind>.<verb>": the API's filter vocabulary and the page's translations
# (audit-action-<kind>-<verb>); `record` refuses any other, so the three cannot drift.
ACTIONS: tuple[str, ...] = (
    "setting.update",
    "group.create",
    "group.update",
    "group.delete",
    "group.rename",
    "user.create",
    "user.update",
    "user.delete",
    "token.create",
    "token.priority",
    "token.priority_override",
    "token.allowance",
    "token.allowance_override",
    "token.revoke",
    "token.rotate",
    "token.delete",
    "backend.create",
    "backend.update",
    "backend.delete",
    "backend.rename",
    "backend.detect",
    "pool.create",
    "pool.update",
    "pool.delete",
    "pool.rename",
)
KINDS: tuple[str, ...] = tuple(dict.fromkeys(action.split(".", 1)[0] for action in ACTIONS))

# What a change without a person is recorded as when the caller names nothing better.
SYSTEM = ""


class NotInTransaction(RuntimeError):
    """`record` was called outside a transaction, so the row could outlive a rolled-back change."""


def masked(secret: str | None) -> str | None:
    """What a snapshot shows of a secret: that one is set, never any part of it."""
    return MASKED if secret else None


def actor_name(actor: Any) -> str:
    """A person's username, a command's name ("manage.py serve"), or SYSTEM for nobody."""
    if actor is None:
        return SYSTEM
    if isinstance(actor, str):
        return actor
    return str(actor.get_username())


def record(
    actor: Any,
    action: str,
    target: str,
    before: dict[str, Any] | None = None,
    after: dict[str, Any] | None = None,
) -> AuditEntry | None:
    """Write one audit row in the caller's transaction; None when nothing changed.

    actor: the User who acted, or a str naming a command, or None. action: "<kind>.<verb>".
    before is None for a creation, after is None for a deletion.
    """
    from aiplane.models import AuditEntry

    if action not in ACTIONS:
        raise ValueError(f"undeclared audit action {action!r}")
    if not transaction.get_connection().in_atomic_block:
        # Autocommit would store the row at once, apart from the change it describes.
        raise NotInTransaction(f"audit.record({action!r}) must run inside transaction.atomic")
    if before == after:
        return None  # a save that changed nothing is no change (revoking twice, equal values)
    person = None if actor is None or isinstance(actor, str) else actor
    return AuditEntry.objects.create(
        at=timezone.now(),
        actor=person if person is not None and person.pk is not None else None,
        actor_name=actor_name(actor),
        action=action,
        kind=action.split(".", 1)[0],
        target=target[:300],
        before=before,
        after=after,
    )


def prune(retention_days: int, *, now: datetime | None = None) -> int:
    """Delete rows older than audit.retention_days (counted back from `now`); how many went.

    The deletion is no administrative change, so it leaves no row of its own.
    """
    from aiplane.models import AuditEntry

    cutoff = (now or timezone.now()) - timedelta(days=retention_days)
    deleted, _ = AuditEntry.objects.filter(at__lt=cutoff).delete()
    return deleted


def changes(before: dict[str, Any] | None, after: dict[str, Any] | None) -> list[dict[str, Any]]:
    """The fields that differ, by name (PostgreSQL's jsonb keeps no key order): {field, before,
    after}; a field missing on one side is null there."""
    old, new = before or {}, after or {}
    return [
        {"field": key, "before": old.get(key), "after": new.get(key)}
        for key in sorted(old.keys() | new.keys())
        if old.get(key) != new.get(key) or (key in old) != (key in new)
    ]
