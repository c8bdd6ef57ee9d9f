"""The request priority class and its resolution rules (pure functions, no Django)."""

from __future__ import annotations

from collections.abc import Iterable
from enum import IntEnum


class InvalidPriority(ValueError):
    """A priority value that is not "low", "medium", "high" or null."""


class Priority(IntEnum):
    LOW = 0
    MEDIUM = 1
    HIGH = 2

    @property
    def label(self) -> str:
        return self.name.lower()


_BY_LABEL = {p.label: p for p in Priority}
LABELS = tuple(_BY_LABEL)  # low, medium, high: the API's words for the classes


def parse_priority(value: object) -> Priority | None:
    """Read an API value: a label, or None meaning "inherit"; anything else is InvalidPriority."""
    if value is None or isinstance(value, Priority):
        return value
    if isinstance(value, str) and value in _BY_LABEL:
        return _BY_LABEL[value]
    raise InvalidPriority(f"Priority must be one of low, medium, high or null, not {value!r}.")


def inherited_priority(group_priorities: Iterable[Priority | None], default: Priority) -> Priority:
    """The highest explicit priority among a person's groups, else the system default."""
    explicit = [p for p in group_priorities if p is not None]
    return max(explicit) if explicit else default


def ceiling(inherited: Priority, is_admin: bool) -> Priority:
    """The highest value a person may give their own token."""
    return Priority.HIGH if is_admin else inherited


def effective_class(
    override: Priority | None,
    override_set_by_admin: bool,
    inherited: Priority,
    is_admin: bool = False,
) -> Priority:
    """The class a request runs at.

    An override the owner set is capped at the owner's ceiling *now* (their inherited priority,
    or high while they are an administrator), because groups may have shrunk since it was
    saved; another administrator's override is a deliberate grant and stands.
    """
    if override is None:
        return inherited
    if override_set_by_admin:
        return override
    return min(override, ceiling(inherited, is_admin))
