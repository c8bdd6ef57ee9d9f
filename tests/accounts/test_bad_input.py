"""Hostile input on every parse path of /api/v0 is a 4xx in the envelope and changes nothing."""

from __future__ import annotations

from typing import Any

import httpx
import pytest
from django.contrib.auth.models import User
from django.test import Client

from aiplane.models import OperatorSetting
from gateway.models import ActivityRecord, Backend, Pool
from tests.gateway.conftest import gateway
from tests.support.errors import envelope
from tests.support.factories import make_group

pytestmark = pytest.mark.django_db

JSON = "application/json"
TOO_DEEP = envelope(
    "JSON parse error - the body nests deeper than 32 levels",
    "invalid_request_error",
    "parse_error",
)
NOT_FOUND = envelope("Not found.", "not_found_error", "not_found")


def parse_error(reason: str) -> dict[str, Any]:
    return envelope(f"JSON parse error - {reason}", "invalid_request_error", "parse_error")


def bad_filter(message: str, param: str) -> dict[str, Any]:
    return envelope(message, "invalid_request_error", "invalid_filter", param)


def send(client: Client, method: str, path: str, body: str | bytes) -> Any:
    return client.generic(method, path, body, content_type=JSON)


# ----- the JSON parser ---------------------------------------------------------------------


@pytest.mark.parametrize(
    "body",
    [
        pytest.param("[" * 100_000, id="100k-brackets"),
        pytest.param('{"a":' * 100_000, id="100k-objects"),
        pytest.param("[" * 2_000_000, id="2MB-of-brackets"),
        pytest.param(
            '{"username": "alice", "password": ' + "[" * 5000 + "]" * 5000 + "}", id="deep-field"
        ),
    ],
)
def test_a_deeply_nested_body_is_a_400_even_signed_out_at_login(body: str) -> None:
    response = send(Client(), "POST", "/api/v0/session/login", body)
    assert response.status_code == 400
    assert response.json() == TOO_DEEP


WRITES = [
    ("PUT", "/api/v0/me"),
    ("POST", "/api/v0/tokens"),
    ("PUT", "/api/v0/admin/groups"),
    ("POST", "/api/v0/admin/users"),
    ("POST", "/api/v0/admin/settings"),
    ("PUT", "/api/v0/admin/backends"),
    ("PUT", "/api/v0/admin/pools"),
]


@pytest.mark.parametrize(("method", "path"), WRITES)
def test_every_view_refuses_a_deep_body_before_it_runs(
    carol_client: Client, method: str, path: str
) -> None:
    response = send(carol_client, method, path, "[" * 100_000)
    assert response.status_code == 400
    assert response.json() == TOO_DEEP


def test_the_depth_limit_is_exact(carol_client: Client) -> None:
    deep = "[" * 31 + '"de"' + "]" * 31  # the body's object is level 1
    at_limit = send(carol_client, "PUT", "/api/v0/me", '{"language": ' + deep + "}")
    assert at_limit.json()["error"]["code"] == "invalid"  # parsed; the field refuses a list
    beyond = send(carol_client, "PUT", "/api/v0/me", '{"language": [' + deep + "]}")
    assert beyond.json() == TOO_DEEP


@pytest.mark.parametrize(
    ("body", "error"),
    [
        pytest.param(
            '{"\\ud800": 1}', parse_error("a string holds an unpaired surrogate"), id="key"
        ),
        pytest.param(
            '{"gateway.scheduler": "\\udfff"}',
            parse_error("a string holds an unpaired surrogate"),
            id="value",
        ),
        pytest.param('{"a": NaN}', parse_error("NaN is not a JSON number"), id="nan"),
        pytest.param('{"a": -Infinity}', parse_error("-Infinity is not a JSON number"), id="inf"),
        pytest.param('{"a": 1e999}', parse_error("the number 1e999 is too large"), id="overflow"),
        pytest.param(
            '{"a": ' + "9" * 5000 + "}",
            parse_error("a number is too long (5000 characters)"),
            id="5000-digits",
        ),
        pytest.param(
            b'{"a": "\xed\xa0\x80"}',
            parse_error(
                "'utf-8' codec can't decode byte 0xed in position 7: invalid continuation byte"
            ),
            id="utf8-encoded-surrogate",
        ),
    ],
)
def test_json_that_is_not_i_json_is_a_parse_error_and_stores_nothing(
    carol_client: Client, body: str | bytes, error: dict[str, Any]
) -> None:
    response = send(carol_client, "POST", "/api/v0/admin/settings", body)
    assert response.status_code == 400
    assert response.json() == error
    assert not OperatorSetting.objects.exists()


