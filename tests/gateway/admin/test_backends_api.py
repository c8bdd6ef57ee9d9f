"""Administration of backends and pools: create or update by name, list, delete, apply live."""

from __future__ import annotations

import re
from typing import Any

import pytest
import yaml
from django.test import Client
from django.urls import URLPattern
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from accounts import urls as accounts_urls
from aiplane.catalog import settings_update
from gateway.admin import services
from gateway.admin import urls as gateway_urls
from gateway.admin.crypto import decrypt
from gateway.models import Backend, Pool
from tests.support.admin_api import BACKENDS, POOLS, invalid, pool_row, put, row
from tests.support.drive import HTTP, chat, engine_records, wait_until
from tests.support.errors import CSRF_MISSING, NOT_ADMIN, NOT_SIGNED_IN, envelope
from tests.support.factories import make_group, make_token_with_secret, make_user

KEY = "sk-backend-7f3a9c-do-not-leak"

GPU1 = {
    "name": "gpu1",
    "base_url": "http://10.0.0.5:8000/v1/",
    "api_key": KEY,
    "max_inflight": 8,
    "weight": 2,
    "enabled": True,
    "health_path": "/health",
    "models": ["llama-3-8b", "llama-3-8b"],
    "aliases": {"llama": "llama-3-8b"},
    "priority": {"mode": "gateway"},
}

CUSTOM = {"mode": "custom", "mapping": {"field": "priority", "low": 1, "medium": 0, "high": -1}}


@pytest.fixture
def gpu1(db: None) -> Backend:

    return services.backend_save(data=dict(GPU1))


# ----- backends: happy paths -------------------------------------------------------------------


@pytest.mark.django_db
def test_putting_a_new_name_creates_the_backend(carol_client: Client) -> None:
    response = put(carol_client, BACKENDS, GPU1)
    assert response.status_code == 200, response.content
    assert response.json() == {
        "name": "gpu1",
        "base_url": "http://10.0.0.5:8000/v1",
        "has_api_key": True,
        "max_inflight": 8,
        "weight": 2,
        "enabled": True,
        "health_path": "/health",
        "models": ["llama-3-8b"],
        "aliases": {"llama": "llama-3-8b"},
        "priority": {"mode": "gateway"},
        "profile": None,
        "discovered_models": [],
        "forwarding": "not forwarded: gateway-only mode",
        "pools": [],
        "healthy": None,
        "inflight": None,
        "surfaces": {"messages": "auto", "responses": "auto"},
        "serving": {"messages": "translated", "responses": "translated"},
        "store_responses": False,
        "capacity_floor": 1,
        "capacity_ceiling": 256,
        "capacity": None,
        "headroom": {},
    }
    assert Backend.objects.count() == 1


@pytest.mark.django_db
def test_a_new_backend_takes_the_documented_defaults(carol_client: Client) -> None:
    response = put(carol_client, BACKENDS, {"name": "plain", "base_url": "https://llm.example"})
    assert response.status_code == 200, response.content
    body = response.json()
    assert (body["max_inflight"], body["weight"], body["enabled"]) == (16, 1, True)
    assert (body["has_api_key"], body["priority"]) == (False, {"mode": "auto"})
    assert body["forwarding"] == "not forwarded: the backend has not been identified"


def test_a_backends_reserved_headroom_is_saved_shown_and_reaches_its_slot(
    carol_client: Client, gpu1: Backend
) -> None:
    response = put(carol_client, BACKENDS, {"name": "gpu1", "headroom": {"low": 2, "medium": 1}})
    assert response.status_code == 200, response.content
    assert response.json()["headroom"] == {"low": 2, "medium": 1}
    from gateway.admin.selectors import load_topology

    [spec] = [b for b in load_topology().backends if b.name == "gpu1"]
    assert spec.headroom == (2, 1, 0)
    cleared = put(carol_client, BACKENDS, {"name": "gpu1", "headroom": {"low": 0}}).json()
    assert cleared["headroom"] == {}


def test_putting_an_existing_name_updates_only_the_fields_sent(
    carol_client: Client, gpu1: Backend
) -> None:
    response = put(carol_client, BACKENDS, {"name": "gpu1", "max_inflight": 4, "enabled": False})
    assert response.status_code == 200, response.content
    body = response.json()
    assert (body["max_inflight"], body["enabled"]) == (4, False)
    assert (body["base_url"], body["weight"], body["has_api_key"]) == (
        "http://10.0.0.5:8000/v1",
        2,
        True,
    )
    assert Backend.objects.count() == 1
    assert decrypt(Backend.objects.get().api_key_encrypted) == KEY


def test_the_list_says_whether_a_key_is_set_and_never_the_key(
    carol_client: Client, gpu1: Backend
) -> None:
    put(carol_client, BACKENDS, {"name": "keyless", "base_url": "http://10.0.0.6:8000/v1"})
    response = carol_client.get(BACKENDS)
    assert response.status_code == 200
    listed = {b["name"]: b for b in response.json()["backends"]}
    assert list(listed) == ["gpu1", "keyless"]
    assert (listed["gpu1"]["has_api_key"], listed["keyless"]["has_api_key"]) == (True, False)
    assert not any("api_key" in b for b in listed.values())


