"""The live queue view: per-backend in-flight and capacity, waiters per class with their age."""

from __future__ import annotations

import time
from typing import Any

from gateway.admission import CLASS_NAMES
from gateway.runtime import runtimes


def _shared_view(backends: list[str]) -> dict[str, Any] | None:
    """The shared line (AIPLANE_REDIS_URL) as Redis holds it; None without it or in fallback."""
    from gateway.shared_admission import SharedAdmissionQueue

    for rt in runtimes():
        if isinstance(rt.queue, SharedAdmissionQueue):
            return rt.queue.shared_state(backends)
    return None


def queue_state() -> dict[str, Any]:
    """A JSON-ready picture of every running gateway's queue (read from a Django thread).

    The queue is only mutated on the event loop; copying lists here may see a half-applied
    step, which is harmless for a display refreshed every second.
    """
    backends: dict[str, dict[str, Any]] = {}
    waiters: list[dict[str, Any]] = []
    depth = {name: 0 for name in CLASS_NAMES}
    priority_enabled = False
    for rt in runtimes():
        priority_enabled = priority_enabled or rt.settings.priority_enabled
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
        for w in rt.queue.waiters()[:500]:
            tag = w.tag
            waiters.append(
                {
                    "id": w.seq,
                    "class": CLASS_NAMES[w.cls],
                    "offset": w.offset,
                    "age_secs": round(now - w.arrival, 3),
                    "model": getattr(tag, "model", ""),
                    "user": getattr(tag, "username", ""),
                    "token": getattr(tag, "token_name", None),
                }
            )
    shared = _shared_view(list(backends))
    if shared is not None:
        # Every process's waiters and each backend's in-flight over all of them, from Redis.
        depth = {name: shared["depth"][i] for i, name in enumerate(CLASS_NAMES)}
        now = time.time()
        waiters = [
            {
                "id": w["ref"],
                "class": CLASS_NAMES[int(w.get("class", 1))],
                "offset": w.get("offset", 0),
                "age_secs": round(now - float(w.get("arrival", now)), 3),
                "model": w.get("model", ""),
                "user": w.get("user", ""),
                "token": w.get("token"),
                "process": w["process"],
            }
            for w in shared["waiters"]
        ]
        for name, entry in backends.items():
            entry["inflight"] = shared["inflight"].get(name, entry["inflight"])
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
    state = {
        "priority_enabled": priority_enabled,
        "recent": recent[:20],
        "backends": sorted(backends.values(), key=lambda b: b["name"]),
        "depth": depth,
        "waiters": waiters,
    }
    if shared is not None:
        state["shared"] = True  # without Redis the picture stays exactly as it was
    return state
