"""The first administrator: created once, with the administrators and everyone groups."""

from __future__ import annotations

from io import StringIO
from typing import Any

import pytest
from django.contrib.auth import get_user_model
from django.core.management import call_command

from accounts.models import GatewayGroup
from accounts.rbac import resolve
from tests.support.factories import make_user

pytestmark = pytest.mark.django_db

User = get_user_model()


def ensure_admin() -> str:
    out = StringIO()
    call_command("ensure_admin", stdout=out)
    return out.getvalue()


def test_a_fresh_install_gets_an_administrator_with_a_password_shown_once(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("AIPLANE_ADMIN_USER", raising=False)
    monkeypatch.delenv("AIPLANE_ADMIN_PASSWORD", raising=False)
    output = ensure_admin()
    admin = User.objects.get(username="admin")
    password = output.split("with password: ")[1].split()[0]
    assert admin.check_password(password)
    assert resolve(admin).is_admin is True
    assert resolve(admin).groups == frozenset({"administrators", "everyone"})
    assert GatewayGroup.objects.get(name="administrators").is_admin is True
    assert GatewayGroup.objects.get(name="everyone").is_default is True
    again = ensure_admin()
    assert password not in again
    assert again == "An administrator already exists; nothing to do.\n"
    assert User.objects.count() == 1


def test_the_name_and_password_may_come_from_the_environment(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("AIPLANE_ADMIN_USER", "root")
    monkeypatch.setenv("AIPLANE_ADMIN_PASSWORD", "from the environment")
    output = ensure_admin()
    assert "from the environment" not in output
    assert User.objects.get(username="root").check_password("from the environment")


def test_nothing_happens_when_an_administrator_exists(carol: Any) -> None:
    assert ensure_admin() == "An administrator already exists; nothing to do.\n"
    assert not User.objects.filter(username="admin").exists()
    assert not GatewayGroup.objects.filter(name="everyone").exists()


def test_an_existing_account_with_the_admin_name_gains_the_rights_and_keeps_its_password(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("AIPLANE_ADMIN_PASSWORD", raising=False)
    admin = make_user("admin", password="kept password")
    output = ensure_admin()
    assert output == "Made the existing account 'admin' an administrator.\n"
    admin.refresh_from_db()
    assert admin.check_password("kept password")
    assert resolve(admin).is_admin is True