def test_the_plaintext_key_appears_in_no_response_and_is_encrypted_at_rest(
    carol_client: Client,
) -> None:
    make_group("research")
    responses = [
        put(carol_client, BACKENDS, GPU1),
        put(carol_client, BACKENDS, {"name": "gpu1", "api_key": KEY, "weight": 3}),
        put(carol_client, POOLS, {"name": "chat", "backends": ["gpu1"]}),
        carol_client.get(BACKENDS),
        carol_client.get(POOLS),
        put(carol_client, BACKENDS, {**GPU1, "max_inflight": 0}),  # a refusal echoes nothing
    ]
    for response in responses:
        assert KEY.encode() not in response.content
        assert KEY[3:].encode() not in response.content
    stored = Backend.objects.get(name="gpu1").api_key_encrypted
    assert stored and KEY not in stored
    assert stored.startswith("gAAAAA")  # a Fernet token
    assert decrypt(stored) == KEY


def test_a_null_key_keeps_the_stored_key_and_an_empty_one_clears_it(
    carol_client: Client, gpu1: Backend
) -> None:
    before = Backend.objects.get().api_key_encrypted
    assert put(carol_client, BACKENDS, {"name": "gpu1", "api_key": None}).json()["has_api_key"]
    assert Backend.objects.get().api_key_encrypted == before
    cleared = put(carol_client, BACKENDS, {"name": "gpu1", "api_key": ""})
    assert cleared.json()["has_api_key"] is False
    assert Backend.objects.get().api_key_encrypted == ""


@pytest.mark.parametrize(
    ("mode", "forwarding"),
    [
        ({"mode": "auto"}, "not forwarded: the backend has not been identified"),
        ({"mode": "gateway"}, "not forwarded: gateway-only mode"),
        (CUSTOM, "forwarding priority as field 'priority' (manual: low=1, medium=0, high=-1)"),
    ],
)
def test_each_priority_mode_round_trips(
    carol_client: Client, gpu1: Backend, mode: dict[str, Any], forwarding: str
) -> None:
    saved = put(carol_client, BACKENDS, {"name": "gpu1", "priority": mode})
    assert saved.status_code == 200, saved.content
    assert (saved.json()["priority"], saved.json()["forwarding"]) == (mode, forwarding)
    listed = carol_client.get(BACKENDS).json()["backends"][0]
    assert (listed["priority"], listed["forwarding"]) == (mode, forwarding)
    assert Backend.objects.get().priority_mode == mode


def test_switching_away_from_custom_drops_the_mapping(carol_client: Client, gpu1: Backend) -> None:
    put(carol_client, BACKENDS, {"name": "gpu1", "priority": CUSTOM})
    back = put(carol_client, BACKENDS, {"name": "gpu1", "priority": {**CUSTOM, "mode": "auto"}})
    assert back.json()["priority"] == {"mode": "auto"}


def test_deleting_a_backend_removes_it_from_its_pools(carol_client: Client, gpu1: Backend) -> None:
    put(carol_client, POOLS, {"name": "chat", "backends": ["gpu1"]})
    response = carol_client.delete(f"{BACKENDS}/gpu1")
    assert response.status_code == 204
    assert not Backend.objects.exists()
    assert carol_client.get(POOLS).json()["pools"][0]["backends"] == []


# ----- backends: refusals change nothing -------------------------------------------------------


def protected(field: str) -> dict[str, Any]:
    return invalid(
        f"Priority field '{field}' would replace a protected request parameter.",
        "protected_priority_field",
        "priority.mapping.field",
    )


def not_an_int(name: str) -> dict[str, Any]:
    return invalid(
        f"Priority value for '{name}' must be an integer.",
        "invalid_priority_mapping",
        f"priority.mapping.{name}",
    )


def custom(**mapping: Any) -> dict[str, Any]:
    return {"mode": "custom", "mapping": {**CUSTOM["mapping"], **mapping}}


BAD_MODE = invalid(
    "Priority mode must be one of: auto, gateway, custom.", "invalid_priority_mode", "priority.mode"
)

BAD_URL = invalid("base_url must be an http:// or https:// URL.", "invalid_url", "base_url")

BAD_INFLIGHT = invalid(
    'max_inflight must be an integer from 1 to 100000, or "auto".',
    "invalid_value",
    "max_inflight",
)

