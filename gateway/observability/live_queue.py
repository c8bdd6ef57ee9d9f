"""The live queue view: backends' in-flight and capacity, waiters per line in dispatch order."""

from __future__ import annotations

import time
from typing import Any

from gateway.admission.shared.queue import SharedAdmissionQueue
from gateway.core.classes import CLASS_NAMES


def _shared_view(queue: Any, backends: list[str]) -> dict[str, Any] | None:
    """The shared line (AIPLANE_REDIS_URL) as Redis holds it; None without it or in fallback."""
    return queue.shared_state(backends) if isinstance(queue, SharedAdmissionQueue) else None


def shared_inflight(queue: Any, backends: list[str]) -> dict[str, int] | None:
    """Each backend's in-flight over every process (its slot leases in Redis), for the admin
    pages; None without AIPLANE_REDIS_URL or in fallback (then this process's own counts are
    the whole truth, or all it knows). A Redis read from a Django thread, never the loop's."""
    if not isinstance(queue, SharedAdmissionQueue):
        return None
    shared = queue.shared_state(backends, limit=0)
    return None if shared is None else dict(shared["inflight"])


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
                    "estimated_wait_secs": None,  # each process knows only its own pace
                    "waits_for": info.get("waits_for", []),
                    "model": info.get("model", ""),
                    "user": info.get("user", ""),
                    "token": info.get("token"),
                    "process": info["process"],
                }
            )
    return lines, waiters


def queue_state(rt: Any) -> dict[str, Any]:
    """A JSON-ready picture of the gateway queue of runtime `rt`, this process's (read from a
    Django thread), and with shared admission of every process's; the empty picture for None
    (no gateway runs here).

    The queue is only mutated on the event loop; copying lists here may see a half-applied
    step, which is harmless for a display refreshed every second.
    """
    state: dict[str, Any] = {
        "priority_enabled": False,
        "scheduler": "strict",
        "recent": [],
        "backends": [],
        "depth": {name: 0 for name in CLASS_NAMES},
        "lines": [],
        "waiters": [],
    }
    if rt is None:
        return state
    queue = rt.queue
    backends = {
        name: {
            "name": name,
            "inflight": slot.inflight,
            "max_inflight": slot.max_inflight,
            "healthy": slot.healthy,
            "enabled": slot.enabled,
            "capacity": rt.capacity.describe(name, slot),
        }
        for name, slot in sorted(rt.slots.items())
        if not slot.removed
    }
    shared = _shared_view(queue, list(backends))
    if shared is not None:
        # Every process's waiters and each backend's in-flight over all of them, from Redis.
        depth = {name: shared["depth"][i] for i, name in enumerate(CLASS_NAMES)}
        lines, waiters = _shared_lines(queue, shared)
        for name, entry in backends.items():
            entry["inflight"] = shared["inflight"].get(name, entry["inflight"])
        state["shared"] = True  # without Redis the picture stays exactly as it was
    else:
        depth = dict(zip(CLASS_NAMES, queue.depth, strict=True))
        lines, waiters = _local_lines(queue)
    recent = [
        {
            "at": at,
            "class": CLASS_NAMES[w.cls],
            "model": getattr(w.tag, "model", ""),
            "user": getattr(w.tag, "username", ""),
            "backend": backend,
            "waited_secs": round(w.waited, 3),
        }
        for at, w, backend in list(rt.metrics.recent)
    ]
    recent.sort(key=lambda d: d["at"], reverse=True)
    state.update(
        priority_enabled=rt.settings.priority_enabled,
        scheduler=queue.config.name or "strict",
        recent=recent[:20],
        backends=list(backends.values()),
        depth=depth,
        lines=sorted(lines, key=lambda line: line["id"]),
        waiters=waiters,
    )
    return state


def _local_lines(queue: Any) -> tuple[list[dict], list[dict]]:
    """This process's waiters per line of backends, in dispatch order."""
    now = queue.clock()
    lines: list[dict[str, Any]] = []
    waiters: list[dict[str, Any]] = []
    for names, line in queue.dispatch_order():
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
            score = queue.score(w)
            # Those before it in its line, at the pace its backends took requests lately.
            estimate = queue.estimated_wait(w, ahead=position - 1)
            waiters.append(
                {
                    "id": str(w.seq),  # one type with a shared waiter's id
                    "line": lid,
                    "position": position,
                    "class": CLASS_NAMES[w.cls],
                    "offset": w.offset,
                    "score": None if score is None else round(score, 2),
                    "age_secs": round(now - w.arrival, 3),
                    "estimated_wait_secs": None if estimate is None else round(estimate, 1),
                    "waits_for": queue.waits_for(w),
                    "model": getattr(tag, "model", ""),
                    "user": getattr(tag, "username", ""),
                    "token": getattr(tag, "token_name", None),
                }
            )
    return lines, waiters
