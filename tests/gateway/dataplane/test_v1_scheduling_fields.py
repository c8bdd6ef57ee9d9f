"""Scheduling fields a client sends, end to end: nothing of them reaches an engine on any surface,
and what cannot be removed without changing the answer is refused by name.

The simulated engines record each request's body, so each test reads what an engine received.
"""

from __future__ import annotations

from typing import Any

import pytest

from aiplane.catalog import settings_update
from tests.support.drive import HTTP, engine_records, key_for
from tests.support.live import add_backend

HI = [{"role": "user", "content": "hi"}]

# What an attacker sent as a low-class caller: Dynamo's priority hint that moves its arrival
# earlier, a paid tier, pinned workers and slots, and the kin the engines' sources read.
SMUGGLED: dict[str, Any] = {
    "priority": -100,
    "service_tier": "priority",
    "speed": "fast",
    "extra_args": {"priority": 10, "ttft_target": 1.0},
    "routed_dp_rank": 1,
    "data_parallel_rank": 1,
    "disagg_prefill_dp_rank": 0,
    "id_slot": 0,
    "request_id": "someone-elses",
    "rid": "someone-elses",
    "keep_alive": -1,
    "nvext": {
        "agent_hints": {"latency_sensitivity": 1000.0, "osl": 1, "speculative_prefill": True},
        "backend_instance_id": 7,
        "decode_worker_id": 7,
        "prefill_worker_id": 7,
        "request_timestamp_ms": 0.0,
    },
}


def smuggled_in(body: dict[str, Any]) -> set[str]:
    """The smuggled fields an engine received, as paths (`nvext.<key>` for Dynamo's)."""
    found = {name for name in SMUGGLED if name != "nvext" and name in body}
    nvext = body.get("nvext")
    if nvext is not None:
        found |= {f"nvext.{key}" for key in (nvext if isinstance(nvext, dict) else {"": 0})}
    return found


@pytest.fixture
def low_key(transactional_db: None) -> str:
    settings_update(values={"gateway.priority_enabled": True})
    return key_for("mallory", "low")


def received(engine: Any) -> list[dict[str, Any]]:
    """The requests the engine received from callers: detection's probes send empty bodies."""
    return [record for record in engine_records(engine) if record["body"]]


def post(gateway: Any, path: str, body: dict[str, Any], headers: dict[str, str]) -> Any:
    return HTTP.post(gateway.url + path, json=body, headers=headers)


