"""The simulated engine's configuration and the engine versions it imitates."""

from __future__ import annotations

import re
import sys
from dataclasses import dataclass, field

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
_SGLANG_NO_PRIORITY_RANK = sys.maxsize + 1

# SGLang's policies that sort by priority; the cache-aware ones ignore it.
_SGLANG_PRIORITY_POLICIES = ("fcfs", "lof")

_VERSION = re.compile(r"(\d+)\.(\d+)\.(\d+)")


def _parse_version(text: str) -> tuple[int, int, int]:
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
}
