"""What detection learned about an engine, and which dialects it serves itself."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Final

ENGINE_KINDS: Final = frozenset({"sglang", "vllm", "llamacpp", "ollama", "generic", "unknown"})


def _opt_bool(value: object) -> bool | None:
    # Only a real boolean counts as a report; "true" or 1 from a stored blob proves nothing.
    return value if isinstance(value, bool) else None


def _opt_str(value: object) -> str | None:
    return value if isinstance(value, str) else None


@dataclass(frozen=True, slots=True)
class EngineProfile:
    """What detection learned about a backend; None means "not reported", never "false"."""

    kind: str
    version: str | None = None
    priority_scheduling: bool | None = None
    schedule_policy: str | None = None
    low_values_first: bool | None = None
    detected_at: float | None = None
    # Whether it serves the Anthropic Messages and OpenAI Responses APIs itself.
    messages: bool | None = None
    responses: bool | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "version": self.version,
            "priority_scheduling": self.priority_scheduling,
            "schedule_policy": self.schedule_policy,
            "low_values_first": self.low_values_first,
            "detected_at": self.detected_at,
            "messages": self.messages,
            "responses": self.responses,
        }

    @classmethod
    def from_json(cls, data: object) -> EngineProfile:
        """Read a stored profile leniently: anything malformed degrades to "not reported"."""
        if not isinstance(data, dict):
            return cls("unknown")
        kind = data.get("kind")
        detected_at = data.get("detected_at")
        return cls(
            kind=kind if isinstance(kind, str) and kind in ENGINE_KINDS else "unknown",
            version=_opt_str(data.get("version")),
            priority_scheduling=_opt_bool(data.get("priority_scheduling")),
            schedule_policy=_opt_str(data.get("schedule_policy")),
            low_values_first=_opt_bool(data.get("low_values_first")),
            messages=_opt_bool(data.get("messages")),
            responses=_opt_bool(data.get("responses")),
            detected_at=(
                float(detected_at)
                if isinstance(detected_at, int | float) and not isinstance(detected_at, bool)
                else None
            ),
        )


SURFACE_MODES = ("auto", "native", "translate")


def serves_natively(mode: str, profile: EngineProfile | None, surface: str) -> bool:
    if mode == "native":
        return True
    if mode == "translate":
        return False
    return profile is not None and getattr(profile, surface, None) is True
