"""Personal tokens: create, list, details, priority, revoke, rotate and delete."""

from __future__ import annotations

import hashlib
from datetime import timedelta
from typing import Any

import pytest
from django.test import Client
from django.utils import timezone
from rest_framework.fields import DateTimeField

from accounts.models import ApiToken
from aiplane.catalog import settings_update
from tests.support.errors import (
    INVALID_PRIORITY,
    NOT_SIGNED_IN,
    TOKEN_NOT_FOUND,
    above_ceiling,
    envelope,
)
from tests.support.factories import make_group, make_token

pytestmark = pytest.mark.django_db


def iso(moment: Any) -> str | None:
    return None if moment is None else DateTimeField().to_representation(moment)


def row(token: ApiToken) -> dict[str, Any]:
    """Every column of the token as stored."""
    return ApiToken.objects.filter(pk=token.pk).values().get()


def shown(token: ApiToken, **overrides: Any) -> dict[str, Any]:
    token.refresh_from_db()
    setter = token.priority_set_by
    body = {
        "id": token.pk,
        "name": token.name,
        "prefix": token.prefix,
        "created_at": iso(token.created_at),
        "last_used_at": iso(token.last_used_at),
        "expires_at": iso(token.expires_at),
        "revoked": token.revoked_at is not None,
        "revoked_at": iso(token.revoked_at),
        "revoked_by": None if token.revoked_by is None else token.revoked_by.username,
        "priority": None if token.priority is None else token.priority_class.label,
        "effective_priority": "medium",
        "model_allowlist": token.model_allowlist,
        "priority_set_by": None if setter is None else setter.username,
        "priority_set_by_admin": token.priority_set_by_admin,
        "allowance": token.allowance,
        "effective_allowance": [],
    }
    return body | overrides


def put_priority(client: Client, token_id: int, value: Any) -> Any:
    return client.put(
        f"/api/v0/tokens/{token_id}/priority", {"priority": value}, content_type="application/json"
    )


# --- create ---------------------------------------------------------------------------------


def test_a_new_token_answers_its_plaintext_once_and_stores_only_a_digest(
    alice_client: Client,
) -> None:
    response = alice_client.post("/api/v0/tokens", {"name": "laptop"}, "application/json")
    assert response.status_code == 201
    body = response.json()
    token = ApiToken.objects.get()
    assert body == shown(token, plaintext=body["plaintext"])
    plaintext = body["plaintext"]
    assert plaintext.startswith("gwk_") and len(plaintext) == 68
    assert token.prefix == plaintext[:12]
    assert token.digest == hashlib.sha256(plaintext.encode()).hexdigest()
    assert plaintext not in str(row(token))
    listed = alice_client.get("/api/v0/tokens").json()
    assert "plaintext" not in listed["tokens"][0]


def test_a_new_token_may_lower_its_priority_and_narrow_its_models(
    alice_client: Client, alice: Any
) -> None:
    expires = timezone.now() + timedelta(days=7)
    response = alice_client.post(
        "/api/v0/tokens",
        {
            "name": "batch",
            "priority": "low",
            "model_allowlist": ["qwen", "llama", "qwen"],
            "expires_at": expires.isoformat(),
        },
        "application/json",
    )
    assert response.status_code == 201
    token = ApiToken.objects.get()
    assert response.json() == shown(
        token, plaintext=response.json()["plaintext"], effective_priority="low"
    )
    assert token.model_allowlist == ["llama", "qwen"]
    assert token.priority_set_by == alice
    assert token.priority_set_by_admin is False


def test_creating_a_token_above_the_ceiling_is_forbidden_and_creates_nothing(
    alice_client: Client,
) -> None:
    response = alice_client.post(
        "/api/v0/tokens", {"name": "x", "priority": "high"}, "application/json"
    )
    assert response.status_code == 403
    assert response.json() == above_ceiling("high", "medium")
    assert not ApiToken.objects.exists()


def test_the_ceiling_is_checked_while_prioritization_is_disabled(alice_client: Client) -> None:
    settings_update(values={"gateway.priority_enabled": False})
    response = alice_client.post(
        "/api/v0/tokens", {"name": "x", "priority": "high"}, "application/json"
    )
    assert response.status_code == 403


