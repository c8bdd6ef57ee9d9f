"""The priority rules as tables: parsing, inheritance, the ceiling and the effective class."""

from __future__ import annotations

import pytest

from accounts.priority import (
    InvalidPriority,
    Priority,
    ceiling,
    effective_class,
    inherited_priority,
    parse_priority,
)

LOW, MEDIUM, HIGH = Priority.LOW, Priority.MEDIUM, Priority.HIGH


def test_classes_are_ordered_low_to_high_and_carry_their_labels() -> None:
    assert LOW < MEDIUM < HIGH
    assert [p.label for p in Priority] == ["low", "medium", "high"]


@pytest.mark.parametrize(
    ("value", "expected"),
    [("low", LOW), ("medium", MEDIUM), ("high", HIGH), (None, None), (HIGH, HIGH)],
)
def test_labels_and_null_parse(value: object, expected: Priority | None) -> None:
    assert parse_priority(value) is expected


@pytest.mark.parametrize(
    "value", ["urgent", "HIGH", " low", "", 0, 1, 2, True, False, 1.0, [], {}, "inherit"]
)
def test_anything_else_is_an_invalid_priority(value: object) -> None:
    with pytest.raises(InvalidPriority):
        parse_priority(value)


@pytest.mark.parametrize(
    ("groups", "default", "expected"),
    [
        ([], MEDIUM, MEDIUM),  # no group: the system default
        ([None, None], LOW, LOW),  # groups without a priority: still the default
        ([LOW], HIGH, LOW),  # an explicit group priority wins over the default, even lower
        ([LOW, None, HIGH], MEDIUM, HIGH),  # the highest explicit one
        ([MEDIUM, LOW], HIGH, MEDIUM),
        ([HIGH, HIGH], LOW, HIGH),
    ],
)
def test_inherited_priority_is_the_highest_explicit_group_priority_else_the_default(
    groups: list[Priority | None], default: Priority, expected: Priority
) -> None:
    assert inherited_priority(groups, default) is expected


@pytest.mark.parametrize(
    ("inherited", "is_admin", "expected"),
    [
        (LOW, False, LOW),
        (MEDIUM, False, MEDIUM),
        (HIGH, False, HIGH),
        (LOW, True, HIGH),
        (MEDIUM, True, HIGH),
    ],
)
def test_the_ceiling_is_the_inherited_priority_or_high_for_an_administrator(
    inherited: Priority, is_admin: bool, expected: Priority
) -> None:
    assert ceiling(inherited, is_admin) is expected


@pytest.mark.parametrize(
    ("override", "set_by_admin", "inherited", "expected"),
    [
        (None, False, MEDIUM, MEDIUM),  # no override: inherit
        (None, True, LOW, LOW),
        (LOW, False, HIGH, LOW),  # lowering for background work
        (MEDIUM, False, MEDIUM, MEDIUM),
        (HIGH, False, MEDIUM, MEDIUM),  # owner's override capped after losing a group
        (HIGH, False, LOW, LOW),
        (MEDIUM, False, LOW, LOW),
        (HIGH, True, LOW, HIGH),  # an administrator's grant stands
        (LOW, True, HIGH, LOW),  # ... also when it lowers
    ],
)
def test_the_effective_class_caps_only_owner_set_overrides(
    override: Priority | None, set_by_admin: bool, inherited: Priority, expected: Priority
) -> None:
    assert effective_class(override, set_by_admin, inherited) is expected
