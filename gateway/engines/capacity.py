"""A backend's capacity learned from the engine: the controller behind `max_inflight: auto`.

The gateway can put high before low only while it holds the waiters. Whatever it lets through
beyond what the engine runs at once waits in the engine's own queue, in arrival order (vLLM's
default fcfs, llama.cpp, Ollama), where priority is gone; whatever it holds back below that
leaves the GPU idle. So the right limit is the engine's real concurrency, which moves with the
prompts' lengths (the KV cache), the engine's flags and other tenants of the same engine.

The controller is a queue controller on the engine's own gauges (gateway/engines/gauges.py),
with the latency as a check and as the fallback:

- **The engine queues** (its waiting count above zero in `queue_readings` readings in a row,
  three: at tens of arrivals a second a reading often catches a request that came between two
  scheduler steps, and two in a row still do, measured in bench/capacity.py; or, in slow start,
  one reading with a queue no such request makes, a quarter of the limit): the limit falls at
  once to what of ours the engine runs, `inflight - waiting`. Other clients of the engine show
  up as load: their requests take the engine's slots, so ours shrink, never the other way round.
- **The KV cache nears full** (`kv_full`, 0.95: vLLM preempts, SGLang retracts): one less; from
  `kv_high` (0.85) it grows no further.
- **Room, and demand for it** (nothing waits at the engine in the latest reading, the limit
  binds: our requests fill it, or waiters want it): it grows, by half until the first fall (slow
  start from a cold start: by half, not doubling, since what passes the edge waits in the
  engine's own queue, in arrival order, before the fall), then by one each `probe_secs`, so it
  finds the edge again after the engine changes; a probe that passed the edge (a fall followed)
  makes the next one wait twice as long, up to `probe_backoff_secs`, and one that holds makes
  probing quick again, so at a steady edge the engine's queue is empty most of the time. A
  reading that shows a queue is never growth. In latency mode it only adds: latency tells of an
  overshoot late.
- **No metrics** (a generic OpenAI server, a remote API; or metrics that stopped): the limit
  follows latency alone, as AIMD (Netflix concurrency-limits' AIMDLimit, backoff 0.9): a
  window's time to first byte beyond `ttfb_tolerance` times its unloaded level, or its time per
  output chunk beyond `tpot_tolerance` times its unloaded level, is a fall; a clean window with
  demand is one more.
- **Metrics that lie** ("0 waiting" while the time to first byte triples): latency wins; the
  controller leaves metrics mode until the two agree again. A time per output chunk beyond
  its tolerance (the batch grew, each token takes longer) stops growth in metrics mode.
- **Stale metrics fail closed**: none fresh within `stale_secs`, the limit holds at what runs
  (no admission above it, never below the floor) and latency mode takes over; fresh metrics
  bring metrics mode back.

Pure: no I/O and no clock of its own (`now` is passed in), so a test drives it step by step.
The limit is always within floor..ceiling; a fall never cancels what runs (admission stops
until in-flight is below the new limit).
"""

from __future__ import annotations

import math
from collections import deque
from dataclasses import dataclass, field
from typing import Final

from gateway.engines.gauges import Gauges

METRICS, LATENCY, STALE, FLOOR, CEILING = "metrics", "latency", "stale", "floor", "ceiling"
FLOOR_DEFAULT: Final = 1
CEILING_DEFAULT: Final = 256


@dataclass(frozen=True, slots=True)
class Tuning:
    """How the controller reacts; the defaults are what bench/capacity.py measured."""

    interval: float = 0.25  # between two readings of the engine's gauges
    queue_readings: int = 3  # readings in a row with the engine queueing: a fall
    slow_start_growth: float = 1.5  # slow start's step (x the limit)
    stale_secs: float = 1.0  # no fresh reading within this: stale, fail closed
    probe_secs: float = 1.0  # after the first fall, one more at most this often
    probe_backoff_secs: float = 8.0  # probes that keep failing wait up to this long
    kv_high: float = 0.85  # no growth from here
    kv_full: float = 0.95  # one less from here
    backoff: float = 0.9  # latency mode's fall (Netflix's AIMD default)
    ttfb_tolerance: float = 3.0  # a window's first byte this much slower than unloaded: a fall
    tpot_tolerance: float = 3.0  # a window's time per chunk this much slower: a fall
    window_secs: float = 1.0  # latency samples are judged per window of this length
    min_samples: int = 4  # a window with fewer is not judged
    lie_margin: float = 0.05  # metrics are doubted only beyond the tolerance plus this (s)
    baseline_decay: float = 1.02  # per window, unloaded levels drift up (the model may change)


