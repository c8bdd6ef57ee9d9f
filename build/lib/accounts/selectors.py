"""Reads: checked fetches that answer 404 for someone else's object, and list queries."""

from __future__ import annotations

from typing import Any

from django.contrib.auth.models import User
from django.db.models import Prefetch, QuerySet

from accounts.api_errors import ApiError
from accounts.models import ApiToken, GatewayGroup, UserProfile
from aiplane.catalog import CATALOG, all_settings


def token_not_found() -> ApiError:
    return ApiError(404, "token_not_found", "Token not found.")


def tokens_of(*, owner: User) -> QuerySet[ApiToken]:
    return ApiToken.objects.filter(owner=owner).select_related("revoked_by")


def token_of(*, owner: User, token_id: int) -> ApiToken:
    """The owner's token; another person's token is indistinguishable from a missing one."""
    token = tokens_of(owner=owner).filter(pk=token_id).first()
    if token is None:
        raise token_not_found()
    return token


def tokens_all() -> QuerySet[ApiToken]:
    return ApiToken.objects.select_related(
        "owner", "priority_set_by", "allowance_set_by", "revoked_by"
    )


def token_get(*, token_id: int) -> ApiToken:
    token = tokens_all().filter(pk=token_id).first()
    if token is None:
        raise token_not_found()
    return token


def groups_all() -> QuerySet[GatewayGroup]:
    members = Prefetch("members", queryset=User.objects.order_by("username"))
    return GatewayGroup.objects.prefetch_related(members)


def group_get(*, name: str) -> GatewayGroup:
    group = GatewayGroup.objects.filter(name=name).first()
    if group is None:
        raise ApiError(404, "group_not_found", f"Group {name} not found.")
    return group


def users_all() -> QuerySet[User]:
    groups = Prefetch("gateway_groups", queryset=GatewayGroup.objects.order_by("name"))
    return User.objects.order_by("username").prefetch_related(groups)


def user_get(*, user_id: int) -> User:
    user = users_all().filter(pk=user_id).first()
    if user is None:
        raise ApiError(404, "user_not_found", "User not found.")
    return user


def language_of(*, user: User) -> str:
    # No row yet means the default; a GET never writes.
    language = UserProfile.objects.filter(user_id=user.pk).values_list("language", flat=True)
    return language.first() or "en"


def settings_catalog() -> list[dict[str, Any]]:
    """Every declared operator setting with its current value, in catalog order."""
    values = all_settings()
    return [
        {
            "key": spec.key,
            "kind": spec.kind,
            "default": spec.default,
            "choices": list(spec.choices),
            "section": spec.section,
            "value": values[spec.key],
            "min": spec.minimum,
            "max": spec.maximum,
        }
        for spec in CATALOG
    ]
