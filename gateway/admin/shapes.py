"""One shape per model: a backend and a pool as the audit log, the configuration file and the
admin API show them.

Each is built on the one before, so a field an administrator sets is written once:

    backend_state     as stored (the audit log): the key masked, priority and surfaces raw
    backend_settings  as the gateway reads it (the configuration file): priority and surfaces
                      parsed, no key (the file compares a fingerprint of it instead)
    backend_out       for the admin API: settings with every surface named, what detection
                      found, how each surface is served, its pools and the live state

A pool has one shape for the audit log, the API and the file: `pool_state`.
"""

from __future__ import annotations

from typing import Any

from aiplane import audit
from gateway.admin.selectors import priority_mode_of, profile_of, surfaces_of
from gateway.admin.serializers.fields import SURFACE_NAMES
from gateway.engines.priority_forwarding import explain_mapping
from gateway.engines.profiles import serves_natively
from gateway.models import Backend, Pool


def detected_state(profile: dict[str, Any] | None, models: list[str]) -> dict[str, Any]:
    """What detection found, as the audit log keeps it: without the time it looked, so looking
    again and finding the same leaves no row, and an engine not identified is none found (an
    unreachable backend probed every minute is no change each time)."""
    found = {k: v for k, v in (profile or {}).items() if k != "detected_at"}
    known = found.get("kind", "unknown") != "unknown"
    return {"engine": found if known else None, "discovered_models": list(models)}


def backend_state(b: Backend) -> dict[str, Any]:
    """A backend as the audit log keeps it: whether it has an API key, never the key."""
    return {
        "name": b.name,
        "base_url": b.base_url,
        "api_key": audit.masked(b.api_key_encrypted),
        "max_inflight": "auto" if b.capacity_auto else b.max_inflight,
        "capacity_floor": b.capacity_floor,
        "capacity_ceiling": b.capacity_ceiling,
        "weight": b.weight,
        "enabled": b.enabled,
        "health_path": b.health_path,
        "models": list(b.served_models or []),
        "aliases": dict(b.aliases or {}),
        "priority": b.priority_mode or {"mode": "auto"},
        "surfaces": dict(b.surfaces or {}),
        "store_responses": b.store_responses,
        "headroom": dict(b.headroom or {}),
    }


def backend_settings(b: Backend) -> dict[str, Any]:
    """A backend's settings as the gateway reads them (a stored value it cannot read is
    automatic), in the order of the audit state, without the key."""
    settings = backend_state(b)
    del settings["api_key"]
    settings.update(priority=priority_mode_of(b).to_json(), surfaces=surfaces_of(b))
    return settings


def backend_out(b: Backend, live: dict[str, Any] | None = None) -> dict[str, Any]:
    """A backend for the admin API; the API key never leaves, only whether one is set."""
    settings = backend_settings(b)
    mode, profile, surfaces = priority_mode_of(b), profile_of(b), settings["surfaces"]
    state = (live or {}).get(b.name, {})
    return {
        **settings,
        "has_api_key": bool(b.api_key_encrypted),
        "profile": profile.to_json() if profile else None,
        "discovered_models": list(b.discovered_models or []),
        "forwarding": explain_mapping(mode, profile),
        "surfaces": {name: surfaces.get(name, "auto") for name in SURFACE_NAMES},
        "serving": {
            name: "native"
            if serves_natively(surfaces.get(name, "auto"), profile, name)
            else "translated"
            for name in SURFACE_NAMES
        },
        "pools": sorted(p.name for p in b.pools.all()),
        "healthy": state.get("healthy"),
        "inflight": state.get("inflight"),
        "capacity": state.get("capacity"),
    }


def pool_state(p: Pool) -> dict[str, Any]:
    """A pool as the audit log, the admin API and the configuration file show it: who may use
    it included (a pool not saved yet has no members)."""
    return {
        "name": p.name,
        "kind": p.kind,
        "strategy": p.strategy,
        "everyone": p.everyone,
        "allowed_groups": list(p.allowed_groups or []),
        "fallback": p.fallback.name if p.fallback else None,
        "backends": [b.name for b in p.backends.all()] if p.pk is not None else [],
    }
