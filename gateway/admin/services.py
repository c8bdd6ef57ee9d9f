"""Topology writes and reads on the Django side: backends and pools, and applying them live."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

from django.db import transaction
from django.db.models import QuerySet
from rest_framework.serializers import Serializer

from accounts.api_errors import ApiError
from aiplane import audit, changes
from gateway.admin.crypto import encrypt
from gateway.admin.selectors import load_topology
from gateway.admin.serializers.fields import NAME_MESSAGE, NAME_RE
from gateway.admin.serializers.topology import BackendIn, PoolIn
from gateway.admin.shapes import backend_state, detected_state, pool_state
from gateway.models import Backend, Pool
from gateway.runtime.runtime import current_runtime


@transaction.atomic
def save_discovery(name: str, profile: dict[str, Any], models: list[str]) -> None:
    """Store what detection found; a background write, never on the request path.

    Audited as "backend.detect" by the system, also after "Detect now": what changed is what
    the engine answered, not anything a person set.
    """
    backend = Backend.objects.select_for_update().filter(name=name).first()
    if backend is None:
        return  # deleted while it was being probed
    before = detected_state(backend.profile, list(backend.discovered_models or []))
    Backend.objects.filter(pk=backend.pk).update(profile=profile, discovered_models=models)
    audit.record(None, "backend.detect", name, before, detected_state(profile, models))


# ----- applying ------------------------------------------------------------------------------


def apply_topology() -> None:
    """After commit, hand the new topology to every live gateway runtime in this process."""

    def push() -> None:
        changes.publish(changes.TOPOLOGY)  # every other process reloads it
        rt = current_runtime()
        if rt is not None:
            rt.install_threadsafe(load_topology())

    # A write that changes several rows (a group rename and its pools) reloads once.
    changes.once_on_commit(changes.TOPOLOGY, push)


def validated(serializer_class: type[Serializer], data: Any, **context: Any) -> dict[str, Any]:
    """The input as its serializer cleaned it; DRF's ValidationError (a 400) otherwise."""
    serializer = serializer_class(data=data, context=context)
    serializer.is_valid(raise_exception=True)
    return dict(serializer.validated_data)


@transaction.atomic  # the checks (is the name taken?) and the write see one state
def backend_save(*, data: Any, actor: Any = None) -> Backend:
    """Create or update a backend by name from the complete editor; all-or-nothing.

    actor (here and below): the User who acted, a command's name, or None, for the audit log.
    """
    return backend_put(fields=validated(BackendIn, data), actor=actor)


@transaction.atomic
def backend_put(*, fields: dict[str, Any], actor: Any = None) -> Backend:
    """Store a backend from BackendIn's validated fields (those left out keep their value)."""
    backend, fields, before = _put_target(Backend, fields, backend_state)
    old_url = backend.base_url
    key_replaced = False
    if "api_key" in fields:
        key = fields.pop("api_key")
        if key is not None:  # null keeps the stored key; "" clears it
            key_replaced = bool(key) and bool(backend.api_key_encrypted)
            backend.api_key_encrypted = encrypt(key)
    if "models" in fields:
        fields["served_models"] = fields.pop("models")
    pools = fields.pop("pools", None)
    if "max_inflight" in fields:
        limit = fields.pop("max_inflight")
        backend.capacity_auto = limit == "auto"
        if limit != "auto":  # "auto" keeps the fixed number for when it is fixed again
            backend.max_inflight = limit
    if "priority" in fields:
        fields["priority_mode"] = fields.pop("priority")
    elif not backend.priority_mode:
        backend.priority_mode = {"mode": "auto"}
    for attr, value in fields.items():
        setattr(backend, attr, value)
    if backend.pk is not None and backend.base_url != old_url:
        backend.profile, backend.discovered_models = {}, []  # another server now
    backend.save()
    if pools is not None:
        backend.pools.set(Pool.objects.filter(name__in=pools))
    after = backend_state(backend)
    if key_replaced:
        after["api_key_replaced"] = True  # one masked key looks like another: say it changed
    _put_done(actor, "backend", backend.name, before, after)
    return backend


_Named = TypeVar("_Named", Backend, Pool)


def _put_target(
    model: type[_Named], fields: dict[str, Any], state: Callable[[_Named], dict[str, Any]]
) -> tuple[_Named, dict[str, Any], dict[str, Any] | None]:
    """What a put writes: the backend or pool of that name (a new one if none), the fields to
    set (all but the name), and its audited state before (None: this creates it)."""
    fields = dict(fields)
    name = fields.pop("name")
    found = model.objects.filter(name=name).first() or model(name=name)
    return found, fields, None if found.pk is None else state(found)


def _put_done(
    actor: Any, what: str, name: str, before: dict[str, Any] | None, after: dict[str, Any]
) -> None:
    """Audit a put as a creation or an update, and apply it."""
    verb = "create" if before is None else "update"
    audit.record(actor, f"{what}.{verb}", name, before, after)
    apply_topology()


def _named(model: type[_Named], what: str, name: str) -> _Named:
    """The backend or pool called `name`, or a 404 (code backend_not_found, pool_not_found)."""
    found = model.objects.filter(name=name).first()
    if found is None:
        raise ApiError(404, f"{what}_not_found", f"No {what} named '{name}'.")
    return found


def _record_pools_changed(actor: Any, before: dict[int, dict[str, Any]]) -> None:
    for pool in Pool.objects.filter(pk__in=before).select_related("fallback"):
        audit.record(actor, "pool.update", pool.name, before[pool.pk], pool_state(pool))


