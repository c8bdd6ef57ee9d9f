"""Writes: keyword-only `<entity>_<action>` functions, each one transaction."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

from django.contrib.auth import authenticate
from django.contrib.auth.models import User
from django.contrib.auth.password_validation import validate_password
from django.core.exceptions import ValidationError as DjangoValidationError
from django.db import transaction
from django.db.models import Q
from django.http import HttpRequest
from django.utils import timezone

from accounts import signals
from accounts.allowances import Allowance, above_ceiling, as_json
from accounts.api_errors import ApiError
from accounts.models import ApiToken, GatewayGroup, UserProfile
from accounts.priority import Priority
from accounts.rbac import resolve
from accounts.tokens import new_secret
from aiplane import audit
from aiplane.catalog import SettingError, settings_update

# Who made a change: the signed-in person, a command's name ("manage.py serve"), or None.
Actor = User | str | None


def _label(priority: int | None) -> str | None:
    return None if priority is None else Priority(priority).label


def token_snapshot(token: ApiToken) -> dict[str, Any]:
    """A token as the audit log keeps it: no secret, no digest (the prefix is public)."""
    return {
        "id": token.pk,
        "owner": token.owner.get_username(),
        "name": token.name,
        "prefix": token.prefix,
        "priority": _label(token.priority),
        "priority_set_by_admin": token.priority_set_by_admin,
        "model_allowlist": token.model_allowlist,
        "allowance": token.allowance,
        "allowance_set_by_admin": token.allowance_set_by_admin,
        "expires_at": token.expires_at,
        "revoked_at": token.revoked_at,
    }


def _token_target(token: ApiToken) -> str:
    return f"{token.owner.get_username()}/{token.name}"


def group_settings(group: GatewayGroup) -> dict[str, Any]:
    """What an administrator sets on a group, in the API's own form (a configuration file's
    entry for it too); no members, so an unsaved group has them."""
    return {
        "name": group.name,
        "description": group.description,
        "is_admin": group.is_admin,
        "is_default": group.is_default,
        "priority": _label(group.priority),
        "allowance": group.allowance,
    }


def group_snapshot(group: GatewayGroup) -> dict[str, Any]:
    return {
        **group_settings(group),
        "members": sorted(group.members.values_list("username", flat=True)),
    }


def user_snapshot(user: User) -> dict[str, Any]:
    """An account as the audit log keeps it: whether it has a password, never the password."""
    return {
        "username": user.username,
        "email": user.email,
        "is_active": user.is_active,
        "is_superuser": user.is_superuser,
        "has_password": user.has_usable_password(),
        "groups": sorted(user.gateway_groups.values_list("name", flat=True)) if user.pk else [],
    }


def _check_ceiling(*, owner: User, priority: Priority | None) -> bool:
    """Refuse a value above the owner's ceiling (their current groups); answer is_admin."""
    resolved = resolve(owner)
    if priority is not None and priority > resolved.max_priority:
        raise ApiError(
            403,
            "priority_above_ceiling",
            f"Priority {priority.label} is above your maximum, {resolved.max_priority.label}.",
            param="priority",
        )
    return resolved.is_admin


def _check_allowance_ceiling(*, owner: User, allowance: Allowance | None) -> None:
    """Refuse a token allowance with a limit above the owner's own (their current groups)."""
    over = above_ceiling(allowance, resolve(owner).max_allowance)
    if over:
        limit = over[0]
        scope = f" for {limit.model}" if limit.model is not None else ""
        raise ApiError(
            403,
            "allowance_above_ceiling",
            f"The limit of {limit.limit} {limit.reason.replace('_', ' ')}{scope} is above your "
            "own allowance.",
            param="allowance",
        )


@transaction.atomic
def token_create(
    *,
    owner: User,
    name: str,
    priority: Priority | None = None,
    model_allowlist: Sequence[str] | None = None,
    expires_at: datetime | None = None,
    actor: Actor = None,
    allowance: Allowance | None = None,
) -> tuple[ApiToken, str]:
    """Create a personal token; answer it with its plaintext, which is never stored.

    The actor is the owner unless another is named (a command creating a demo token).
    """
    _check_ceiling(owner=owner, priority=priority)
    _check_allowance_ceiling(owner=owner, allowance=allowance)
    secret = new_secret()
    token = ApiToken.objects.create(
        owner=owner,
        name=name,
        prefix=secret.prefix,
        digest=secret.digest,
        expires_at=expires_at,
        model_allowlist=None if model_allowlist is None else list(model_allowlist),
        priority=priority,
        priority_set_by=owner if priority is not None else None,
        priority_set_by_admin=False,  # the owner's own choice: capped by their ceiling later
        allowance=as_json(allowance),
        allowance_set_by=owner if allowance is not None else None,
    )
    audit.record(actor or owner, "token.create", _token_target(token), None, token_snapshot(token))
    return token, secret.plaintext