def test_an_administrator_may_create_a_token_above_their_inherited_priority(
    carol_client: Client,
) -> None:
    response = carol_client.post(
        "/api/v0/tokens", {"name": "ops", "priority": "high"}, "application/json"
    )
    assert response.status_code == 201
    assert response.json()["effective_priority"] == "high"
    # Their own choice, not another administrator's grant: it follows their ceiling later.
    assert ApiToken.objects.get().priority_set_by_admin is False


@pytest.mark.parametrize(
    ("payload", "expected"),
    [
        ({"name": "x", "priority": "urgent"}, INVALID_PRIORITY),
        ({"name": "x", "priority": 2}, INVALID_PRIORITY),
        ({"name": "x", "priority": "HIGH"}, INVALID_PRIORITY),
        (
            {},
            envelope("This field is required.", "invalid_request_error", "required", "name"),
        ),
        (
            {"name": ""},
            envelope("This field may not be blank.", "invalid_request_error", "blank", "name"),
        ),
        (
            {"name": "x", "model_allowlist": "qwen"},
            envelope(
                'Expected a list of items but got type "str".',
                "invalid_request_error",
                "not_a_list",
                "model_allowlist",
            ),
        ),
        (
            {"name": "x", "model_allowlist": ["qwen", ""]},
            envelope(
                "This field may not be blank.",
                "invalid_request_error",
                "blank",
                "model_allowlist.1",
            ),
        ),
        (
            {"name": "x", "model_allowlist": []},
            envelope(
                "Name at least one model, or send null for every model your groups allow.",
                "invalid_request_error",
                "empty_allowlist",
                "model_allowlist",
            ),
        ),
        (
            {"name": "x", "expires_at": "2001-01-01T00:00:00Z"},
            envelope(
                "The expiry must be in the future.",
                "invalid_request_error",
                "expiry_in_past",
                "expires_at",
            ),
        ),
        (
            ["name"],
            envelope("Send a JSON object.", "invalid_request_error", "invalid_request"),
        ),
    ],
)
def test_an_invalid_new_token_is_refused_with_the_offending_field(
    alice_client: Client, payload: Any, expected: dict[str, Any]
) -> None:
    response = alice_client.post("/api/v0/tokens", payload, "application/json")
    assert response.status_code == 400
    assert response.json() == expected
    assert not ApiToken.objects.exists()


def test_a_body_that_is_not_json_is_a_parse_error(alice_client: Client) -> None:
    response = alice_client.post("/api/v0/tokens", "{nope", "application/json")
    assert response.status_code == 400
    assert response.json() == envelope(
        "JSON parse error - Expecting property name enclosed in double quotes: "
        "line 1 column 2 (char 1)",
        "invalid_request_error",
        "parse_error",
    )


# --- list and details -----------------------------------------------------------------------


def test_the_list_shows_only_my_tokens_newest_first(
    alice_client: Client, alice: Any, bob: Any
) -> None:
    first = make_token(alice, name="first")
    second = make_token(alice, name="second", priority="low")
    make_token(bob, name="bobs")
    response = alice_client.get("/api/v0/tokens")
    assert response.status_code == 200
    assert response.json() == {"tokens": [shown(second, effective_priority="low"), shown(first)]}


def test_details_show_saved_priorities_my_inherited_priority_ceiling_and_the_switch(
    alice_client: Client, alice: Any
) -> None:
    make_group("research", priority="high", members=[alice])
    inherit = make_token(alice, name="inherit")
    lowered = make_token(alice, name="lowered", priority="low")
    settings_update(values={"gateway.priority_enabled": True})
    response = alice_client.get("/api/v0/tokens/details")
    assert response.status_code == 200
    assert response.json() == {
        "tokens": [
            shown(lowered, effective_priority="low"),
            shown(inherit, effective_priority="high"),
        ],
        "owner_priority": "high",
        "max_priority": "high",
        "priority_enabled": True,
        "owner_allowance": [],
        "allowance_ceiling": [],
    }


def test_details_report_the_capped_effective_class_after_losing_a_group(
    alice_client: Client, alice: Any
) -> None:
    token = make_token(alice, priority="high")  # set while alice was in a high group
    response = alice_client.get("/api/v0/tokens/details")
    assert response.json() == {
        "tokens": [shown(token, priority="high", effective_priority="medium")],
        "owner_priority": "medium",
        "max_priority": "medium",
        "priority_enabled": False,
        "owner_allowance": [],
        "allowance_ceiling": [],
    }


def test_an_administrator_sees_high_as_their_maximum(carol_client: Client) -> None:
    body = carol_client.get("/api/v0/tokens/details").json()
    assert (body["owner_priority"], body["max_priority"]) == ("medium", "high")


