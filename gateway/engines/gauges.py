"""An engine's own load gauges, read from its /metrics as each engine's source names them.

- vLLM: `vllm:num_requests_running`, `vllm:num_requests_waiting`, `vllm:kv_cache_usage_perc`
  (0.9.2 on; `vllm:gpu_cache_usage_perc` before, gone in 0.12);
- SGLang: `sglang:num_running_reqs`, `sglang:num_queue_reqs`, `sglang:token_usage`;
- llama.cpp: `llamacpp:requests_processing`, `llamacpp:requests_deferred`, and
  `llamacpp:kv_cache_usage_ratio` in builds before May 2025.

(vLLM vllm/v1/metrics/loggers.py; SGLang srt/observability/metrics_collector.py, metrics only
with --enable-metrics; llama.cpp tools/server/server-task.cpp, only with --metrics.) Each is a
gauge; vLLM writes one series per data-parallel engine (`engine="0"`, ...) and SGLang one per
`dp_rank`: one backend URL serves them all, so running and waiting are summed over the series
and the KV use is the fullest engine's (the one that preempts first). KV use is a fraction,
1 = full, whatever the name says.

The reader is a line scanner, not a Prometheus parser: a vLLM exposition holds hundreds of
histogram lines and it is read several times a second, so only the lines that start with a
wanted name are split. What an engine says is checked, not trusted: a negative, NaN or infinite
value, or a KV use outside 0..1, is a lie (`GaugesError`), and so is a body with neither a
running nor a waiting gauge of the named engine.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Final

MAX_BODY: Final = 4 << 20  # a /metrics body larger than this is not read (vLLM's is ~100 KB)


class GaugesError(ValueError):
    """The metrics cannot be believed: missing, malformed, or values no engine could report."""


@dataclass(frozen=True, slots=True)
class Names:
    """The gauges of one engine, each with the names it had over its versions, newest first."""

    running: tuple[str, ...]
    waiting: tuple[str, ...]
    kv_usage: tuple[str, ...]


NAMES: Final = {
    "vllm": Names(
        ("vllm:num_requests_running",),
        ("vllm:num_requests_waiting",),
        ("vllm:kv_cache_usage_perc", "vllm:gpu_cache_usage_perc"),
    ),
    "sglang": Names(
        ("sglang:num_running_reqs",), ("sglang:num_queue_reqs",), ("sglang:token_usage",)
    ),
    "llamacpp": Names(
        ("llamacpp:requests_processing",),
        ("llamacpp:requests_deferred",),
        ("llamacpp:kv_cache_usage_ratio",),
    ),
}
KINDS: Final = tuple(NAMES)


@dataclass(frozen=True, slots=True)
class Gauges:
    """One reading of an engine's load: requests running and waiting, KV cache in use."""

    running: float
    waiting: float
    kv_usage: float | None  # None: this engine (version) does not report it


def read(text: bytes | str, kind: str) -> Gauges:
    """The gauges of engine `kind` in a Prometheus text exposition; GaugesError if not there."""
    names = NAMES[kind]
    if isinstance(text, bytes):
        if len(text) > MAX_BODY:
            raise GaugesError(f"the metrics are {len(text)} bytes, more than {MAX_BODY}")
        text = text.decode("utf-8", "replace")
    wanted: dict[str, list[float]] = {
        n: [] for n in (*names.running, *names.waiting, *names.kv_usage)
    }
    prefixes = tuple(wanted)
    for line in text.splitlines():
        if line.startswith(prefixes):
            name, value = _sample(line)
            values = wanted.get(name)
            if values is not None:
                values.append(value)
    running = _first(wanted, names.running)
    waiting = _first(wanted, names.waiting)
    if running is None and waiting is None:
        raise GaugesError(f"no {kind} running or waiting gauge in the metrics")
    kv = _first(wanted, names.kv_usage)
    for what, values in (("running", running), ("waiting", waiting)):
        if values is not None and any(v < 0 for v in values):
            raise GaugesError(f"a negative {what} count")
    if kv is not None and any(not 0.0 <= v <= 1.0 for v in kv):
        raise GaugesError("a KV cache use outside 0..1")
    return Gauges(
        running=sum(running or ()),
        waiting=sum(waiting or ()),
        kv_usage=max(kv) if kv else None,
    )


def _first(found: dict[str, list[float]], names: tuple[str, ...]) -> list[float] | None:
    """The series of the newest name the engine reports (older versions have older names)."""
    for name in names:
        if found[name]:
            return found[name]
    return None


def _sample(line: str) -> tuple[str, float]:
    """A sample line's metric name and value: `name{labels} value [timestamp]`."""
    brace = line.find("{")
    if brace >= 0:
        # Label values may hold spaces and escaped quotes; the value follows the last brace.
        end = line.rfind("}")
        if end < brace:
            raise GaugesError(f"a malformed sample line: {line[:80]!r}")
        name, rest = line[:brace], line[end + 1 :]
    else:
        name, _, rest = line.partition(" ")
    fields = rest.split()
    if not fields:
        raise GaugesError(f"a sample without a value: {line[:80]!r}")
    try:
        value = float(fields[0])
    except ValueError:
        raise GaugesError(f"a value that is not a number: {fields[0][:40]!r}") from None
    if not math.isfinite(value):
        raise GaugesError(f"{name} is {fields[0]}")
    return name, value