@transaction.atomic
def token_priority_set(*, token: ApiToken, actor: User, priority: Priority | None) -> ApiToken:
    """The owner's own change, checked against their ceiling on every save."""
    _check_ceiling(owner=actor, priority=priority)
    before = token_snapshot(token)
    token.priority = priority
    token.priority_set_by = actor
    # The owner's own choice, even an administrator's: it follows their ceiling, so a demoted
    # administrator's self-granted high falls back with them.
    token.priority_set_by_admin = False
    token.save(update_fields=["priority", "priority_set_by", "priority_set_by_admin"])
    audit.record(actor, "token.priority", _token_target(token), before, token_snapshot(token))
    return token


@transaction.atomic
def token_priority_override(*, token: ApiToken, admin: User, priority: Priority | None) -> ApiToken:
    """An administrator's unrestricted change (the caller checked the rights)."""
    before = token_snapshot(token)
    token.priority = priority
    token.priority_set_by = admin
    # A grant from another administrator stands; on their own token it is an owner's choice.
    token.priority_set_by_admin = admin.pk != token.owner_id
    token.save(update_fields=["priority", "priority_set_by", "priority_set_by_admin"])
    after = token_snapshot(token)
    audit.record(admin, "token.priority_override", _token_target(token), before, after)
    return token


_ALLOWANCE_FIELDS = ["allowance", "allowance_set_by", "allowance_set_by_admin"]


@transaction.atomic
def token_allowance_set(*, token: ApiToken, actor: User, allowance: Allowance | None) -> ApiToken:
    """The owner's own change: each limit at most their own, checked on every save; it then
    applies together with their inherited allowance, so it can only ever lower it."""
    _check_allowance_ceiling(owner=actor, allowance=allowance)
    before = token_snapshot(token)
    token.allowance = as_json(allowance)
    token.allowance_set_by = actor
    token.allowance_set_by_admin = False  # as with priority: it follows the owner's ceiling
    token.save(update_fields=_ALLOWANCE_FIELDS)
    audit.record(actor, "token.allowance", _token_target(token), before, token_snapshot(token))
    return token


@transaction.atomic
def token_allowance_override(
    *, token: ApiToken, admin: User, allowance: Allowance | None
) -> ApiToken:
    """An administrator's unrestricted change (the caller checked the rights): on another's
    token it stands alone, above the owner's allowance if it says so."""
    before = token_snapshot(token)
    token.allowance = as_json(allowance)
    token.allowance_set_by = admin
    token.allowance_set_by_admin = admin.pk != token.owner_id
    token.save(update_fields=_ALLOWANCE_FIELDS)
    after = token_snapshot(token)
    audit.record(admin, "token.allowance_override", _token_target(token), before, after)
    return token


@transaction.atomic
def token_revoke(*, token: ApiToken, actor: User) -> ApiToken:
    """Stop the token for good (the owner's or an administrator's act, the caller checked which);
    revoking again keeps the first revocation and who made it.

    The save empties the caller cache once committed, so the next /v1 request with it is a 401.
    """
    if token.revoked_at is None:
        before = token_snapshot(token)
        token.revoked_at = timezone.now()
        token.revoked_by = actor
        token.save(update_fields=["revoked_at", "revoked_by"])
        audit.record(actor, "token.revoke", _token_target(token), before, token_snapshot(token))
    return token


@transaction.atomic
def token_rotate(*, token: ApiToken, actor: Actor = None) -> tuple[ApiToken, str]:
    """Replace the secret; the old plaintext stops working at once."""
    if token.revoked_at is not None:
        raise ApiError(409, "token_revoked", "A revoked token cannot be rotated.")
    before = token_snapshot(token)
    secret = new_secret()
    token.prefix = secret.prefix
    token.digest = secret.digest
    token.save(update_fields=["prefix", "digest"])
    after = {**token_snapshot(token), "secret_replaced": True}
    audit.record(actor, "token.rotate", _token_target(token), before, after)
    return token, secret.plaintext


@transaction.atomic
def token_delete(*, token: ApiToken, actor: Actor = None) -> None:
    before, target = token_snapshot(token), _token_target(token)
    token.delete()
    audit.record(actor, "token.delete", target, before, None)