REFUSED_BACKEND_CHANGES = [
    pytest.param({"priority": custom(field="messages")}, protected("messages"), id="messages"),
    pytest.param({"priority": custom(field="stream")}, protected("stream"), id="stream"),
    pytest.param({"priority": custom(field="max_tokens")}, protected("max_tokens"), id="max"),
    pytest.param({"priority": custom(field="model")}, protected("model"), id="model"),
    pytest.param({"priority": {"mode": "fastest"}}, BAD_MODE, id="unknown-mode"),
    pytest.param({"priority": {}}, BAD_MODE, id="no-mode"),
    pytest.param(
        {"priority": "auto"},
        invalid("Priority mode must be an object.", "invalid_priority_mode", "priority"),
        id="mode-not-an-object",
    ),
    pytest.param(
        {"priority": {"mode": "custom"}},
        invalid(
            "Custom priority mode needs a mapping object with field, low, medium and high.",
            "invalid_priority_mapping",
            "priority.mapping",
        ),
        id="custom-without-mapping",
    ),
    pytest.param({"priority": custom(low="1")}, not_an_int("low"), id="string-value"),
    pytest.param({"priority": custom(medium=0.5)}, not_an_int("medium"), id="float-value"),
    pytest.param({"priority": custom(high=True)}, not_an_int("high"), id="bool-value"),
    pytest.param({"priority": custom(high=None)}, not_an_int("high"), id="missing-value"),
    pytest.param(
        {"priority": custom(low=2**31)},
        invalid(
            "Priority value for 'low' must fit in a signed 32-bit integer.",
            "invalid_priority_mapping",
            "priority.mapping.low",
        ),
        id="value-beyond-int32",
    ),
    pytest.param({"base_url": "ftp://10.0.0.5/v1"}, BAD_URL, id="ftp-url"),
    pytest.param({"base_url": "10.0.0.5:8000"}, BAD_URL, id="no-scheme"),
    pytest.param({"base_url": 8000}, BAD_URL, id="url-not-a-string"),
    pytest.param({"max_inflight": 0}, BAD_INFLIGHT, id="zero-inflight"),
    pytest.param({"max_inflight": -1}, BAD_INFLIGHT, id="negative-inflight"),
    pytest.param({"max_inflight": 100_001}, BAD_INFLIGHT, id="huge-inflight"),
    pytest.param({"max_inflight": "8"}, BAD_INFLIGHT, id="string-inflight"),
    pytest.param({"max_inflight": True}, BAD_INFLIGHT, id="bool-inflight"),
    pytest.param(
        {"enabled": "yes"},
        invalid("enabled must be true or false.", "invalid_value", "enabled"),
        id="enabled-not-a-bool",
    ),
    pytest.param(
        {"api_key": 12345},
        invalid("api_key must be a string.", "invalid_value", "api_key"),
        id="key-not-a-string",
    ),
    pytest.param(
        {"models": ["ok", ""]},
        invalid("models must be a list of non-empty strings.", "invalid_value", "models"),
        id="empty-model-name",
    ),
    pytest.param(
        {"health_path": "health"},
        invalid(
            "health_path must start with '/' (or be empty to probe /models).",
            "invalid_value",
            "health_path",
        ),
        id="relative-health-path",
    ),
    pytest.param(
        {"headroom": {"high": 1}},
        invalid(
            "headroom: unknown class 'high'; there are low and medium.", "invalid_value", "headroom"
        ),
        id="headroom-for-high",
    ),
    pytest.param(
        {"headroom": {"low": -1}},
        invalid("headroom.low must be an integer from 0 to 1000.", "invalid_value", "headroom"),
        id="headroom-negative",
    ),
    pytest.param(
        {"headroom": {"low": 1, "medium": 2}},
        invalid(
            "headroom.low (1) must be at least headroom.medium (2): a lower class is kept from "
            "at least as many slots as a higher one.",
            "invalid_value",
            "headroom",
        ),
        id="headroom-not-nested",
    ),
    pytest.param(
        {"headroom": [2, 1]},
        invalid(
            'headroom must be an object of class: slots, e.g. {"low": 2}.',
            "invalid_value",
            "headroom",
        ),
        id="headroom-not-an-object",
    ),
]


def bad_url(message: str) -> dict[str, Any]:
    return invalid(message, "invalid_url", "base_url")


PRINTABLE_URL = bad_url(
    "base_url may contain only printable ASCII characters, without spaces or backslashes."
)

BAD_PORT = bad_url("base_url has an invalid port: use a number from 1 to 65535.")

BAD_HOST = bad_url("base_url has an invalid host name.")

NO_HOST = bad_url("base_url needs a host.")


def bad_entry(field: str, why: str) -> dict[str, Any]:
    return invalid(f"{field} entries {why}.", "invalid_value", field)


CONTROL = "may not contain control characters"