def test_a_paired_surrogate_escape_is_one_character(carol_client: Client) -> None:
    response = send(
        carol_client,
        "PUT",
        "/api/v0/admin/groups",
        '{"name": "g", "description": "\\ud83d\\ude00"}',
    )
    assert response.status_code == 201, response.content
    assert response.json()["description"] == "\N{GRINNING FACE}"


def test_a_body_over_the_upload_limit_is_a_413(carol_client: Client, settings: Any) -> None:
    settings.DATA_UPLOAD_MAX_MEMORY_SIZE = 1000
    response = send(
        carol_client,
        "PUT",
        "/api/v0/admin/groups",
        '{"name": "g", "description": "' + "x" * 1000 + '"}',
    )
    assert response.status_code == 413
    assert response.json() == envelope(
        "The request body is too large.", "invalid_request_error", "request_too_large"
    )


# ----- headers -----------------------------------------------------------------------------


def test_a_host_this_server_does_not_answer_for_is_a_400_in_the_envelope() -> None:
    response = Client().get("/api/v0/me", HTTP_HOST="evil.example")
    assert response.status_code == 400
    assert response.json() == envelope(
        "This server does not answer for that Host.", "invalid_request_error", "invalid_request"
    )


def test_elsewhere_a_bad_host_keeps_djangos_page() -> None:
    response = Client().get("/login/", HTTP_HOST="evil.example")
    assert response.status_code == 400
    assert response["Content-Type"].startswith("text/html")


live = gateway  # the whole app on a loopback port, as it is served


def test_a_charset_that_is_no_text_encoding_never_breaks_a_request(live: Any) -> None:
    for charset in ("rot13", "zlib", "base64", "bz2_codec", "no-such-codec"):
        headers = {"Content-Type": f"application/json; charset={charset}"}
        for path in ("/api/v0/session/csrf?next=x", "/login/?next=x"):
            response = httpx.get(live.url + path, headers=headers)
            assert response.status_code == 200, (charset, path, response.text)
        response = httpx.put(live.url + "/api/v0/me?x=1", content=b"{}", headers=headers)
        assert response.status_code == 401, (charset, response.text)


# ----- path segments -----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("method", "path"),
    [
        ("DELETE", "/api/v0/admin/groups/%00"),
        ("DELETE", "/api/v0/admin/groups/a%00b"),
        ("DELETE", "/api/v0/admin/groups/" + "g" * 5000),
        ("DELETE", "/api/v0/admin/backends/%00"),
        ("POST", "/api/v0/admin/backends/%00/detect"),
        ("DELETE", "/api/v0/admin/pools/%00"),
        ("DELETE", "/api/v0/admin/pools/%E2%80%A8"),
    ],
)
def test_a_path_segment_that_cannot_be_a_name_is_a_404(
    carol_client: Client, method: str, path: str
) -> None:
    make_group("g")
    response = carol_client.generic(method, path)
    assert response.status_code == 404
    assert response.json() == NOT_FOUND


@pytest.mark.parametrize("token_id", ["99999999999999999999", "9" * 40])
def test_an_id_beyond_any_integer_column_is_a_404(carol_client: Client, token_id: str) -> None:
    response = carol_client.delete(f"/api/v0/tokens/{token_id}")
    assert response.status_code == 404
    assert response.json()["error"]["code"] == "token_not_found"


# ----- query parameters --------------------------------------------------------------------


