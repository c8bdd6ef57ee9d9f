"""One shape per model: a backend and a pool as the admin API and the audit log show them."""

from __future__ import annotations

from typing import Any

from aiplane import audit
from gateway.admin.selectors import priority_mode_of, profile_of, surfaces_of
from gateway.models import Backend, Pool


def _detected_state(profile: dict[str, Any] | None, models: list[str]) -> dict[str, Any]:
    """What detection found, as the audit log keeps it: without the time it looked, so looking
    again and finding the same leaves no row, and an engine not identified is none found (an
    unreachable backend probed every minute is no change each time)."""
    found = {k: v for k, v in (profile or {}).items() if k != "detected_at"}
    known = found.get("kind", "unknown") != "unknown"
    return {"engine": found if known else None, "discovered_models": list(models)}


# ----- writes --------------------------------------------------------------------------------


def _backend_state(b: Backend) -> dict[str, Any]:
    """A backend as the audit log keeps it: whether it has an API key, never the key."""
    return {
        "name": b.name,
        "base_url": b.base_url,
        "api_key": audit.masked(b.api_key_encrypted),
        "max_inflight": b.max_inflight,
        "weight": b.weight,
        "enabled": b.enabled,
        "health_path": b.health_path,
        "models": list(b.served_models or []),
        "aliases": dict(b.aliases or {}),
        "priority": b.priority_mode or {"mode": "auto"},
        "surfaces": dict(b.surfaces or {}),
        "store_responses": b.store_responses,
    }


def _pool_state(p: Pool) -> dict[str, Any]:
    return {
        "name": p.name,
        "kind": p.kind,
        "strategy": p.strategy,
        "allowed_groups": list(p.allowed_groups or []),
        "fallback": p.fallback.name if p.fallback else None,
        "backends": [b.name for b in p.backends.all()],
    }


def backend_out(b: Backend, live: dict[str, Any] | None = None) -> dict[str, Any]:
    """A backend for the admin API; the API key never leaves, only whether one is set."""
    from gateway.engines.priority_forwarding import explain_mapping
    from gateway.engines.profiles import serves_natively

    mode = priority_mode_of(b)
    profile = profile_of(b)
    surfaces = surfaces_of(b)
    state = (live or {}).get(b.name, {})
    return {
        "name": b.name,
        "base_url": b.base_url,
        "has_api_key": bool(b.api_key_encrypted),
        "max_inflight": b.max_inflight,
        "weight": b.weight,
        "enabled": b.enabled,
        "health_path": b.health_path,
        "models": list(b.served_models or []),
        "aliases": dict(b.aliases or {}),
        "priority": mode.to_json(),
        "profile": profile.to_json() if profile else None,
        "discovered_models": list(b.discovered_models or []),
        "forwarding": explain_mapping(mode, profile),
        "surfaces": {name: surfaces.get(name, "auto") for name in ("messages", "responses")},
        "serving": {
            name: "native"
            if serves_natively(surfaces.get(name, "auto"), profile, name)
            else "translated"
            for name in ("messages", "responses")
        },
        "store_responses": b.store_responses,
        "pools": sorted(p.name for p in b.pools.all()),
        "healthy": state.get("healthy"),
        "inflight": state.get("inflight"),
    }


def pool_out(p: Pool) -> dict[str, Any]:
    return {
        "name": p.name,
        "kind": p.kind,
        "strategy": p.strategy,
        "everyone": p.everyone,
        "allowed_groups": list(p.allowed_groups or []),
        "fallback": p.fallback.name if p.fallback else None,
        "backends": [b.name for b in p.backends.all()],
    }