# Each of these was saved before, and then failed later: on PostgreSQL at once (a 500 from the
# database), on the request path (yarl, aiohttp or httpx refusing the URL or the header) or when
# the listing was rendered again.
UNUSABLE_BACKEND_CHANGES = [
    pytest.param({"base_url": "http://gpu 1:8000/v1"}, PRINTABLE_URL, id="space-in-host"),
    pytest.param({"base_url": "http://10.0.0.5:8000/v1 "}, PRINTABLE_URL, id="trailing-space"),
    pytest.param({"base_url": "http://10.0.0.5/v1\x00"}, PRINTABLE_URL, id="nul"),
    pytest.param({"base_url": "http://10.0.0.5/v1\r\nX-Evil: 1"}, PRINTABLE_URL, id="crlf"),
    pytest.param({"base_url": "http://bücher.example/v1"}, PRINTABLE_URL, id="non-ascii-host"),
    pytest.param({"base_url": "http://10.0.0.5\\v1"}, PRINTABLE_URL, id="backslash"),
    pytest.param({"base_url": "http://10.0.0.5:99999/v1"}, BAD_PORT, id="port-too-large"),
    pytest.param({"base_url": "http://10.0.0.5:0/v1"}, BAD_PORT, id="port-zero"),
    pytest.param({"base_url": "http://10.0.0.5:/v1"}, BAD_PORT, id="empty-port"),
    pytest.param({"base_url": "http://10.0.0.5:80x/v1"}, BAD_PORT, id="port-not-a-number"),
    pytest.param({"base_url": "http:///v1"}, NO_HOST, id="no-host"),
    pytest.param({"base_url": "https://"}, NO_HOST, id="nothing-after-the-scheme"),
    pytest.param({"base_url": "http://gpu..lab/v1"}, BAD_HOST, id="empty-label"),
    pytest.param({"base_url": "http://-gpu/v1"}, BAD_HOST, id="label-starts-with-dash"),
    pytest.param({"base_url": "http://" + "g" * 64 + ".lab/v1"}, BAD_HOST, id="label-too-long"),
    pytest.param({"base_url": "http://xn--/v1"}, BAD_HOST, id="empty-punycode"),
    pytest.param(
        {"base_url": "http://1.2.3.4.5/v1"},
        bad_url("base_url has an invalid IPv4 address."),
        id="five-octets",
    ),
    pytest.param(
        {"base_url": "http://010.0.0.5/v1"},
        bad_url("base_url has an invalid IPv4 address."),
        id="octal-looking-ipv4",
    ),
    pytest.param(
        {"base_url": "http://[::1/v1"},
        bad_url("base_url has an invalid IPv6 address."),
        id="unclosed-ipv6",
    ),
    pytest.param(
        {"base_url": "http://user:secret@10.0.0.5/v1"},
        bad_url("base_url may not hold a user name or password: use the API key."),
        id="userinfo",
    ),
    pytest.param(
        {"base_url": "http://10.0.0.5/v1?key=1"},
        bad_url("base_url may not have a query or a fragment."),
        id="query",
    ),
    pytest.param(
        {"base_url": "http://10.0.0.5/v1#top"},
        bad_url("base_url may not have a query or a fragment."),
        id="fragment",
    ),
    pytest.param(
        {"base_url": "http://10.0.0.5/v1%zz"},
        bad_url("base_url has an invalid path."),
        id="bad-escape",
    ),
    pytest.param(
        {"base_url": "http://10.0.0.5/<v1>"},
        bad_url("base_url has an invalid path."),
        id="angle-brackets",
    ),
    pytest.param(
        {"base_url": "http://10.0.0.5/" + "v" * 500},
        bad_url("base_url may be at most 500 characters."),
        id="longer-than-the-column",
    ),
    pytest.param({"models": ["llama\x00"]}, bad_entry("models", CONTROL), id="nul-in-model"),
    pytest.param(
        {"models": ["m" * 201]},
        bad_entry("models", "may be at most 200 characters"),
        id="model-too-long",
    ),
    pytest.param(
        {"models": [f"m{i}" for i in range(1001)]},
        invalid("models may have at most 1000 entries.", "invalid_value", "models"),
        id="too-many-models",
    ),
    pytest.param({"aliases": {"\x00": "llama-3-8b"}}, bad_entry("aliases", CONTROL), id="nul-key"),
    pytest.param({"aliases": {"llama": "x\n"}}, bad_entry("aliases", CONTROL), id="newline-value"),
    pytest.param(
        {"health_path": "/he alth"},
        invalid(
            "health_path must be at most 200 printable ASCII characters, without spaces.",
            "invalid_value",
            "health_path",
        ),
        id="space-in-health-path",
    ),
    pytest.param(
        {"health_path": "/health\x00"},
        invalid(
            "health_path must be at most 200 printable ASCII characters, without spaces.",
            "invalid_value",
            "health_path",
        ),
        id="nul-in-health-path",
    ),
    pytest.param(
        {"health_path": "/" + "h" * 200},
        invalid(
            "health_path must be at most 200 printable ASCII characters, without spaces.",
            "invalid_value",
            "health_path",
        ),
        id="health-path-longer-than-the-column",
    ),
    pytest.param(
        {"api_key": "sk-1\r\nX-Evil: 1"},
        invalid(
            "api_key must be at most 4096 printable ASCII characters, without spaces.",
            "invalid_value",
            "api_key",
        ),
        id="header-injection-in-key",
    ),
    pytest.param(
        {"api_key": "clé"},
        invalid(
            "api_key must be at most 4096 printable ASCII characters, without spaces.",
            "invalid_value",
            "api_key",
        ),
        id="non-ascii-key",
    ),
]


@pytest.mark.parametrize(("change", "error"), UNUSABLE_BACKEND_CHANGES)
def test_a_value_no_client_could_use_later_is_refused_when_saved(
    carol_client: Client, gpu1: Backend, change: dict[str, Any], error: dict[str, Any]
) -> None:
    before = row("gpu1")
    response = put(carol_client, BACKENDS, {"name": "gpu1", "weight": 7, **change})
    assert response.status_code == 400
    assert response.json() == error
    assert row("gpu1") == before
    assert carol_client.get(BACKENDS).status_code == 200


@pytest.mark.django_db
@pytest.mark.parametrize(("change", "error"), UNUSABLE_BACKEND_CHANGES[:6])
def test_a_new_backend_with_an_unusable_url_is_not_created(
    carol_client: Client, change: dict[str, Any], error: dict[str, Any]
) -> None:
    response = put(carol_client, BACKENDS, {**GPU1, **change})
    assert response.json() == error
    assert not Backend.objects.exists()


@pytest.mark.django_db
def test_a_new_backend_needs_a_base_url(carol_client: Client) -> None:
    response = put(carol_client, BACKENDS, {"name": "gpu1"})
    assert response.status_code == 400
    assert response.json() == bad_url("A new backend needs a base_url.")
    assert not Backend.objects.exists()


@pytest.mark.parametrize(
    ("url", "stored"),
    [
        ("http://10.0.0.5:8000/v1/", "http://10.0.0.5:8000/v1"),
        ("https://llm.example", "https://llm.example"),
        ("http://[::1]:8000/v1", "http://[::1]:8000/v1"),
        ("http://vllm_service:8000/v1", "http://vllm_service:8000/v1"),
        ("http://xn--bcher-kva.example/v1", "http://xn--bcher-kva.example/v1"),
        ("http://gpu.lab.:8000/openai/v1", "http://gpu.lab.:8000/openai/v1"),
        ("http://10.0.0.5/a%2Fb/v1", "http://10.0.0.5/a%2Fb/v1"),
    ],
)
def test_every_usual_form_of_base_url_is_kept(
    carol_client: Client, gpu1: Backend, url: str, stored: str
) -> None:
    response = put(carol_client, BACKENDS, {"name": "gpu1", "base_url": url})
    assert response.status_code == 200, response.content
    assert response.json()["base_url"] == stored