def _delete(
    found: Backend | Pool,
    what: str,
    before: dict[str, Any],
    losing: QuerySet[Pool],
    *,
    actor: Any,
) -> None:
    """Delete a backend or pool (`before`: its audited state) and apply it; the pools `losing`
    it (a member, a fallback) lose it too, and their rows in the audit log say so."""
    pools = {p.pk: pool_state(p) for p in losing.select_related("fallback")}
    found.delete()
    audit.record(actor, f"{what}.delete", found.name, before, None)
    _record_pools_changed(actor, pools)
    apply_topology()


@transaction.atomic
def backend_delete(*, name: str, actor: Any = None) -> None:
    backend = _named(Backend, "backend", name)
    _delete(backend, "backend", backend_state(backend), backend.pools.all(), actor=actor)


@transaction.atomic
def pool_save(*, data: Any, known_groups: set[str], actor: Any = None) -> Pool:
    """Create or update a pool by name; members and fallback must exist."""
    return pool_put(fields=validated(PoolIn, data, known_groups=known_groups), actor=actor)


@transaction.atomic
def pool_put(*, fields: dict[str, Any], actor: Any = None) -> Pool:
    """Store a pool from PoolIn's validated fields (those left out keep their value)."""
    pool, fields, before = _put_target(Pool, fields, pool_state)
    _decide_access(pool, fields)
    names = fields.pop("backends", None)
    for attr, value in fields.items():
        setattr(pool, attr, value)
    pool.save()
    if names is not None:
        found = {b.name: b for b in Backend.objects.filter(name__in=names)}
        pool.backends.set([found[n] for n in names])
    _put_done(actor, "pool", pool.name, before, pool_state(pool))
    return pool


def _decide_access(pool: Pool, fields: dict[str, Any]) -> None:
    """Who may use the pool after this write; opening it to everyone is never a side effect.

    A new pool named with no groups and no word on `everyone` is for everyone (what creating
    an open pool always meant). Emptying an existing pool's groups must say `everyone`: true
    opens it, false closes it to everyone; left unsaid it is refused, as it would widen access.
    `everyone: true` clears the group list, which would mean nothing beside it.
    """
    groups = fields.get("allowed_groups")
    everyone = fields.get("everyone")
    if pool.pk is None:
        if everyone is None:
            fields["everyone"] = not groups
    elif everyone is None and groups == [] and not pool.everyone and pool.allowed_groups:
        raise ApiError(
            400,
            "access_widening",
            f"Removing every group from the pool '{pool.name}' would open it to everyone: "
            "send everyone: true to allow that, or everyone: false to close it.",
            "everyone",
        )
    elif everyone is None and groups:
        fields["everyone"] = False  # naming groups narrows an open pool to them
    if fields.get("everyone"):
        fields["allowed_groups"] = []


@transaction.atomic
def pool_delete(*, name: str, actor: Any = None) -> None:
    pool = _named(Pool, "pool", name)
    _delete(pool, "pool", pool_state(pool), pool.fallback_for.all(), actor=actor)


def _check_new_name(model: type[Backend] | type[Pool], what: str, name: Any) -> str:
    if not isinstance(name, str) or not NAME_RE.fullmatch(name):
        raise ApiError(400, "invalid_name", NAME_MESSAGE, "name")
    if model.objects.filter(name=name).exists():
        raise ApiError(400, "name_taken", f"A {what} named '{name}' exists.", "name")
    return name


def _rename(model: type[_Named], what: str, *, name: str, new: Any, actor: Any) -> _Named:
    found = _named(model, what, name)
    if new != name:
        found.name = _check_new_name(model, what, new)
        found.save(update_fields=["name", "updated_at"])
        audit.record(actor, f"{what}.rename", found.name, {"name": name}, {"name": found.name})
        apply_topology()
    return found


@transaction.atomic
def backend_rename(*, name: str, new: Any, actor: Any = None) -> Backend:
    """A new name for a backend: its pools follow (they hold it by id); live on commit."""
    return _rename(Backend, "backend", name=name, new=new, actor=actor)


@transaction.atomic
def pool_rename(*, name: str, new: Any, actor: Any = None) -> Pool:
    """A new name for a pool: pools falling back to it follow (they hold it by id)."""
    return _rename(Pool, "pool", name=name, new=new, actor=actor)


def group_renamed(*, old: str, new: str) -> None:
    """A group's new name in every pool that allows it by name (in the caller's transaction)."""
    for pool in Pool.objects.all():
        groups = list(pool.allowed_groups or [])
        if old in groups:
            pool.allowed_groups = [new if g == old else g for g in groups]
            pool.save(update_fields=["allowed_groups", "updated_at"])
    apply_topology()


def group_deleted(*, name: str, actor: Any = None) -> None:
    """A deleted group leaves every pool that allowed it (in the caller's transaction): left
    there, its name would hand the pool to the next group given that name. A pool left with
    no group is closed, never opened (`everyone` stays as it was)."""
    before: dict[int, dict[str, Any]] = {}
    for pool in Pool.objects.select_related("fallback"):
        groups = list(pool.allowed_groups or [])
        if name in groups:
            before[pool.pk] = pool_state(pool)
            pool.allowed_groups = [g for g in groups if g != name]
            pool.save(update_fields=["allowed_groups", "updated_at"])
    _record_pools_changed(actor, before)
    apply_topology()
