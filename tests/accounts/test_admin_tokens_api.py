"""Administration of every token: the list with owners, and unrestricted priority overrides."""

from __future__ import annotations

from typing import Any

import pytest
from django.test import Client
from rest_framework.fields import DateTimeField

from accounts.models import ApiToken
from tests.accounts.errors import INVALID_PRIORITY, TOKEN_NOT_FOUND
from tests.factories import make_group, make_token

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
        "priority": None if token.priority is None else token.priority_class.label,
        "effective_priority": "medium",
        "model_allowlist": token.model_allowlist,
        "owner": {"id": token.owner_id, "username": token.owner.username},
        "owner_priority": "medium",
        "priority_set_by": None if setter is None else setter.username,
        "priority_set_by_admin": token.priority_set_by_admin,
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