def test_a_refused_surrogate_leaves_the_listing_readable(
    carol_client: Client, gpu1: Backend
) -> None:
    # Stored once (SQLite took it), every later listing failed to render: a 500 for good.
    body = '{"name": "gpu1", "models": ["\\ud800"], "aliases": {"\\udfff": "x"}}'
    response = carol_client.generic("PUT", BACKENDS, body, content_type="application/json")
    assert response.status_code == 400
    assert response.json()["error"]["code"] == "parse_error"
    listed = carol_client.get(BACKENDS)
    assert listed.status_code == 200
    assert listed.json()["backends"][0]["models"] == ["llama-3-8b"]


@pytest.mark.parametrize(("change", "error"), REFUSED_BACKEND_CHANGES)
def test_a_refused_backend_change_answers_the_envelope_and_changes_nothing(
    carol_client: Client, gpu1: Backend, change: dict[str, Any], error: dict[str, Any]
) -> None:
    before = row("gpu1")
    response = put(carol_client, BACKENDS, {"name": "gpu1", "api_key": "another-key", **change})
    assert response.status_code == 400
    assert response.json() == error
    assert row("gpu1") == before


@pytest.mark.parametrize(("change", "error"), REFUSED_BACKEND_CHANGES[:3])
def test_a_refused_new_backend_is_not_created(
    carol_client: Client, change: dict[str, Any], error: dict[str, Any]
) -> None:
    response = put(carol_client, BACKENDS, {**GPU1, **change})
    assert response.json() == error
    assert not Backend.objects.exists()


@pytest.mark.django_db
@pytest.mark.parametrize("name", ["", "-starts-with-dash", "has space", "x" * 101, None, 7])
def test_a_bad_backend_name_is_refused(carol_client: Client, name: Any) -> None:
    response = put(carol_client, BACKENDS, {**GPU1, "name": name})
    assert response.status_code == 400
    assert response.json() == invalid(
        "A name uses letters, digits, '-', '_' or '.', and starts with a letter or digit.",
        "invalid_name",
        "name",
    )
    assert not Backend.objects.exists()


@pytest.mark.django_db
def test_a_body_that_is_not_an_object_is_refused(carol_client: Client) -> None:
    response = put(carol_client, BACKENDS, ["gpu1"])
    assert response.status_code == 400
    assert response.json() == invalid("Send a JSON object.", "invalid_request")


@pytest.mark.django_db
def test_deleting_an_unknown_backend_is_a_404(carol_client: Client) -> None:
    response = carol_client.delete(f"{BACKENDS}/ghost")
    assert response.status_code == 404
    assert response.json() == envelope(
        "No backend named 'ghost'.", "not_found_error", "backend_not_found"
    )


@pytest.mark.django_db
def test_detecting_an_unknown_backend_is_a_404(carol_client: Client) -> None:
    response = carol_client.post(f"{BACKENDS}/ghost/detect")
    assert response.status_code == 404
    assert response.json() == envelope(
        "No backend named 'ghost'.", "not_found_error", "backend_not_found"
    )


# ----- the base URL rule, against the clients that use it --------------------------------------

URL_PARTS = st.builds(
    "{}://{}{}{}{}".format,
    st.sampled_from(["http", "https", "HTTP", "ftp", "http:"]),
    st.sampled_from(["", "", "", "user@", "u:p@"]),
    st.one_of(
        st.from_regex(r"[a-z0-9._-]{0,20}", fullmatch=True),
        st.sampled_from(["[::1]", "[fe80::1%25lo]", "[::1", "127.0.0.1", "1.2.3", "[zz]"]),
        st.text(max_size=8),
    ),
    st.one_of(st.just(""), st.from_regex(r":[0-9]{0,6}", fullmatch=True), st.text(max_size=4)),
    st.one_of(st.from_regex(r"(/[A-Za-z0-9%._~?#:@!-]{0,8}){0,3}", fullmatch=True), st.text()),
)


def _clients_accept(url: str) -> None:
    """What the gateway does with a stored base URL, short of connecting."""
    import asyncio

    import aiohttp
    import httpx
    from yarl import URL

    from gateway.engines.detection import engine_root
    from gateway.engines.health import health_url

    for full in (url + "/chat/completions", health_url(url, "/health"), engine_root(url)):
        target = URL(full)
        assert target.host and 1 <= (target.port or 0) <= 65535
        if not target.raw_host.replace(".", "").isdigit() and ":" not in target.raw_host:
            target.raw_host.encode("idna")  # what the resolver does before getaddrinfo
        httpx.Request("GET", full)

    async def prepare() -> None:
        aiohttp.ClientRequest(
            "POST", URL(url + "/chat/completions"), loop=asyncio.get_running_loop()
        )

    asyncio.run(prepare())


@settings(max_examples=300, deadline=None, suppress_health_check=list(HealthCheck))
@given(st.one_of(URL_PARTS, st.text()))
def test_a_base_url_is_refused_or_every_client_of_the_gateway_takes_it(url: str) -> None:
    from gateway.engines.base_url import BadBaseUrl, check_base_url

    try:
        stored = check_base_url(url)
    except BadBaseUrl:
        return
    _clients_accept(stored)


