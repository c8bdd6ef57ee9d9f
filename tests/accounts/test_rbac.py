"""The RBAC resolver: effective groups, administrator rights and the inherited priority."""

from __future__ import annotations

from typing import Any

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from accounts.priority import Priority
from accounts.rbac import resolve, resolve_many
from aiplane.catalog import settings_update
from tests.support.factories import make_group, make_user

pytestmark = pytest.mark.django_db


def test_a_person_without_groups_inherits_the_system_default(alice: Any) -> None:
    resolved = resolve(alice)
    assert resolved.groups == frozenset()
    assert resolved.is_admin is False
    assert resolved.inherited is Priority.MEDIUM


def test_the_system_default_follows_the_setting(alice: Any) -> None:
    settings_update(values={"gateway.priority_default": "low"})
    assert resolve(alice).inherited is Priority.LOW


def test_default_groups_count_for_everyone_without_membership(alice: Any) -> None:
    make_group("everyone", is_default=True, priority="low")
    resolved = resolve(alice)
    assert resolved.groups == frozenset({"everyone"})
    assert resolved.inherited is Priority.LOW  # explicit beats the system default (medium)


@pytest.mark.parametrize(
    ("priorities", "expected"),
    [
        ((None,), Priority.MEDIUM),
        (("low",), Priority.LOW),
        (("low", "high"), Priority.HIGH),
        (("medium", None, "low"), Priority.MEDIUM),
    ],
)
def test_the_highest_explicit_group_priority_is_inherited(
    priorities: tuple[str | None, ...], expected: Priority
) -> None:
    groups = [make_group(f"g{i}", priority=p) for i, p in enumerate(priorities)]
    user = make_user("dave", groups=groups)
    assert resolve(user).inherited is expected


def test_membership_in_an_admin_group_makes_an_administrator(carol: Any) -> None:
    resolved = resolve(carol)
    assert resolved.is_admin is True
    assert resolved.max_priority is Priority.HIGH
    assert resolved.inherited is Priority.MEDIUM


def test_a_superuser_is_an_administrator_without_groups() -> None:
    root = make_user("root", is_superuser=True)
    assert resolve(root).is_admin is True


def test_an_admin_default_group_makes_everyone_an_administrator(alice: Any) -> None:
    make_group("all-admins", is_default=True, is_admin=True)
    assert resolve(alice).is_admin is True


def test_other_peoples_groups_do_not_leak(alice: Any, bob: Any) -> None:
    make_group("vip", priority="high", members=[bob])
    assert resolve(alice).groups == frozenset()
    assert resolve(bob).groups == frozenset({"vip"})


def test_resolving_takes_two_queries_when_a_group_sets_the_priority(alice: Any) -> None:
    make_group("vip", priority="high", members=[alice])
    with CaptureQueriesContext(connection) as queries:
        resolve(alice)
    assert len(queries) == 2


def test_resolving_many_people_takes_a_fixed_number_of_queries() -> None:
    vip = make_group("vip", priority="high")
    users = [make_user(f"user{i}", groups=[vip] if i % 2 else []) for i in range(10)]
    with CaptureQueriesContext(connection) as queries:
        resolved = resolve_many(users)
    assert len(queries) == 3  # defaults, memberships, the system default setting
    assert [resolved[u.pk].inherited.label for u in users[:2]] == ["medium", "high"]
