"""Administration -> Models: every name a caller can use, and the pools and backends behind it."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from aiplane.catalog import setting
from gateway.admin.selectors import load_topology
from gateway.engines.priority_forwarding import explain_mapping
from gateway.observability.live_queue import shared_inflight
from gateway.runtime.capacity import Capacity
from gateway.runtime.last_errors import LastErrors
from gateway.runtime.registry import PoolSpec, Snapshot, Upstream
from gateway.runtime.runtime import current_runtime


def models_overview() -> dict[str, Any]:
    """A JSON-ready picture of the models, from the running gateway's own snapshot.

    The snapshot is what the request path routes with, so this page can never list a model the
    gateway would answer 404 for, or miss one it serves. Without a gateway in this process
    (a management command) the stored topology stands in, with no live state.
    """
    rt = current_runtime()
    shared: dict[str, int] | None = None
    capacity = rt.capacity if rt is not None else None
    if rt is not None:
        snapshot, errors, running = rt.snapshot, rt.errors, True
        # With shared admission, a backend's in-flight is every process's, as on the live queue.
        shared = shared_inflight(rt.queue, sorted(snapshot.upstreams))
    else:
        snapshot, errors, running = Snapshot(load_topology(), {}), LastErrors(), False
    models = []
    by_name = sorted(snapshot.index.items(), key=lambda item: (item[0][1], item[0][0]))
    for (kind, name), entries in by_name:
        routes = [
            _route(pool, up, target, errors, running, shared, capacity)
            for pool, up, target in entries
        ]
        usable = [r for r in routes if r["enabled"] and r["healthy"] is not False]
        status = "ok" if len(usable) == len(routes) else "degraded" if usable else "down"
        models.append({"name": name, "kind": kind, "status": status, "routes": routes})
    return {
        "running": running,
        "priority_enabled": bool(setting("gateway.priority_enabled")),
        "models": models,
    }


def _route(
    pool: PoolSpec,
    up: Upstream,
    target: str,
    errors: LastErrors,
    running: bool,
    shared: dict[str, int] | None,
    capacity: Capacity | None,
) -> dict[str, Any]:
    spec, slot = up.spec, up.slot
    failure = errors.get(up.name)
    inflight = slot.inflight if shared is None else shared.get(up.name, slot.inflight)
    return {
        "pool": pool.name,
        "allowed_groups": sorted(pool.allowed_groups),
        "pool_fallback": pool.fallback,
        "backend": up.name,
        "backend_model": target,
        "enabled": slot.enabled,
        "healthy": slot.healthy if running else None,
        "inflight": inflight if running else None,
        "max_inflight": slot.max_inflight,
        "capacity": capacity.describe(up.name, slot) if capacity is not None else None,
        "profile": spec.profile.to_json() if spec.profile else None,
        "priority": spec.priority_mode.to_json(),
        "priority_forwarded": up.mapping is not None,
        "forwarding": explain_mapping(spec.priority_mode, spec.profile),
        "last_error": None
        if failure is None
        else {
            "at": datetime.fromtimestamp(failure.at, UTC).isoformat(),
            "message": failure.message,
            "source": failure.source,
        },
    }
