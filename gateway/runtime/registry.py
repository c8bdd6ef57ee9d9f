"""The upstream registry: an in-memory snapshot of backends and pools, and the routes they make.

Built from the database at start-up and whenever an administrator applies a change; the
request path only ever reads the current snapshot.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Hashable, Iterable
from dataclasses import dataclass, field, replace
from typing import Any

from multidict import CIMultiDict
from yarl import URL

from gateway.admission.types import Route, Slot, Target
from gateway.core.errors import Forbidden, ModelNotFound, echoed
from gateway.core.redaction import NO_SECRETS, Secrets
from gateway.engines.base_url import BadBaseUrl, check_base_url
from gateway.engines.priority_forwarding import (
    Mapping,
    PriorityMode,
    apply_mapping,
    resolve_mapping,
)
from gateway.engines.profiles import EngineProfile, serves_natively

log = logging.getLogger("aiplane.gateway")


@dataclass(slots=True)
class BackendSpec:
    """One backend as configured (plain data, so it can cross from a Django thread to the loop)."""

    id: int
    name: str
    base_url: str
    api_key: str = ""
    max_inflight: int = 16
    # Learned from the engine within floor..ceiling (max_inflight "auto"); else max_inflight.
    capacity_auto: bool = False
    capacity_floor: int = 1
    capacity_ceiling: int = 256
    headroom: tuple[int, int, int] = (0, 0, 0)  # slots kept from low, medium, high (always 0)
    weight: int = 1
    enabled: bool = True
    health_path: str = "/health"
    served_models: list[str] = field(default_factory=list)
    discovered_models: list[str] = field(default_factory=list)
    aliases: dict[str, str] = field(default_factory=dict)
    priority_mode: PriorityMode = field(default_factory=lambda: PriorityMode("auto"))
    profile: EngineProfile | None = None
    # How each surface beyond chat is served: "auto", "native" or "translate" (missing = auto).
    surfaces: dict[str, str] = field(default_factory=dict)
    # It keeps Responses state for callers (when it serves /v1/responses itself).
    store_responses: bool = False


@dataclass(slots=True)
class PoolSpec:
    name: str
    kind: str = "chat"
    strategy: str = "least_inflight"
    allowed_groups: frozenset[str] = frozenset()  # names, for people
    everyone: bool = False  # True: any caller; else only members of group_ids
    # The allowed groups by id, which access is decided by: a route key holds the caller's
    # group ids, so renaming a group leaves every route, and every request waiting on one, as is.
    group_ids: frozenset[int] = frozenset()
    fallback: str | None = None
    backends: list[str] = field(default_factory=list)


@dataclass(slots=True)
class Topology:
    backends: list[BackendSpec]
    pools: list[PoolSpec]
    # When its load began (monotonic): of two loads racing to be installed, the older loses.
    loaded_at: float = field(default_factory=time.monotonic, compare=False)


@dataclass(slots=True)
class Upstream:
    """A backend as the request path uses it: its slot, URLs, key header and priority mapping,
    and its key in every form an engine may quote it back (`secrets`, for
    gateway/core/redaction.py)."""

    spec: BackendSpec
    slot: Slot
    mapping: Mapping | None
    models: tuple[str, ...]
    headers: CIMultiDict[str]
    root: str
    urls: dict[str, URL] = field(default_factory=dict)
    secrets: Secrets = NO_SECRETS

    @property
    def name(self) -> str:
        return self.spec.name

    def native(self, surface: str) -> bool:
        """Does this backend serve `surface` (messages, responses) itself, or is it translated
        to chat completions? Automatic: native where detection found the engine serving it."""
        return serves_natively(self.spec.surfaces.get(surface, "auto"), self.spec.profile, surface)

    @property
    def keeps_responses(self) -> bool:
        """Does it keep Responses state (stored responses, conversations) for callers?"""
        return self.spec.store_responses and self.native("responses")

    def prepare(self, body: dict[str, Any], *, model: str, cls: int) -> None:
        """The final dispatch boundary: this backend's model id and priority mapping."""
        body["model"] = model
        apply_mapping(body, self.mapping, cls)

    def url(self, path: str) -> URL:
        """`path` is the /v1 path the caller used; the backend's base URL already ends in /v1.

        Parsed once per snapshot and path rather than on every request.
        """
        url = self.urls.get(path)
        if url is None:
            url = self.urls[path] = URL(self.spec.base_url + path[3:])
        return url


_DISPATCH_HEADERS = {
    "content-type": "application/json",
    "accept": "*/*",
    "accept-encoding": "identity",
    "user-agent": "aiplane",
}


def _usable_url(b: BackendSpec) -> bool:
    try:
        check_base_url(b.base_url.rstrip("/"))
    except BadBaseUrl as err:
        log.warning("backend %s has a base URL no client can use (%s): not serving", b.name, err)
        return False
    return True


def _set_capacity(slot: Slot, b: BackendSpec) -> None:
    """A fixed limit is the configured one; a learned one stays what the capacity controller
    set (gateway/runtime/capacity.py) across reloads, within its bounds, and a backend that
    becomes auto starts from a cold start, at its floor."""
    if not b.capacity_auto:
        slot.auto, slot.max_inflight = False, max(1, b.max_inflight)
        return
    if not slot.auto:
        slot.auto, slot.max_inflight = True, b.capacity_floor
    slot.max_inflight = max(b.capacity_floor, min(b.capacity_ceiling, slot.max_inflight))


