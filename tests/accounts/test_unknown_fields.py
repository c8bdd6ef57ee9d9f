"""A /api/v0 body with a field its endpoint does not know is a 400 naming the field, and changes
nothing; the OpenAPI document says every body takes no other property."""

from __future__ import annotations

from typing import Any

from django.test import Client

from accounts.models import ApiToken
from tests.support.admin_api import BACKENDS, put, row


def test_a_token_asked_to_expire_with_a_misspelt_field_is_refused_and_not_created(
    alice_client: Client, alice: Any
) -> None:
    response = alice_client.post(
        "/api/v0/tokens",
        {"name": "ci", "expires": "2030-01-01T00:00:00Z"},
        content_type="application/json",
    )
    assert response.status_code == 400, response.content
    error = response.json()["error"]
    assert (error["code"], error["param"]) == ("unknown_field", "expires")
    assert error["message"] == "Unknown field 'expires'; did you mean 'expires_at'?"
    assert not ApiToken.objects.filter(owner=alice).exists()


def test_a_backend_saved_with_a_misspelt_limit_keeps_its_old_limit(carol_client: Client) -> None:
    body = {"name": "gpu1", "base_url": "http://10.0.0.5:8000/v1", "max_inflight": 8}
    assert put(carol_client, BACKENDS, body).status_code == 200
    before = row("gpu1")

    response = put(carol_client, BACKENDS, {"name": "gpu1", "max_inflght": 2})

    assert response.status_code == 400, response.content
    error = response.json()["error"]
    assert (error["code"], error["param"]) == ("unknown_field", "max_inflght")
    assert "did you mean 'max_inflight'?" in error["message"]
    assert row("gpu1") == before


def test_an_unknown_field_is_named_before_the_bodys_other_errors(carol_client: Client) -> None:
    response = put(carol_client, BACKENDS, {"name": "gpu2", "base_url": 5, "colour": "red"})
    assert response.status_code == 400
    error = response.json()["error"]
    assert (error["code"], error["param"]) == ("unknown_field", "colour")
    assert error["message"].startswith("Unknown field 'colour'; it takes name, base_url,")


def test_a_group_with_an_unknown_field_is_refused_and_not_created(carol_client: Client) -> None:
    response = put(carol_client, "/api/v0/admin/groups", {"name": "research", "prio": "low"})
    assert response.status_code == 400, response.content
    assert response.json()["error"]["param"] == "prio"
    from django.contrib.auth.models import Group

    assert not Group.objects.filter(name="research").exists()


def test_the_openapi_document_closes_every_request_body(carol_client: Client) -> None:
    schema = Client().get("/api/v0/openapi.json", HTTP_ACCEPT="application/json").json()
    bodies = schema["components"]["schemas"]
    for name in ("TokenCreateIn", "BackendIn", "GroupIn", "LoginIn", "AllowanceIn"):
        assert bodies[name]["additionalProperties"] is False, name
    assert "additionalProperties" not in bodies["TokenOut"]  # an answer may grow
