"""The live queue view: backends' in-flight and capacity, waiters per line in dispatch order."""

from __future__ import annotations

import time
from typing import Any

from gateway.admission import CLASS_NAMES
from gateway.runtime import runtimes


def _shared_view(backends: list[str]) -> tuple[Any, dict[str, Any]] | None:
    """The shared line (AIPLANE_REDIS_URL) as Redis holds it, with the queue that read it;
    None without it or in fallback."""
    from gateway.shared_admission import SharedAdmissionQueue

    for rt in runtimes():
        if isinstance(rt.queue, SharedAdmissionQueue):
            state = rt.queue.shared_state(backends)
            return None if state is None else (rt.queue, state)
    return None


def _shared_lines(queue: Any, shared: dict[str, Any]) -> tuple[list[dict], list[dict]]:
    """Every process's waiters per line of backends, in the order Redis hands out slots."""
    by_line: dict[str, list[dict[str, Any]]] = {}
    for info in shared["waiters"]:
        by_line.setdefault(info.get("line", ""), []).append(info)
    now = time.time()
    lines: list[dict[str, Any]] = []
    waiters: list[dict[str, Any]] = []
    for lid, infos in by_line.items():
        infos.sort(key=lambda info: info.get("order", ""))
        lines.append(
            {
                "id": lid,
                "backends": lid.split(",") if lid else [],
                "models": sorted({info.get("model", "") for info in infos} - {""}),
                "waiting": len(infos),
            }
        )
        for position, info in enumerate(infos, start=1):
            own = queue.local_waiter(info["ref"])  # its score is known only where it waits
            score = queue.score(own) if own is not None else None
            waiters.append(
                {
                    "id": info["ref"],
                    "line": lid,
                    "position": position,
                    "class": CLASS_NAMES[int(info.get("class", 1))],
                    "offset": info.get("offset", 0),
                    "score": None if score is None else round(score, 2),
                    "age_secs": round(now - float(info.get("arrival", now)), 3),
                    "waits_for": info.get("waits_for", []),
                    "model": info.get("model", ""),
                    "user": info.get("user", ""),
                    "token": info.get("token"),
                    "process": info["process"],
                }
            )
    return lines, waiters


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
    viewed = _shared_view(list(backends))
    if viewed is not None:
        # Every process's waiters and each backend's in-flight over all of them, from Redis.
        queue, shared = viewed
        depth = {name: shared["depth"][i] for i, name in enumerate(CLASS_NAMES)}
        lines, waiters = _shared_lines(queue, shared)
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
        "scheduler": scheduler or "strict",
        "recent": recent[:20],
        "backends": sorted(backends.values(), key=lambda b: b["name"]),
        "depth": depth,
        "lines": sorted(lines, key=lambda line: line["id"]),
        "waiters": waiters,
    }
    if viewed is not None:
        state["shared"] = True  # without Redis the picture stays exactly as it was
    return state
