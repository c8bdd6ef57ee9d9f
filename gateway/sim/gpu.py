"""The simulated GPU: a batch of running sequences, a KV cache, and a step loop whose time grows
with the batch, so that capacity, saturation and the engine's own queue can be measured here.

Off by default (the sim's instant engine stays the default); on (`SimConfig.gpu`), every
generation of the sim runs through one `Gpu`. The model, and where each part of it comes from:

- **Batch.** At most `batch` sequences run at once (vLLM's `max_num_seqs`, SGLang's
  `max_running_requests`, llama.cpp's `--parallel`); the others wait in the engine's own FCFS
  queue, admitted from its head only, and only while the one at the head fits (vLLM V1
  `v1/core/sched/scheduler.py`: waiting requests are scheduled in order, and a request that does
  not fit stops the scan: head-of-line, no reordering by priority under the default fcfs).
- **KV cache.** A sequence holds its prompt plus its output so far, in tokens, out of
  `kv_tokens` (vLLM: blocks of 16 tokens out of num_gpu_blocks; SGLang: max_total_num_tokens).
  A waiting sequence is admitted only when its prompt (and one token more) fits; nothing is
  reserved for the output, so decoding grows into the cache, as in vLLM and SGLang.
- **Preemption.** When the next step's tokens do not fit, the newest running sequence is
  preempted: its cache freed, its progress lost (recompute, vLLM V1 has no swap), and it goes
  back to the head of the queue, `preemptions` counting it (vLLM `_preempt_request`;
  `vllm:num_preemptions_total`). No waiting sequence is admitted in a step that preempted. The
  tokens it had sent are not sent again: its client sees each token once, as vLLM's does
  (the recomputed output stays the request's; here it is recomputed a token a step).
- **Step time.** A decode step reads every weight once and the cache of every running
  sequence, so it costs `step_ms + step_ms_per_seq * running` (memory bound: vLLM's
  `v1/metrics/perf.py` read-bytes model; SGLang fits exactly this line, its `decode_moments`):
  throughput `running / step` rises with the batch and flattens at `1 / step_ms_per_seq`, while
  each sequence's time per token keeps rising. Prefill is compute bound, `prefill_ms_per_1k`
  per thousand prompt tokens, chunked at `token_budget` tokens per step (vLLM's
  max_num_batched_tokens); a step that prefills costs the sum. A sequence's first token comes
  at the end of the step that completes its prefill.
- **Gauges.** `running`, `waiting`, `kv_usage` (used / total, 1 = full) and `preemptions`, in
  each engine's own /metrics shape (`metrics(kind)`).

Time is real (asyncio sleeps of the step time), so the gateway in front sees real latencies.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections import deque
from collections.abc import AsyncGenerator
from dataclasses import dataclass, field


@dataclass(slots=True)
class GpuConfig:
    """The shape of the simulated engine (see the module docstring for where each comes from)."""

    batch: int = 8
    kv_tokens: int = 1 << 20
    step_ms: float = 6.0
    step_ms_per_seq: float = 1.0
    prefill_ms_per_1k: float = 10.0
    token_budget: int = 2048


@dataclass(eq=False, slots=True)
class Sequence:
    prompt: int  # prompt tokens
    wanted: int  # output tokens to generate
    prefilled: int = 0
    generated: int = 0
    sent: int = 0  # tokens its client has had: after a preemption, the recomputed ones are not
    tokens: asyncio.Queue[int | None] = field(default_factory=asyncio.Queue)
    done: bool = False

    @property
    def held(self) -> int:
        """Tokens of the KV cache it holds: what it prefilled and what it generated."""
        return self.prefilled + self.generated


class Gpu:
    """One engine's scheduler and step loop (see the module docstring)."""

    def __init__(self, config: GpuConfig | None = None) -> None:
        self.config = config or GpuConfig()
        self.running: list[Sequence] = []
        self.waiting: deque[Sequence] = deque()
        self.preemptions = 0
        self.steps = 0
        self.max_running_seen = 0
        self.max_waiting_seen = 0
        self._loop_task: asyncio.Task[None] | None = None
        self._wake = asyncio.Event()

    # ----- the gauges -----------------------------------------------------------------------

    @property
    def kv_used(self) -> int:
        return sum(s.held for s in self.running)

    @property
    def kv_usage(self) -> float:
        return min(1.0, self.kv_used / max(1, self.config.kv_tokens))

    def stats(self) -> dict[str, int]:
        """The GPU's counts for /sim/stats: what runs and waits now, the most seen, preemptions
        (the maxima restart with `reset_maxima`)."""
        return {
            "gpu_running": len(self.running),
            "gpu_waiting": len(self.waiting),
            "gpu_max_running_seen": self.max_running_seen,
            "gpu_max_waiting_seen": self.max_waiting_seen,
            "gpu_preemptions": self.preemptions,
        }

    def reset_maxima(self) -> None:
        self.max_running_seen, self.max_waiting_seen = len(self.running), len(self.waiting)

    # ----- one generation -------------------------------------------------------------------

    async def generate(self, prompt_tokens: int, max_tokens: int) -> AsyncGenerator[int, None]:
        """The output tokens' numbers as the steps produce them. Closing it early (the client
        went away; use `contextlib.aclosing`) takes the sequence out of the batch or the queue
        at once, as an engine aborts a request whose connection closed."""
        seq = Sequence(prompt=max(1, prompt_tokens), wanted=max(0, max_tokens))
        if seq.wanted == 0:
            return
        self.waiting.append(seq)
        self.max_waiting_seen = max(self.max_waiting_seen, len(self.waiting))
        self._ensure_loop()
        try:
            while True:
                token = await seq.tokens.get()
                if token is None:
                    return
                yield token
        finally:
            self._drop(seq)

    def _drop(self, seq: Sequence) -> None:
        if not seq.done:
            seq.done = True
            with contextlib.suppress(ValueError):
                self.running.remove(seq)
            with contextlib.suppress(ValueError):
                self.waiting.remove(seq)

    # ----- the step loop --------------------------------------------------------------------

    def _ensure_loop(self) -> None:
        if self._loop_task is None or self._loop_task.done():
            self._loop_task = asyncio.get_running_loop().create_task(self._steps())
        self._wake.set()

    async def _steps(self) -> None:
        while self.running or self.waiting:
            prefill = self.schedule()
            cfg = self.config
            step = cfg.step_ms + cfg.step_ms_per_seq * len(self.running)
            step += cfg.prefill_ms_per_1k * prefill / 1000
            await asyncio.sleep(step / 1000)
            self.advance()

    def schedule(self) -> int:
        """Plan one step: preempt what no longer fits, admit what does; the prefill tokens of
        the step."""
        cfg = self.config
        preempted = False
        # Every running sequence needs one more token's room (decoding), or its next chunk.
        while self.running and self.kv_used + len(self.running) > cfg.kv_tokens:
            victim = self.running.pop()  # the newest
            victim.prefilled = victim.generated = 0  # recompute from scratch later
            self.waiting.appendleft(victim)
            self.preemptions += 1
            preempted = True
        budget = cfg.token_budget
        planned = self.kv_used + len(self.running)  # the cache once this step has run
        for seq in self.running:
            chunk = min(seq.prompt - seq.prefilled, budget)
            budget -= chunk
            planned += chunk
        if not preempted:
            while self.waiting and len(self.running) < cfg.batch and budget > 0:
                head = self.waiting[0]
                chunk = min(head.prompt, budget)
                if planned + chunk + 1 > cfg.kv_tokens:
                    break  # head of line: nothing behind it goes first
                self.waiting.popleft()
                self.running.append(head)
                budget -= chunk
                planned += chunk + 1
        self.max_running_seen = max(self.max_running_seen, len(self.running))
        return cfg.token_budget - budget

    def advance(self) -> None:
        """The step ran: prefill chunks land, decoding sequences get a token each."""
        self.steps += 1
        budget = self.config.token_budget
        finished = []
        for seq in self.running:
            if seq.prefilled < seq.prompt:
                chunk = min(seq.prompt - seq.prefilled, budget)
                budget -= chunk
                seq.prefilled += chunk
                if seq.prefilled < seq.prompt:
                    continue  # still prefilling: no token yet
            seq.generated += 1
            if seq.generated > seq.sent:
                seq.tokens.put_nowait(seq.generated - 1)
                seq.sent = seq.generated
            if seq.generated >= seq.wanted:
                finished.append(seq)
        for seq in finished:
            seq.tokens.put_nowait(None)
            self._drop(seq)

    # ----- /metrics in each engine's shape ----------------------------------------------------

    def metrics(self, kind: str, model: str = "sim-small") -> str:
        """The gauges as `kind` (vllm, sglang, llamacpp) publishes them on /metrics."""
        return exposition(
            kind,
            running=len(self.running),
            waiting=len(self.waiting),
            kv_usage=self.kv_usage,
            preemptions=self.preemptions,
            model=model,
        )