def _administrator_exists() -> bool:
    active = User.objects.filter(is_active=True)
    if active.filter(Q(is_superuser=True) | Q(gateway_groups__is_admin=True)).exists():
        return True
    return GatewayGroup.objects.filter(is_admin=True, is_default=True).exists() and active.exists()


def _refuse_losing_the_last_administrator(*, had_one: bool) -> None:
    """Raise (and so roll back the change) when it removed the last active administrator."""
    if had_one and not _administrator_exists():
        raise ApiError(
            409, "last_administrator", "This change would leave no active administrator."
        )


def _record_memberships(actor: Actor, group: str, old: list[str], new: list[str]) -> None:
    """One row per person who joined or left, so an account's own history shows the change of
    its priority or administrator rights (both come from groups)."""
    joined = set(new) - set(old)
    for user in User.objects.filter(username__in=set(old) ^ set(new)).order_by("username"):
        after = user_snapshot(user)
        groups = set(after["groups"])
        groups = groups - {group} if user.username in joined else groups | {group}
        audit.record(
            actor, "user.update", user.username, {**after, "groups": sorted(groups)}, after
        )


@transaction.atomic
def group_put(
    *,
    name: str,
    fields: dict[str, Any],
    members: Sequence[str] | None = None,
    actor: Actor = None,
) -> tuple[GatewayGroup, bool]:
    """Create or update a group by name; omitted fields keep their value (or the default)."""
    had_admin = _administrator_exists()
    users: list[User] = []
    if members is not None:
        wanted = set(members)
        users = list(User.objects.filter(username__in=wanted))
        unknown = sorted(wanted - {u.username for u in users})
        if unknown:
            raise ApiError(
                400, "unknown_member", f"Unknown user: {', '.join(unknown)}.", param="members"
            )
    existing = GatewayGroup.objects.filter(name=name).first()
    before = None if existing is None else group_snapshot(existing)
    group, created = GatewayGroup.objects.get_or_create(name=name, defaults=fields)
    if not created and fields:
        for key, value in fields.items():
            setattr(group, key, value)
        group.save()
    if members is not None:
        group.members.set(users)
    after = group_snapshot(group)
    action = "group.create" if created else "group.update"
    audit.record(actor, action, group.name, before, after)
    old_members = [] if before is None else before["members"]
    _record_memberships(actor, group.name, old_members, after["members"])
    _refuse_losing_the_last_administrator(had_one=had_admin)
    return group, created


@transaction.atomic
def group_rename(*, group: GatewayGroup, name: str, actor: Actor = None) -> GatewayGroup:
    """Give a group a new name; pools that allow it by name follow in the same transaction."""

    if name == group.name:
        return group
    if GatewayGroup.objects.filter(name=name).exists():
        raise ApiError(400, "name_taken", f"A group named '{name}' exists.", param="name")
    old = group.name
    group.name = name
    group.save(update_fields=["name", "updated_at"])
    signals.group_renamed.send(sender=GatewayGroup, old=old, new=name)
    audit.record(actor, "group.rename", name, {"name": old}, {"name": name})
    return group


@transaction.atomic
def group_delete(*, group: GatewayGroup, actor: Actor = None) -> None:

    had_admin = _administrator_exists()
    before = group_snapshot(group)
    group.delete()
    audit.record(actor, "group.delete", before["name"], before, None)
    signals.group_deleted.send(sender=GatewayGroup, name=before["name"], actor=actor)
    _record_memberships(actor, before["name"], before["members"], [])
    _refuse_losing_the_last_administrator(had_one=had_admin)


def _set_password(user: User, password: str, *, param: str = "password") -> None:
    """Set a password the validators accept; a refusal names every reason with its code."""
    try:
        validate_password(password, user)
    except DjangoValidationError as exc:
        raise ApiError(
            400,
            "invalid_password",
            " ".join(exc.messages),
            param=param,
            reasons=password_reasons(exc),
        ) from exc
    user.set_password(password)


def password_reasons(exc: DjangoValidationError) -> list[dict[str, Any]]:
    """Each validator's refusal: Django's code (password_too_short, ...), words and params.

    Params are kept only when JSON can carry them (min_length; the similar attribute's name).
    """
    reasons = []
    for error in exc.error_list:
        params = {
            key: value
            for key, value in (error.params or {}).items()
            if isinstance(value, str | int | float)
        }
        message = error.message % error.params if error.params else error.message
        reasons.append({"code": error.code or "invalid", "message": str(message), "params": params})
    return reasons