@pytest.mark.parametrize(
    ("query", "error"),
    [
        ("page=%C2%B2", bad_filter("page must be from 1 to 1000000000.", "page")),
        ("page_size=%C2%B2", bad_filter("page_size must be from 1 to 500.", "page_size")),
        ("page=" + "1" * 5000, bad_filter("page must be from 1 to 1000000000.", "page")),
        ("since=2024-13-45T00:00:00", bad_filter("since must be an ISO 8601 time.", "since")),
        ("until=2024-02-30T10:00:00Z", bad_filter("until must be an ISO 8601 time.", "until")),
        ("since=9999-12-31T23:59:59-23:59", bad_filter("since must be an ISO 8601 time.", "since")),
        (
            "user=%00",
            bad_filter("user must be at most 200 characters, without control characters.", "user"),
        ),
        (
            "model=a%00b",
            bad_filter(
                "model must be at most 200 characters, without control characters.", "model"
            ),
        ),
        (
            "token=%00",
            bad_filter(
                "token must be at most 200 characters, without control characters.", "token"
            ),
        ),
        (
            "user=" + "u" * 201,
            bad_filter("user must be at most 200 characters, without control characters.", "user"),
        ),
    ],
)
def test_a_hostile_activity_filter_is_a_400(
    carol_client: Client, query: str, error: dict[str, Any]
) -> None:
    response = carol_client.get("/api/v0/admin/activity?" + query)
    assert response.status_code == 400
    assert response.json() == error


@pytest.mark.parametrize(
    ("query", "count"),
    [
        ("token=%C2%B2", 0),  # a superscript two is a name, not an id
        ("since=0001-01-02T00:00:00%2B23:59", 1),  # an offset PostgreSQL cannot store, in UTC
        ("until=2100-01-01T00:00:00", 1),  # a time without an offset is UTC
        ("page=1000000000&page_size=500", 0),
    ],
)
def test_an_unusual_but_valid_activity_filter_answers(
    carol_client: Client, query: str, count: int
) -> None:
    from django.utils import timezone

    ActivityRecord.objects.create(
        at=timezone.now(), model="m", priority_class="medium", outcome="immediate"
    )
    response = carol_client.get("/api/v0/admin/activity?" + query)
    assert response.status_code == 200, response.content
    assert len(response.json()["results"]) == count


# ----- bodies the database cannot store ----------------------------------------------------


def test_an_email_longer_than_its_column_is_a_400_and_creates_nobody(carol_client: Client) -> None:
    email = "a" * 64 + "@" + ".".join(["b" * 60] * 4) + ".com"  # valid, and 312 characters
    response = carol_client.post("/api/v0/admin/users", {"username": "dave", "email": email}, JSON)
    assert response.status_code == 400
    assert response.json() == envelope(
        "Ensure this field has no more than 254 characters.",
        "invalid_request_error",
        "max_length",
        "email",
    )
    assert not User.objects.filter(username="dave").exists()


def test_an_email_change_longer_than_its_column_is_a_400(carol_client: Client, alice: Any) -> None:
    email = "a" * 64 + "@" + ".".join(["b" * 60] * 4) + ".com"
    response = carol_client.put(f"/api/v0/admin/users/{alice.pk}", {"email": email}, JSON)
    assert response.status_code == 400
    assert response.json()["error"]["param"] == "email"
    alice.refresh_from_db()
    assert alice.email == "alice@example.com"


@pytest.mark.parametrize(
    "credentials",
    [
        {"username": "alice\x00", "password": "x"},
        {"username": "alice", "password": "pass\x00word"},
        {"username": "u" * 151, "password": "x"},
        {"username": "alice", "password": "p" * 4097},
    ],
)
def test_login_with_text_no_column_holds_is_a_400(alice: Any, credentials: dict[str, str]) -> None:
    response = Client().post("/api/v0/session/login", credentials, JSON)
    assert response.status_code == 400
    assert response.json()["error"]["param"] in ("username", "password")


def test_nothing_of_the_topology_is_stored_by_a_refused_body(carol_client: Client) -> None:
    for body in ('{"name": "b", "base_url": "http://h/v1", "models": ["\\ud800"]}', "[" * 50):
        assert send(carol_client, "PUT", "/api/v0/admin/backends", body).status_code == 400
        assert send(carol_client, "PUT", "/api/v0/admin/pools", body).status_code == 400
    assert not Backend.objects.exists()
    assert not Pool.objects.exists()