@dataclass(slots=True)
class _Window:
    """Latency samples since the last judgement."""

    ttfb: list[float] = field(default_factory=list)
    tpot: list[float] = field(default_factory=list)
    started: float = 0.0


class CapacityController:
    """One backend's learned limit (see the module docstring)."""

    def __init__(
        self,
        floor: int = FLOOR_DEFAULT,
        ceiling: int = CEILING_DEFAULT,
        *,
        start: int | None = None,
        tuning: Tuning | None = None,
    ) -> None:
        if not 1 <= floor <= ceiling:
            raise ValueError(f"capacity floor {floor} and ceiling {ceiling} do not make a range")
        self.floor, self.ceiling = floor, ceiling
        self.tuning = tuning or Tuning()
        self.limit = self._bounded(start if start is not None else floor)
        self.reason = FLOOR if self.limit == floor else METRICS
        self.mode = LATENCY  # until a first reading arrives
        self.changes = 0  # how often the limit moved (aiplane_backend_capacity_changes_total)
        self.gauges: Gauges | None = None  # the last reading believed
        self.read_at = -math.inf
        # The engine's waiting, last readings.
        self._waited: deque[float] = deque(maxlen=self.tuning.queue_readings)
        self._fell = False  # slow start ends at the first fall
        self._probed = -math.inf
        # Probing above the edge puts one request in the engine's queue until the fall: while
        # probes keep failing they wait longer (doubling up to probe_backoff_secs); one that
        # holds means the edge moved up, and probing is quick again.
        self._probe_wait = self.tuning.probe_secs
        self._probe_failed = False
        self._window = _Window()
        self._ttfb_base: float | None = None
        self._tpot_base: float | None = None
        self._lying = False
        self._doubted = False  # the last window doubted the metrics
        self._tpot_slow = False  # the last window's time per chunk beyond its tolerance

    # ----- inputs -------------------------------------------------------------------------

    def gauges_read(self, gauges: Gauges, *, inflight: int, demand: bool, now: float) -> int:
        """A fresh reading of the engine; `inflight` is ours at the engine when it was taken."""
        self.gauges, self.read_at = gauges, now
        self._waited.append(gauges.waiting)
        if self._lying:
            return self.limit  # latency decides until the two agree (latency_window)
        self.mode = METRICS
        waiting = gauges.waiting
        full = len(self._waited) == self._waited.maxlen
        queued = min(self._waited) if full else 0.0
        kv = gauges.kv_usage
        if queued > 0:
            self._fall(max(0, inflight - math.ceil(queued)), METRICS)
        elif not self._fell and waiting >= max(2.0, self.limit / 4):
            # Slow start passed the edge: a queue no request between two steps makes.
            self._fall(max(0, inflight - math.ceil(waiting)), METRICS)
        elif kv is not None and kv >= self.tuning.kv_full:
            self._fall(min(self.limit, inflight) - 1, METRICS)
        elif waiting > 0 or inflight < self.limit:
            # Maybe queueing: no growth until the next readings tell. Or the last growth is not
            # at the engine yet (in a group on Redis the others are granted it an interval
            # later): growing again before the engine has shown what it makes of it overshoots.
            pass
        elif (kv is None or kv < self.tuning.kv_high) and demand and not self._tpot_slow:
            self._grow(now, METRICS)
        return self.limit

    def answered(self, *, ttfb: float | None, per_chunk: float | None, now: float) -> None:
        """One request's latency at this backend: its time to the first byte and, for a
        stream, its mean time between chunks."""
        window = self._window
        if not window.ttfb and not window.tpot:
            window.started = now
        if ttfb is not None and ttfb >= 0:
            window.ttfb.append(ttfb)
        if per_chunk is not None and per_chunk > 0:
            window.tpot.append(per_chunk)

    def tick(self, *, inflight: int, demand: bool, now: float) -> int:
        """The interval's look: staleness, and the latency window when one is complete."""
        t = self.tuning
        if self.mode == METRICS and now - self.read_at > t.stale_secs:
            # Fail closed: nothing above what runs until the latency (or the metrics) says more.
            self.mode = LATENCY
            self._set(min(self.limit, max(inflight, self.floor)), STALE)
        window = self._window
        if now - window.started >= t.window_secs and (
            len(window.ttfb) >= t.min_samples or len(window.tpot) >= t.min_samples
        ):
            self._judge(window, inflight=inflight, demand=demand, now=now)
            self._window = _Window(started=now)
        return self.limit

    def adopt(self, limit: int, reason: str) -> None:
        """Take the limit another process learned (the one that owns this backend's limit on
        the capacity board), so that taking over from it goes on from there: past slow start,
        since that limit was already found."""
        self.limit = self._bounded(limit)
        self.reason = reason or self.reason
        self._fell = True

    # ----- latency --------------------------------------------------------------------------

    def _judge(self, window: _Window, *, inflight: int, demand: bool, now: float) -> None:
        t = self.tuning
        # The window's median is where latency is; its fastest request is what the engine does
        # unloaded (some request always finds it free, until it queues for good).
        ttfb, tpot = _median(window.ttfb), _median(window.tpot)
        ttfb_slow = tpot_slow = False
        if ttfb is not None:
            base = self._ttfb_base = _baseline(self._ttfb_base, min(window.ttfb), t.baseline_decay)
            ttfb_slow = ttfb > t.ttfb_tolerance * base + 0.01  # 10 ms: noise, an instant engine
        if tpot is not None:
            base = self._tpot_base = _baseline(self._tpot_base, min(window.tpot), t.baseline_decay)
            tpot_slow = tpot > t.tpot_tolerance * base + 0.002
        self._tpot_slow = tpot_slow
        if self.mode == METRICS or self._lying:
            # "Nothing waits" while the first byte takes several times its unloaded time, two
            # windows in a row and by more than a busy gateway's own delay: the engine queues
            # where its gauges do not show it. Latency decides until they agree again.
            doubted = (
                ttfb is not None
                and self._ttfb_base is not None
                and ttfb > t.ttfb_tolerance * self._ttfb_base + t.lie_margin
                and self.gauges is not None
                and self.gauges.waiting == 0
            )
            self._lying = doubted and (self._doubted or self._lying)
            self._doubted = doubted
            if not self._lying:
                return  # metrics mode (again, from the next reading)
            self.mode = LATENCY
        if ttfb_slow or tpot_slow:
            self._fall(math.floor(min(self.limit, max(inflight, 1)) * t.backoff), LATENCY)
        elif demand:
            self._grow(now, LATENCY)

    # ----- moving the limit -------------------------------------------------------------------

    def _fall(self, to: int, why: str) -> None:
        self._fell = True
        if to < self.limit:
            if self._probed > -math.inf and not self._probe_failed:
                self._probe_failed = True  # the last probe passed the edge
                self._probe_wait = min(self.tuning.probe_backoff_secs, 2 * self._probe_wait)
            self._set(to, why)

    def _grow(self, now: float, why: str) -> None:
        if self.limit >= self.ceiling:
            self.reason = CEILING
            return
        if not self._fell and why == METRICS:
            # Slow start: find the edge fast from a cold start; the engine's own queue says at
            # once when it is passed. Latency says it late, so latency mode only adds.
            grown = math.ceil(self.limit * self.tuning.slow_start_growth)
            self._set(max(self.limit + 1, grown), why)
        elif now - self._probed >= self._probe_wait:
            if not self._probe_failed:
                self._probe_wait = self.tuning.probe_secs
            self._probed, self._probe_failed = now, False
            self._set(self.limit + 1, why)

    def _set(self, limit: int, why: str) -> None:
        bounded = self._bounded(limit)
        if bounded != self.limit:
            self.changes += 1
        self.limit = bounded
        self.reason = FLOOR if bounded == self.floor and limit <= self.floor else why
        if bounded == self.ceiling and limit >= self.ceiling:
            self.reason = CEILING

    def _bounded(self, limit: int) -> int:
        return max(self.floor, min(self.ceiling, limit))


def _median(values: list[float]) -> float | None:
    if not values:
        return None
    ordered = sorted(values)
    return ordered[len(ordered) // 2]


def _baseline(base: float | None, seen: float, decay: float) -> float:
    """The unloaded level: the lowest window seen, drifting up slowly so that it can follow an
    engine that became slower for good (another model, another GPU)."""
    return seen if base is None else min(base * decay, seen)
