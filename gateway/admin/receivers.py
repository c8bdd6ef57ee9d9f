"""What the gateway does when accounts change a group: the snapshot maps the group names pools
allow to ids, so any group saved or deleted rebuilds it (a pool may name a group before the
group exists), and a group renamed or deleted is followed in every pool that names it, in the
same transaction (accounts/signals.py sends those). Connected by GatewayConfig.ready, after
accounts' own receivers (INSTALLED_APPS lists accounts first)."""

from __future__ import annotations

from typing import Any

from django.db.models.signals import post_delete, post_save

from accounts import signals
from accounts.models import GatewayGroup

# The services are imported on use, in each receiver: this module loads while Django sets
# itself up (GatewayConfig.ready), and the services bring the gateway's runtime, engines and
# their HTTP clients with them, which no manage.py command should pay for at start.


def _group_ids_changed(**kwargs: Any) -> None:
    update_fields = kwargs.get("update_fields")
    if kwargs.get("created") is False and update_fields is not None and "name" not in update_fields:
        return
    from gateway.admin import services  # on use (see above)

    services.apply_topology()


def _group_renamed(*, old: str, new: str, **kwargs: Any) -> None:
    from gateway.admin import services  # on use (see above)

    services.group_renamed(old=old, new=new)


def _group_deleted(*, name: str, actor: Any, **kwargs: Any) -> None:
    from gateway.admin import services  # on use (see above)

    services.group_deleted(name=name, actor=actor)


def connect() -> None:
    """Wire every receiver (once: each has its dispatch_uid)."""
    post_save.connect(_group_ids_changed, sender=GatewayGroup, dispatch_uid="gateway:group-ids")
    post_delete.connect(
        _group_ids_changed, sender=GatewayGroup, dispatch_uid="gateway:group-ids:delete"
    )
    signals.group_renamed.connect(
        _group_renamed, sender=GatewayGroup, dispatch_uid="gateway:group-renamed"
    )
    signals.group_deleted.connect(
        _group_deleted, sender=GatewayGroup, dispatch_uid="gateway:group-deleted"
    )
