"""The RBAC resolver: a user's effective groups, administrator flag, inherited priority and
allowance."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from django.contrib.auth.models import User

from accounts.allowances import Allowance, inherited_allowance, parse_allowance
from accounts.allowances import ceiling as allowance_ceiling
from accounts.models import GatewayGroup
from accounts.priority import Priority, ceiling, inherited_priority, parse_priority
from aiplane.catalog import setting


@dataclass(frozen=True, slots=True)
class Resolved:
    groups: frozenset[str]  # names, for people
    is_admin: bool
    inherited: Priority
    allowance: Allowance = ()  # inherited from the groups (accounts/allowances.py)
    # The same groups by id: access is decided by id, so renaming a group changes no access.
    group_ids: frozenset[int] = frozenset()

    @property
    def max_priority(self) -> Priority:
        """The ceiling for the person's own tokens."""
        return ceiling(self.inherited, self.is_admin)

    @property
    def max_allowance(self) -> Allowance:
        """The allowance ceiling for the person's own tokens (() is no limit)."""
        return allowance_ceiling(self.allowance, self.is_admin)


def system_default_priority() -> Priority:
    value = parse_priority(setting("gateway.priority_default"))
    return Priority.MEDIUM if value is None else value


def resolve(user: User) -> Resolved:
    """Resolve one user (two queries, a third only when no group sets a priority)."""
    return resolve_many([user])[user.pk]


def resolve_many(users: Iterable[User]) -> dict[int, Resolved]:
    """Resolve many users at once: default groups once, memberships in one query."""
    users = list(users)
    defaults = list(
        GatewayGroup.objects.filter(is_default=True).values_list(
            "id", "name", "is_admin", "priority", "allowance"
        )
    )
    memberships: dict[int, list[tuple[int, str, bool, int | None, Any]]] = {u.pk: [] for u in users}
    rows = GatewayGroup.members.through.objects.filter(
        user_id__in=list(memberships), gatewaygroup__is_default=False
    ).values_list(
        "user_id",
        "gatewaygroup_id",
        "gatewaygroup__name",
        "gatewaygroup__is_admin",
        "gatewaygroup__priority",
        "gatewaygroup__allowance",
    )
    for user_id, group_id, name, is_admin, priority, allowance in rows:
        memberships[user_id].append((group_id, name, is_admin, priority, allowance))

    default: Priority | None = None
    resolved: dict[int, Resolved] = {}
    for user in users:
        groups = defaults + memberships[user.pk]
        priorities = [None if p is None else Priority(p) for _, _, _, p, _ in groups]
        if default is None and all(p is None for p in priorities):
            default = system_default_priority()  # read lazily: most people get theirs from a group
        resolved[user.pk] = Resolved(
            groups=frozenset(name for _, name, _, _, _ in groups),
            group_ids=frozenset(group_id for group_id, _, _, _, _ in groups),
            is_admin=bool(getattr(user, "is_superuser", False))
            or any(is_admin for _, _, is_admin, _, _ in groups),
            # Priority.LOW is 0, so test for None rather than truthiness.
            inherited=inherited_priority(
                priorities, Priority.MEDIUM if default is None else default
            ),
            allowance=inherited_allowance(_stored(a) for _, _, _, _, a in groups),
        )
    return resolved


def _stored(value: Any) -> Allowance | None:
    """A stored allowance; one that no longer reads (written behind the API's back) has no say
    rather than failing every request of the group's members."""
    try:
        return parse_allowance(value)
    except ValueError:
        return None
