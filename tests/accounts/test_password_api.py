"""Passwords: my own change with the current one (throttled as sign-ins are), and every reason
the product's validators give (similarity, length, common, numeric) with its code."""

from __future__ import annotations

from typing import Any

import pytest
from django.test import Client

from tests.support.errors import NOT_SIGNED_IN, envelope
from tests.support.factories import PASSWORD

pytestmark = pytest.mark.django_db

MINE = "/api/v0/me/password"


def post(client: Client, body: Any) -> Any:
    return client.post(MINE, body, content_type="application/json")


def test_a_signed_in_person_changes_their_password_with_the_current_one_and_stays_signed_in(
    alice_client: Client, alice: Any
) -> None:
    changed = post(alice_client, {"current_password": PASSWORD, "new_password": "a new long one"})
    assert changed.status_code == 204, changed.content
    alice.refresh_from_db()
    assert alice.check_password("a new long one")
    assert alice_client.get("/api/v0/me").status_code == 200  # this session is kept


def test_a_wrong_current_password_is_refused_and_changes_nothing(
    alice_client: Client, alice: Any
) -> None:
    refused = post(alice_client, {"current_password": "not it", "new_password": "a new long one"})
    assert (refused.status_code, refused.json()) == (
        400,
        envelope(
            "The current password is wrong.",
            "invalid_request_error",
            "wrong_password",
            "current_password",
        ),
    )
    alice.refresh_from_db()
    assert alice.check_password(PASSWORD)


def test_every_reason_a_new_password_is_refused_comes_with_its_code(
    alice_client: Client, alice: Any, settings: Any
) -> None:
    refused = post(alice_client, {"current_password": PASSWORD, "new_password": "123456"})
    assert refused.status_code == 400
    error = refused.json()["error"]
    assert (error["code"], error["param"]) == ("invalid_password", "new_password")
    assert [(r["code"], r["params"]) for r in error["reasons"]] == [
        ("password_too_short", {"min_length": 8}),
        ("password_too_common", {}),
        ("password_entirely_numeric", {}),
    ]
    assert error["reasons"][0]["message"] == (
        "This password is too short. It must contain at least 8 characters."
    )
    similar = post(alice_client, {"current_password": PASSWORD, "new_password": "alice@example"})
    assert [(r["code"], r["params"]) for r in similar.json()["error"]["reasons"]] == [
        ("password_too_similar", {"verbose_name": "email address"})
    ]
    alice.refresh_from_db()
    assert alice.check_password(PASSWORD)


def test_an_administrators_password_for_someone_else_gets_the_same_reasons(
    carol_client: Client, settings: Any
) -> None:
    refused = carol_client.post(
        "/api/v0/admin/users",
        {"username": "dave", "password": "password"},
        content_type="application/json",
    )
    error = refused.json()["error"]
    assert (refused.status_code, error["code"], error["param"]) == (
        400,
        "invalid_password",
        "password",
    )
    assert [r["code"] for r in error["reasons"]] == ["password_too_common"]


def test_changing_a_password_needs_a_signed_in_session(anonymous: Client) -> None:
    refused = post(anonymous, {"current_password": PASSWORD, "new_password": "a new long one"})
    assert (refused.status_code, refused.json()) == (401, NOT_SIGNED_IN)


def test_wrong_current_passwords_lock_out_like_failed_sign_ins(alice: Any, settings: Any) -> None:
    from datetime import timedelta

    from tests.support.errors import envelope as env

    settings.AXES_FAILURE_LIMIT = 3
    settings.AXES_COOLOFF_TIME = timedelta(seconds=900)
    client = Client(REMOTE_ADDR="192.0.2.7")
    client.force_login(alice)
    wrong = {"current_password": "not it", "new_password": "a new long one"}
    assert [post(client, wrong).status_code for _ in range(3)] == [400, 400, 429]

    # Locked: even the right current password is refused, and nothing changes.
    locked = post(client, {"current_password": PASSWORD, "new_password": "a new long one"})
    assert (locked.status_code, locked.json()) == (
        429,
        env(
            "Too many failed sign-in attempts. Try again later.",
            "rate_limit_error",
            "too_many_attempts",
        ),
    )
    assert 899 <= int(locked.headers["Retry-After"]) <= 900
    alice.refresh_from_db()
    assert alice.check_password(PASSWORD)
    # The same lockout as signing in: the guesses counted against alice's sign-in too.
    signing_in = Client(REMOTE_ADDR="203.0.113.9").post(
        "/api/v0/session/login",
        {"username": "alice", "password": PASSWORD},
        "application/json",
    )
    assert signing_in.status_code == 429