# ----- pools -----------------------------------------------------------------------------------


def test_putting_a_pool_creates_then_updates_it_by_name(
    carol_client: Client, gpu1: Backend
) -> None:
    make_group("research")
    put(carol_client, BACKENDS, {"name": "gpu2", "base_url": "http://10.0.0.7:8000/v1"})
    put(carol_client, POOLS, {"name": "spare"})
    created = put(
        carol_client,
        POOLS,
        {
            "name": "chat",
            "kind": "chat",
            "strategy": "prefix_affinity",
            "allowed_groups": ["research"],
            "fallback": "spare",
            "backends": ["gpu2", "gpu1"],
        },
    )
    assert created.status_code == 200, created.content
    assert created.json() == {
        "name": "chat",
        "kind": "chat",
        "strategy": "prefix_affinity",
        "everyone": False,
        "allowed_groups": ["research"],
        "fallback": "spare",
        "backends": ["gpu1", "gpu2"],
    }
    updated = put(
        carol_client, POOLS, {"name": "chat", "strategy": "round_robin", "fallback": None}
    )
    assert updated.json() == {**created.json(), "strategy": "round_robin", "fallback": None}
    assert Pool.objects.count() == 2
    listed = carol_client.get(POOLS).json()["pools"]
    assert [p["name"] for p in listed] == ["chat", "spare"]
    assert listed[0] == updated.json()
    assert carol_client.get(BACKENDS).json()["backends"][0]["pools"] == ["chat"]


REFUSED_POOL_CHANGES = [
    pytest.param(
        {"backends": ["gpu1", "ghost"]},
        invalid("Unknown backend: ghost.", "unknown_backend", "backends"),
        id="unknown-backend",
    ),
    pytest.param(
        {"allowed_groups": ["nobody"]},
        invalid("Unknown group: nobody.", "unknown_group", "allowed_groups"),
        id="unknown-group",
    ),
    pytest.param(
        {"fallback": "ghost"},
        invalid("No other pool named 'ghost'.", "unknown_pool", "fallback"),
        id="unknown-fallback",
    ),
    pytest.param(
        {"fallback": "chat"},
        invalid("No other pool named 'chat'.", "unknown_pool", "fallback"),
        id="itself-as-fallback",
    ),
    pytest.param(
        {"kind": "image"},
        invalid("kind must be one of: chat, embedding.", "invalid_value", "kind"),
        id="unknown-kind",
    ),
    pytest.param(
        {"strategy": "fastest"},
        invalid(
            "strategy must be one of: least_inflight, round_robin, prefix_affinity.",
            "invalid_value",
            "strategy",
        ),
        id="unknown-strategy",
    ),
    pytest.param(
        {"fallback": "\x00"},
        invalid("No other pool named '\x00'.", "unknown_pool", "fallback"),
        id="nul-fallback",
    ),
    pytest.param(
        {"fallback": ["spare"]},
        invalid("fallback must be a pool name or null.", "invalid_value", "fallback"),
        id="fallback-not-a-string",
    ),
    pytest.param(
        {"backends": ["gpu1\x00"]},
        invalid(
            "backends entries may not contain control characters.", "invalid_value", "backends"
        ),
        id="nul-backend",
    ),
    pytest.param(
        {"backends": ["-not-a-name"]},
        invalid("Unknown backend: -not-a-name.", "unknown_backend", "backends"),
        id="backend-that-is-no-name",
    ),
    pytest.param(
        {"allowed_groups": ["g" * 201]},
        invalid(
            "allowed_groups entries may be at most 200 characters.",
            "invalid_value",
            "allowed_groups",
        ),
        id="group-longer-than-any",
    ),
    pytest.param(
        {"kind": ["chat"]},
        invalid("kind must be one of: chat, embedding.", "invalid_value", "kind"),
        id="kind-not-a-string",
    ),
]


@pytest.mark.parametrize(("change", "error"), REFUSED_POOL_CHANGES)
def test_a_refused_pool_change_answers_the_envelope_and_changes_nothing(
    carol_client: Client, gpu1: Backend, change: dict[str, Any], error: dict[str, Any]
) -> None:
    put(carol_client, BACKENDS, {"name": "gpu2", "base_url": "http://10.0.0.7:8000/v1"})
    put(carol_client, POOLS, {"name": "chat", "backends": ["gpu1"], "strategy": "round_robin"})
    before = pool_row("chat")
    # Valid fields sent beside the bad one must not be saved either.
    payload = {"name": "chat", "backends": ["gpu2"], "strategy": "least_inflight", **change}
    response = put(carol_client, POOLS, payload)
    assert response.status_code == 400
    assert response.json() == error
    assert pool_row("chat") == before


@pytest.mark.django_db
def test_a_refused_new_pool_is_not_created(carol_client: Client) -> None:
    response = put(carol_client, POOLS, {"name": "chat", "backends": ["ghost"]})
    assert response.json() == invalid("Unknown backend: ghost.", "unknown_backend", "backends")
    assert not Pool.objects.exists()


@pytest.mark.django_db
def test_deleting_pools_known_and_unknown(carol_client: Client) -> None:
    put(carol_client, POOLS, {"name": "chat"})
    assert carol_client.delete(f"{POOLS}/chat").status_code == 204
    assert not Pool.objects.exists()
    response = carol_client.delete(f"{POOLS}/chat")
    assert response.status_code == 404
    assert response.json() == envelope("No pool named 'chat'.", "not_found_error", "pool_not_found")


