"""The simulated engine's configuration and the engine versions it imitates."""

from __future__ import annotations

import re
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from gateway.sim.gpu import GpuConfig

SERVER_INFO_STYLES = ("none", "sglang", "vllm")

ERROR_SHAPES = ("openai", "sglang", "vllm-flat", "vllm")

SIM_VERSION = "sim-1.0"

OWNER = "aiplane-sim"

OWNERS = {"none": OWNER, "sglang": "sglang", "vllm": "vllm"}

EMBEDDING_DIMENSION = 8

QUEUE_FULL = "The request queue is full."

EVICTED = "The request is aborted by a higher priority request."

# Versions at which the imitated behaviour changed.
SGLANG_PRIORITY_SINCE = (0, 5, 3)

SGLANG_SERVER_INFO_SINCE = (0, 5, 6)

VLLM_NESTED_ERRORS_SINCE = (0, 10, 1)

# SGLang ranks a request without a priority after all others, whichever the direction.
SGLANG_NO_PRIORITY_RANK = sys.maxsize + 1

# SGLang's policies that sort by priority; the cache-aware ones ignore it.
SGLANG_PRIORITY_POLICIES = ("fcfs", "lof")

_VERSION = re.compile(r"(\d+)\.(\d+)\.(\d+)")


def parse_version(text: str) -> tuple[int, int, int]:
    match = _VERSION.match(text)
    if match is None:
        raise ValueError(f"{text!r} is not a version like 0.5.23")
    return int(match.group(1)), int(match.group(2)), int(match.group(3))


@dataclass
class SimConfig:
    """How the simulated engine behaves; every field can be changed at run time."""

    models: list[str] = field(default_factory=lambda: ["sim-small", "sim-large"])
    # Concurrent generations, like a GPU server's batch; 0 holds every request in the queue.
    slots: int = 4
    # Tokens per completion unless max_tokens / max_completion_tokens asks for fewer.
    tokens: int = 16
    # Seconds between tokens; 0 is the instant engine, which never sleeps.
    token_delay: float = 0.02
    api_key: str | None = None
    # The engine imitated (see the table above): "none", "sglang" or "vllm".
    server_info: str = "none"
    sglang_version: str = "0.5.23"
    sglang_schedule_policy: str = "fcfs"
    sglang_low_first: bool = False
    vllm_version: str = "0.33.0"
    # Admit waiters by the body's `priority` in the imitated engine's order; arrival order when
    # off. Under "sglang" this is --enable-priority-scheduling, reported by the server info.
    priority_scheduling: bool = False
    # SGLang's --max-queued-requests: more waiters than this are refused (None: unbounded).
    max_queued_requests: int | None = None
    # Honour [[sim:...]] fault directives; off, so callers of the demo engine cannot ask for one.
    directives: bool = False
    record_limit: int = 1000
    # Serve Anthropic's /v1/messages (+ /count_tokens) natively; off, both answer 404.
    messages: bool = False
    # Serve OpenAI's /v1/responses natively; off, it answers 404.
    responses: bool = False
    # Keep stored responses in memory for previous_response_id (vLLM's
    # VLLM_ENABLE_RESPONSES_API_STORE); off, `store` is ignored as vLLM does by default.
    responses_store: bool = False
    # Tool calls in one tool answer when the request allows parallel calls (successive tools).
    tool_calls: int = 1
    # Prompt tokens reported as read from the prefix cache (at most the prompt); None: not reported.
    cached_tokens: int | None = None
    # Off, a chat or text stream never ends with a usage chunk, whatever
    # stream_options.include_usage asks: llama-cpp-python's server ignores it (row 19).
    stream_usage: bool = True
    # The simulated GPU (gateway/sim/gpu.py): with a batch above 0, every generation runs in its
    # batch and step loop instead of `slots` and `token_delay` (faults on purpose excepted).
    gpu_batch: int = 0
    gpu_kv_tokens: int = 1 << 20
    gpu_step_ms: float = 6.0
    gpu_step_ms_per_seq: float = 1.0
    gpu_prefill_ms_per_1k: float = 10.0
    # GET /metrics in this engine's shape ("vllm", "sglang", "llamacpp"); "none": 404, as an
    # engine started without metrics (SGLang without --enable-metrics) answers.
    metrics: str = "none"
    # Metrics that go wrong, for the gateway's tests: "garbage", "huge" (50 MB), "hang",
    # "negative", "nan", "zero-waiting" (a queue it hides), "error" (500); "none": as they are.
    metrics_fault: str = "none"


METRICS_SHAPES = ("none", "vllm", "sglang", "llamacpp")
_FLOATS = frozenset({"token_delay", "gpu_step_ms", "gpu_step_ms_per_seq", "gpu_prefill_ms_per_1k"})


def setting_value(name: str, value: Any) -> Any:
    """A checked setting as the config keeps it (times as floats, whatever JSON sent)."""
    return float(value) if name in _FLOATS else value


