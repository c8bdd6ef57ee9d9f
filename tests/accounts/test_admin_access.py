"""Every administration endpoint: 401 without a session, 403 for a non-administrator."""

from __future__ import annotations

from typing import Any

import pytest
from django.test import Client

from tests.support.errors import NOT_ADMIN, NOT_SIGNED_IN
from tests.support.factories import make_user

pytestmark = pytest.mark.django_db

ADMIN_ENDPOINTS = [
    ("get", "/api/v0/admin/groups"),
    ("put", "/api/v0/admin/groups"),
    ("delete", "/api/v0/admin/groups/administrators"),
    ("get", "/api/v0/admin/users"),
    ("post", "/api/v0/admin/users"),
    ("put", "/api/v0/admin/users/1"),
    ("delete", "/api/v0/admin/users/1"),
    ("get", "/api/v0/admin/tokens"),
    ("put", "/api/v0/admin/tokens/1/priority"),
    ("get", "/api/v0/admin/settings"),
    ("post", "/api/v0/admin/settings"),
]


@pytest.mark.parametrize(("method", "path"), ADMIN_ENDPOINTS)
def test_nobody_signed_in_gets_401(anonymous: Client, method: str, path: str) -> None:
    response = getattr(anonymous, method)(path, {}, content_type="application/json")
    assert response.status_code == 401
    assert response.json() == NOT_SIGNED_IN


@pytest.mark.parametrize(("method", "path"), ADMIN_ENDPOINTS)
def test_a_non_administrator_gets_403(
    bob_client: Client, carol: Any, method: str, path: str
) -> None:
    response = getattr(bob_client, method)(path, {}, content_type="application/json")
    assert response.status_code == 403
    assert response.json() == NOT_ADMIN


def test_a_deactivated_administrators_session_stops_working(carol: Any, login: Any) -> None:
    client = login(carol)
    carol.is_active = False
    carol.save()
    response = client.get("/api/v0/admin/groups")
    assert response.status_code == 401
    assert response.json() == NOT_SIGNED_IN


def test_a_superuser_is_an_administrator(login: Any) -> None:
    client = login(make_user("root", is_superuser=True))
    assert client.get("/api/v0/admin/groups").status_code == 200
