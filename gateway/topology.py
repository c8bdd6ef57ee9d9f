"""Topology writes and reads on the Django side: backends and pools, and applying them live."""

from __future__ import annotations

import time
from typing import Any

from django.db import transaction

from gateway.crypto import decrypt, encrypt
from gateway.mapping import EngineProfile, MappingError, PriorityMode, parse_priority_mode
from gateway.models import KINDS, STRATEGIES, Backend, Pool
from gateway.registry import BackendSpec, PoolSpec, Topology


class TopologyError(ValueError):
    """A rejected backend or pool change; nothing was saved."""

    def __init__(self, message: str, *, code: str, param: str | None = None, status: int = 400):
        super().__init__(message)
        self.message, self.code, self.param, self.status = message, code, param, status


# ----- reads --------------------------------------------------------------------------------


def priority_mode_of(backend: Backend) -> PriorityMode:
    try:
        return parse_priority_mode(backend.priority_mode or {"mode": "auto"})
    except MappingError:
        return PriorityMode("auto")


def surfaces_of(backend: Backend) -> dict[str, str]:
    """The stored surface modes, leniently: anything unknown is automatic."""
    from gateway.registry import SURFACE_MODES

    stored = backend.surfaces if isinstance(backend.surfaces, dict) else {}
    return {
        name: mode
        for name in ("messages", "responses")
        if (mode := stored.get(name)) in SURFACE_MODES
    }


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
            weight=b.weight,
            enabled=b.enabled,
            health_path=b.health_path,
            served_models=list(b.served_models or []),
            discovered_models=list(b.discovered_models or []),
            aliases=dict(b.aliases or {}),
            priority_mode=priority_mode_of(b),
            profile=profile_of(b),
            surfaces=surfaces_of(b),
        )
        for b in Backend.objects.all()
    ]
    pools = [
        PoolSpec(
            name=p.name,
            kind=p.kind,
            strategy=p.strategy,
            allowed_groups=frozenset(p.allowed_groups or []),
            fallback=p.fallback.name if p.fallback else None,
            backends=[b.name for b in p.backends.all()],
        )
        for p in Pool.objects.select_related("fallback").prefetch_related("backends")
    ]
    return Topology(backends=backends, pools=pools, loaded_at=loaded_at)


def save_discovery(name: str, profile: dict[str, Any], models: list[str]) -> None:
    """Store what detection found; a background write, never on the request path."""
    Backend.objects.filter(name=name).update(profile=profile, discovered_models=models)


# ----- applying ------------------------------------------------------------------------------


def apply_topology() -> None:
    """After commit, hand the new topology to every live gateway runtime in this process."""
    from gateway.runtime import runtimes

    def push() -> None:
        live = runtimes()
        if not live:
            return
        topology = load_topology()
        for rt in live:
            rt.install_threadsafe(topology)

    transaction.on_commit(push)


# ----- writes --------------------------------------------------------------------------------


def _check_name(name: object, param: str = "name") -> str:
    import re

    if not isinstance(name, str) or not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,99}", name):
        raise TopologyError(
            "A name uses letters, digits, '-', '_' or '.', and starts with a letter or digit.",
            code="invalid_name",
            param=param,
        )
    return name


