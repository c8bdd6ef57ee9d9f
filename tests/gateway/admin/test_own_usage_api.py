"""GET /api/v0/usage: a person's own usage, and never anyone else's."""

from __future__ import annotations

import csv
import io
from datetime import timedelta
from typing import Any

import pytest
from django.utils import timezone

from accounts.models import ApiToken, GatewayGroup
from tests.support.drive import HTTP
from tests.support.errors import NOT_SIGNED_IN
from tests.support.factories import make_group, make_token_with_secret, make_user
from tests.support.live import add_backend
from tests.support.usage_history import NOW, record, sums
from tests.support.usage_history import history_fixture as _history  # noqa: F401
from tests.support.usage_history import people_fixture as _people  # noqa: F401

OWN = "/api/v0/usage"
RPM = {"measure": "requests", "window": "minute"}
TPD = {"measure": "tokens", "window": "day"}


def own(client: Any, **params: str) -> dict[str, Any]:
    response = client.get(OWN, {"until": NOW.isoformat(), **params})
    assert response.status_code == 200, response.content
    return response.json()


@pytest.fixture
def alice_signed_in(people, login) -> Any:
    return login(people["alice"])


@pytest.fixture
def bob_signed_in(people, login) -> Any:
    return login(people["bob"])


def test_a_person_sees_their_own_usage_by_token_by_default(history, alice_signed_in) -> None:
    body = own(alice_signed_in)
    assert body["group_by"] == "token"
    assert [(r["token_id"], r["token_name"], sums(r)) for r in body["results"]] == [
        (1, "laptop", (2, 110, 55, 4)),
    ]
    assert sums(body["totals"]) == (2, 110, 55, 4)
    assert body["allowance"] == {"person": [], "tokens": []}  # no group limits her


def test_a_person_never_sees_another_persons_requests(history, bob_signed_in) -> None:
    # Parameters that name someone else are not filters here: the answer is still bob's own.
    body = own(bob_signed_in, group_by="model", user="alice", username="alice", user_id="1")
    assert [(r["model"], sums(r)) for r in body["results"]] == [("small", (2, 7, 3, 0))]
    assert body["totals"]["refusals"]["rejected"] == 1
    series = own(bob_signed_in, group_by="class", bucket="hour")["series"]
    assert [(r["priority_class"], r["requests"]) for r in series] == [("medium", 1), ("medium", 1)]
    exported = bob_signed_in.get(OWN, {"until": NOW.isoformat(), "format": "csv"})
    rows = list(csv.reader(io.StringIO(exported.content.decode())))
    assert [row[:4] for row in rows] == [
        ["token_id", "token_name", "requests", "input_tokens"],
        ["2", "ci", "2", "7"],
    ]


def test_someone_without_requests_sees_zeros(people, login) -> None:
    record(people["alice"], "small", hours_ago=1, tokens=(5, 5))
    body = own(login(make_user("dave")), group_by="model")
    assert body["results"] == []
    assert sums(body["totals"]) == (0, 0, 0, 0)


@pytest.mark.parametrize(
    ("params", "param"),
    [
        ({"group_by": "user"}, "group_by"),  # by user or group it would only be oneself
        ({"group_by": "group"}, "group_by"),
        ({"bucket": "week"}, "bucket"),
        ({"since": "soon"}, "since"),
        ({"format": "pdf"}, "format"),
    ],
)
def test_a_bad_personal_query_is_a_400_naming_the_parameter(alice_client, params, param) -> None:
    response = alice_client.get(OWN, params)
    assert response.status_code == 400
    assert response.json()["error"]["param"] == param
    assert response.json()["error"]["code"] == "invalid_filter"


def test_signed_out_nobody_reads_usage(db, anonymous) -> None:
    response = anonymous.get(OWN)
    assert (response.status_code, response.json()) == (401, NOT_SIGNED_IN)


# ----- what is left of the allowance --------------------------------------------------------


def limited(username: str, *limits: dict[str, Any]) -> Any:
    user = make_user(username)
    group = make_group(f"{username}-limits", members=[user])
    GatewayGroup.objects.filter(pk=group.pk).update(allowance=list(limits))
    return user


def test_the_allowance_lists_the_persons_limits_and_each_token_with_its_own(db, login) -> None:
    dave = limited("dave", {**RPM, "limit": 60}, {**TPD, "limit": 5000, "model": "big"})
    _, _ = make_token_with_secret(dave, name="laptop")  # inherits: counted as dave's only
    ci, _ = make_token_with_secret(dave, name="ci")
    ApiToken.objects.filter(pk=ci.pk).update(allowance=[{**RPM, "limit": 6}])
    old, _ = make_token_with_secret(dave, name="old")
    ApiToken.objects.filter(pk=old.pk).update(
        allowance=[{**RPM, "limit": 1}], revoked_at=timezone.now()
    )

    allowance = own(login(dave))["allowance"]

    # No gateway runs in this process: the limits are known, their counters are not.
    unread = {"used": None, "reserved": None, "remaining": None}
    assert [{k: v for k, v in row.items() if k != "resets_at"} for row in allowance["person"]] == [
        {**RPM, "limit": 60, "model": None, **unread},
        {**TPD, "limit": 5000, "model": "big", **unread},
    ]
    assert [(t["token_name"], [x["limit"] for x in t["limits"]]) for t in allowance["tokens"]] == [
        ("ci", [6])
    ]
    minute_end = allowance["person"][0]["resets_at"]
    assert minute_end.endswith(":00Z") and minute_end > timezone.now().isoformat()


def test_the_allowance_shows_what_the_gateway_counted_in_the_current_window(
    gateway, sim, login
) -> None:
    add_backend("solo", sim.url)
    dave = limited("dave", {**RPM, "limit": 5}, {**TPD, "limit": 100_000})
    token, key = make_token_with_secret(dave, name="ci")
    ApiToken.objects.filter(pk=token.pk).update(allowance=[{**RPM, "limit": 3}])
    body = {"model": "sim-small", "messages": [{"role": "user", "content": "hi"}]}
    answers = [
        HTTP.post(
            gateway.v1 + "/chat/completions", json=body, headers={"Authorization": f"Bearer {key}"}
        )
        for _ in range(2)
    ]
    assert [a.status_code for a in answers] == [200, 200]
    reported = sum(a.json()["usage"]["total_tokens"] for a in answers)

    allowance = own(login(dave))["allowance"]

    requests, tokens = allowance["person"]
    assert (requests["used"], requests["reserved"], requests["remaining"]) == (2, 0, 3)
    assert (tokens["used"], tokens["remaining"]) == (reported, 100_000 - reported)
    [ci] = allowance["tokens"]
    assert (ci["token_name"], ci["limits"][0]["used"], ci["limits"][0]["remaining"]) == ("ci", 2, 1)
    midnight = (timezone.now() + timedelta(days=1)).strftime("%Y-%m-%dT00:00:00Z")
    assert tokens["resets_at"] == midnight
