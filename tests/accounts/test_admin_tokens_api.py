"""Administration of every token: the list with owners, unrestricted priority overrides, and
revoking or deleting anyone's token (a leaked key stops without deactivating its owner)."""

from __future__ import annotations

from typing import Any

import pytest
from django.test import Client
from rest_framework.fields import DateTimeField

from accounts.models import ApiToken
from tests.support.errors import (
    CSRF_MISSING,
    INVALID_PRIORITY,
    NOT_ADMIN,
    NOT_SIGNED_IN,
    TOKEN_NOT_FOUND,
)
from tests.support.factories import make_group, make_token

pytestmark = pytest.mark.django_db


def iso(moment: Any) -> str | None:
    return None if moment is None else DateTimeField().to_representation(moment)


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
        "owner": {"id": token.owner_id, "username": token.owner.username},
        "owner_priority": "medium",
        "priority_set_by": None if setter is None else setter.username,
        "priority_set_by_admin": token.priority_set_by_admin,
        "allowance": token.allowance,
        "effective_allowance": [],
        "owner_allowance": [],
        "allowance_set_by": None
        if token.allowance_set_by is None
        else token.allowance_set_by.username,
        "allowance_set_by_admin": token.allowance_set_by_admin,
    }
    return body | overrides


def test_every_token_is_listed_with_its_owner_priority_and_setter(
    carol_client: Client, alice: Any, bob: Any, carol: Any
) -> None:
    make_group("research", priority="high", members=[bob])
    a = make_token(alice, name="a", priority="low")
    b = make_token(bob, name="b")
    c = make_token(alice, name="c", priority="high", set_by=carol, set_by_admin=True)
    response = carol_client.get("/api/v0/admin/tokens")
    assert response.status_code == 200
    assert response.json() == {
        "tokens": [
            shown(c, effective_priority="high"),
            shown(b, effective_priority="high", owner_priority="high"),
            shown(a, effective_priority="low"),
        ]
    }


@pytest.mark.parametrize(
    ("value", "effective"), [("high", "high"), ("low", "low"), (None, "medium")]
)
def test_an_administrator_may_set_any_value_and_is_recorded_as_the_setter(
    carol_client: Client, alice: Any, carol: Any, value: str | None, effective: str
) -> None:
    token = make_token(alice, priority="medium")
    response = carol_client.put(
        f"/api/v0/admin/tokens/{token.pk}/priority", {"priority": value}, "application/json"
    )
    assert response.status_code == 200
    assert response.json() == shown(token, effective_priority=effective)
    assert response.json()["priority"] == value
    assert (token.priority_set_by, token.priority_set_by_admin) == (carol, True)


def test_an_administrators_grant_is_not_capped_by_the_owners_groups(
    carol_client: Client, alice: Any
) -> None:
    token = make_token(alice)
    carol_client.put(
        f"/api/v0/admin/tokens/{token.pk}/priority", {"priority": "high"}, "application/json"
    )
    body = alice_details = carol_client.get("/api/v0/admin/tokens").json()["tokens"][0]
    assert (body["owner_priority"], body["effective_priority"]) == ("medium", "high")
    assert alice_details["priority_set_by"] == "carol"


def test_an_invalid_value_is_400_and_changes_nothing(carol_client: Client, alice: Any) -> None:
    token = make_token(alice, priority="low")
    before = ApiToken.objects.filter(pk=token.pk).values().get()
    response = carol_client.put(
        f"/api/v0/admin/tokens/{token.pk}/priority", {"priority": "max"}, "application/json"
    )
    assert response.status_code == 400
    assert response.json() == INVALID_PRIORITY
    assert ApiToken.objects.filter(pk=token.pk).values().get() == before


def test_a_missing_token_is_404(carol_client: Client) -> None:
    response = carol_client.put(
        "/api/v0/admin/tokens/999999/priority", {"priority": "low"}, "application/json"
    )
    assert response.status_code == 404
    assert response.json() == TOKEN_NOT_FOUND


# --- revoke and delete any token ------------------------------------------------------------

ACTIONS = [("post", "/revoke"), ("delete", "")]


def row(token: ApiToken) -> dict[str, Any] | None:
    return ApiToken.objects.filter(pk=token.pk).values().first()


