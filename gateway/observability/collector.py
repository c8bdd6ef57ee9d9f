"""Queue metrics for Prometheus, labelled by class and band.

The request path only bumps plain integers (`QueueMetrics`, the queue's observer); a collector
registered once turns them into Prometheus families when /metrics is scraped, so observability
costs the hot path a few list increments rather than locked client-library objects.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

from prometheus_client.core import (
    REGISTRY,
    CounterMetricFamily,
    GaugeMetricFamily,
    HistogramMetricFamily,
)
from prometheus_client.metrics_core import Metric
from prometheus_client.registry import Collector

from gateway.admission.shared.queue import SharedAdmissionQueue
from gateway.allowances.shared import SharedCounters
from gateway.core.classes import BAND_NAMES, CLASS_NAMES
from gateway.observability.queue_metrics import OUTCOMES, WAIT_BUCKETS
from gateway.observability.records import recorders


class GatewayCollector(Collector):
    """Reads the runtime `runtime_of` hands it at scrape time (zeros before it starts): the
    runtime is passed in, as observability sits below it."""

    def __init__(self, runtime_of: Callable[[], Any]) -> None:
        self.runtime_of = runtime_of

    def collect(self) -> Iterator[Metric]:
        rt = self.runtime_of()
        live = [] if rt is None else [rt]  # the sums below read as zeros without one
        yield from _queue_families(live)
        yield from _backend_families(live)
        yield from _learned_families(live)
        yield from _shared_families(live)
        yield from _token_families(live)
        yield _refusal_family(live)
        yield from _allowance_counter_families(live)
        yield from _activity_families()


def _queue_families(live: list[Any]) -> Iterator[Metric]:
    """The line by class and band: depth, oldest wait, admissions by outcome, dispatches,
    reorders and the wait histogram."""
    labels = ["class", "band"]
    depth = GaugeMetricFamily(
        "aiplane_queue_depth", "Requests waiting for a backend slot.", labels=labels
    )
    oldest = GaugeMetricFamily(
        "aiplane_queue_oldest_wait_seconds",
        "How long the longest-waiting request has waited.",
        labels=labels,
    )
    admissions = CounterMetricFamily(
        "aiplane_admissions",
        "Requests by admission outcome (immediate, waited, expired, cancelled, rejected).",
        labels=[*labels, "outcome"],
    )
    dispatches = CounterMetricFamily(
        "aiplane_dispatches", "Requests given a backend slot.", labels=labels
    )
    reorders = CounterMetricFamily(
        "aiplane_reorders",
        "Dispatches where aging or affinity changed the pick versus class and arrival order.",
        labels=labels,
    )
    waits = HistogramMetricFamily(
        "aiplane_queue_wait_seconds",
        "Time from arrival to admission, zero-wait admissions included.",
        labels=labels,
    )
    for cls, name in enumerate(CLASS_NAMES):
        lv = [name, BAND_NAMES[cls]]
        depth.add_metric(lv, sum(rt.queue.depth[cls] for rt in live))
        oldest.add_metric(lv, max((rt.queue.oldest_wait(cls) for rt in live), default=0.0))
        for outcome in OUTCOMES:
            total = sum(rt.metrics.admissions[cls][outcome] for rt in live)
            admissions.add_metric([*lv, outcome], total)
        dispatches.add_metric(lv, sum(rt.metrics.dispatches[cls] for rt in live))
        reorders.add_metric(lv, sum(rt.metrics.reorders[cls] for rt in live))
        waits.add_metric(
            lv, _wait_buckets(live, cls), sum_value=sum(rt.metrics.wait_sum[cls] for rt in live)
        )
    yield from (depth, oldest, admissions, dispatches, reorders, waits)


def _wait_buckets(live: list[Any], cls: int) -> list[tuple[str, float]]:
    """One class's wait histogram, cumulative as Prometheus has it."""
    buckets = []
    running = 0
    for i, bound in enumerate(WAIT_BUCKETS):
        running += sum(rt.metrics.wait_buckets[cls][i] for rt in live)
        buckets.append((_le(bound), running))
    running += sum(rt.metrics.wait_buckets[cls][-1] for rt in live)
    buckets.append(("+Inf", running))
    return buckets