# Not atomic: the refusal must not roll back the failure axes just counted. The one write is
# one UPDATE, after every check.
def password_change(*, user: User, current: str, new: str, request: HttpRequest) -> User:
    """A person's own change: the current password first, then the validators, as for anyone.

    The current password is checked as a sign-in is (django-axes first), so guessing it here
    counts against the same username and address, under the same lockout, as the sign-in form:
    a stolen session is no way around the throttle. Once locked out, axes' middleware answers
    429 with Retry-After (accounts/throttle.py) instead of the refusal raised below.
    """
    checked = authenticate(request, username=user.get_username(), password=current)
    if checked is None or checked.pk != user.pk:
        raise ApiError(
            400, "wrong_password", "The current password is wrong.", param="current_password"
        )
    _set_password(user, new, param="new_password")
    user.save(update_fields=["password"])
    return user


def _check_username_free(username: str, *, exclude_pk: int | None = None) -> None:
    taken = User.objects.filter(username=username)
    if exclude_pk is not None:
        taken = taken.exclude(pk=exclude_pk)
    if taken.exists():
        raise ApiError(400, "username_taken", f"The username {username} is taken.", "username")


@transaction.atomic
def user_create(
    *,
    username: str,
    email: str = "",
    password: str | None = None,
    is_active: bool = True,
    actor: Actor = None,
    groups: Sequence[str] | None = None,
) -> User:
    """A local account; without a password it cannot sign in until one is set."""
    _check_username_free(username)
    chosen = _groups_named(groups or [])
    user = User(username=username, email=email, is_active=is_active)
    if password is None:
        user.set_unusable_password()
    else:
        _set_password(user, password)
    user.save()
    user.gateway_groups.add(*chosen)
    audit.record(actor, "user.create", user.username, None, user_snapshot(user))
    return user


def _groups_named(names: Sequence[str]) -> list[GatewayGroup]:
    """The groups by name, in the order given; an unknown name is refused before any write."""
    wanted = list(dict.fromkeys(names))
    found = {g.name: g for g in GatewayGroup.objects.filter(name__in=wanted)}
    unknown = [name for name in wanted if name not in found]
    if unknown:
        raise ApiError(400, "unknown_group", f"No group named '{unknown[0]}'.", param="groups")
    return [found[name] for name in wanted]


@transaction.atomic
def user_update(
    *,
    user: User,
    username: str | None = None,
    email: str | None = None,
    is_active: bool | None = None,
    password: str | None = None,
    groups: Sequence[str] | None = None,
    actor: Actor = None,
) -> User:
    had_admin = _administrator_exists()
    before = user_snapshot(user)
    chosen = None if groups is None else _groups_named(groups)
    if username is not None:
        _check_username_free(username, exclude_pk=user.pk)
        user.username = username
    if email is not None:
        user.email = email
    if is_active is not None:
        user.is_active = is_active
    if password is not None:
        _set_password(user, password)
    user.save()
    if chosen is not None:
        # Default groups count for everyone whatever the membership table says: leave them be.
        kept = list(user.gateway_groups.filter(is_default=True))
        user.gateway_groups.set([*kept, *chosen])
    after = user_snapshot(user)
    if password is not None:
        after["password_replaced"] = True  # that it changed, never what to
    audit.record(actor, "user.update", user.username, before, after)
    _refuse_losing_the_last_administrator(had_one=had_admin)
    return user


@transaction.atomic
def user_delete(*, user: User, actor: Actor = None) -> None:
    had_admin = _administrator_exists()
    before = user_snapshot(user)
    # Its tokens go with it: each leaves its own row, as if deleted one by one.
    tokens = [
        (_token_target(t), token_snapshot(t)) for t in user.api_tokens.select_related("owner")
    ]
    user.delete()
    audit.record(actor, "user.delete", before["username"], before, None)
    for target, token in tokens:
        audit.record(actor, "token.delete", target, token, None)
    _refuse_losing_the_last_administrator(had_one=had_admin)


@transaction.atomic
def profile_update(*, user: User, language: str) -> UserProfile:
    profile, _ = UserProfile.objects.update_or_create(user=user, defaults={"language": language})
    return profile


def settings_save(*, values: Any, actor: User) -> None:
    """Store a batch of operator settings; one bad key or value stores nothing."""
    try:
        settings_update(values=values, actor=actor)
    except SettingError as exc:
        raise ApiError(400, exc.code, str(exc), param=exc.key or None) from exc
