"""The typed operator settings catalog: one table declares every key, its kind, default and section.

Reads go through `setting(key)`; writes through `settings_update(values=..., actor=...)`, which
validates the whole batch first so a bad value changes nothing. A drift test checks that every
declared key is read somewhere and every key read is declared.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from django.db import transaction

from aiplane import audit
from aiplane.models import OperatorSetting


@dataclass(frozen=True)
class SettingSpec:
    key: str
    kind: str  # "bool" | "int" | "choice"
    default: Any
    section: str
    choices: tuple[str, ...] = ()
    minimum: int | None = None
    maximum: int | None = None


CATALOG: tuple[SettingSpec, ...] = (
    SettingSpec("gateway.priority_enabled", "bool", False, "access.gateway"),
    SettingSpec(
        "gateway.priority_default",
        "choice",
        "medium",
        "access.gateway",
        choices=("low", "medium", "high"),
    ),
    SettingSpec(
        "gateway.upstream_wait_secs", "int", 120, "access.gateway", minimum=0, maximum=3600
    ),
    SettingSpec(
        "gateway.scheduler",
        "choice",
        "strict",
        "access.gateway",
        choices=("strict", "serial", "fcfs", "wspt", "edf"),
    ),
    SettingSpec(
        "gateway.aging_divisor_secs", "int", 60, "access.gateway", minimum=0, maximum=86400
    ),
    SettingSpec("gateway.affinity_bonus", "int", 10, "access.gateway", minimum=0, maximum=99),
    SettingSpec("gateway.max_waiters", "int", 0, "access.gateway", minimum=0, maximum=1_000_000),
    SettingSpec("gateway.fair_share", "bool", False, "access.gateway"),
    SettingSpec(
        "gateway.fair_share_by",
        "choice",
        "requests",
        "access.gateway",
        choices=("requests", "tokens"),
    ),
    SettingSpec(
        "gateway.fair_share_half_life_secs", "int", 600, "access.gateway", minimum=0, maximum=86400
    ),
    SettingSpec("gateway.headroom_secs", "int", 30, "access.gateway", minimum=0, maximum=86400),
    # A higher class cuts a lower one's stream in prefill (gateway/dataplane/preemption.py).
    SettingSpec("gateway.preemption", "bool", False, "access.gateway"),
    # The upstream client's bounds: a dead or stuck engine never holds a request or its slot.
    SettingSpec("gateway.connect_timeout_secs", "int", 5, "access.gateway", minimum=1, maximum=300),
    SettingSpec(
        "gateway.first_byte_timeout_secs", "int", 600, "access.gateway", minimum=1, maximum=86400
    ),
    SettingSpec("gateway.idle_timeout_secs", "int", 60, "access.gateway", minimum=1, maximum=86400),
    # Which image, audio and video URLs engines are given to fetch (gateway/dialects/media_urls.py).
    SettingSpec(
        "gateway.media_urls", "choice", "public", "access.gateway", choices=("public", "any")
    ),
    SettingSpec("activity.retention_days", "int", 30, "observability", minimum=1, maximum=3650),
    # A year by default: long enough to answer "who changed this?" after an annual review.
    SettingSpec("audit.retention_days", "int", 365, "observability", minimum=1, maximum=3650),
)

SPECS: dict[str, SettingSpec] = {spec.key: spec for spec in CATALOG}


class SettingError(ValueError):
    """A value that does not fit its declared kind; `key` names the offending setting."""

    def __init__(self, key: str, message: str, code: str = "invalid_setting") -> None:
        super().__init__(message)
        self.key = key
        self.code = code


def coerce(spec: SettingSpec, value: Any) -> Any:
    """Validate one value against its spec; raise SettingError rather than guess."""
    if spec.kind == "bool":
        if not isinstance(value, bool):
            raise SettingError(spec.key, f"{spec.key} must be true or false.")
        return value
    if spec.kind == "int":
        if isinstance(value, bool) or not isinstance(value, int):
            raise SettingError(spec.key, f"{spec.key} must be an integer.")
        if spec.minimum is not None and value < spec.minimum:
            raise SettingError(spec.key, f"{spec.key} must be at least {spec.minimum}.")
        if spec.maximum is not None and value > spec.maximum:
            raise SettingError(spec.key, f"{spec.key} must be at most {spec.maximum}.")
        return value
    if spec.kind == "choice":
        if value not in spec.choices:
            allowed = ", ".join(spec.choices)
            raise SettingError(spec.key, f"{spec.key} must be one of: {allowed}.")
        return value
    raise AssertionError(f"unknown kind {spec.kind}")  # pragma: no cover - catalog typo


def all_settings() -> dict[str, Any]:
    """Every declared key with its stored value, or its default when none is stored."""
    stored = dict(OperatorSetting.objects.values_list("key", "value"))
    values: dict[str, Any] = {}
    for spec in CATALOG:
        raw = stored.get(spec.key, spec.default)
        try:
            values[spec.key] = coerce(spec, raw)
        except SettingError:
            values[spec.key] = spec.default  # a hand-edited bad row never breaks the gateway
    return values


def setting(key: str) -> Any:
    """The current value of one declared setting."""
    if key not in SPECS:
        raise KeyError(f"undeclared setting {key}")
    return all_settings()[key]


_listeners: list[Callable[[dict[str, Any]], None]] = []


def on_settings_changed(listener: Callable[[dict[str, Any]], None]) -> None:
    """Register a callback run (after commit) with the full new values whenever settings change."""
    _listeners.append(listener)


@transaction.atomic
def settings_update(*, values: dict[str, Any], actor: Any = None) -> dict[str, Any]:
    """Validate every value, then store them all; unknown keys and bad values change nothing.

    actor: the User who saved, a command's name, or None; each changed key is one audit row.
    """
    if not isinstance(values, dict):
        raise SettingError("", "Settings must be a JSON object of key: value.", "invalid_request")
    cleaned: dict[str, Any] = {}
    for key, value in values.items():
        spec = SPECS.get(key)
        if spec is None:
            raise SettingError(key, f"Unknown setting {key}.", "unknown_setting")
        cleaned[key] = coerce(spec, value)
    current = all_settings()
    for key, value in cleaned.items():
        OperatorSetting.objects.update_or_create(
            key=key, defaults={"value": value, "updated_by": audit.actor_name(actor)}
        )
        audit.record(actor, "setting.update", key, {"value": current[key]}, {"value": value})
    transaction.on_commit(_notify)
    return all_settings()


def _notify() -> None:
    current = all_settings()
    for listener in list(_listeners):
        listener(current)