def _backend_families(live: list[Any]) -> Iterator[Metric]:
    """Each backend: in flight, capacity, health, count_tokens calls running."""
    inflight = GaugeMetricFamily(
        "aiplane_backend_inflight", "Requests running on a backend.", labels=["backend"]
    )
    capacity = GaugeMetricFamily(
        "aiplane_backend_capacity",
        "A backend's max_inflight in force: the configured one, or the limit learned from its "
        "engine (max_inflight auto).",
        labels=["backend"],
    )
    counting = GaugeMetricFamily(
        "aiplane_backend_counting",
        "count_tokens calls running on a backend, beside its inflight (they take no slot).",
        labels=["backend"],
    )
    healthy = GaugeMetricFamily(
        "aiplane_backend_healthy",
        "1 when the backend passes health probes.",
        labels=["backend"],
    )
    seen: dict[str, list[float]] = {}
    for rt in live:
        for bname, slot in list(rt.slots.items()):
            if slot.removed:
                continue
            entry = seen.setdefault(bname, [0, 0, 1, 0])
            entry[0] += slot.inflight
            entry[1] += slot.max_inflight
            entry[2] = min(entry[2], 1 if slot.healthy else 0)
            entry[3] += rt.counting.busy.get(bname, 0)
    for bname, (n, cap, ok, counts) in sorted(seen.items()):
        inflight.add_metric([bname], n)
        capacity.add_metric([bname], cap)
        healthy.add_metric([bname], ok)
        counting.add_metric([bname], counts)
    yield from (inflight, capacity, healthy, counting)


def _learned_families(live: list[Any]) -> Iterator[Metric]:
    """Learned capacity (max_inflight auto): the engine's own gauges as last read, and how often
    the limit moved; no per-user label."""
    waiting = GaugeMetricFamily(
        "aiplane_backend_engine_waiting",
        "Requests waiting in the engine's own queue, as its /metrics said when last read.",
        labels=["backend"],
    )
    kv = GaugeMetricFamily(
        "aiplane_backend_engine_kv_usage",
        "The engine's KV cache in use (1 = full), as its /metrics said when last read.",
        labels=["backend"],
    )
    changes = CounterMetricFamily(
        "aiplane_backend_capacity_changes",
        "How often a learned limit moved.",
        labels=["backend"],
    )
    stale = GaugeMetricFamily(
        "aiplane_backend_capacity_from_latency",
        "1 while a learned limit follows latency alone (no engine metrics, or stale or lying).",
        labels=["backend"],
    )
    for rt in live:
        for bname, learned in sorted(rt.capacity.learned.items()):
            view = rt.capacity.view(bname) or {}
            if view.get("engine_waiting") is not None:
                waiting.add_metric([bname], view["engine_waiting"])
            if view.get("engine_kv_usage") is not None:
                kv.add_metric([bname], view["engine_kv_usage"])
            changes.add_metric([bname], learned.controller.changes)
            stale.add_metric([bname], 1 if view.get("mode") == "latency" else 0)
    yield from (waiting, kv, changes, stale)


def _shared_families(live: list[Any]) -> Iterator[Metric]:
    """Shared admission (AIPLANE_REDIS_URL): the line and in-flight over every process, and
    whether this process admits on its own (Redis unreachable)."""
    queues = [rt for rt in live if isinstance(rt.queue, SharedAdmissionQueue)]
    if not queues:
        return
    rt = queues[0]
    queue = rt.queue
    fallback = GaugeMetricFamily(
        "aiplane_shared_admission_fallback",
        "1 while Redis is unreachable and this process admits alone, within its share.",
    )
    fallback.add_metric([], 1 if queue.fallback else 0)
    fallbacks = CounterMetricFamily(
        "aiplane_shared_admission_fallbacks", "Times this process fell back to local admission."
    )
    fallbacks.add_metric([], queue.fallbacks)
    lost = CounterMetricFamily(
        "aiplane_shared_leases_lost",
        "Slot leases of running requests that lapsed while this process was silent (a stalled "
        "loop); their backend may have run more than its limit until they ended.",
    )
    lost.add_metric([], queue.leases_lost)
    processes = GaugeMetricFamily(
        "aiplane_shared_processes", "Gateway processes sharing admission, as last seen."
    )
    processes.add_metric([], queue.processes)
    yield from (fallback, fallbacks, lost, processes)
    names = sorted(name for name, slot in list(rt.slots.items()) if not slot.removed)
    state = queue.shared_state(names, limit=0)
    if state is None:
        return
    depth = GaugeMetricFamily(
        "aiplane_shared_queue_depth",
        "Requests waiting for a backend slot in every process.",
        labels=["class", "band"],
    )
    for cls, name in enumerate(CLASS_NAMES):
        depth.add_metric([name, BAND_NAMES[cls]], state["depth"][cls])
    inflight = GaugeMetricFamily(
        "aiplane_shared_backend_inflight",
        "Requests running on a backend, from every process (its slot leases).",
        labels=["backend"],
    )
    for name in names:
        inflight.add_metric([name], state["inflight"][name])
    yield from (depth, inflight)


