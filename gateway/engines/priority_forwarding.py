"""Backend priority forwarding: per-backend mode, detected engine profile, and the body rewrite."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Final

from gateway.core.classes import CLASS_NAMES
from gateway.core.scheduling_fields import strip_scheduling
from gateway.engines.profiles import EngineProfile

MODES: Final = frozenset({"auto", "gateway", "custom"})

# SGLang only consults priority under these policies; lpm/dfs-weight/random ignore it.
SGLANG_PRIORITY_POLICIES: Final = frozenset({"fcfs", "lof"})

# SGLang values for (low, medium, high). Small and non-negative: SGLang preempts a *running*
# request only when a newcomer's priority differs by more than
# --priority-scheduling-preemption-threshold (default 10), so a spread of 2 orders the waiting
# queue without evicting running work (AIplane never interrupts a running request), and
# non-negative values stay clear of SGLang's own defaults for requests that carry no priority.
SGLANG_LARGER_FIRST: Final = (0, 1, 2)

SGLANG_SMALLER_FIRST: Final = (2, 1, 0)

# Fields a custom mapping may not overwrite: the request itself, streaming, tools and every
# generation control. The last group goes beyond the OpenAI core list because engines accept
# these too and an integer there would silently change the answer (or clobber Dynamo's nvext).
PROTECTED_FIELDS: Final = frozenset(
    {
        "model", "messages", "prompt", "input", "tools", "tool_choice", "functions",
        "function_call", "stream", "stream_options", "n",
        "max_tokens", "max_completion_tokens", "temperature", "top_p", "top_k", "min_p",
        "frequency_penalty", "presence_penalty", "repetition_penalty", "stop", "seed",
        "logit_bias", "logprobs", "top_logprobs", "response_format", "user", "suffix", "echo",
        "best_of",
        "nvext", "parallel_tool_calls", "reasoning_effort", "min_tokens", "ignore_eos",
        "dimensions", "encoding_format",
    }
)  # fmt: skip

_FIELD_RE: Final = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,63}")

# Engines take a machine integer; bounding to int32 keeps a typo like 1e12 out of their parsers.
_INT_MIN: Final = -(2**31)

_INT_MAX: Final = 2**31 - 1

# Error params are paths inside the admin backend payload, whose `priority` key holds the mode.
_PARAM: Final = "priority"


class MappingError(ValueError):
    """A priority mode the admin API must reject; `param` and `code` feed the OpenAI envelope."""

    def __init__(self, message: str, param: str | None, code: str) -> None:
        super().__init__(message)
        self.message = message
        self.param = param
        self.code = code


@dataclass(frozen=True, slots=True)
class PriorityMode:
    """A backend's forwarding mode: "auto", "gateway" or "custom" with field and three values."""

    mode: str
    field: str | None = None
    low: int | None = None
    medium: int | None = None
    high: int | None = None

    def to_json(self) -> dict[str, Any]:
        if self.mode != "custom":
            return {"mode": self.mode}
        return {
            "mode": "custom",
            "mapping": {
                "field": self.field,
                "low": self.low,
                "medium": self.medium,
                "high": self.high,
            },
        }


AUTO: Final = PriorityMode("auto")

GATEWAY: Final = PriorityMode("gateway")


def parse_priority_mode(data: object) -> PriorityMode:
    """Validate the admin payload's `priority` object (or a stored one) into a PriorityMode."""
    if not isinstance(data, dict):
        raise MappingError("Priority mode must be an object.", _PARAM, "invalid_priority_mode")
    mode = data.get("mode")
    if not isinstance(mode, str) or mode not in MODES:
        raise MappingError(
            "Priority mode must be one of: auto, gateway, custom.",
            f"{_PARAM}.mode",
            "invalid_priority_mode",
        )
    if mode != "custom":
        # An editor may keep the last custom mapping in its form state; it is dropped, not an error.
        return AUTO if mode == "auto" else GATEWAY

    mapping = data.get("mapping")
    if not isinstance(mapping, dict):
        raise MappingError(
            "Custom priority mode needs a mapping object with field, low, medium and high.",
            f"{_PARAM}.mapping",
            "invalid_priority_mapping",
        )
    field = mapping.get("field")
    if not isinstance(field, str) or _FIELD_RE.fullmatch(field) is None:
        raise MappingError(
            "Priority field must be a top-level parameter name: letters, digits and underscores,"
            " not starting with a digit, at most 64 characters.",
            f"{_PARAM}.mapping.field",
            "invalid_priority_mapping",
        )
    if field in PROTECTED_FIELDS:
        raise MappingError(
            f"Priority field '{field}' would replace a protected request parameter.",
            f"{_PARAM}.mapping.field",
            "protected_priority_field",
        )
    values: list[int] = []
    for name in CLASS_NAMES:
        value = mapping.get(name)
        # An exact type check: bool is an int subclass, but `true` as a priority is a mistake.
        if type(value) is not int:
            raise MappingError(
                f"Priority value for '{name}' must be an integer.",
                f"{_PARAM}.mapping.{name}",
                "invalid_priority_mapping",
            )
        if not _INT_MIN <= value <= _INT_MAX:
            raise MappingError(
                f"Priority value for '{name}' must fit in a signed 32-bit integer.",
                f"{_PARAM}.mapping.{name}",
                "invalid_priority_mapping",
            )
        values.append(value)
    return PriorityMode("custom", field, values[0], values[1], values[2])


