"""Plain factory functions for test data: they write rows directly and skip the API's rules."""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime
from typing import Any

from django.contrib.auth import get_user_model
from django.utils import timezone

from accounts.models import ApiToken, GatewayGroup
from accounts.priority import Priority, parse_priority
from accounts.tokens import new_secret

PASSWORD = "correct horse battery staple"

User = get_user_model()


def make_user(
    username: str,
    *,
    groups: Iterable[GatewayGroup | str] = (),
    is_superuser: bool = False,
    is_active: bool = True,
    email: str = "",
    password: str = PASSWORD,
) -> Any:
    user = User.objects.create_user(
        username=username, email=email, password=password, is_active=is_active
    )
    if is_superuser:
        user.is_superuser = True
        user.save(update_fields=["is_superuser"])
    for group in groups:
        if isinstance(group, str):
            group = GatewayGroup.objects.get_or_create(name=group)[0]
        group.members.add(user)
    return user


def make_group(
    name: str,
    *,
    priority: Priority | str | None = None,
    is_admin: bool = False,
    is_default: bool = False,
    members: Iterable[Any] = (),
    description: str = "",
) -> GatewayGroup:
    group = GatewayGroup.objects.create(
        name=name,
        description=description,
        is_admin=is_admin,
        is_default=is_default,
        priority=parse_priority(priority),
    )
    group.members.add(*members)
    return group


def make_token_with_secret(
    owner: Any,
    *,
    name: str = "ci",
    priority: Priority | str | None = None,
    set_by: Any = None,
    set_by_admin: bool = False,
    model_allowlist: list[str] | None = None,
    expires_at: datetime | None = None,
    revoked: bool = False,
) -> tuple[ApiToken, str]:
    secret = new_secret()
    value = parse_priority(priority)
    token = ApiToken.objects.create(
        owner=owner,
        name=name,
        prefix=secret.prefix,
        digest=secret.digest,
        model_allowlist=model_allowlist,
        expires_at=expires_at,
        revoked_at=timezone.now() if revoked else None,
        priority=value,
        priority_set_by=(set_by or owner) if value is not None else None,
        priority_set_by_admin=set_by_admin,
    )
    return token, secret.plaintext


def make_token(owner: Any, **kwargs: Any) -> ApiToken:
    return make_token_with_secret(owner, **kwargs)[0]
