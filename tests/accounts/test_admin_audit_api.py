"""GET /api/v0/admin/audit: administrators read the audit log, filtered and a page at a time."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
import yaml
from django.db import transaction
from django.test import Client

from aiplane import audit
from aiplane.models import AuditEntry
from tests.support.errors import NOT_ADMIN, NOT_SIGNED_IN, envelope

pytestmark = pytest.mark.django_db

URL = "/api/v0/admin/audit"
T0 = datetime(2026, 5, 4, 12, 0, tzinfo=UTC)


def entry(actor: Any, action: str, target: str, minutes: int, **after: Any) -> AuditEntry:
    """A row at T0 + minutes (the clock of a row is the database's; set it after writing)."""
    with transaction.atomic():
        row = audit.record(actor, action, target, None, after or {"name": target})
    assert row is not None
    AuditEntry.objects.filter(pk=row.pk).update(at=T0 + timedelta(minutes=minutes))
    row.refresh_from_db()
    return row


@pytest.fixture
def log(alice: Any, carol: Any) -> dict[str, AuditEntry]:
    return {
        "research": entry(carol, "group.create", "research", 0),
        "gpu1": entry(carol, "backend.create", "gpu1", 10, name="gpu1", api_key=audit.MASKED),
        "laptop": entry(alice, "token.create", "alice/laptop", 20),
        "revoke": entry(carol, "token.revoke", "alice/laptop", 30),
        "serve": entry("manage.py serve", "pool.create", "chat", 40),
    }


def ids(response: Any) -> list[int]:
    assert response.status_code == 200, response.content
    return [row["id"] for row in response.json()["results"]]


def test_rows_are_shown_newest_first_with_their_changes(
    carol_client: Client, log: dict[str, AuditEntry]
) -> None:
    response = carol_client.get(URL)
    assert ids(response) == [log[k].pk for k in ("serve", "revoke", "laptop", "gpu1", "research")]
    body = response.json()
    assert (body["count"], body["page"], body["page_size"], body["has_next"]) == (5, 1, 50, False)
    assert body["results"][3] == {
        "id": log["gpu1"].pk,
        "at": "2026-05-04T12:10:00Z",
        "actor": "carol",
        "action": "backend.create",
        "kind": "backend",
        "target": "gpu1",
        "before": None,
        "after": {"name": "gpu1", "api_key": "********"},
        "changes": [
            {"field": "api_key", "before": None, "after": "********"},
            {"field": "name", "before": None, "after": "gpu1"},
        ],
    }
    assert body["results"][0]["actor"] == "manage.py serve"


FILTERS = [
    ("actor=car", ["revoke", "gpu1", "research"]),
    ("actor=ALICE", ["laptop"]),
    ("actor=manage.py", ["serve"]),
    ("kind=token", ["revoke", "laptop"]),
    ("action=token.revoke", ["revoke"]),
    ("target=laptop", ["revoke", "laptop"]),
    ("target=GPU", ["gpu1"]),
    ("since=2026-05-04T12:10:00Z", ["serve", "revoke", "laptop", "gpu1"]),
    ("until=2026-05-04T12:10:00Z", ["research"]),
    ("since=2026-05-04T14:15:00%2B02:00&until=2026-05-04T12:31:00Z", ["revoke", "laptop"]),
    ("actor=carol&kind=token", ["revoke"]),
    ("actor=&kind=&target=", ["serve", "revoke", "laptop", "gpu1", "research"]),
    ("actor=nobody", []),
]


@pytest.mark.parametrize(("query", "expected"), FILTERS, ids=[f[0] for f in FILTERS])
def test_filters_narrow_the_rows(
    carol_client: Client, log: dict[str, AuditEntry], query: str, expected: list[str]
) -> None:
    response = carol_client.get(f"{URL}?{query}")
    assert ids(response) == [log[k].pk for k in expected]
    assert response.json()["count"] == len(expected)


def test_pages_cover_every_row_once(carol_client: Client, log: dict[str, AuditEntry]) -> None:
    pages = [carol_client.get(f"{URL}?page_size=2&page={n}").json() for n in (1, 2, 3, 4)]
    assert [[r["target"] for r in p["results"]] for p in pages] == [
        ["chat", "alice/laptop"],
        ["alice/laptop", "gpu1"],
        ["research"],
        [],
    ]
    assert [p["has_next"] for p in pages] == [True, True, False, False]
    assert {p["count"] for p in pages} == {5}


def invalid(message: str, param: str) -> dict[str, Any]:
    return envelope(message, "invalid_request_error", "invalid_filter", param)


KINDS = ", ".join(audit.KINDS)
BAD = [
    ("kind=secrets", invalid(f"kind must be one of: {KINDS}.", "kind")),
    (
        "action=token.explode",
        invalid(f"action must be one of: {', '.join(audit.ACTIONS)}.", "action"),
    ),
    ("since=yesterday", invalid("since must be an ISO 8601 time.", "since")),
    ("until=2026-02-30T00:00:00Z", invalid("until must be an ISO 8601 time.", "until")),
    (
        "since=2026-05-05T00:00:00Z&until=2026-05-04T00:00:00Z",
        invalid("until must be after since.", "until"),
    ),
    ("page=0", invalid("page must be from 1 to 1000000000.", "page")),
    ("page_size=501", invalid("page_size must be from 1 to 500.", "page_size")),
    (
        "target=a%00b",
        invalid("target must be at most 200 characters, without control characters.", "target"),
    ),
    (
        "actor=" + "x" * 201,
        invalid("actor must be at most 200 characters, without control characters.", "actor"),
    ),
]


@pytest.mark.parametrize(("query", "error"), BAD, ids=[b[0][:40] for b in BAD])
def test_a_bad_filter_is_refused_in_the_envelope(
    carol_client: Client, log: dict[str, AuditEntry], query: str, error: dict[str, Any]
) -> None:
    response = carol_client.get(f"{URL}?{query}")
    assert (response.status_code, response.json()) == (400, error)


def test_plain_users_are_refused(bob_client: Client, log: dict[str, AuditEntry]) -> None:
    response = bob_client.get(URL)
    assert (response.status_code, response.json()) == (403, NOT_ADMIN)


def test_anonymous_callers_are_refused(anonymous: Client, log: dict[str, AuditEntry]) -> None:
    response = anonymous.get(URL)
    assert (response.status_code, response.json()) == (401, NOT_SIGNED_IN)


def test_the_endpoint_is_documented_with_its_filters(anonymous: Client) -> None:
    schema = yaml.safe_load(anonymous.get("/api/v0/openapi.json").content)
    operation = schema["paths"][URL]["get"]
    assert set(schema["paths"][URL]) == {"get"}
    params = {p["name"]: p["schema"] for p in operation["parameters"]}
    assert set(params) == {
        "actor",
        "kind",
        "action",
        "target",
        "since",
        "until",
        "page",
        "page_size",
    }
    assert params["kind"]["enum"] == list(audit.KINDS)
    assert params["action"]["enum"] == list(audit.ACTIONS)
    assert set(operation["responses"]) >= {"200", "400", "401", "403"}
    page = operation["responses"]["200"]["content"]["application/json"]["schema"]["$ref"]
    assert page == "#/components/schemas/AuditPageOut"


def test_the_page_is_served_exactly_the_declared_actions(carol_client: Client) -> None:
    import json
    import re

    html = carol_client.get("/admin/audit/").content.decode()
    served = re.search(r'<script id="audit-actions" type="application/json">(.*?)</script>', html)
    assert served is not None
    assert json.loads(served.group(1)) == list(audit.ACTIONS)
    # One list only: the script reads the page's, it keeps no copy that could drift.
    from pathlib import Path

    from django.conf import settings

    script = (Path(settings.BASE_DIR) / "static" / "js" / "audit.js").read_text()
    assert not [action for action in audit.ACTIONS if f'"{action}"' in script]


@pytest.mark.parametrize("lang", ["en", "de", "fr", "es", "ru", "zh"])
def test_every_kind_and_action_has_a_name_in_every_language(lang: str) -> None:
    from aiplane import i18n

    messages = i18n.catalog(lang).surfaces["audit"]
    words = [f"kind-{k}" for k in audit.KINDS] + [f"action-{a}" for a in audit.ACTIONS]
    wanted = {"audit-" + w.replace(".", "-").replace("_", "-") for w in words}
    assert wanted <= set(messages)
