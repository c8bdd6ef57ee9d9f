"""The stored topology read for the registry and the admin pages."""

from __future__ import annotations

import time

from accounts.models import GatewayGroup
from gateway.admin.crypto import decrypt
from gateway.admin.serializers.fields import HEADROOM_MAX, SURFACE_NAMES
from gateway.engines.priority_forwarding import MappingError, PriorityMode, parse_priority_mode
from gateway.engines.profiles import SURFACE_MODES, EngineProfile
from gateway.models import Backend, Pool
from gateway.runtime.registry import BackendSpec, PoolSpec, Topology

# ----- reads --------------------------------------------------------------------------------


def priority_mode_of(backend: Backend) -> PriorityMode:
    try:
        return parse_priority_mode(backend.priority_mode or {"mode": "auto"})
    except MappingError:
        return PriorityMode("auto")


def surfaces_of(backend: Backend) -> dict[str, str]:
    """The stored surface modes, leniently: anything unknown is automatic."""
    stored = backend.surfaces if isinstance(backend.surfaces, dict) else {}
    return {name: mode for name in SURFACE_NAMES if (mode := stored.get(name)) in SURFACE_MODES}


def profile_of(backend: Backend) -> EngineProfile | None:
    return EngineProfile.from_json(backend.profile) if backend.profile else None


def load_topology() -> Topology:
    """The whole topology as plain data, for the registry to build a snapshot from."""
    loaded_at = time.monotonic()
    backends = [
        BackendSpec(
            id=b.id,
            name=b.name,
            base_url=b.base_url,
            api_key=decrypt(b.api_key_encrypted),
            max_inflight=b.max_inflight,
            capacity_auto=b.capacity_auto,
            capacity_floor=b.capacity_floor,
            capacity_ceiling=b.capacity_ceiling,
            headroom=headroom_of(b.headroom),
            weight=b.weight,
            enabled=b.enabled,
            health_path=b.health_path,
            served_models=list(b.served_models or []),
            discovered_models=list(b.discovered_models or []),
            aliases=dict(b.aliases or {}),
            priority_mode=priority_mode_of(b),
            profile=profile_of(b),
            surfaces=surfaces_of(b),
            store_responses=b.store_responses,
        )
        for b in Backend.objects.all()
    ]
    # Pools name their groups (for people and configuration files); access goes by id.
    group_ids = dict(GatewayGroup.objects.values_list("name", "id"))
    pools = [
        PoolSpec(
            name=p.name,
            kind=p.kind,
            strategy=p.strategy,
            allowed_groups=frozenset(p.allowed_groups or []),
            group_ids=frozenset(group_ids[g] for g in p.allowed_groups or [] if g in group_ids),
            everyone=p.everyone,
            fallback=p.fallback.name if p.fallback else None,
            backends=[b.name for b in p.backends.all()],
        )
        for p in Pool.objects.select_related("fallback").prefetch_related("backends")
    ]
    return Topology(backends=backends, pools=pools, loaded_at=loaded_at)


def headroom_of(stored: object) -> tuple[int, int, int]:
    """A backend's reserved headroom as the queue reads it, (low, medium, high); a stored
    value it cannot read keeps nothing back (it was written by the API, which checks it)."""
    if not isinstance(stored, dict):
        return (0, 0, 0)
    kept = []
    for name in ("low", "medium"):
        value = stored.get(name, 0)
        ok = isinstance(value, int) and not isinstance(value, bool) and 0 <= value <= HEADROOM_MAX
        kept.append(value if ok else 0)
    return (kept[0], kept[1], 0)