# --- priority -------------------------------------------------------------------------------


@pytest.mark.parametrize(("value", "effective"), [("low", "low"), ("medium", "medium")])
def test_the_owner_may_set_any_value_up_to_the_ceiling(
    alice_client: Client, alice: Any, value: str, effective: str
) -> None:
    token = make_token(alice)
    response = put_priority(alice_client, token.pk, value)
    assert response.status_code == 200
    assert response.json() == shown(token, priority=value, effective_priority=effective)
    token.refresh_from_db()
    assert (token.priority_set_by, token.priority_set_by_admin) == (alice, False)


def test_null_restores_inheritance(alice_client: Client, alice: Any) -> None:
    token = make_token(alice, priority="low")
    response = put_priority(alice_client, token.pk, None)
    assert response.status_code == 200
    assert response.json() == shown(token, priority=None, effective_priority="medium")


def test_a_value_above_the_ceiling_is_forbidden(alice_client: Client, alice: Any) -> None:
    token = make_token(alice, priority="low")
    response = put_priority(alice_client, token.pk, "high")
    assert response.status_code == 403
    assert response.json() == above_ceiling("high", "medium")


@pytest.mark.parametrize("value", ["high", "urgent", 1, ""])
def test_a_rejected_save_leaves_the_token_unchanged(
    alice_client: Client, alice: Any, bob: Any, value: Any
) -> None:
    token = make_token(alice, priority="low", set_by=bob, set_by_admin=False)
    before = row(token)
    response = put_priority(alice_client, token.pk, value)
    assert response.status_code in (400, 403)
    assert row(token) == before


@pytest.mark.parametrize("value", ["urgent", 1, "", "Low", True, ["low"]])
def test_an_invalid_value_is_a_bad_request(alice_client: Client, alice: Any, value: Any) -> None:
    token = make_token(alice)
    response = put_priority(alice_client, token.pk, value)
    assert response.status_code == 400
    assert response.json() == INVALID_PRIORITY


def test_the_priority_field_is_required(alice_client: Client, alice: Any) -> None:
    token = make_token(alice)
    response = alice_client.put(
        f"/api/v0/tokens/{token.pk}/priority", {}, content_type="application/json"
    )
    assert response.status_code == 400
    assert response.json() == envelope(
        "This field is required.", "invalid_request_error", "required", "priority"
    )


def test_the_ceiling_follows_the_owners_current_groups(alice_client: Client, alice: Any) -> None:
    research = make_group("research", priority="high", members=[alice])
    token = make_token(alice)
    assert put_priority(alice_client, token.pk, "high").status_code == 200
    research.members.remove(alice)
    before = row(token)
    response = put_priority(alice_client, token.pk, "high")
    assert response.status_code == 403
    assert response.json() == above_ceiling("high", "medium")
    assert row(token) == before


def test_an_administrator_owner_may_raise_their_own_token_to_high(
    carol_client: Client, carol: Any
) -> None:
    token = make_token(carol)
    response = put_priority(carol_client, token.pk, "high")
    assert response.status_code == 200
    assert response.json()["effective_priority"] == "high"
    token.refresh_from_db()
    assert (token.priority_set_by, token.priority_set_by_admin) == (carol, False)


def test_a_demoted_administrators_self_granted_high_falls_back_to_their_ceiling(
    carol_client: Client, carol: Any, administrators: Any
) -> None:
    token = make_token(carol)
    assert put_priority(carol_client, token.pk, "high").status_code == 200
    administrators.members.remove(carol)
    details = carol_client.get("/api/v0/tokens/details").json()
    [saved] = details["tokens"]
    assert (saved["priority"], saved["effective_priority"]) == ("high", "medium")
    assert details["max_priority"] == "medium"


# --- revoke, rotate, delete -----------------------------------------------------------------


def test_revoking_marks_the_token_and_is_idempotent(alice_client: Client, alice: Any) -> None:
    token = make_token(alice)
    response = alice_client.post(f"/api/v0/tokens/{token.pk}/revoke")
    assert response.status_code == 200
    token.refresh_from_db()
    assert response.json() == shown(token, revoked=True)
    assert response.json()["revoked_by"] == "alice"
    revoked_at = token.revoked_at
    assert alice_client.post(f"/api/v0/tokens/{token.pk}/revoke").status_code == 200
    token.refresh_from_db()
    assert token.revoked_at == revoked_at


