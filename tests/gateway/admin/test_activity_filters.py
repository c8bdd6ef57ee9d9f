"""The activity filters of GET /api/v0/admin/activity: the start of a user or token name, part of
a model name, in any case, served by an index on SQLite and PostgreSQL."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from django.db import connection
from django.test import Client

from gateway.admin.activity_filters import activity_filtered
from gateway.models import ActivityRecord

ACTIVITY = "/api/v0/admin/activity"
T0 = datetime(2025, 5, 1, 12, 0, tzinfo=UTC)

# (username, token id, token name, model), oldest first.
RECORDS = [
    ("alice", 7, "laptop", "meta-llama/Llama-3.1-8B-Instruct"),
    ("Alicia", 8, "Laptop-2", "Qwen/Qwen2.5-7B"),
    ("bob", 41, "ci-runner", "sim-small"),
    ("bob", 9, "41-nightly", "SIM-LARGE"),
    ("carol", None, "", "llama-guard"),
]


@pytest.fixture
def history(db: None) -> list[ActivityRecord]:
    return [
        ActivityRecord.objects.create(
            at=T0 + timedelta(minutes=index),
            username=user,
            token_id=token_id,
            token_name=token_name,
            model=model,
            priority_class="medium",
            outcome="immediate",
            status=200,
        )
        for index, (user, token_id, token_name, model) in enumerate(RECORDS)
    ]


def picked(client: Client, history: list[ActivityRecord], **query: str) -> list[int]:
    """The positions in RECORDS of the records the filter answers."""
    response = client.get(ACTIVITY, query)
    assert response.status_code == 200, response.content
    body = response.json()
    assert body["count"] == len(body["results"])
    position = {record.pk: index for index, record in enumerate(history)}
    return sorted(position[row["id"]] for row in body["results"])


@pytest.mark.parametrize(
    ("query", "indexes"),
    [
        ({"user": "ali"}, [0, 1]),
        ({"user": "ALI"}, [0, 1]),
        ({"user": "alice"}, [0]),
        ({"user": "lice"}, []),  # a user is matched from the start of the name
        ({"token": "lap"}, [0, 1]),
        ({"token": "LAPTOP-"}, [1]),
        ({"token": "runner"}, []),
        ({"token": "41"}, [2, 3]),  # token 41, and a name that starts with 41
        ({"token": "8"}, [1]),
        ({"model": "llama"}, [0, 4]),  # part of the name, in any case
        ({"model": "sim-"}, [2, 3]),
        ({"model": "INSTRUCT"}, [0]),
        ({"model": "%"}, []),  # LIKE's wildcards are plain characters here
        ({"model": "_"}, []),
        ({"user": "bob", "model": "large"}, [3]),
    ],
)
def test_user_and_token_match_from_the_start_and_model_anywhere_in_any_case(
    carol_client: Client, history: list[ActivityRecord], query: dict[str, str], indexes: list[int]
) -> None:
    assert picked(carol_client, history, **query) == indexes


def test_a_token_filter_of_many_digits_is_a_name_not_an_error(
    carol_client: Client, history: list[ActivityRecord]
) -> None:
    response = carol_client.get(ACTIVITY, {"token": "9" * 40})
    assert response.status_code == 200
    assert response.json()["count"] == 0


def _plan(queryset: Any) -> str:
    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            # The test table is tiny: without this the planner rightly prefers a scan.
            cursor.execute("SET LOCAL enable_seqscan = off")
            cursor.execute("SET LOCAL enable_bitmapscan = on")
    return str(queryset.explain())


INDEX_SUFFIX = {"sqlite": "nocase", "postgresql": "upper"}


@pytest.mark.parametrize(
    ("query", "column"), [({"user": "ali"}, "username"), ({"token": "lap"}, "token_name")]
)
def test_a_prefix_filter_is_served_by_an_index(
    history: list[ActivityRecord], query: dict[str, str], column: str
) -> None:
    if connection.vendor not in INDEX_SUFFIX:
        pytest.skip(f"no index of this kind on {connection.vendor}")
    plan = _plan(activity_filtered(ActivityRecord.objects.order_by(), query).values("id"))
    assert f"activity_{column}_{INDEX_SUFFIX[connection.vendor]}" in plan, plan


@pytest.mark.django_db
def test_on_postgresql_a_model_filter_is_served_by_a_trigram_index() -> None:
    if connection.vendor != "postgresql":
        pytest.skip("trigrams are PostgreSQL's")
    queryset = activity_filtered(ActivityRecord.objects.order_by(), {"model": "llama"})
    plan = _plan(queryset.values("id"))
    assert "activity_model_upper_trgm" in plan, plan
