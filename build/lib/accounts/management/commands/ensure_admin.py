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
from accounts.services import group_snapshot, user_snapshot
from aiplane import audit

ADMIN_GROUP = "administrators"
DEFAULT_GROUP = "everyone"
ACTOR = "manage.py ensure_admin"  # how the audit log names this command


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
            admin_group = GatewayGroup.objects.filter(name=ADMIN_GROUP).first()
            admin_before = None if admin_group is None else group_snapshot(admin_group)
            if admin_group is None:
                admin_group = GatewayGroup.objects.create(
                    name=ADMIN_GROUP, is_admin=True, description="Full administration rights."
                )
            if not admin_group.is_admin:
                admin_group.is_admin = True
                admin_group.save(update_fields=["is_admin", "updated_at"])
            everyone, made = GatewayGroup.objects.get_or_create(
                name=DEFAULT_GROUP,
                defaults={"is_default": True, "description": "Everyone who can sign in."},
            )
            if made:
                audit.record(ACTOR, "group.create", everyone.name, None, group_snapshot(everyone))
            user = User.objects.filter(username=username).first()
            created = user is None
            user_before = None if user is None else user_snapshot(user)
            if user is None:
                user = User(username=username)
                user.set_password(password)
            elif from_env is not None:
                user.set_password(from_env)
            # An existing account keeps its password unless one is given; it gains the rights.
            user.is_active = True
            user.save()
            user_after = user_snapshot(user)
            if user_before is not None and from_env is not None:
                user_after["password_replaced"] = True
            action = "user.create" if created else "user.update"
            audit.record(ACTOR, action, username, user_before, user_after)
            admin_group.members.add(user)
            action = "group.create" if admin_before is None else "group.update"
            audit.record(ACTOR, action, ADMIN_GROUP, admin_before, group_snapshot(admin_group))
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
