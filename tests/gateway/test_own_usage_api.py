"""GET /api/v0/usage: a person's own usage, and never anyone else's."""

from __future__ import annotations

import csv
import io
from typing import Any

import pytest

from tests.accounts.errors import NOT_SIGNED_IN
from tests.factories import make_user
from tests.gateway.usage_history import NOW, record, sums
from tests.gateway.usage_history import history_fixture as _history  # noqa: F401
from tests.gateway.usage_history import people_fixture as _people  # noqa: F401

OWN = "/api/v0/usage"


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
    assert body["allowance"] is None  # reserved for the remaining allowance


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
def test_a_bad_personal_query_is_a_400_naming_the_parameter(
    alice_client, params, param
) -> None:
    response = alice_client.get(OWN, params)
    assert response.status_code == 400
    assert response.json()["error"]["param"] == param
    assert response.json()["error"]["code"] == "invalid_filter"


def test_signed_out_nobody_reads_usage(db, anonymous) -> None:
    response = anonymous.get(OWN)
    assert (response.status_code, response.json()) == (401, NOT_SIGNED_IN)
