"""GET /api/v0/admin/usage: token usage summed by user, token or model over a time range."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from gateway.models import ActivityRecord
from tests.accounts.errors import NOT_ADMIN, NOT_SIGNED_IN

USAGE = "/api/v0/admin/usage"
NOW = datetime(2026, 12, 1, 12, 0, tzinfo=UTC)


def record(
    username: str,
    model: str,
    *,
    hours_ago: float,
    tokens: tuple[int, int] | None,
    token: tuple[int, str] | None = (1, "laptop"),
    cached: int | None = None,
) -> None:
    ActivityRecord.objects.create(
        at=NOW - timedelta(hours=hours_ago),
        username=username,
        token_id=token[0] if token else None,
        token_name=token[1] if token else "",
        model=model,
        priority_class="medium",
        outcome="immediate",
        status=200,
        input_tokens=tokens[0] if tokens else None,
        output_tokens=tokens[1] if tokens else None,
        cached_tokens=cached,
    )


@pytest.fixture
def history(db: None) -> None:
    record("alice", "small", hours_ago=1, tokens=(10, 5), cached=4)
    record("alice", "large", hours_ago=2, tokens=(100, 50))
    record("bob", "small", hours_ago=3, tokens=(7, 3), token=(2, "ci"))
    record("bob", "small", hours_ago=4, tokens=None, token=(2, "ci"))  # refused: no usage
    record("alice", "small", hours_ago=30, tokens=(1000, 1000))  # outside the default day


def usage(client: Any, **params: str) -> dict[str, Any]:
    response = client.get(USAGE, {"until": NOW.isoformat(), **params})
    assert response.status_code == 200, response.content
    return response.json()


def test_usage_by_model_sums_the_last_day_by_default(history, carol_client) -> None:
    body = usage(carol_client, group_by="model")
    assert body["results"] == [
        {"model": "large", "requests": 1, "input_tokens": 100, "output_tokens": 50,
         "cached_tokens": 0},
        {"model": "small", "requests": 3, "input_tokens": 17, "output_tokens": 8,
         "cached_tokens": 4},
    ]  # fmt: skip
    assert body["totals"] == {
        "requests": 4, "input_tokens": 117, "output_tokens": 58, "cached_tokens": 4,
    }  # fmt: skip
    assert body["since"] == (NOW - timedelta(days=1)).isoformat()


def test_usage_by_user_and_by_token_over_a_chosen_range(history, carol_client) -> None:
    since = (NOW - timedelta(hours=48)).isoformat()
    by_user = usage(carol_client, group_by="user", since=since)["results"]
    assert [(r["username"], r["input_tokens"], r["output_tokens"]) for r in by_user] == [
        ("alice", 1110, 1055),
        ("bob", 7, 3),
    ]
    by_token = usage(carol_client, group_by="token")["results"]
    assert [(r["token_id"], r["token_name"], r["requests"]) for r in by_token] == [
        (1, "laptop", 2),
        (2, "ci", 2),
    ]


@pytest.mark.parametrize(
    ("params", "param"),
    [({}, "group_by"), ({"group_by": "class"}, "group_by"), ({"group_by": "user",
      "since": "yesterday"}, "since")],
)  # fmt: skip
def test_a_bad_query_is_a_400_naming_the_parameter(db, carol_client, params, param) -> None:
    response = carol_client.get(USAGE, params)
    assert response.status_code == 400
    assert response.json()["error"]["param"] == param
    assert response.json()["error"]["code"] == "invalid_filter"


def test_only_administrators_read_usage(db, alice_client, anonymous) -> None:
    assert anonymous.get(USAGE, {"group_by": "user"}).json() == NOT_SIGNED_IN
    refused = alice_client.get(USAGE, {"group_by": "user"})
    assert (refused.status_code, refused.json()) == (403, NOT_ADMIN)