def _root_of(base_url: str) -> str:
    return base_url[:-3] if base_url.endswith("/v1") else base_url


class Snapshot:
    """One immutable view of the topology, with routes cached per (kind, model, access)."""

    def __init__(self, topology: Topology, slots: dict[str, Slot]) -> None:
        self.upstreams: dict[str, Upstream] = {}
        for b in topology.backends:
            base = b.base_url.rstrip("/")
            spec = replace(b, base_url=base)
            slot = slots.get(b.name)
            if slot is None:
                slot = slots[b.name] = Slot(b.name)
            _set_capacity(slot, b)
            slot.weight = max(1, b.weight)
            slot.headroom = b.headroom
            # A base URL saved before it was checked may be one no client takes: such a backend
            # serves nothing (callers get no_healthy_backend), rather than a 500 per request.
            slot.enabled = b.enabled and _usable_url(b)
            slot.removed = False
            served = b.served_models or b.discovered_models
            # Every header aiohttp would add by itself is given here, so a dispatch skips that
            # work (and the engine gets a plain answer: no compression to pass on).
            headers = CIMultiDict(_DISPATCH_HEADERS)
            if b.api_key:
                headers["authorization"] = f"Bearer {b.api_key}"
            self.upstreams[b.name] = Upstream(
                spec=spec,
                slot=slot,
                mapping=resolve_mapping(b.priority_mode, b.profile),
                models=tuple(served),
                headers=headers,
                root=_root_of(base),
                secrets=Secrets.of(b.api_key),
            )
        for name, slot in slots.items():
            if name not in self.upstreams:
                slot.removed = True  # requests still running on it release normally
        self.pools = {p.name: p for p in topology.pools}
        # (kind, name a caller uses) -> [(pool, upstream, id the backend knows)]
        self.index: dict[tuple[str, str], list[tuple[PoolSpec, Upstream, str]]] = {}
        for pool in topology.pools:
            for bname in pool.backends:
                up = self.upstreams.get(bname)
                if up is None:
                    continue
                for model in up.models:
                    self.index.setdefault((pool.kind, model), []).append((pool, up, model))
                for alias, target in up.spec.aliases.items():
                    if target in up.models:
                        self.index.setdefault((pool.kind, alias), []).append((pool, up, target))
        self._routes: dict[Hashable, Route] = {}

    def resolve(self, kind: str, model: str, groups: frozenset[int]) -> Route:
        """The route for this caller and model: 404 when nobody serves it, 403 when not for them.

        A route's key is (kind, model, the caller's group ids), so when the topology changes
        `route_for_key` re-checks access for requests that are already waiting; ids rather than
        names, so a renamed group keeps its waiters and revoked access fails them.
        """
        key = ("route", kind, model, groups)
        route = self._routes.get(key)
        if route is not None:
            return route
        entries = self.index.get((kind, model))
        if not entries:
            raise ModelNotFound(f"The model '{echoed(model)}' does not exist.", param="model")
        route = self.route_for_key(key)
        if route is None:
            raise Forbidden(
                f"You are not allowed to use the model '{echoed(model)}'.", param="model"
            )
        return route

    def route_for_key(self, key: Hashable) -> Route | None:
        """The route for a key from `resolve`; None when the model or the access is gone."""
        route = self._routes.get(key)
        if route is not None:
            return route
        kind: str
        model: str
        groups: frozenset[int]
        _, kind, model, groups = key  # type: ignore[misc]
        entries = self.index.get((kind, model), [])
        allowed = frozenset(p.name for p, _, _ in entries if _allowed(p, groups))
        if not allowed:
            return None
        primary_pools, fallback_pools = _split_fallbacks(self, allowed)
        primary = _targets(e for e in entries if e[0].name in primary_pools)
        fallback = _targets(e for e in entries if e[0].name in fallback_pools)
        first_pool = next(e[0] for e in entries if e[0].name in primary_pools)
        route = Route(key=key, primary=primary, fallback=fallback, strategy=first_pool.strategy)
        self._routes[key] = route
        return route

    def models_for(self, groups: frozenset[int], allowlist: frozenset[str] | None) -> list[str]:
        """Every model name this caller may use, for /v1/models."""
        names = {
            model
            for (_, model), entries in self.index.items()
            if any(_allowed(p, groups) for p, _, _ in entries)
        }
        if allowlist is not None:
            names &= allowlist
        return sorted(names)


def _allowed(pool: PoolSpec, groups: frozenset[int]) -> bool:
    return pool.everyone or bool(pool.group_ids & groups)


def _split_fallbacks(
    snap: Snapshot, allowed: frozenset[str]
) -> tuple[frozenset[str], frozenset[str]]:
    """Separate the caller's pools into primaries and the offline fallbacks other pools name.

    A pool some other allowed pool names as its fallback only serves when the primaries are
    all down; if every pool is someone's fallback (two naming each other), all are primaries.
    """
    fallback = frozenset(
        fb for name in allowed if (fb := snap.pools[name].fallback) in allowed and fb != name
    )
    primary = allowed - fallback
    if not primary:
        return allowed, frozenset()
    return primary, fallback


def _targets(entries: Iterable[tuple[PoolSpec, Upstream, str]]) -> tuple[Target, ...]:
    seen: set[str] = set()
    out = []
    for pool, up, model in entries:
        if up.name in seen:
            continue
        seen.add(up.name)
        out.append(Target(slot=up.slot, model=model, pool=pool.name))
    return tuple(out)
