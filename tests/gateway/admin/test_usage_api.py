"""GET /api/v0/admin/usage: usage by user, group, token, model or class, over a range and in
buckets, with refusals and queue-wait percentiles, as JSON or CSV."""

from __future__ import annotations

import csv
import io
from datetime import timedelta
from typing import Any

import pytest

from gateway.admin import usage_report
from gateway.models import ActivityRecord
from tests.support.errors import NOT_ADMIN, NOT_SIGNED_IN
from tests.support.usage_history import NOW, record, sums
from tests.support.usage_history import history_fixture as _history  # noqa: F401
from tests.support.usage_history import people_fixture as _people  # noqa: F401

USAGE = "/api/v0/admin/usage"


def usage(client: Any, **params: str) -> dict[str, Any]:
    response = client.get(USAGE, {"until": NOW.isoformat(), **params})
    assert response.status_code == 200, response.content
    return response.json()


def test_usage_by_model_sums_the_last_day_by_default(history, carol_client) -> None:
    body = usage(carol_client, group_by="model")
    assert [(r["model"], sums(r)) for r in body["results"]] == [
        ("large", (1, 100, 50, 0)),
        ("small", (3, 17, 8, 4)),
    ]
    assert {"model", "requests", "refusals", "queue_wait_ms"} <= body["results"][0].keys()
    assert "username" not in body["results"][0]
    assert sums(body["totals"]) == (4, 117, 58, 4)
    assert body["since"] == (NOW - timedelta(days=1)).isoformat()
    assert (body["bucket"], body["buckets"], body["series"], body["bucket_totals"]) == (
        None, [], [], [],
    )  # fmt: skip


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


def test_usage_by_group_counts_a_request_in_each_of_its_users_groups(history, carol_client) -> None:
    body = usage(carol_client, group_by="group")
    assert [(r["group"], sums(r)) for r in body["results"]] == [
        ("everyone", (4, 117, 58, 4)),  # the default group: everyone is a member
        ("ops", (4, 117, 58, 4)),  # alice and bob
        ("research", (2, 110, 55, 4)),  # alice only
    ]
    assert sums(body["totals"]) == (4, 117, 58, 4)  # each request once


def test_a_request_without_a_user_is_in_no_group(people, carol_client) -> None:
    record(None, "small", hours_ago=1, tokens=None, token=None, outcome="refused")
    body = usage(carol_client, group_by="group")
    assert [(r["group"], r["requests"], r["refusals"]["refused"]) for r in body["results"]] == [
        (None, 1, 1),
    ]


def test_usage_by_class_with_its_queue_wait(history, carol_client) -> None:
    rows = usage(carol_client, group_by="class")["results"]
    assert [(r["priority_class"], r["requests"]) for r in rows] == [("high", 1), ("medium", 3)]
    high, medium = rows
    assert high["queue_wait_ms"]["high"] == {"requests": 1, "p50": 30.0, "p95": 30.0}
    assert high["queue_wait_ms"]["medium"] == {"requests": 0, "p50": None, "p95": None}
    # The rejected request never queued: its zero is not a wait.
    assert medium["queue_wait_ms"]["medium"] == {"requests": 2, "p50": 10.0, "p95": 50.0}


def test_queue_wait_percentiles_are_nearest_rank_by_class(people, carol_client) -> None:
    alice = people["alice"]
    for wait in range(20, 0, -1):  # 20 .. 1 ms, stored out of order
        record(alice, "small", hours_ago=1, tokens=(1, 1), queue_ms=float(wait))
    record(alice, "small", hours_ago=1, tokens=(1, 1), queue_ms=500.0, outcome="expired")
    record(alice, "small", hours_ago=1, tokens=None, outcome="refused")
    record(alice, "small", hours_ago=1, tokens=(1, 1), priority_class="low", queue_ms=7.5)
    waits = usage(carol_client, group_by="model")["totals"]["queue_wait_ms"]
    # 21 medium waits: 1..20 and the expired request's 500; rank ceil(0.5*21)=11, ceil(0.95*21)=20.
    assert waits["medium"] == {"requests": 21, "p50": 11.0, "p95": 20.0}
    assert waits["low"] == {"requests": 1, "p50": 7.5, "p95": 7.5}
    assert waits["high"] == {"requests": 0, "p50": None, "p95": None}


def test_refusals_are_counted_by_reason(people, carol_client) -> None:
    bob = people["bob"]
    for outcome in ("refused", "refused", "rejected", "expired", "unavailable", "cancelled"):
        record(bob, "small", hours_ago=1, tokens=None, outcome=outcome)
    row = usage(carol_client, group_by="user")["results"][0]
    assert row["refusals"] == {
        "refused": 2, "rejected": 1, "expired": 1, "unavailable": 1, "limited": 0,
    }  # fmt: skip
    assert row["requests"] == 6  # a client that left is not refused, but it is a request


