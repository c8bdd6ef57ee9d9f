"""The live queue view: backends' in-flight and capacity, waiters per line in dispatch order."""

from __future__ import annotations

from typing import Any

from gateway.admission import CLASS_NAMES
from gateway.runtime import runtimes


def queue_state() -> dict[str, Any]:
    """A JSON-ready picture of every running gateway's queue (read from a Django thread).

    The queue is only mutated on the event loop; copying lists here may see a half-applied
    step, which is harmless for a display refreshed every second.
    """
    backends: dict[str, dict[str, Any]] = {}
    waiters: list[dict[str, Any]] = []
    lines: list[dict[str, Any]] = []
    depth = {name: 0 for name in CLASS_NAMES}
    priority_enabled = False
    scheduler = ""
    for rt in runtimes():
        priority_enabled = priority_enabled or rt.settings.priority_enabled
        scheduler = scheduler or rt.queue.config.name
        now = rt.queue.clock()
        for name, slot in list(rt.slots.items()):
            if slot.removed:
                continue
            entry = backends.setdefault(
                name,
                {
                    "name": name,
                    "inflight": 0,
                    "max_inflight": 0,
                    "healthy": True,
                    "enabled": slot.enabled,
                },
            )
            entry["inflight"] += slot.inflight
            entry["max_inflight"] += slot.max_inflight
            entry["healthy"] = entry["healthy"] and slot.healthy
        for i, count in enumerate(rt.queue.depth):
            depth[CLASS_NAMES[i]] += count
        for names, line in rt.queue.dispatch_order():
            lid = ",".join(names)
            lines.append(
                {
                    "id": lid,
                    "backends": list(names),
                    "models": sorted({getattr(w.tag, "model", "") for w in line} - {""}),
                    "waiting": len(line),
                }
            )
            for position, w in enumerate(line[:500], start=1):
                tag = w.tag
                score = rt.queue.score(w)
                waiters.append(
                    {
                        "id": w.seq,
                        "line": lid,
                        "position": position,
                        "class": CLASS_NAMES[w.cls],
                        "offset": w.offset,
                        "score": None if score is None else round(score, 2),
                        "age_secs": round(now - w.arrival, 3),
                        "waits_for": rt.queue.waits_for(w),
                        "model": getattr(tag, "model", ""),
                        "user": getattr(tag, "username", ""),
                        "token": getattr(tag, "token_name", None),
                    }
                )
    recent = []
    for rt in runtimes():
        for at, w, backend in list(rt.metrics.recent):
            tag = w.tag
            recent.append(
                {
                    "at": at,
                    "class": CLASS_NAMES[w.cls],
                    "model": getattr(tag, "model", ""),
                    "user": getattr(tag, "username", ""),
                    "backend": backend,
                    "waited_secs": round(w.waited, 3),
                }
            )
    recent.sort(key=lambda d: d["at"], reverse=True)
    return {
        "priority_enabled": priority_enabled,
        "scheduler": scheduler or "strict",
        "recent": recent[:20],
        "backends": sorted(backends.values(), key=lambda b: b["name"]),
        "depth": depth,
        "lines": sorted(lines, key=lambda line: line["id"]),
        "waiters": waiters,
    }