# ----- who may ---------------------------------------------------------------------------------

ENDPOINTS = [
    ("get", BACKENDS),
    ("put", BACKENDS),
    ("delete", f"{BACKENDS}/gpu1"),
    ("post", f"{BACKENDS}/gpu1/detect"),
    ("get", POOLS),
    ("put", POOLS),
    ("delete", f"{POOLS}/chat"),
]


@pytest.mark.parametrize(("method", "path"), ENDPOINTS)
def test_nobody_signed_in_gets_401_and_nothing_changes(
    anonymous: Client, gpu1: Backend, method: str, path: str
) -> None:
    before = row("gpu1")
    response = getattr(anonymous, method)(path, GPU1, content_type="application/json")
    assert response.status_code == 401
    assert response.json() == NOT_SIGNED_IN
    assert row("gpu1") == before


@pytest.mark.parametrize(("method", "path"), ENDPOINTS)
def test_a_non_administrator_gets_403_and_nothing_changes(
    alice_client: Client, gpu1: Backend, method: str, path: str
) -> None:
    before = row("gpu1")
    response = getattr(alice_client, method)(path, GPU1, content_type="application/json")
    assert response.status_code == 403
    assert response.json() == NOT_ADMIN
    assert row("gpu1") == before


def test_a_session_write_needs_the_csrf_token(carol: Any, login: Any, gpu1: Backend) -> None:
    browser = login(carol, csrf=True)
    assert browser.get("/api/v0/session/csrf").status_code == 200
    before = row("gpu1")
    for method, path in [("put", BACKENDS), ("put", POOLS), ("delete", f"{BACKENDS}/gpu1")]:
        refused = getattr(browser, method)(path, GPU1, content_type="application/json")
        assert refused.status_code == 403
        assert refused.json() == CSRF_MISSING
    assert row("gpu1") == before
    assert not Pool.objects.exists()

    token = {"HTTP_X_CSRFTOKEN": browser.cookies["csrftoken"].value}
    accepted = put(browser, BACKENDS, {"name": "gpu1", "weight": 5}, **token)
    assert accepted.status_code == 200, accepted.content
    assert accepted.json()["weight"] == 5
    assert browser.get(BACKENDS).status_code == 200  # reads need no token


# ----- applying to a running gateway ---------------------------------------------------------


def test_a_change_through_the_api_reaches_the_running_gateway_without_a_restart(
    gateway: Any, make_sim: Any, carol: Any, login: Any
) -> None:
    engine = make_sim(tokens=2, token_delay=0, api_key="engine-key")
    admin = login(carol)
    key = make_token_with_secret(make_user("alice"), name="laptop")[1]
    settings_update(values={"gateway.upstream_wait_secs": 1})

    before = chat(gateway, key)
    assert before.status_code == 404, before.text
    backend = {"name": "sim1", "base_url": engine.url + "/v1", "api_key": "engine-key"}
    assert put(admin, BACKENDS, {**backend, "models": ["sim-small"]}).status_code == 200
    assert put(admin, POOLS, {"name": "default", "backends": ["sim1"]}).status_code == 200

    served = chat(gateway, key)
    assert served.status_code == 200, served.text
    assert served.headers["x-aiplane-backend"] == "sim1"
    # The slot goes on once the engine connection is closed, a moment after the answer's end.
    wait_until(lambda: admin.get(BACKENDS).json()["backends"][0]["inflight"] == 0, "released")
    listed = admin.get(BACKENDS).json()["backends"][0]
    assert (listed["healthy"], listed["inflight"]) == (True, 0)

    assert put(admin, BACKENDS, {"name": "sim1", "enabled": False}).status_code == 200
    refused = chat(gateway, key)
    # Nothing could serve it: refused at once instead of waiting out the budget.
    assert refused.status_code == 503, refused.text
    assert refused.headers["retry-after"] == "5"
    assert refused.json() == {
        "error": {
            "message": "No healthy backend serves 'sim-small' right now (all are down or "
            "disabled); try again later.",
            "type": "api_error",
            "param": None,
            "code": "no_healthy_backend",
        }
    }

    assert put(admin, BACKENDS, {"name": "sim1", "enabled": True}).status_code == 200
    resumed = chat(gateway, key)
    assert resumed.status_code == 200, resumed.text
    assert resumed.headers["x-aiplane-backend"] == "sim1"


def test_a_backend_is_identified_when_it_is_saved_so_auto_mode_forwards_from_its_first_request(
    gateway: Any, make_sim: Any, carol: Any, login: Any
) -> None:
    engine = make_sim(server_info="sglang", priority_scheduling=True, sglang_schedule_policy="fcfs")
    admin = login(carol)
    key = make_token_with_secret(make_user("alice"), name="laptop")[1]
    settings_update(values={"gateway.priority_enabled": True})

    put(admin, BACKENDS, {"name": "sg", "base_url": engine.url + "/v1"})
    put(admin, POOLS, {"name": "default", "backends": ["sg"]})

    saved = admin.get(BACKENDS).json()["backends"][0]
    assert saved["forwarding"] == "forwarding priority as field 'priority' (larger first)"
    assert saved["discovered_models"] == ["sim-small", "sim-large"]
    assert chat(gateway, key).status_code == 200
    assert engine_records(engine)[-1]["body"]["priority"] == 1  # medium, SGLang's direction