def _check_int(value: object, param: str, lo: int, hi: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not lo <= value <= hi:
        raise TopologyError(
            f"{param} must be an integer from {lo} to {hi}.", code="invalid_value", param=param
        )
    return value


def _check_str_list(value: object, param: str) -> list[str]:
    if not isinstance(value, list) or not all(isinstance(v, str) and v for v in value):
        raise TopologyError(
            f"{param} must be a list of non-empty strings.", code="invalid_value", param=param
        )
    return list(dict.fromkeys(value))


@transaction.atomic
def backend_save(*, data: dict[str, Any]) -> Backend:
    """Create or update a backend by name from the complete editor; all-or-nothing."""
    if not isinstance(data, dict):
        raise TopologyError("Send a JSON object.", code="invalid_request")
    name = _check_name(data.get("name"))
    backend = Backend.objects.filter(name=name).first() or Backend(name=name)
    base_url = data.get("base_url", backend.base_url or None)
    if not isinstance(base_url, str) or not base_url.startswith(("http://", "https://")):
        raise TopologyError(
            "base_url must be an http:// or https:// URL.", code="invalid_url", param="base_url"
        )
    backend.base_url = base_url.rstrip("/")
    if "api_key" in data:
        key = data["api_key"]
        if key is not None and not isinstance(key, str):
            raise TopologyError("api_key must be a string.", code="invalid_value", param="api_key")
        if key is not None:  # null keeps the stored key; "" clears it
            backend.api_key_encrypted = encrypt(key)
    if "max_inflight" in data:
        backend.max_inflight = _check_int(data["max_inflight"], "max_inflight", 1, 100_000)
    if "weight" in data:
        backend.weight = _check_int(data["weight"], "weight", 1, 1000)
    if "enabled" in data:
        if not isinstance(data["enabled"], bool):
            raise TopologyError(
                "enabled must be true or false.", code="invalid_value", param="enabled"
            )
        backend.enabled = data["enabled"]
    if "health_path" in data:
        hp = data["health_path"]
        if not isinstance(hp, str) or (hp and not hp.startswith("/")):
            raise TopologyError(
                "health_path must start with '/' (or be empty to probe /models).",
                code="invalid_value",
                param="health_path",
            )
        backend.health_path = hp
    if "models" in data:
        backend.served_models = _check_str_list(data["models"], "models")
    if "aliases" in data:
        aliases = data["aliases"]
        if not isinstance(aliases, dict) or not all(
            isinstance(k, str) and k and isinstance(v, str) and v for k, v in aliases.items()
        ):
            raise TopologyError(
                "aliases must map alias names to served model ids.",
                code="invalid_value",
                param="aliases",
            )
        backend.aliases = aliases
    if "priority" in data:
        try:
            backend.priority_mode = parse_priority_mode(data["priority"]).to_json()
        except MappingError as err:
            raise TopologyError(err.message, code=err.code, param=err.param) from None
    elif not backend.priority_mode:
        backend.priority_mode = {"mode": "auto"}
    if backend.pk is not None and "base_url" in data:
        old = Backend.objects.get(pk=backend.pk)
        if old.base_url != backend.base_url:
            backend.profile, backend.discovered_models = {}, []  # another server now
    backend.save()
    apply_topology()
    return backend


@transaction.atomic
def backend_delete(*, name: str) -> None:
    deleted, _ = Backend.objects.filter(name=name).delete()
    if not deleted:
        raise TopologyError(f"No backend named '{name}'.", code="backend_not_found", status=404)
    apply_topology()


@transaction.atomic
def pool_save(*, data: dict[str, Any], known_groups: set[str]) -> Pool:
    """Create or update a pool by name; members and fallback must exist."""
    if not isinstance(data, dict):
        raise TopologyError("Send a JSON object.", code="invalid_request")
    name = _check_name(data.get("name"))
    pool = Pool.objects.filter(name=name).first() or Pool(name=name)
    if "kind" in data:
        if data["kind"] not in KINDS:
            raise TopologyError(
                f"kind must be one of: {', '.join(KINDS)}.", code="invalid_value", param="kind"
            )
        pool.kind = data["kind"]
    if "strategy" in data:
        if data["strategy"] not in STRATEGIES:
            raise TopologyError(
                f"strategy must be one of: {', '.join(STRATEGIES)}.",
                code="invalid_value",
                param="strategy",
            )
        pool.strategy = data["strategy"]
    if "allowed_groups" in data:
        groups = _check_str_list(data["allowed_groups"], "allowed_groups")
        unknown = [g for g in groups if g not in known_groups]
        if unknown:
            raise TopologyError(
                f"Unknown group: {unknown[0]}.", code="unknown_group", param="allowed_groups"
            )
        pool.allowed_groups = groups
    if "fallback" in data:
        fb = data["fallback"]
        if fb in (None, ""):
            pool.fallback = None
        else:
            target = Pool.objects.filter(name=fb).first()
            if target is None or fb == name:
                raise TopologyError(
                    f"No other pool named '{fb}'.", code="unknown_pool", param="fallback"
                )
            pool.fallback = target
    backends: list[Backend] | None = None
    if "backends" in data:
        names = _check_str_list(data["backends"], "backends")
        found = {b.name: b for b in Backend.objects.filter(name__in=names)}
        missing = [n for n in names if n not in found]
        if missing:
            raise TopologyError(
                f"Unknown backend: {missing[0]}.", code="unknown_backend", param="backends"
            )
        backends = [found[n] for n in names]
    pool.save()
    if backends is not None:
        pool.backends.set(backends)
    apply_topology()
    return pool


@transaction.atomic
def pool_delete(*, name: str) -> None:
    deleted, _ = Pool.objects.filter(name=name).delete()
    if not deleted:
        raise TopologyError(f"No pool named '{name}'.", code="pool_not_found", status=404)
    apply_topology()


def backend_out(b: Backend, live: dict[str, Any] | None = None) -> dict[str, Any]:
    """A backend for the admin API; the API key never leaves, only whether one is set."""
    from gateway.mapping import explain_mapping

    mode = priority_mode_of(b)
    profile = profile_of(b)
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
        "pools": sorted(p.name for p in b.pools.all()),
        "healthy": state.get("healthy"),
        "inflight": state.get("inflight"),
    }


def pool_out(p: Pool) -> dict[str, Any]:
    return {
        "name": p.name,
        "kind": p.kind,
        "strategy": p.strategy,
        "allowed_groups": list(p.allowed_groups or []),
        "fallback": p.fallback.name if p.fallback else None,
        "backends": [b.name for b in p.backends.all()],
    }