def test_rotating_gives_a_new_secret_once_and_forgets_the_old_one(
    alice_client: Client, alice: Any
) -> None:
    token = make_token(alice)
    old = row(token)
    response = alice_client.post(f"/api/v0/tokens/{token.pk}/rotate")
    assert response.status_code == 200
    body = response.json()
    assert body == shown(token, plaintext=body["plaintext"])
    new = row(token)
    assert new["digest"] == hashlib.sha256(body["plaintext"].encode()).hexdigest()
    assert new["digest"] != old["digest"]
    assert new["prefix"] == body["plaintext"][:12]
    assert {k: v for k, v in new.items() if k not in ("digest", "prefix")} == {
        k: v for k, v in old.items() if k not in ("digest", "prefix")
    }


def test_a_revoked_token_cannot_be_rotated(alice_client: Client, alice: Any) -> None:
    token = make_token(alice, revoked=True)
    before = row(token)
    response = alice_client.post(f"/api/v0/tokens/{token.pk}/rotate")
    assert response.status_code == 409
    assert response.json() == envelope(
        "A revoked token cannot be rotated.", "invalid_request_error", "token_revoked"
    )
    assert row(token) == before


def test_deleting_removes_the_token(alice_client: Client, alice: Any) -> None:
    token = make_token(alice)
    response = alice_client.delete(f"/api/v0/tokens/{token.pk}")
    assert response.status_code == 204
    assert response.content == b""
    assert not ApiToken.objects.exists()


# --- other people's tokens, and nobody signed in ---------------------------------------------

TOKEN_ENDPOINTS = [
    ("put", "/api/v0/tokens/{id}/priority", {"priority": "low"}),
    ("put", "/api/v0/tokens/{id}/priority", {"priority": "urgent"}),
    ("put", "/api/v0/tokens/{id}/priority", {"priority": "high"}),
    ("post", "/api/v0/tokens/{id}/revoke", None),
    ("post", "/api/v0/tokens/{id}/rotate", None),
    ("delete", "/api/v0/tokens/{id}", None),
]


@pytest.mark.parametrize(("method", "path", "payload"), TOKEN_ENDPOINTS)
def test_another_users_token_always_answers_404_and_stays_unchanged(
    alice_client: Client, bob: Any, method: str, path: str, payload: Any
) -> None:
    token = make_token(bob, priority="low")
    before = row(token)
    response = getattr(alice_client, method)(
        path.format(id=token.pk), payload, content_type="application/json"
    )
    assert response.status_code == 404
    assert response.json() == TOKEN_NOT_FOUND
    assert row(token) == before


@pytest.mark.parametrize(("method", "path", "payload"), TOKEN_ENDPOINTS)
def test_a_missing_token_answers_404(
    alice_client: Client, method: str, path: str, payload: Any
) -> None:
    response = getattr(alice_client, method)(
        path.format(id=999999), payload, content_type="application/json"
    )
    assert response.status_code == 404
    assert response.json() == TOKEN_NOT_FOUND


@pytest.mark.parametrize(
    ("method", "path"),
    [
        ("get", "/api/v0/tokens"),
        ("post", "/api/v0/tokens"),
        ("get", "/api/v0/tokens/details"),
        ("put", "/api/v0/tokens/1/priority"),
        ("post", "/api/v0/tokens/1/revoke"),
        ("post", "/api/v0/tokens/1/rotate"),
        ("delete", "/api/v0/tokens/1"),
    ],
)
def test_nobody_signed_in_gets_401(anonymous: Client, method: str, path: str) -> None:
    response = getattr(anonymous, method)(path, {}, content_type="application/json")
    assert response.status_code == 401
    assert response.json() == NOT_SIGNED_IN
    assert response["WWW-Authenticate"] == "Session"


def test_a_wrong_method_is_405(alice_client: Client) -> None:
    response = alice_client.patch("/api/v0/tokens", {}, content_type="application/json")
    assert response.status_code == 405
    assert response.json() == envelope(
        'Method "PATCH" not allowed.', "invalid_request_error", "method_not_allowed"
    )


def test_a_form_body_is_415(alice_client: Client) -> None:
    response = alice_client.post("/api/v0/tokens", {"name": "x"})
    assert response.status_code == 415
    assert response.json() == envelope(
        'Unsupported media type "multipart/form-data; boundary=BoUnDaRyStRiNg" in request.',
        "invalid_request_error",
        "unsupported_media_type",
    )