def test_detection_through_the_api_explains_what_auto_mode_will_forward(
    gateway: Any, make_sim: Any, carol: Any, login: Any
) -> None:
    engine = make_sim(server_info="sglang", priority_scheduling=True, sglang_schedule_policy="fcfs")
    admin = login(carol)
    put(admin, BACKENDS, {"name": "sg", "base_url": engine.url + "/v1"})
    put(admin, POOLS, {"name": "default", "backends": ["sg"]})
    # The engine is restarted with low values first: detecting again says so.
    HTTP.post(engine.url + "/sim/config", json={"sglang_low_first": True}).raise_for_status()

    response = admin.post(f"{BACKENDS}/sg/detect")
    assert response.status_code == 200, response.content
    body = response.json()
    profile = {k: v for k, v in body["profile"].items() if k not in ("version", "detected_at")}
    assert profile == {
        "kind": "sglang",
        "priority_scheduling": True,
        "schedule_policy": "fcfs",
        "low_values_first": True,
        "messages": False,
        "responses": False,
    }
    assert body["discovered_models"] == ["sim-small", "sim-large"]
    assert body["forwarding"] == "forwarding priority as field 'priority' (smaller first)"
    mapping = gateway.runtime.snapshot.upstreams["sg"].mapping
    assert (mapping.field, mapping.values) == ("priority", (2, 1, 0))


# ----- the OpenAPI document --------------------------------------------------------------------

METHODS = ("get", "post", "put", "patch", "delete")


def routed() -> dict[str, set[str]]:
    """Every /api/v0 route of accounts and gateway with the HTTP methods its view implements."""
    routes: dict[str, set[str]] = {}
    for module in (accounts_urls, gateway_urls):
        for pattern in module.urlpatterns:
            assert isinstance(pattern, URLPattern)
            view_class = pattern.callback.view_class  # type: ignore[attr-defined]
            path = "/api/v0/" + re.sub(r"<(?:\w+:)?(\w+)>", r"{\1}", str(pattern.pattern))
            routes[path] = {m for m in METHODS if hasattr(view_class, m)}
    return routes


@pytest.mark.django_db
def test_the_openapi_document_lists_exactly_the_routes_of_both_apps() -> None:
    response = Client().get("/api/v0/openapi.json", HTTP_ACCEPT="application/json")
    assert response.status_code == 200
    schema = yaml.safe_load(response.content)  # JSON is YAML, so either rendering parses
    documented = {
        path: {m for m in operations if m in METHODS}
        for path, operations in schema["paths"].items()
    }
    assert documented == routed()


@pytest.mark.django_db
def test_the_openapi_document_describes_backend_and_pool_bodies() -> None:
    response = Client().get("/api/v0/openapi.json", HTTP_ACCEPT="application/json")
    schema = yaml.safe_load(response.content)

    def ref(node: dict[str, Any]) -> str:
        return str(node["content"]["application/json"]["schema"]["$ref"]).rsplit("/", 1)[-1]

    backends, pools = schema["paths"][BACKENDS], schema["paths"][POOLS]
    assert ref(backends["put"]["requestBody"]) == "BackendIn"
    assert ref(backends["put"]["responses"]["200"]) == "BackendOut"
    assert ref(backends["get"]["responses"]["200"]) == "BackendListOut"
    assert ref(pools["put"]["requestBody"]) == "PoolIn"
    assert ref(pools["put"]["responses"]["200"]) == "PoolOut"
    components = schema["components"]["schemas"]
    assert set(components["BackendIn"]["properties"]) == {
        *GPU1,
        "surfaces",
        "store_responses",
        "pools",
        "capacity_floor",
        "capacity_ceiling",
        "headroom",
    }
    assert components["BackendIn"]["required"] == ["name"]
    assert "api_key" not in components["BackendOut"]["properties"]
    assert set(components["PoolIn"]["properties"]) == {
        "name", "kind", "strategy", "everyone", "allowed_groups", "fallback", "backends",
    }  # fmt: skip
    activity = schema["paths"]["/api/v0/admin/activity"]["get"]
    assert {p["name"] for p in activity["parameters"]} == {
        "user", "token", "model", "class", "outcome", "since", "until", "page", "page_size",
    }  # fmt: skip


def test_how_each_surface_is_served_is_shown_and_can_be_set_per_backend(
    gateway: Any, make_sim: Any, carol: Any, login: Any
) -> None:
    engine = make_sim(messages=True)  # serves /v1/messages itself, not /v1/responses
    admin = login(carol)
    put(admin, BACKENDS, {"name": "sim", "base_url": engine.url + "/v1"})

    shown = admin.get(BACKENDS).json()["backends"][0]
    assert shown["surfaces"] == {"messages": "auto", "responses": "auto"}
    assert shown["serving"] == {"messages": "native", "responses": "translated"}

    changed = put(admin, BACKENDS, {"name": "sim", "surfaces": {"messages": "translate"}})
    assert changed.status_code == 200, changed.content
    assert changed.json()["serving"] == {"messages": "translated", "responses": "translated"}
    assert Backend.objects.get(name="sim").surfaces == {"messages": "translate"}

    refused = put(admin, BACKENDS, {"name": "sim", "surfaces": {"messages": "sometimes"}})
    assert refused.status_code == 400
    assert refused.json()["error"]["param"] == "surfaces"
    assert Backend.objects.get(name="sim").surfaces == {"messages": "translate"}