def _token_families(live: list[Any]) -> Iterator[Metric]:
    """Tokens the engines reported, by class and model, on every surface."""
    families = [
        CounterMetricFamily(f"aiplane_{kind}_tokens", text, labels=["class", "band", "model"])
        for kind, text in (
            ("input", "Input (prompt) tokens the engines reported."),
            ("output", "Output (completion) tokens the engines reported."),
            ("cached", "Input tokens served from the engines' caches, where they say so."),
        )
    ]
    totals: dict[tuple[int, str], list[int]] = {}
    for rt in live:
        for key, counts in list(rt.metrics.tokens.items()):
            total = totals.setdefault(key, [0, 0, 0])
            for i, value in enumerate(counts):
                total[i] += value
    for (cls, model), counts in sorted(totals.items()):
        labels = [CLASS_NAMES[cls], BAND_NAMES[cls], model]
        for family, value in zip(families, counts, strict=True):
            family.add_metric(labels, value)
    yield from families


def _refusal_family(live: list[Any]) -> Metric:
    family = CounterMetricFamily(
        "aiplane_allowance_refusals",
        "Requests refused before admission because a limit of their allowance was reached, by "
        "the limit's kind (requests_per_minute, tokens_per_day, ...).",
        labels=["reason", "class", "band"],
    )
    totals: dict[tuple[str, int], int] = {}
    for rt in live:
        for key, count in list(rt.metrics.allowance_refusals.items()):
            totals[key] = totals.get(key, 0) + count
    for (reason, cls), count in sorted(totals.items()):
        family.add_metric([reason, CLASS_NAMES[cls], BAND_NAMES[cls]], count)
    return family


def _allowance_counter_families(live: list[Any]) -> Iterator[Metric]:
    """With allowance counters on Redis (gateway/allowances/shared.py): whether this process
    counts alone because Redis is unreachable."""
    stores = [rt.allowances for rt in live if isinstance(rt.allowances, SharedCounters)]
    if not stores:
        return
    local = GaugeMetricFamily(
        "aiplane_allowance_counters_local",
        "1 while Redis is unreachable and allowances count in this process only.",
    )
    local.add_metric([], 1 if any(store.fallback for store in stores) else 0)
    fallbacks = CounterMetricFamily(
        "aiplane_allowance_counter_fallbacks",
        "Times this process began counting allowances alone because Redis was unreachable.",
    )
    fallbacks.add_metric([], sum(store.fallbacks for store in stores))
    lost = CounterMetricFamily(
        "aiplane_allowance_settles_lost",
        "Ends of requests Redis could not be told of (their reservations end with their hold).",
    )
    lost.add_metric([], sum(store.lost_settles for store in stores))
    yield from (local, fallbacks, lost)


def _activity_families() -> Iterator[Metric]:
    """Whether activity records keep up: written, still buffered, dropped, refused by the
    database, failed flushes."""
    live = recorders()
    for name, text, value in (
        ("aiplane_activity_records_written", "Activity records stored.", "written"),
        (
            "aiplane_activity_records_dropped",
            "Activity records lost because the buffer was full (the writer could not keep up).",
            "dropped",
        ),
        (
            "aiplane_activity_records_rejected",
            "Activity records the database refused to store (dropped; each is logged).",
            "rejected",
        ),
        (
            "aiplane_activity_flush_failures",
            "Flushes whose batch could not be stored, the database or writer being down (it "
            "stayed buffered and was retried).",
            "failures",
        ),
    ):
        family = CounterMetricFamily(name, text)
        family.add_metric([], sum(getattr(r, value) for r in live))
        yield family
    buffered = GaugeMetricFamily(
        "aiplane_activity_records_buffered", "Activity records waiting to be stored."
    )
    buffered.add_metric([], sum(len(r.buffer) for r in live))
    yield buffered


def _le(bound: float) -> str:
    return repr(float(bound))


_registered = False


def register(runtime_of: Callable[[], Any]) -> None:
    """Add the gateway's families to the default registry (which /metrics exports), once;
    `runtime_of` gives the runtime to read at each scrape (None before it starts)."""
    global _registered
    if not _registered:
        REGISTRY.register(GatewayCollector(runtime_of))
        _registered = True
