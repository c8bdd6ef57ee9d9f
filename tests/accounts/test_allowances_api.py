"""Allowances through /api/v0: on groups (administrators), on tokens (owners may only lower,
administrators may set any), the exact errors, rejected saves changing nothing, and the caller
cache following every change."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from django.test import Client

from accounts.allowances import Counted, Limit, Measure, Window
from accounts.caller import caller_for_token
from accounts.models import ApiToken, GatewayGroup
from tests.support.factories import make_group, make_token, make_token_with_secret

TPD = {"measure": "tokens", "window": "day", "model": None}
RPM = {"measure": "requests", "window": "minute", "model": None}


def tpd(n: int, model: str | None = None) -> dict[str, Any]:
    return {**TPD, "limit": n, "model": model}


def rpm(n: int) -> dict[str, Any]:
    return {**RPM, "limit": n}


def put(client: Client, url: str, payload: Any) -> Any:
    return client.put(url, payload, content_type="application/json")


def row(token: ApiToken) -> dict[str, Any]:
    return ApiToken.objects.filter(pk=token.pk).values().get()


def envelope(message: str, type_: str, code: str, param: str | None) -> dict[str, Any]:
    return {"error": {"message": message, "type": type_, "param": param, "code": code}}


# --- groups ---------------------------------------------------------------------------------


def test_an_administrator_sets_and_clears_a_groups_allowance(carol_client: Client) -> None:
    response = put(
        carol_client, "/api/v0/admin/groups", {"name": "students", "allowance": [tpd(1000), rpm(5)]}
    )
    assert response.status_code == 201, response.json()
    assert response.json()["allowance"] == [rpm(5), tpd(1000)]  # in a stable order
    assert GatewayGroup.objects.get(name="students").allowance == [rpm(5), tpd(1000)]

    # Omitted: kept; [] no limits; null no say.
    assert put(carol_client, "/api/v0/admin/groups", {"name": "students"}).json()["allowance"] == [
        rpm(5),
        tpd(1000),
    ]
    for value in ([], None):
        answer = put(carol_client, "/api/v0/admin/groups", {"name": "students", "allowance": value})
        assert answer.json()["allowance"] == value


@pytest.mark.parametrize(
    ("value", "param", "message"),
    [
        ("lots", "allowance", "An allowance is a list of limits, or null."),
        (
            [tpd(10), {**TPD, "limit": -5}],
            "allowance.1.limit",
            "A limit is a whole number from 0 to 1000000000000000.",
        ),
        (
            [{"measure": "words", "window": "day", "limit": 1}],
            "allowance.0.measure",
            "A limit's measure is one of requests, tokens, input_tokens, output_tokens.",
        ),
        ([tpd(1), tpd(2)], "allowance.1", "Two limits of tokens_per_day for the same model."),
    ],
)
def test_an_invalid_group_allowance_is_a_bad_request_that_changes_nothing(
    carol_client: Client, value: Any, param: str, message: str
) -> None:
    group = make_group("students")
    GatewayGroup.objects.filter(pk=group.pk).update(allowance=[tpd(7)])
    response = put(
        carol_client,
        "/api/v0/admin/groups",
        {"name": "students", "description": "changed", "allowance": value},
    )
    assert response.status_code == 400
    assert response.json() == envelope(message, "invalid_request_error", "invalid_allowance", param)
    group.refresh_from_db()
    assert (group.allowance, group.description) == ([tpd(7)], "")


def test_only_administrators_set_group_allowances(alice_client: Client) -> None:
    response = put(alice_client, "/api/v0/admin/groups", {"name": "x", "allowance": []})
    assert response.status_code == 403
    assert not GatewayGroup.objects.filter(name="x").exists()


# --- tokens, by their owner -----------------------------------------------------------------


def limited(person: Any, *limits: dict[str, Any]) -> GatewayGroup:
    group = make_group(f"{person.username}-limits", members=[person])
    GatewayGroup.objects.filter(pk=group.pk).update(allowance=list(limits))
    return group


def test_the_owner_lowers_a_tokens_allowance_and_sees_what_applies(
    alice_client: Client, alice: Any
) -> None:
    limited(alice, tpd(1000), rpm(10))
    token = make_token(alice)
    response = put(alice_client, f"/api/v0/tokens/{token.pk}/allowance", {"allowance": [tpd(100)]})
    assert response.status_code == 200, response.json()
    body = response.json()
    assert body["allowance"] == [tpd(100)]
    # Its own lower limit together with the owner's others.
    assert body["effective_allowance"] == [rpm(10), tpd(100)]
    token.refresh_from_db()
    assert (token.allowance_set_by, token.allowance_set_by_admin) == (alice, False)

    details = alice_client.get("/api/v0/tokens/details").json()
    assert details["owner_allowance"] == [rpm(10), tpd(1000)]
    assert details["allowance_ceiling"] == [rpm(10), tpd(1000)]


@pytest.mark.parametrize(
    "value",
    [
        [tpd(1001)],
        [rpm(11), tpd(5)],
    ],
)
def test_the_owner_may_not_raise_a_limit_above_their_own(
    alice_client: Client, alice: Any, value: Any
) -> None:
    limited(alice, tpd(1000), rpm(10))
    token = make_token(alice)
    before = row(token)
    response = put(alice_client, f"/api/v0/tokens/{token.pk}/allowance", {"allowance": value})
    assert response.status_code == 403
    assert response.json()["error"]["code"] == "allowance_above_ceiling"
    assert response.json()["error"]["param"] == "allowance"
    assert row(token) == before


def test_the_refusal_names_the_limit_above_the_ceiling(alice_client: Client, alice: Any) -> None:
    limited(alice, tpd(1000))
    token = make_token(alice)
    response = put(alice_client, f"/api/v0/tokens/{token.pk}/allowance", {"allowance": [tpd(5000)]})
    assert response.json() == envelope(
        "The limit of 5000 tokens per day is above your own allowance.",
        "permission_error",
        "allowance_above_ceiling",
        "allowance",
    )


@pytest.mark.parametrize("value", ["none", [{"measure": "tokens"}], [tpd(1), tpd(1)], 5])
def test_an_invalid_token_allowance_is_a_bad_request_that_changes_nothing(
    alice_client: Client, alice: Any, value: Any
) -> None:
    token = make_token(alice)
    before = row(token)
    response = put(alice_client, f"/api/v0/tokens/{token.pk}/allowance", {"allowance": value})
    assert response.status_code == 400
    assert response.json()["error"]["code"] == "invalid_allowance"
    assert row(token) == before


def test_the_allowance_field_is_required(alice_client: Client, alice: Any) -> None:
    token = make_token(alice)
    response = put(alice_client, f"/api/v0/tokens/{token.pk}/allowance", {})
    assert response.json() == envelope(
        "This field is required.", "invalid_request_error", "required", "allowance"
    )


def test_with_no_limits_of_their_own_an_owner_may_set_any_and_null_inherits_again(
    alice_client: Client, alice: Any
) -> None:
    token = make_token(alice)
    url = f"/api/v0/tokens/{token.pk}/allowance"
    assert put(alice_client, url, {"allowance": [tpd(10**9)]}).status_code == 200
    response = put(alice_client, url, {"allowance": None})
    assert (response.json()["allowance"], response.json()["effective_allowance"]) == (None, [])


def test_someone_elses_token_is_not_found(bob_client: Client, alice: Any) -> None:
    token = make_token(alice)
    before = row(token)
    response = put(bob_client, f"/api/v0/tokens/{token.pk}/allowance", {"allowance": []})
    assert response.status_code == 404
    assert row(token) == before


def test_a_new_token_is_checked_against_the_ceiling_too(alice_client: Client, alice: Any) -> None:
    limited(alice, tpd(1000))
    response = alice_client.post(
        "/api/v0/tokens", {"name": "ci", "allowance": [tpd(2000)]}, "application/json"
    )
    assert response.status_code == 403
    assert not ApiToken.objects.filter(owner=alice).exists()
    response = alice_client.post(
        "/api/v0/tokens", {"name": "ci", "allowance": [tpd(200)]}, "application/json"
    )
    assert response.status_code == 201
    assert response.json()["effective_allowance"] == [tpd(200)]


def test_an_administrator_owner_may_give_their_own_token_any_allowance(
    carol_client: Client, carol: Any
) -> None:
    limited(carol, tpd(10))
    token = make_token(carol)
    response = put(carol_client, f"/api/v0/tokens/{token.pk}/allowance", {"allowance": [tpd(500)]})
    assert response.status_code == 200
    assert response.json()["effective_allowance"] == [tpd(500)]
    assert carol_client.get("/api/v0/tokens/details").json()["allowance_ceiling"] is None


# --- tokens, by an administrator ------------------------------------------------------------


def test_an_administrator_may_raise_anyones_token_above_its_owner(
    carol_client: Client, carol: Any, alice: Any
) -> None:
    limited(alice, tpd(1000), rpm(5))
    token = make_token(alice)
    response = put(
        carol_client, f"/api/v0/admin/tokens/{token.pk}/allowance", {"allowance": [tpd(10**6)]}
    )
    assert response.status_code == 200, response.json()
    body = response.json()
    assert body["allowance"] == [tpd(10**6)]
    assert body["effective_allowance"] == [tpd(10**6)]  # it stands alone
    assert body["owner_allowance"] == [rpm(5), tpd(1000)]
    assert (body["allowance_set_by"], body["allowance_set_by_admin"]) == ("carol", True)
    listed = carol_client.get("/api/v0/admin/tokens").json()["tokens"]
    assert listed[0]["allowance_set_by"] == "carol"


def test_the_administrators_endpoint_is_for_administrators(
    alice_client: Client, alice: Any
) -> None:
    token = make_token(alice)
    before = row(token)
    response = put(alice_client, f"/api/v0/admin/tokens/{token.pk}/allowance", {"allowance": []})
    assert response.status_code == 403
    assert row(token) == before


def test_an_invalid_override_is_a_bad_request(carol_client: Client, alice: Any) -> None:
    token = make_token(alice)
    response = put(carol_client, f"/api/v0/admin/tokens/{token.pk}/allowance", {"allowance": "x"})
    assert response.status_code == 400
    assert response.json()["error"]["code"] == "invalid_allowance"
    response = put(carol_client, "/api/v0/admin/tokens/999999/allowance", {"allowance": []})
    assert response.status_code == 404


# --- the gateway's view ---------------------------------------------------------------------


@pytest.mark.django_db(transaction=True)
def test_the_callers_limits_follow_every_change_to_groups_and_tokens(
    carol_client: Client, alice: Any
) -> None:
    group = limited(alice, tpd(1000))
    token, key = make_token_with_secret(alice)
    day = Limit(Measure.TOKENS, Window.DAY, 1000)
    caller = asyncio.run(caller_for_token(key))
    assert caller is not None
    assert caller.allowance == (Counted(f"u{alice.pk}", day),)

    put(carol_client, "/api/v0/admin/groups", {"name": group.name, "allowance": [tpd(50)]})
    put(carol_client, f"/api/v0/admin/tokens/{token.pk}/allowance", {"allowance": [rpm(3)]})
    caller = asyncio.run(caller_for_token(key))
    assert caller is not None
    # Another administrator's grant stands alone, counted on the token.
    assert caller.allowance == (Counted(f"t{token.pk}", Limit(Measure.REQUESTS, Window.MINUTE, 3)),)