def act(client: Client, method: str, token_id: int, suffix: str) -> Any:
    """The call the page makes: no body (the test client would otherwise send a form)."""
    path = f"/api/v0/admin/tokens/{token_id}{suffix}"
    return getattr(client, method)(path, content_type="application/json")


def test_an_administrator_revokes_anyones_token_and_is_named_as_the_revoker(
    carol_client: Client, alice: Any, carol: Any
) -> None:
    token = make_token(alice, name="leaked")
    response = carol_client.post(f"/api/v0/admin/tokens/{token.pk}/revoke")
    assert response.status_code == 200
    assert response.json() == shown(token)
    assert (response.json()["revoked"], response.json()["revoked_by"]) == (True, "carol")
    assert token.revoked_at is not None and token.revoked_by == carol


def test_the_owner_sees_who_revoked_their_token(
    carol_client: Client, alice_client: Client, alice: Any
) -> None:
    token = make_token(alice)
    carol_client.post(f"/api/v0/admin/tokens/{token.pk}/revoke")
    [listed] = alice_client.get("/api/v0/tokens").json()["tokens"]
    [detailed] = alice_client.get("/api/v0/tokens/details").json()["tokens"]
    assert (listed["revoked"], listed["revoked_by"]) == (True, "carol")
    assert detailed["revoked_by"] == "carol"
    assert listed["revoked_at"] == detailed["revoked_at"] == iso(ApiToken.objects.get().revoked_at)


def test_revoking_again_keeps_the_first_revocation_and_its_revoker(
    carol_client: Client, alice_client: Client, alice: Any
) -> None:
    token = make_token(alice)
    alice_client.post(f"/api/v0/tokens/{token.pk}/revoke")
    before = row(token)
    response = carol_client.post(f"/api/v0/admin/tokens/{token.pk}/revoke")
    assert response.status_code == 200
    assert response.json()["revoked_by"] == "alice"
    assert row(token) == before


def test_a_revocation_outlives_the_revoker_without_a_name(
    carol_client: Client, alice: Any, carol: Any
) -> None:
    token = make_token(alice, name="leaked")
    carol_client.post(f"/api/v0/admin/tokens/{token.pk}/revoke")
    carol.delete()
    token.refresh_from_db()
    assert (token.is_revoked, token.revoked_by) == (True, None)


def test_an_administrator_deletes_anyones_token(carol_client: Client, alice: Any) -> None:
    token = make_token(alice)
    kept = make_token(alice, name="kept")
    response = carol_client.delete(f"/api/v0/admin/tokens/{token.pk}")
    assert response.status_code == 204
    assert response.content == b""
    assert list(ApiToken.objects.values_list("pk", flat=True)) == [kept.pk]


@pytest.mark.parametrize(("method", "suffix"), ACTIONS)
def test_a_plain_user_may_not_revoke_or_delete_through_administration(
    alice_client: Client, alice: Any, bob: Any, method: str, suffix: str
) -> None:
    for token in (make_token(bob), make_token(alice)):  # not even their own, here
        before = row(token)
        response = act(alice_client, method, token.pk, suffix)
        assert response.status_code == 403
        assert response.json() == NOT_ADMIN
        assert row(token) == before


@pytest.mark.parametrize(("method", "suffix"), ACTIONS)
def test_revoking_or_deleting_needs_a_session(
    anonymous: Client, alice: Any, method: str, suffix: str
) -> None:
    token = make_token(alice)
    before = row(token)
    response = act(anonymous, method, token.pk, suffix)
    assert response.status_code == 401
    assert response.json() == NOT_SIGNED_IN
    assert row(token) == before


@pytest.mark.parametrize(("method", "suffix"), ACTIONS)
def test_revoking_or_deleting_a_missing_token_is_404(
    carol_client: Client, method: str, suffix: str
) -> None:
    response = act(carol_client, method, 999999, suffix)
    assert response.status_code == 404
    assert response.json() == TOKEN_NOT_FOUND


@pytest.mark.parametrize(("method", "suffix"), ACTIONS)
def test_revoking_or_deleting_needs_the_csrf_token(
    login: Any, carol: Any, alice: Any, method: str, suffix: str
) -> None:
    client = login(carol, csrf=True)
    client.get("/api/v0/session/csrf")
    token = make_token(alice)
    before = row(token)
    response = act(client, method, token.pk, suffix)
    assert response.status_code == 403
    assert response.json() == CSRF_MISSING
    assert row(token) == before
