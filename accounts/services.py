"""Writes: keyword-only `<entity>_<action>` functions, each one transaction."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

from django.contrib.auth.models import User
from django.contrib.auth.password_validation import validate_password
from django.core.exceptions import ValidationError as DjangoValidationError
from django.db import transaction
from django.db.models import Q
from django.utils import timezone

from accounts.allowances import Allowance, above_ceiling, as_json
from accounts.api_errors import ApiError
from accounts.models import ApiToken, GatewayGroup, UserProfile
from accounts.priority import Priority
from accounts.rbac import resolve
from accounts.tokens import new_secret
from aiplane.catalog import SettingError, settings_update


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
    allowance: Allowance | None = None,
) -> tuple[ApiToken, str]:
    """Create a personal token; answer it with its plaintext, which is never stored."""
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
    return token, secret.plaintext


@transaction.atomic
def token_priority_set(*, token: ApiToken, actor: User, priority: Priority | None) -> ApiToken:
    """The owner's own change, checked against their ceiling on every save."""
    _check_ceiling(owner=actor, priority=priority)
    token.priority = priority
    token.priority_set_by = actor
    # The owner's own choice, even an administrator's: it follows their ceiling, so a demoted
    # administrator's self-granted high falls back with them.
    token.priority_set_by_admin = False
    token.save(update_fields=["priority", "priority_set_by", "priority_set_by_admin"])
    return token


@transaction.atomic
def token_priority_override(*, token: ApiToken, admin: User, priority: Priority | None) -> ApiToken:
    """An administrator's unrestricted change (the caller checked the rights)."""
    token.priority = priority
    token.priority_set_by = admin
    # A grant from another administrator stands; on their own token it is an owner's choice.
    token.priority_set_by_admin = admin.pk != token.owner_id
    token.save(update_fields=["priority", "priority_set_by", "priority_set_by_admin"])
    return token


_ALLOWANCE_FIELDS = ["allowance", "allowance_set_by", "allowance_set_by_admin"]


@transaction.atomic
def token_allowance_set(
    *, token: ApiToken, actor: User, allowance: Allowance | None
) -> ApiToken:
    """The owner's own change: each limit at most their own, checked on every save; it then
    applies together with their inherited allowance, so it can only ever lower it."""
    _check_allowance_ceiling(owner=actor, allowance=allowance)
    token.allowance = as_json(allowance)
    token.allowance_set_by = actor
    token.allowance_set_by_admin = False  # as with priority: it follows the owner's ceiling
    token.save(update_fields=_ALLOWANCE_FIELDS)
    return token


@transaction.atomic
def token_allowance_override(
    *, token: ApiToken, admin: User, allowance: Allowance | None
) -> ApiToken:
    """An administrator's unrestricted change (the caller checked the rights): on another's
    token it stands alone, above the owner's allowance if it says so."""
    token.allowance = as_json(allowance)
    token.allowance_set_by = admin
    token.allowance_set_by_admin = admin.pk != token.owner_id
    token.save(update_fields=_ALLOWANCE_FIELDS)
    return token


@transaction.atomic
def token_revoke(*, token: ApiToken, actor: User) -> ApiToken:
    """Stop the token for good (the owner's or an administrator's act, the caller checked which);
    revoking again keeps the first revocation and who made it.

    The save empties the caller cache once committed, so the next /v1 request with it is a 401.
    """
    if token.revoked_at is None:
        token.revoked_at = timezone.now()
        token.revoked_by = actor
        token.save(update_fields=["revoked_at", "revoked_by"])
    return token


@transaction.atomic
def token_rotate(*, token: ApiToken) -> tuple[ApiToken, str]:
    """Replace the secret; the old plaintext stops working at once."""
    if token.revoked_at is not None:
        raise ApiError(409, "token_revoked", "A revoked token cannot be rotated.")
    secret = new_secret()
    token.prefix = secret.prefix
    token.digest = secret.digest
    token.save(update_fields=["prefix", "digest"])
    return token, secret.plaintext


@transaction.atomic
def token_delete(*, token: ApiToken) -> None:
    token.delete()


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


@transaction.atomic
def group_put(
    *,
    name: str,
    fields: dict[str, Any],
    members: Sequence[str] | None = None,
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
    group, created = GatewayGroup.objects.get_or_create(name=name, defaults=fields)
    if not created and fields:
        for key, value in fields.items():
            setattr(group, key, value)
        group.save()
    if members is not None:
        group.members.set(users)
    _refuse_losing_the_last_administrator(had_one=had_admin)
    return group, created


@transaction.atomic
def group_delete(*, group: GatewayGroup) -> None:
    had_admin = _administrator_exists()
    group.delete()
    _refuse_losing_the_last_administrator(had_one=had_admin)


def _set_password(user: User, password: str) -> None:
    try:
        validate_password(password, user)
    except DjangoValidationError as exc:
        raise ApiError(400, "invalid_password", " ".join(exc.messages), param="password") from exc
    user.set_password(password)


def _check_username_free(username: str, *, exclude_pk: int | None = None) -> None:
    taken = User.objects.filter(username=username)
    if exclude_pk is not None:
        taken = taken.exclude(pk=exclude_pk)
    if taken.exists():
        raise ApiError(400, "username_taken", f"The username {username} is taken.", "username")


@transaction.atomic
def user_create(
    *, username: str, email: str = "", password: str | None = None, is_active: bool = True
) -> User:
    """A local account; without a password it cannot sign in until one is set."""
    _check_username_free(username)
    user = User(username=username, email=email, is_active=is_active)
    if password is None:
        user.set_unusable_password()
    else:
        _set_password(user, password)
    user.save()
    return user


@transaction.atomic
def user_update(
    *,
    user: User,
    username: str | None = None,
    email: str | None = None,
    is_active: bool | None = None,
    password: str | None = None,
) -> User:
    had_admin = _administrator_exists()
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
    _refuse_losing_the_last_administrator(had_one=had_admin)
    return user


@transaction.atomic
def user_delete(*, user: User) -> None:
    had_admin = _administrator_exists()
    user.delete()
    _refuse_losing_the_last_administrator(had_one=had_admin)


@transaction.atomic
def profile_update(*, user: User, language: str) -> UserProfile:
    profile, _ = UserProfile.objects.update_or_create(user=user, defaults={"language": language})
    return profile


def settings_save(*, values: Any, actor: User) -> None:
    """Store a batch of operator settings; one bad key or value stores nothing."""
    try:
        settings_update(values=values, actor=actor.get_username())
    except SettingError as exc:
        raise ApiError(400, exc.code, str(exc), param=exc.key or None) from exc
