"""Cache invalidation: any identity or settings change empties the caller cache after commit,
a browser session deleted (signed out, flushed) makes the rights granted to sessions be checked
again, and a group created, renamed or deleted rebuilds the gateway's snapshot (it maps groups
to ids)."""

from __future__ import annotations

from importlib import import_module
from typing import Any

from django.conf import settings
from django.contrib.auth.models import User
from django.db.models.signals import m2m_changed, post_delete, post_save

from accounts.caller import invalidate_callers, sessions_ended
from accounts.models import ApiToken, GatewayGroup, UserProfile
from aiplane import changes
from aiplane.catalog import on_settings_changed

# Saves that touch only these fields change nothing a CallerContext holds.
_IRRELEVANT_UPDATES = {frozenset({"last_login"}), frozenset({"last_used_at"})}

_connected = False


def _invalidate_after_commit(**kwargs: Any) -> None:
    update_fields = kwargs.get("update_fields")
    if update_fields is not None and frozenset(update_fields) in _IRRELEVANT_UPDATES:
        return
    # After commit: a load that starts earlier would read the old rows and cache them again.
    # Once per commit: a user saved with their memberships is one announcement, not one each.
    changes.once_on_commit(changes.CALLERS, _callers_changed, using=kwargs.get("using"))


def _callers_changed() -> None:
    invalidate_callers()
    changes.publish(changes.CALLERS)  # other processes forget theirs too


def _session_deleted(**kwargs: Any) -> None:
    # After commit too: a check that ran before it would still find the session.
    changes.once_on_commit(changes.SESSIONS, _sessions_changed, using=kwargs.get("using"))


def _sessions_changed() -> None:
    sessions_ended()
    changes.publish(changes.SESSIONS)


def _session_model() -> Any:
    """The model a database-backed session engine stores in; None for the others (cache,
    signed cookies), whose sessions end unannounced (the periodic check still sees it)."""
    store = import_module(settings.SESSION_ENGINE).SessionStore
    get_model = getattr(store, "get_model_class", None)
    return None if get_model is None else get_model()


def _group_ids_changed(**kwargs: Any) -> None:
    """A group created, deleted or renamed: the gateway's snapshot maps the group names pools
    allow to ids (gateway/admin/services.py load_topology), so it must be built again; a pool may
    name a group before the group exists."""
    update_fields = kwargs.get("update_fields")
    if kwargs.get("created") is False and update_fields is not None and "name" not in update_fields:
        return
    from gateway.admin.services import apply_topology

    apply_topology()


def _on_settings_changed(values: dict[str, Any]) -> None:
    invalidate_callers()  # the catalog already calls listeners after commit
    changes.publish(changes.SETTINGS)


def connect() -> None:
    """Wire every receiver once (AccountsConfig.ready)."""
    global _connected
    if _connected:
        return
    _connected = True
    for model in (User, GatewayGroup, ApiToken, UserProfile):
        uid = f"accounts.caller:{model._meta.label}"
        post_save.connect(_invalidate_after_commit, sender=model, dispatch_uid=uid + ":save")
        post_delete.connect(_invalidate_after_commit, sender=model, dispatch_uid=uid + ":delete")
    post_save.connect(_group_ids_changed, sender=GatewayGroup, dispatch_uid="gateway:group-ids")
    post_delete.connect(
        _group_ids_changed, sender=GatewayGroup, dispatch_uid="gateway:group-ids:delete"
    )
    m2m_changed.connect(
        _invalidate_after_commit,
        sender=GatewayGroup.members.through,
        dispatch_uid="accounts.caller:members",
    )
    session = _session_model()
    if session is not None:
        post_delete.connect(_session_deleted, sender=session, dispatch_uid="accounts:sessions")
    on_settings_changed(_on_settings_changed)