def gpu_config(config: SimConfig) -> GpuConfig | None:
    """The simulated GPU's shape from the engine's configuration; None while it is off."""
    if config.gpu_batch <= 0:
        return None
    return GpuConfig(
        batch=config.gpu_batch,
        kv_tokens=max(1, config.gpu_kv_tokens),
        step_ms=config.gpu_step_ms,
        step_ms_per_seq=config.gpu_step_ms_per_seq,
        prefill_ms_per_1k=config.gpu_prefill_ms_per_1k,
    )


def sglang_has_priority(config: SimConfig) -> bool:
    """Whether the imitated SGLang knows priority scheduling at all (row 2)."""
    return parse_version(config.sglang_version) >= SGLANG_PRIORITY_SINCE


# The accepted run-time types of each SimConfig field, for POST /sim/config.
_FIELD_TYPES: dict[str, tuple[type, ...]] = {
    "models": (list,),
    "slots": (int,),
    "tokens": (int,),
    "token_delay": (int, float),
    "api_key": (str, type(None)),
    "server_info": (str,),
    "sglang_version": (str,),
    "sglang_schedule_policy": (str,),
    "sglang_low_first": (bool,),
    "vllm_version": (str,),
    "priority_scheduling": (bool,),
    "max_queued_requests": (int, type(None)),
    "directives": (bool,),
    "record_limit": (int,),
    "messages": (bool,),
    "responses": (bool,),
    "responses_store": (bool,),
    "tool_calls": (int,),
    "cached_tokens": (int, type(None)),
    "stream_usage": (bool,),
    "gpu_batch": (int,),
    "gpu_kv_tokens": (int,),
    "gpu_step_ms": (int, float),
    "gpu_step_ms_per_seq": (int, float),
    "gpu_prefill_ms_per_1k": (int, float),
    "metrics": (str,),
    "metrics_fault": (str,),
}


def _strings(name: str, value: Any) -> None:
    if not all(isinstance(m, str) for m in value):
        raise ValueError("models must be a list of strings")


def _style(name: str, value: Any) -> None:
    if value not in SERVER_INFO_STYLES:
        raise ValueError(f"server_info must be one of {', '.join(SERVER_INFO_STYLES)}")


def _version(name: str, value: Any) -> None:
    parse_version(str(value))


def _non_negative(name: str, value: Any) -> None:
    if value is not None and value < 0:
        raise ValueError(f"{name} cannot be negative")


def _metrics_shape(name: str, value: Any) -> None:
    if value not in METRICS_SHAPES:
        raise ValueError(f"metrics must be one of {', '.join(METRICS_SHAPES)}")


METRICS_FAULTS = ("none", "garbage", "huge", "hang", "negative", "nan", "zero-waiting", "error")


def _metrics_fault(name: str, value: Any) -> None:
    if value not in METRICS_FAULTS:
        raise ValueError(f"metrics_fault must be one of {', '.join(METRICS_FAULTS)}")


def _at_least_one(name: str, value: Any) -> None:
    if value < 1:
        raise ValueError("tool_calls must be at least 1")


# What each field's value must be beyond its type, checked in this order.
_FIELD_CHECKS: dict[str, tuple[Callable[[str, Any], None], ...]] = {
    "models": (_strings,),
    "slots": (_non_negative,),
    "tokens": (_non_negative,),
    "token_delay": (_non_negative,),
    "server_info": (_style,),
    "sglang_version": (_version,),
    "vllm_version": (_version,),
    "max_queued_requests": (_non_negative,),
    "record_limit": (_non_negative,),
    "tool_calls": (_non_negative, _at_least_one),
    "cached_tokens": (_non_negative,),
    "gpu_batch": (_non_negative,),
    "gpu_kv_tokens": (_non_negative,),
    "gpu_step_ms": (_non_negative,),
    "gpu_step_ms_per_seq": (_non_negative,),
    "gpu_prefill_ms_per_1k": (_non_negative,),
    "metrics": (_metrics_shape,),
    "metrics_fault": (_metrics_fault,),
}

# The engine's failure injection, set beside the configuration (POST /sim/config).
INJECTION = ("fail_next", "fail_status")


def _check_injection(name: str, value: Any) -> None:
    if not isinstance(value, int) or isinstance(value, bool):
        raise ValueError(f"{name} must be an integer")
    if name == "fail_status" and not 400 <= value <= 599:
        raise ValueError("fail_status must be an HTTP error status (400-599)")


def check_setting(name: str, value: Any) -> None:
    """Raise ValueError when POST /sim/config may not set `name` to `value`."""
    if name in INJECTION:
        _check_injection(name, value)
        return
    types = _FIELD_TYPES.get(name)
    if types is None:
        raise ValueError(f"unknown sim setting {name!r}")
    # bool is an int subclass, yet `"slots": true` is a mistake worth reporting.
    if not isinstance(value, types) or (isinstance(value, bool) and bool not in types):
        raise ValueError(f"{name} has the wrong type")
    for check in _FIELD_CHECKS.get(name, ()):
        check(name, value)
