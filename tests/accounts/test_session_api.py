"""The browser session: CSRF cookie, password sign-in and sign-out, CSRF on every write."""

from __future__ import annotations

from typing import Any

import pytest
from django.test import Client

from accounts.models import ApiToken
from tests.support.errors import CSRF_MISSING, NOT_SIGNED_IN, envelope
from tests.support.factories import PASSWORD, make_user

pytestmark = pytest.mark.django_db

WRONG_CREDENTIALS = envelope(
    "Wrong username or password.", "authentication_error", "invalid_credentials"
)


def csrf_client() -> Client:
    """A browser-like client that has fetched its CSRF cookie."""
    client = Client(enforce_csrf_checks=True)
    response = client.get("/api/v0/session/csrf")
    assert response.status_code == 200
    return client


def csrf_header(client: Client) -> dict[str, str]:
    return {"HTTP_X_CSRFTOKEN": client.cookies["csrftoken"].value}


def sign_in(client: Client, username: str, password: str = PASSWORD) -> Any:
    return client.post(
        "/api/v0/session/login",
        {"username": username, "password": password},
        "application/json",
        **csrf_header(client),
    )


def test_the_csrf_endpoint_sets_the_cookie_and_answers_a_token() -> None:
    client = Client(enforce_csrf_checks=True)
    response = client.get("/api/v0/session/csrf")
    assert response.status_code == 200
    assert "csrftoken" in response.cookies
    assert set(response.json()) == {"csrf_token"}
    assert len(response.json()["csrf_token"]) == 64


def test_signing_in_answers_who_i_am_and_starts_a_session(alice: Any) -> None:
    client = csrf_client()
    response = sign_in(client, "alice")
    assert response.status_code == 200
    assert response.json() == {
        "id": alice.pk,
        "username": "alice",
        "is_admin": False,
        "language": "en",
    }
    assert client.get("/api/v0/me").status_code == 200


def test_signing_in_without_the_csrf_token_is_refused(alice: Any) -> None:
    client = csrf_client()
    response = client.post(
        "/api/v0/session/login", {"username": "alice", "password": PASSWORD}, "application/json"
    )
    assert response.status_code == 403
    assert response.json() == CSRF_MISSING
    assert client.get("/api/v0/me").status_code == 401


def test_signing_in_without_any_csrf_cookie_is_refused(alice: Any) -> None:
    client = Client(enforce_csrf_checks=True)
    response = client.post(
        "/api/v0/session/login", {"username": "alice", "password": PASSWORD}, "application/json"
    )
    assert response.status_code == 403
    assert response.json() == envelope(
        "CSRF Failed: CSRF cookie not set.", "permission_error", "csrf_failed"
    )


@pytest.mark.parametrize(("username", "password"), [("alice", "wrong"), ("nobody", PASSWORD)])
def test_wrong_credentials_are_401(alice: Any, username: str, password: str) -> None:
    response = sign_in(csrf_client(), username, password)
    assert response.status_code == 401
    assert response.json() == WRONG_CREDENTIALS


def test_an_inactive_account_cannot_sign_in() -> None:
    make_user("eve", is_active=False)
    response = sign_in(csrf_client(), "eve")
    assert response.status_code == 401
    assert response.json() == WRONG_CREDENTIALS


def test_signing_in_needs_a_username_and_password() -> None:
    client = csrf_client()
    response = client.post(
        "/api/v0/session/login", {"username": "alice"}, "application/json", **csrf_header(client)
    )
    assert response.status_code == 400
    assert response.json() == envelope(
        "This field is required.", "invalid_request_error", "required", "password"
    )


def test_signing_out_ends_the_session(alice: Any) -> None:
    client = csrf_client()
    sign_in(client, "alice")
    response = client.post(
        "/api/v0/session/logout", content_type="application/json", **csrf_header(client)
    )
    assert response.status_code == 204
    response = client.get("/api/v0/me")
    assert response.status_code == 401
    assert response.json() == NOT_SIGNED_IN


def test_signing_out_needs_the_csrf_token(alice: Any, login: Any) -> None:
    client = login(alice, csrf=True)
    response = client.post("/api/v0/session/logout", content_type="application/json")
    assert response.status_code == 403
    assert response.json() == envelope(
        "CSRF Failed: CSRF cookie not set.", "permission_error", "csrf_failed"
    )
    assert client.get("/api/v0/me").status_code == 200


def test_a_session_write_without_the_csrf_token_is_refused(alice: Any, login: Any) -> None:
    client = login(alice, csrf=True)
    client.get("/api/v0/session/csrf")
    response = client.post("/api/v0/tokens", {"name": "x"}, "application/json")
    assert response.status_code == 403
    assert response.json() == CSRF_MISSING
    assert not ApiToken.objects.exists()


def test_a_session_write_with_a_wrong_csrf_token_is_refused(alice: Any, login: Any) -> None:
    client = login(alice, csrf=True)
    client.get("/api/v0/session/csrf")
    response = client.post(
        "/api/v0/tokens", {"name": "x"}, "application/json", HTTP_X_CSRFTOKEN="x" * 64
    )
    assert response.status_code == 403
    assert response.json() == envelope(
        "CSRF Failed: CSRF token from the 'X-Csrftoken' HTTP header incorrect.",
        "permission_error",
        "csrf_failed",
    )


def test_the_whole_browser_flow_works_with_the_rotated_csrf_token(alice: Any) -> None:
    client = csrf_client()
    sign_in(client, "alice")  # signing in rotates the CSRF token; the cookie follows
    response = client.post(
        "/api/v0/tokens", {"name": "laptop"}, "application/json", **csrf_header(client)
    )
    assert response.status_code == 201


def test_reads_need_no_csrf_token(alice: Any, login: Any) -> None:
    client = login(alice, csrf=True)
    assert client.get("/api/v0/tokens/details").status_code == 200


def test_admin_writes_need_the_csrf_token_too(carol: Any, login: Any) -> None:
    client = login(carol, csrf=True)
    client.get("/api/v0/session/csrf")
    response = client.put("/api/v0/admin/groups", {"name": "g"}, "application/json")
    assert response.status_code == 403
    assert response.json() == CSRF_MISSING
