"""Administration of local accounts: list, create, change, delete."""

from __future__ import annotations

from typing import Any

import pytest
from django.contrib.auth import get_user_model
from django.test import Client
from rest_framework.fields import DateTimeField

from accounts.models import ApiToken
from tests.support.errors import envelope
from tests.support.factories import PASSWORD, make_group, make_token

pytestmark = pytest.mark.django_db

User = get_user_model()


def iso(moment: Any) -> str | None:
    return None if moment is None else DateTimeField().to_representation(moment)


def shown(user: Any, *, is_admin: bool = False, groups: list[str] | None = None) -> dict[str, Any]:
    user.refresh_from_db()
    return {
        "id": user.pk,
        "username": user.username,
        "email": user.email,
        "is_active": user.is_active,
        "is_superuser": user.is_superuser,
        "is_admin": is_admin,
        "groups": groups or [],
        "date_joined": iso(user.date_joined),
        "last_login": iso(user.last_login),
        "priority": "medium",
        "max_priority": "high" if is_admin else "medium",
    }


def test_users_are_listed_with_their_rights_and_groups(
    carol_client: Client, alice: Any, carol: Any
) -> None:
    make_group("everyone", is_default=True)
    make_group("research", members=[alice])
    response = carol_client.get("/api/v0/admin/users")
    assert response.status_code == 200
    assert response.json() == {
        "users": [
            shown(alice, groups=["everyone", "research"]),
            shown(carol, is_admin=True, groups=["administrators", "everyone"]),
        ]
    }


def test_creating_an_account_lets_it_sign_in(carol_client: Client) -> None:
    response = carol_client.post(
        "/api/v0/admin/users",
        {"username": "dave", "email": "dave@example.com", "password": "a long password"},
        "application/json",
    )
    assert response.status_code == 201
    dave = User.objects.get(username="dave")
    assert response.json() == shown(dave)
    assert dave.check_password("a long password")


def test_an_account_without_a_password_cannot_sign_in_yet(carol_client: Client) -> None:
    response = carol_client.post("/api/v0/admin/users", {"username": "dave"}, "application/json")
    assert response.status_code == 201
    assert User.objects.get(username="dave").has_usable_password() is False


@pytest.mark.parametrize(
    ("payload", "expected"),
    [
        (
            {"username": "alice"},
            envelope(
                "The username alice is taken.",
                "invalid_request_error",
                "username_taken",
                "username",
            ),
        ),
        (
            {"username": "dave", "password": "short"},
            {
                "error": {
                    **envelope(
                        "This password is too short. It must contain at least 8 characters.",
                        "invalid_request_error",
                        "invalid_password",
                        "password",
                    )["error"],
                    "reasons": [
                        {
                            "code": "password_too_short",
                            "message": "This password is too short. It must contain at least"
                            " 8 characters.",
                            "params": {"min_length": 8},
                        }
                    ],
                }
            },
        ),
        (
            {"username": "no spaces"},
            envelope(
                "This value does not match the required pattern.",
                "invalid_request_error",
                "invalid",
                "username",
            ),
        ),
        (
            {"username": "dave", "email": "not-an-address"},
            envelope("Enter a valid email address.", "invalid_request_error", "invalid", "email"),
        ),
    ],
)
def test_an_invalid_account_is_refused(
    carol_client: Client, alice: Any, payload: dict[str, Any], expected: dict[str, Any]
) -> None:
    count = User.objects.count()
    response = carol_client.post("/api/v0/admin/users", payload, "application/json")
    assert response.status_code == 400
    assert response.json() == expected
    assert User.objects.count() == count


def test_changing_an_account(carol_client: Client, alice: Any) -> None:
    response = carol_client.put(
        f"/api/v0/admin/users/{alice.pk}",
        {
            "username": "alicia",
            "email": "a@example.org",
            "is_active": False,
            "password": "new password!",
        },
        "application/json",
    )
    assert response.status_code == 200
    assert response.json() == shown(alice)
    assert (alice.username, alice.email, alice.is_active) == ("alicia", "a@example.org", False)
    assert alice.check_password("new password!")


def test_renaming_onto_a_taken_username_is_refused(
    carol_client: Client, alice: Any, bob: Any
) -> None:
    response = carol_client.put(
        f"/api/v0/admin/users/{alice.pk}", {"username": "bob"}, "application/json"
    )
    assert response.status_code == 400
    assert response.json()["error"]["code"] == "username_taken"
    alice.refresh_from_db()
    assert alice.username == "alice"


def test_an_administrator_changing_their_own_password_stays_signed_in(
    carol_client: Client, carol: Any
) -> None:
    response = carol_client.put(
        f"/api/v0/admin/users/{carol.pk}", {"password": "another password"}, "application/json"
    )
    assert response.status_code == 200
    assert carol_client.get("/api/v0/me").status_code == 200


def test_the_last_administrator_cannot_deactivate_themselves(
    carol_client: Client, carol: Any
) -> None:
    response = carol_client.put(
        f"/api/v0/admin/users/{carol.pk}", {"is_active": False}, "application/json"
    )
    assert response.status_code == 409
    assert response.json()["error"]["code"] == "last_administrator"
    carol.refresh_from_db()
    assert carol.is_active is True


def test_deleting_an_account_removes_its_tokens(carol_client: Client, alice: Any) -> None:
    make_token(alice)
    response = carol_client.delete(f"/api/v0/admin/users/{alice.pk}")
    assert response.status_code == 204
    assert not User.objects.filter(username="alice").exists()
    assert not ApiToken.objects.exists()


def test_the_last_administrator_cannot_be_deleted(carol_client: Client, carol: Any) -> None:
    response = carol_client.delete(f"/api/v0/admin/users/{carol.pk}")
    assert response.status_code == 409
    assert User.objects.filter(username="carol").exists()


@pytest.mark.parametrize("method", ["put", "delete"])
def test_an_unknown_account_is_404(carol_client: Client, method: str) -> None:
    response = getattr(carol_client, method)(
        "/api/v0/admin/users/999999", {"email": "x@example.com"}, content_type="application/json"
    )
    assert response.status_code == 404
    assert response.json() == envelope("User not found.", "not_found_error", "user_not_found")


def test_a_password_set_by_an_administrator_works_for_signing_in(
    carol_client: Client, alice: Any
) -> None:
    carol_client.put(
        f"/api/v0/admin/users/{alice.pk}", {"password": "fresh password"}, "application/json"
    )
    alice.refresh_from_db()
    assert alice.check_password("fresh password")
    assert not alice.check_password(PASSWORD)