def test_hourly_buckets_give_every_start_and_a_row_per_bucket_and_group(
    history, carol_client
) -> None:
    since = (NOW - timedelta(hours=4, minutes=30)).isoformat()
    body = usage(carol_client, group_by="user", bucket="hour", since=since)
    hours = [(NOW - timedelta(hours=h)).isoformat() for h in (5, 4, 3, 2, 1)]
    assert body["buckets"] == hours  # from the hour holding since: empty buckets too
    assert [(r["start"], r["username"], sums(r)) for r in body["series"]] == [
        (hours[1], "bob", (1, 0, 0, 0)),
        (hours[2], "bob", (1, 7, 3, 0)),
        (hours[3], "alice", (1, 100, 50, 0)),
        (hours[4], "alice", (1, 10, 5, 4)),
    ]
    assert body["series"][0]["refusals"]["rejected"] == 1
    assert body["series"][3]["queue_wait_ms"]["medium"]["p50"] == 10.0
    assert [(r["username"], r["requests"]) for r in body["results"]] == [("alice", 2), ("bob", 2)]
    # Every bucket over all groups, the empty first hour too: what the charts by class draw.
    totals = body["bucket_totals"]
    assert [(r["start"], sums(r)) for r in totals] == [
        (hours[0], (0, 0, 0, 0)),
        (hours[1], (1, 0, 0, 0)),
        (hours[2], (1, 7, 3, 0)),
        (hours[3], (1, 100, 50, 0)),
        (hours[4], (1, 10, 5, 4)),
    ]
    assert totals[0]["queue_wait_ms"]["medium"] == {"requests": 0, "p50": None, "p95": None}
    assert totals[2]["queue_wait_ms"]["medium"] == {"requests": 1, "p50": 50.0, "p95": 50.0}
    assert totals[3]["queue_wait_ms"]["high"]["p95"] == 30.0
    assert totals[1]["refusals"]["rejected"] == 1


def test_minute_and_day_buckets_start_on_their_boundary(history, carol_client) -> None:
    minutes = usage(carol_client, group_by="model", bucket="minute",
                    since=(NOW - timedelta(minutes=90, seconds=30)).isoformat())  # fmt: skip
    assert len(minutes["buckets"]) == 91
    assert minutes["buckets"][0] == (NOW - timedelta(minutes=91)).isoformat()
    assert [r["start"] for r in minutes["series"]] == [(NOW - timedelta(hours=1)).isoformat()]
    days = usage(carol_client, group_by="model", bucket="day",
                 since=(NOW - timedelta(days=2)).isoformat())  # fmt: skip
    midnight = NOW.replace(hour=0)
    assert days["buckets"] == [(midnight - timedelta(days=d)).isoformat() for d in (2, 1, 0)]
    assert [(r["start"], r["model"], r["requests"]) for r in days["series"]] == [
        ((midnight - timedelta(days=1)).isoformat(), "small", 1),
        (midnight.isoformat(), "large", 1),
        (midnight.isoformat(), "small", 3),
    ]


def test_a_large_range_reads_every_kth_queued_request_for_the_percentiles(
    people, carol_client, monkeypatch
) -> None:
    for wait in range(1, 11):
        record(people["alice"], "small", hours_ago=1, tokens=(1, 1), queue_ms=float(wait))
    monkeypatch.setattr(usage_report, "QUEUE_WAIT_SAMPLE_BOUND", 4)
    body = usage(carol_client, group_by="model")
    assert body["sample_every"] == 3
    ids = ActivityRecord.objects.values_list("id", flat=True)
    sampled = body["totals"]["queue_wait_ms"]["medium"]["requests"]
    assert sampled == len([i for i in ids if i % 3 == 0]) < 10
    assert body["totals"]["requests"] == 10  # the sums are never sampled


def test_csv_export_has_a_header_row_and_a_row_per_bucket_and_group(history, carol_client) -> None:
    since = (NOW - timedelta(hours=3, minutes=30)).isoformat()
    response = carol_client.get(
        USAGE,
        {"group_by": "token", "bucket": "hour", "since": since, "until": NOW.isoformat(),
         "format": "csv"},
    )  # fmt: skip
    assert response.status_code == 200
    assert response["Content-Type"] == "text/csv; charset=utf-8"
    assert response["Content-Disposition"] == (
        'attachment; filename="usage-token-20261201T0830.csv"'
    )
    rows = list(csv.reader(io.StringIO(response.content.decode())))
    assert rows[0] == [
        "start", "token_id", "token_name", "requests", "input_tokens", "output_tokens",
        "cached_tokens", "refused_refused", "refused_rejected", "refused_expired",
        "refused_unavailable", "refused_limited", "queue_wait_low_p50_ms", "queue_wait_low_p95_ms",
        "queue_wait_medium_p50_ms", "queue_wait_medium_p95_ms", "queue_wait_high_p50_ms",
        "queue_wait_high_p95_ms",
    ]  # fmt: skip
    assert rows[1:] == [
        ["2026-12-01T09:00:00+00:00", "2", "ci", "1", "7", "3", "0", "0", "0", "0", "0", "0",
         "", "", "50.0", "50.0", "", ""],
        ["2026-12-01T10:00:00+00:00", "1", "laptop", "1", "100", "50", "0", "0", "0", "0", "0", "0",
         "", "", "", "", "30.0", "30.0"],
        ["2026-12-01T11:00:00+00:00", "1", "laptop", "1", "10", "5", "4", "0", "0", "0", "0", "0",
         "", "", "10.0", "10.0", "", ""],
    ]  # fmt: skip


