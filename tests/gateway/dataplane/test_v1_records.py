"""The activity record of a request cut short: the caller's class once it is known, none before.

A client that leaves while sending its body is a raw socket: the head and half the body it
announced, then closed, exactly what a client that goes away mid-upload does.
"""

from __future__ import annotations

import socket
from typing import Any
from urllib.parse import urlsplit

import httpx
import pytest
from django.test import Client

from aiplane.catalog import settings_update
from gateway.models import ActivityRecord
from tests.support.drive import chat, key_for, wait_until
from tests.support.live import add_backend


def leave_mid_body(gateway: Any, key: str) -> None:
    """Send a chat request's head and half its body, then go away."""
    body = b'{"model": "sim-small", "messages": [{"role": "user", "content": "' + b"x" * 4000
    url = urlsplit(gateway.url)
    with socket.create_connection((url.hostname, url.port), timeout=10) as sock:
        head = (
            f"POST /v1/chat/completions HTTP/1.1\r\nHost: {url.netloc}\r\n"
            f"Authorization: Bearer {key}\r\nContent-Type: application/json\r\n"
            f"Content-Length: {2 * len(body)}\r\n\r\n"
        )
        sock.sendall(head.encode() + body)


def records(count: int) -> list[ActivityRecord]:
    wait_until(lambda: ActivityRecord.objects.count() >= count, f"{count} records", 15)
    return list(ActivityRecord.objects.order_by("at", "id"))


@pytest.fixture
def served(gateway: Any, sim: Any) -> Any:
    add_backend("solo", sim.url)
    return gateway


@pytest.mark.parametrize("group_class", ["high", "low"])
def test_a_client_that_leaves_while_sending_its_body_is_recorded_at_its_callers_class(
    served: Any, group_class: str
) -> None:
    settings_update(values={"gateway.priority_enabled": True})
    leave_mid_body(served, key_for("ivy", group_class))
    [record] = records(1)
    assert (record.username, record.outcome, record.status, record.priority_class) == (
        "ivy",
        "cancelled",
        499,
        group_class,
    )


def test_a_body_refused_before_its_class_was_known_is_recorded_at_the_callers_class(
    served: Any,
) -> None:
    settings_update(values={"gateway.priority_enabled": True})
    key = key_for("lena", "low")
    bad_json = httpx.post(
        served.v1 + "/chat/completions",
        content=b"{not json",
        headers={"Authorization": f"Bearer {key}"},
        timeout=10,
    )
    assert bad_json.status_code == 400
    assert chat(served, key, model="nope").status_code == 404
    assert [(r.status, r.priority_class) for r in records(2)] == [(400, "low"), (404, "low")]


def test_without_prioritization_a_cut_short_request_is_recorded_at_medium_where_all_run(
    served: Any,
) -> None:
    leave_mid_body(served, key_for("hana", "high"))
    [record] = records(1)
    assert (record.outcome, record.priority_class) == ("cancelled", "medium")


def test_a_request_refused_before_its_caller_was_known_has_no_class_in_the_record_and_api(
    served: Any, carol_client: Client
) -> None:
    settings_update(values={"gateway.priority_enabled": True})
    assert chat(served, "gwk_" + "0" * 64).status_code == 401
    assert chat(served, key_for("ivy", "high")).status_code == 200
    unknown, known = records(2)
    assert (unknown.status, unknown.priority_class) == (401, None)
    assert (known.status, known.priority_class) == (200, "high")

    activity = carol_client.get("/api/v0/admin/activity")
    assert activity.status_code == 200, activity.content
    assert [(r["status"], r["class"]) for r in activity.json()["results"]] == [
        (200, "high"),
        (401, None),
    ]
    usage = carol_client.get("/api/v0/admin/usage", {"group_by": "class"})
    assert usage.status_code == 200, usage.content
    assert [(r["priority_class"], r["requests"]) for r in usage.json()["results"]] == [
        (None, 1),
        ("high", 1),
    ]
    as_csv = carol_client.get("/api/v0/admin/usage", {"group_by": "class", "format": "csv"})
    assert as_csv.status_code == 200, as_csv.content
    rows = as_csv.content.decode().splitlines()[1:]
    assert [row.split(",")[:2] for row in rows] == [["", "1"], ["high", "1"]]
