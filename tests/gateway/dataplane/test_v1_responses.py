"""/v1/responses end to end with the official `openai` SDK's `client.responses`: the real app, a
simulated engine that serves only chat completions (so the stateless subset is translated), the
same admission and records as chat."""

from __future__ import annotations

import socket
from typing import Any

import openai
import pytest

from aiplane.catalog import settings_update
from gateway.models import ActivityRecord
from tests.support.drive import HTTP, engine_records, engine_stats, wait_until
from tests.support.factories import make_token_with_secret, make_user
from tests.support.live import add_backend


@pytest.fixture
def key(transactional_db: None) -> str:
    return make_token_with_secret(make_user("alice"), name="laptop")[1]


@pytest.fixture
def engine(make_sim: Any) -> Any:
    server = make_sim(tokens=3, token_delay=0)
    add_backend("solo", server.url)
    return server


def client(gateway: Any, key: str) -> openai.OpenAI:
    return openai.OpenAI(base_url=gateway.v1, api_key=key, max_retries=0)


def test_a_response_is_answered_through_translation_to_chat(gateway, engine, key):
    answer = client(gateway, key).responses.create(
        model="sim-small", instructions="Be brief.", input="hi there", store=False
    )

    assert answer.status == "completed"
    assert answer.output_text == "tok0 tok1 tok2 "
    assert answer.model == "sim-small"
    assert (answer.usage.input_tokens, answer.usage.output_tokens) == (4, 3)
    sent = engine_records(engine)[-1]
    assert sent["path"] == "/v1/chat/completions"
    assert sent["body"]["messages"][0] == {"role": "system", "content": "Be brief."}


def test_a_streamed_response_has_the_typed_events(gateway, engine, key):
    with client(gateway, key).responses.stream(model="sim-small", input="hi there") as stream:
        kinds = [event.type for event in stream]
        final = stream.get_final_response()

    assert kinds[:2] == ["response.created", "response.in_progress"]
    assert "response.output_text.delta" in kinds
    assert kinds[-1] == "response.completed"
    assert final.output_text == "tok0 tok1 tok2 "
    assert final.usage.output_tokens == 3


def test_state_a_translating_backend_cannot_keep_is_a_clear_400(gateway, engine, key):
    for extra, param in (
        ({"previous_response_id": "resp_123"}, "previous_response_id"),
        ({"store": True}, "store"),
    ):
        with pytest.raises(openai.BadRequestError) as refused:
            client(gateway, key).responses.create(model="sim-small", input="hi", **extra)
        error = refused.value.body
        assert error["param"] == param
        assert "keeps Responses state" in error["message"] or "stored" in error["message"]
    assert engine_records(engine) == []  # refused before it waited for a slot


def test_a_malformed_responses_body_is_a_400_in_the_openai_envelope(gateway, engine, key):
    r = HTTP.post(
        gateway.v1 + "/responses",
        json={"model": "sim-small", "input": 42},
        headers={"Authorization": f"Bearer {key}"},
    )
    assert r.status_code == 400, r.text
    assert set(r.json()["error"]) == {"message", "type", "param", "code"}
    assert r.json()["error"]["param"] == "input"


def test_a_response_leaves_a_record_naming_its_surface_and_usage(gateway, engine, key):
    client(gateway, key).responses.create(model="sim-small", input="hi there")

    wait_until(lambda: ActivityRecord.objects.exists(), "the record is written", 15)
    record = ActivityRecord.objects.get()
    assert (record.surface, record.path, record.outcome) == (
        "responses",
        "/v1/responses",
        "immediate",
    )
    assert (record.input_tokens, record.output_tokens) == (2, 3)


def test_a_client_that_leaves_a_streamed_response_frees_the_slot(gateway, make_sim, key):
    engine = make_sim(tokens=200, token_delay=0.02)
    add_backend("slow", engine.url, max_inflight=1)
    host, port = gateway.url.removeprefix("http://").split(":")
    body = b'{"model":"sim-small","stream":true,"input":"x"}'
    sock = socket.create_connection((host, int(port)))
    sock.sendall(
        b"POST /v1/responses HTTP/1.1\r\nHost: gw\r\nContent-Type: application/json\r\n"
        + f"Authorization: Bearer {key}\r\nContent-Length: {len(body)}\r\n\r\n".encode()
        + body
    )
    received = b""
    while b"response.output_text.delta" not in received:
        chunk = sock.recv(65536)
        assert chunk, received
        received += chunk
    sock.close()
    wait_until(lambda: gateway.runtime.slots["slow"].inflight == 0, "the slot is free")
    wait_until(lambda: engine_stats(engine)["cancelled"] == 1, "the engine saw the client leave")


def test_a_priority_header_lowers_a_responses_request_and_a_body_field_cannot_raise_it(
    gateway, engine, key
):
    settings_update(values={"gateway.priority_enabled": True})
    answer = HTTP.post(
        gateway.v1 + "/responses",
        json={"model": "sim-small", "input": "hi", "priority": 100, "nvext": {"priority": 9}},
        headers={"authorization": f"Bearer {key}", "x-aiplane-priority": "low"},
    )
    assert answer.status_code == 200, answer.text
    assert answer.headers["x-aiplane-class"] == "low"
    (sent,) = engine_records(engine)
    assert "priority" not in sent["body"] and "nvext" not in sent["body"]