def bearer(key: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {key}"}


def anthropic(key: str) -> dict[str, str]:
    return {"x-api-key": key, "anthropic-version": "2023-06-01"}


OPENAI_SURFACES = [
    ("/v1/chat/completions", {"messages": HI}, "chat"),
    ("/v1/completions", {"prompt": "hi"}, "chat"),
    ("/v1/embeddings", {"input": "hi"}, "embedding"),
]


@pytest.mark.parametrize(("path", "fields", "kind"), OPENAI_SURFACES)
def test_no_scheduling_field_reaches_the_engine_on_the_openai_surfaces(
    gateway, make_sim, low_key, path, fields, kind
):
    engine = make_sim(token_delay=0)
    add_backend("plain", engine.url, kind=kind, priority={"mode": "gateway"})

    answer = post(gateway, path, {"model": "sim-small", **fields, **SMUGGLED}, bearer(low_key))

    assert answer.status_code == 200, answer.text
    (sent,) = received(engine)
    assert sent["path"] == path
    assert smuggled_in(sent["body"]) == set()


@pytest.mark.parametrize("auth", [anthropic, bearer], ids=["x-api-key", "bearer"])
def test_no_scheduling_field_reaches_a_native_messages_backend(gateway, make_sim, low_key, auth):
    native = make_sim(token_delay=0, messages=True)
    add_backend("native", native.url)
    body = {"model": "sim-small", "max_tokens": 8, "messages": HI, **SMUGGLED}

    answer = post(gateway, "/v1/messages", {**body, "service_tier": "auto"}, auth(low_key))

    assert answer.status_code == 200, answer.text
    (sent,) = received(native)
    assert sent["path"] == "/v1/messages"
    assert smuggled_in(sent["body"]) == set()
    assert "service_tier" not in sent["body"]


def test_no_scheduling_field_reaches_a_native_backend_that_counts_tokens(
    gateway, make_sim, low_key
):
    native = make_sim(token_delay=0, messages=True)
    add_backend("native", native.url)
    body = {"model": "sim-small", "messages": HI, **SMUGGLED}

    answer = post(gateway, "/v1/messages/count_tokens", body, anthropic(low_key))

    assert answer.status_code == 200, answer.text
    (sent,) = received(native)
    assert sent["path"] == "/v1/messages/count_tokens"
    assert smuggled_in(sent["body"]) == set()


def test_no_scheduling_field_reaches_a_native_responses_backend(gateway, make_sim, low_key):
    native = make_sim(token_delay=0, responses=True)
    add_backend("native", native.url)
    body = {"model": "sim-small", "input": "hi", "store": False, **SMUGGLED}

    answer = post(gateway, "/v1/responses", body, bearer(low_key))

    assert answer.status_code == 200, answer.text
    (sent,) = received(native)
    assert sent["path"] == "/v1/responses"
    assert smuggled_in(sent["body"]) == set()


@pytest.mark.parametrize(
    ("path", "body"),
    [
        ("/v1/messages", {"model": "sim-small", "max_tokens": 8, "messages": HI}),
        ("/v1/responses", {"model": "sim-small", "input": "hi", "store": False}),
    ],
)
def test_nor_does_any_reach_a_backend_the_request_is_translated_for(
    gateway, make_sim, low_key, path, body
):
    engine = make_sim(token_delay=0)  # serves chat completions only
    add_backend("plain", engine.url)

    answer = post(gateway, path, {**body, **SMUGGLED}, bearer(low_key))

    assert answer.status_code == 200, answer.text
    (sent,) = received(engine)
    assert sent["path"] == "/v1/chat/completions"
    assert smuggled_in(sent["body"]) == set()


def test_the_backends_own_mapping_alone_sets_the_engines_priority(gateway, make_sim, low_key):
    engine = make_sim(token_delay=0)
    mapping = {"field": "priority", "low": 1, "medium": 0, "high": -1}
    add_backend("mapped", engine.url, priority={"mode": "custom", "mapping": mapping})

    answer = post(
        gateway, "/v1/chat/completions", {"model": "sim-small", "messages": HI, **SMUGGLED},
        bearer(low_key),
    )  # fmt: skip

    assert answer.status_code == 200, answer.text
    (sent,) = received(engine)
    assert sent["body"]["priority"] == 1  # the low class's value, not the client's -100
    assert smuggled_in(sent["body"]) == {"priority"}


def test_the_documented_nvext_keys_still_pass(gateway, make_sim, low_key):
    engine = make_sim(token_delay=0)
    add_backend("plain", engine.url)
    nvext = {"greed_sampling": True, "agent_hints": {"priority": -100}, "backend_instance_id": 1}

    answer = post(
        gateway, "/v1/chat/completions", {"model": "sim-small", "messages": HI, "nvext": nvext},
        bearer(key_for("carol", "high")),
    )  # fmt: skip

    assert answer.status_code == 200, answer.text
    assert answer.headers["x-aiplane-class"] == "low"  # its priority hint was read
    (sent,) = received(engine)
    assert sent["body"]["nvext"] == {"greed_sampling": True}


# ----- refused: fields whose removal would change the answer ------------------------------------


REFUSED = {
    "kv_transfer_params": {"do_remote_prefill": True, "remote_host": "10.0.0.9"},
    "bootstrap_host": "10.0.0.9",
    "session_params": {"id": "someone-elses-session"},
    "inference_geo": "us",
    "custom_logit_processor": '{"callable": "gASV..."}',
}


@pytest.mark.parametrize(("name", "value"), REFUSED.items())
@pytest.mark.parametrize(
    ("path", "fields"),
    [
        ("/v1/chat/completions", {"messages": HI}),
        ("/v1/embeddings", {"input": "hi"}),
        ("/v1/responses", {"input": "hi"}),
    ],
)
def test_a_field_naming_another_engine_or_its_state_is_refused_by_name(
    gateway, make_sim, low_key, path, fields, name, value
):
    engine = make_sim(token_delay=0, responses=True)
    add_backend("plain", engine.url)
    add_backend("emb", engine.url, pool="embed", kind="embedding")

    answer = post(gateway, path, {"model": "sim-small", **fields, name: value}, bearer(low_key))

    assert answer.status_code == 400, answer.text
    error = answer.json()["error"]
    assert error["param"] == name
    assert error["message"].startswith(f"'{name}' is not accepted by this gateway (")
    assert received(engine) == []


@pytest.mark.parametrize("path", ["/v1/messages", "/v1/messages/count_tokens"])
def test_anthropics_surface_refuses_them_in_its_own_envelope(gateway, make_sim, low_key, path):
    native = make_sim(token_delay=0, messages=True)
    add_backend("native", native.url)
    body = {"model": "sim-small", "max_tokens": 8, "messages": HI, "session_id": "theirs"}

    answer = post(gateway, path, body, anthropic(low_key))

    assert answer.status_code == 400, answer.text
    assert answer.json()["error"]["type"] == "invalid_request_error"
    assert answer.json()["error"]["message"].startswith("session_id: not accepted")
    assert received(native) == []