@dataclass(frozen=True, slots=True)
class Mapping:
    """The resolved rewrite: put `values[cls]` into the top-level `field`."""

    field: str
    values: tuple[int, int, int]


_ENGINE_LABELS: Final = {
    "sglang": "SGLang",
    "vllm": "vLLM",
    "llamacpp": "llama.cpp",
    "ollama": "Ollama",
    "generic": "this OpenAI-compatible endpoint",
}


def _auto(profile: EngineProfile | None) -> tuple[Mapping | None, str]:
    # One decision feeds both resolve_mapping and explain_mapping so the admin UI never
    # explains something other than what the data plane does.
    if profile is None or profile.kind == "unknown":
        return None, "not forwarded: the backend has not been identified"
    if profile.kind == "vllm":
        return None, (
            "not forwarded: vLLM does not report its scheduling policy; use a manual mapping"
            " (field 'priority', lower values first) if it runs with --scheduling-policy priority"
        )
    if profile.kind != "sglang":
        label = _ENGINE_LABELS.get(profile.kind, profile.kind)
        return None, (
            f"not forwarded: {label} does not report priority scheduling;"
            " configure a manual mapping to forward"
        )
    if profile.priority_scheduling is None:
        return None, "not forwarded: SGLang did not report enable_priority_scheduling"
    if not profile.priority_scheduling:
        return None, "not forwarded: SGLang runs without --enable-priority-scheduling"
    if profile.schedule_policy is None:
        return None, "not forwarded: SGLang did not report schedule_policy"
    if profile.schedule_policy not in SGLANG_PRIORITY_POLICIES:
        return None, (
            f"not forwarded: SGLang schedule_policy '{profile.schedule_policy}'"
            " ignores priority (needs fcfs or lof)"
        )
    if profile.low_values_first is None:
        return None, "not forwarded: SGLang did not report schedule_low_priority_values_first"
    if profile.low_values_first:
        return Mapping("priority", SGLANG_SMALLER_FIRST), (
            "forwarding priority as field 'priority' (smaller first)"
        )
    return Mapping("priority", SGLANG_LARGER_FIRST), (
        "forwarding priority as field 'priority' (larger first)"
    )


def _custom(mode: PriorityMode) -> Mapping | None:
    # A hand-built PriorityMode can skip parse_priority_mode; an incomplete one forwards nothing
    # rather than failing every request at dispatch.
    if mode.field is None or mode.low is None or mode.medium is None or mode.high is None:
        return None
    return Mapping(mode.field, (mode.low, mode.medium, mode.high))


def resolve_mapping(mode: PriorityMode, profile: EngineProfile | None) -> Mapping | None:
    """The mapping to apply for a backend, or None to send no priority upstream."""
    if mode.mode == "custom":
        return _custom(mode)
    if mode.mode == "auto":
        return _auto(profile)[0]
    return None


def explain_mapping(mode: PriorityMode, profile: EngineProfile | None) -> str:
    """A short English reason for the admin UI describing what resolve_mapping decided."""
    if mode.mode == "custom":
        mapping = _custom(mode)
        if mapping is None:
            return "not forwarded: the manual mapping is incomplete"
        low, medium, high = mapping.values
        return (
            f"forwarding priority as field '{mapping.field}'"
            f" (manual: low={low}, medium={medium}, high={high})"
        )
    if mode.mode == "auto":
        return _auto(profile)[1]
    return "not forwarded: gateway-only mode"


def apply_mapping(body: dict[str, Any], mapping: Mapping | None, cls: int) -> None:
    """Rewrite `body` in place for the chosen backend: strip what the client said about
    scheduling (gateway/core/scheduling_fields.py), then set our priority.

    Call it at the final dispatch boundary. A retry on another backend should start from a fresh
    shallow copy of the client body, so a custom field set for the previous backend cannot leak.
    """
    strip_scheduling(body)
    if mapping is not None:
        # A negative index would silently pick "high"; a bad class is a bug, not a request.
        if not 0 <= cls <= 2:
            raise ValueError(f"priority class out of range: {cls!r}")
        body[mapping.field] = mapping.values[cls]
