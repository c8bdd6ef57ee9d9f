"""Create the first administrator once, with the "administrators" and "everyone" groups."""

from __future__ import annotations

import os
import secrets
from typing import Any

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand
from django.db import transaction
from django.db.models import Q

from accounts.models import GatewayGroup

ADMIN_GROUP = "administrators"
DEFAULT_GROUP = "everyone"


class Command(BaseCommand):
    help = (
        "Create the first administrator (AIPLANE_ADMIN_USER, AIPLANE_ADMIN_PASSWORD or a "
        "generated password printed once) unless an administrator already exists."
    )

    def handle(self, *args: Any, **options: Any) -> None:
        User = get_user_model()
        admins = User.objects.filter(is_active=True).filter(
            Q(is_superuser=True) | Q(gateway_groups__is_admin=True)
        )
        if admins.exists():
            self.stdout.write("An administrator already exists; nothing to do.")
            return
        username = os.environ.get("AIPLANE_ADMIN_USER", "admin")
        from_env = os.environ.get("AIPLANE_ADMIN_PASSWORD") or None
        password = from_env or secrets.token_urlsafe(18)
        with transaction.atomic():
            admin_group, _ = GatewayGroup.objects.get_or_create(
                name=ADMIN_GROUP,
                defaults={"is_admin": True, "description": "Full administration rights."},
            )
            if not admin_group.is_admin:
                admin_group.is_admin = True
                admin_group.save(update_fields=["is_admin", "updated_at"])
            GatewayGroup.objects.get_or_create(
                name=DEFAULT_GROUP,
                defaults={"is_default": True, "description": "Everyone who can sign in."},
            )
            user = User.objects.filter(username=username).first()
            created = user is None
            if user is None:
                user = User(username=username)
                user.set_password(password)
            elif from_env is not None:
                user.set_password(from_env)
            # An existing account keeps its password unless one is given; it gains the rights.
            user.is_active = True
            user.save()
            admin_group.members.add(user)
        if not created:
            self.stdout.write(f"Made the existing account {username!r} an administrator.")
        elif from_env is None:
            self.stdout.write(
                f"Created administrator {username!r} with password: {password}\n"
                "This password is shown once; change it after signing in."
            )
        else:
            self.stdout.write(
                f"Created administrator {username!r} (password from AIPLANE_ADMIN_PASSWORD)."
            )