def test_accept_text_csv_gives_csv_of_the_groups(history, carol_client) -> None:
    response = carol_client.get(
        USAGE, {"group_by": "model", "until": NOW.isoformat()}, HTTP_ACCEPT="text/csv"
    )
    assert response.status_code == 200
    assert response["Content-Type"] == "text/csv; charset=utf-8"
    rows = list(csv.reader(io.StringIO(response.content.decode())))
    assert [row[:5] for row in rows] == [
        ["model", "requests", "input_tokens", "output_tokens", "cached_tokens"],
        ["large", "1", "100", "50", "0"],
        ["small", "3", "17", "8", "4"],
    ]


def test_a_name_a_spreadsheet_would_run_is_quoted_in_csv(people, carol_client) -> None:
    record(people["bob"], "=HYPERLINK(1)", hours_ago=1, tokens=(1, 1))
    response = carol_client.get(USAGE, {"group_by": "model", "until": NOW.isoformat(),
                                        "format": "csv"})  # fmt: skip
    rows = list(csv.reader(io.StringIO(response.content.decode())))
    assert rows[1][0] == "'=HYPERLINK(1)"


@pytest.mark.parametrize(
    ("params", "param"),
    [
        ({}, "group_by"),
        ({"group_by": "colour"}, "group_by"),
        ({"group_by": "user", "since": "yesterday"}, "since"),
        ({"group_by": "user", "bucket": "week"}, "bucket"),
        ({"group_by": "user", "format": "xml"}, "format"),
        ({"group_by": "user", "since": "2026-12-02T00:00:00Z", "until": "2026-12-01T00:00:00Z"},
         "since"),
        # 2,880 minutes: more buckets than MAX_BUCKETS.
        ({"group_by": "user", "bucket": "minute", "since": "2026-11-29T00:00:00Z",
          "until": "2026-12-01T00:00:00Z"}, "bucket"),
        ({"group_by": "user", "format": "csv", "bucket": "fortnight"}, "bucket"),
    ],
)  # fmt: skip
def test_a_bad_query_is_a_400_naming_the_parameter(db, carol_client, params, param) -> None:
    response = carol_client.get(USAGE, params)
    assert response.status_code == 400
    assert response["Content-Type"] == "application/json"  # never a CSV of the error
    assert response.json()["error"]["param"] == param
    assert response.json()["error"]["code"] == "invalid_filter"
    assert response.json()["error"]["type"] == "invalid_request_error"


def test_too_many_rows_of_bucket_and_group_is_a_400(history, carol_client, monkeypatch) -> None:
    monkeypatch.setattr(usage_report, "MAX_SERIES_ROWS", 3)
    response = carol_client.get(
        USAGE, {"group_by": "user", "bucket": "hour", "until": NOW.isoformat()}
    )
    assert response.status_code == 400
    assert response.json()["error"]["param"] == "bucket"
    ok = usage(carol_client, group_by="user", bucket="day")
    assert len(ok["series"]) == 2


def test_only_administrators_read_usage(db, alice_client, anonymous) -> None:
    assert anonymous.get(USAGE, {"group_by": "user"}).json() == NOT_SIGNED_IN
    assert anonymous.get(USAGE, {"group_by": "user"}).status_code == 401
    assert anonymous.get(USAGE, {"group_by": "user", "format": "csv"}).json() == NOT_SIGNED_IN
    refused = alice_client.get(USAGE, {"group_by": "user"})
    assert (refused.status_code, refused.json()) == (403, NOT_ADMIN)
    as_csv = alice_client.get(USAGE, {"group_by": "user"}, HTTP_ACCEPT="text/csv")
    assert (as_csv.status_code, as_csv.json()) == (403, NOT_ADMIN)


def test_buckets_by_group_put_each_users_request_in_each_of_their_groups(
    history, carol_client
) -> None:
    since = (NOW - timedelta(hours=2, minutes=30)).isoformat()
    body = usage(carol_client, group_by="group", bucket="hour", since=since)
    ten, eleven = (NOW - timedelta(hours=2)).isoformat(), (NOW - timedelta(hours=1)).isoformat()
    assert [(r["start"], r["group"], r["requests"]) for r in body["series"]] == [
        (ten, "everyone", 1), (ten, "ops", 1), (ten, "research", 1),
        (eleven, "everyone", 1), (eleven, "ops", 1), (eleven, "research", 1),
    ]  # fmt: skip
    waits = [r["queue_wait_ms"] for r in body["series"] if r["group"] == "research"]
    assert [w["high"]["p50"] for w in waits] == [30.0, None]
    assert [w["medium"]["p50"] for w in waits] == [None, 10.0]
    assert [r["requests"] for r in body["bucket_totals"]] == [0, 1, 1]