def exposition(
    kind: str,
    *,
    running: int,
    waiting: int,
    kv_usage: float | None,
    preemptions: int = 0,
    model: str = "sim-small",
) -> str:
    """An engine's load gauges in the /metrics shape of `kind` (vllm, sglang, llamacpp), with
    the names, HELP texts and labels of its own source (tests/gateway/engines/metrics/)."""
    out: list[str] = []

    def gauge(name: str, help_: str, value: float, labels: str = "", kind_: str = "gauge") -> None:
        out.append(f"# HELP {name} {help_}\n# TYPE {name} {kind_}\n{name}{labels} {value}\n")

    if kind == "vllm":
        labels = f'{{engine="0",model_name="{model}"}}'
        gauge("vllm:num_requests_running", "Number of requests in model execution batches.",
              float(running), labels)  # fmt: skip
        gauge("vllm:num_requests_waiting", "Number of requests waiting to be processed.",
              float(waiting), labels)  # fmt: skip
        if kv_usage is not None:
            gauge("vllm:kv_cache_usage_perc", "KV-cache usage. 1 means 100 percent usage.",
                  kv_usage, labels)  # fmt: skip
        gauge("vllm:num_preemptions_total", "Cumulative number of preemption from the engine.",
              float(preemptions), labels, "counter")  # fmt: skip
    elif kind == "sglang":
        labels = f'{{engine_type="unified",model_name="{model}",pp_rank="0",tp_rank="0"}}'
        gauge("sglang:num_running_reqs", "The number of running requests.", float(running), labels)
        gauge("sglang:num_queue_reqs", "The number of requests in the waiting queue.",
              float(waiting), labels)  # fmt: skip
        if kv_usage is not None:
            gauge("sglang:token_usage", "The token usage.", round(kv_usage, 2), labels)
    elif kind == "llamacpp":
        gauge("llamacpp:requests_processing", "Number of requests processing", running)
        gauge("llamacpp:requests_deferred", "Number of requests deferred", waiting)
    else:
        raise ValueError(f"no metrics shape for {kind!r}")
    return "".join(out)
