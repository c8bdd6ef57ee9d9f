"""/v1/messages end to end with the official `anthropic` SDK: the real app, a simulated engine
that serves only chat completions (so every request is translated), the same admission and
records as chat."""

from __future__ import annotations

import socket
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import anthropic
import httpx
import pytest

from aiplane.catalog import settings_update
from gateway.admin import services
from gateway.models import ActivityRecord
from tests.support.drive import (
    HTTP,
    chat,
    configure,
    engine_records,
    engine_stats,
    labels_seen,
    wait_until,
)
from tests.support.factories import make_group, make_token_with_secret, make_user
from tests.support.live import add_backend

HI = [{"role": "user", "content": "hi there"}]


@pytest.fixture
def key(transactional_db: None) -> str:
    return make_token_with_secret(make_user("alice"), name="laptop")[1]


def client(gateway: Any, key: str, **options: Any) -> anthropic.Anthropic:
    # Claude Code's ANTHROPIC_BASE_URL is the gateway's root; its key goes as x-api-key.
    return anthropic.Anthropic(base_url=gateway.url, api_key=key, max_retries=0, **options)


@pytest.fixture
def engine(make_sim: Any) -> Any:
    server = make_sim(tokens=3, token_delay=0)
    add_backend("solo", server.url)
    return server


def test_a_message_is_answered_through_translation_to_chat(gateway, engine, key):
    answer = client(gateway, key).messages.create(
        model="sim-small", max_tokens=64, system="Be brief.", messages=HI
    )

    assert [block.type for block in answer.content] == ["text"]
    assert answer.content[0].text == "tok0 tok1 tok2 "
    assert (answer.model, answer.stop_reason, answer.role) == ("sim-small", "end_turn", "assistant")
    assert (answer.usage.input_tokens, answer.usage.output_tokens) == (4, 3)
    sent = engine_records(engine)[-1]
    assert sent["path"] == "/v1/chat/completions"
    assert sent["body"]["messages"][0] == {"role": "system", "content": "Be brief."}


def test_the_key_may_come_as_a_bearer_token_too(gateway, engine, key):
    # ANTHROPIC_AUTH_TOKEN: Authorization: Bearer.
    bearer = anthropic.Anthropic(base_url=gateway.url, auth_token=key, max_retries=0)
    answer = bearer.messages.create(model="sim-small", max_tokens=8, messages=HI)
    assert answer.content[0].text.startswith("tok0")


def test_a_streamed_message_has_anthropics_event_sequence(gateway, engine, key):
    with client(gateway, key).messages.stream(
        model="sim-small", max_tokens=64, messages=HI
    ) as stream:
        kinds = [event.type for event in stream]
        final = stream.get_final_message()

    assert kinds[0] == "message_start"
    assert kinds[-1] == "message_stop"
    assert "content_block_start" in kinds and "content_block_stop" in kinds
    assert "message_delta" in kinds
    assert final.content[0].text == "tok0 tok1 tok2 "
    assert final.stop_reason == "end_turn"
    assert final.usage.output_tokens == 3
    assert engine_records(engine)[-1]["body"]["stream_options"] == {"include_usage": True}


def test_max_tokens_and_stop_reasons_reach_the_client(gateway, engine, key):
    answer = client(gateway, key).messages.create(model="sim-small", max_tokens=2, messages=HI)
    assert (answer.stop_reason, answer.usage.output_tokens) == ("max_tokens", 2)
    assert engine_records(engine)[-1]["body"]["max_tokens"] == 2


def test_errors_come_in_anthropics_envelope_with_its_types(gateway, engine, key):
    anthropic_client = client(gateway, key)
    with pytest.raises(anthropic.BadRequestError) as bad:
        anthropic_client.messages.create(model="sim-small", max_tokens=0, messages=HI)
    assert bad.value.body["type"] == "error"
    assert bad.value.body["error"]["type"] == "invalid_request_error"
    assert "max_tokens" in bad.value.body["error"]["message"]

    with pytest.raises(anthropic.NotFoundError) as missing:
        anthropic_client.messages.create(model="nope", max_tokens=8, messages=HI)
    assert missing.value.body["error"]["type"] == "not_found_error"

    with pytest.raises(anthropic.AuthenticationError) as unknown:
        client(gateway, "gwk_" + "0" * 64).messages.create(
            model="sim-small", max_tokens=8, messages=HI
        )
    assert unknown.value.body["error"]["type"] == "authentication_error"


def test_a_model_the_caller_may_not_use_is_a_permission_error(gateway, make_sim, key):
    make_group("research")
    add_backend("closed", make_sim().url, pool="closed", models=["sim-large"],
                allowed_groups=["research"])  # fmt: skip
    with pytest.raises(anthropic.PermissionDeniedError) as denied:
        client(gateway, key).messages.create(model="sim-large", max_tokens=8, messages=HI)
    assert denied.value.body["error"]["type"] == "permission_error"


def test_when_the_wait_budget_runs_out_the_answer_is_529_overloaded_with_retry_after(
    gateway, make_sim, key
):
    gated = make_sim(slots=0, tokens=1, token_delay=0)
    add_backend("solo", gated.url, max_inflight=1)
    settings_update(values={"gateway.upstream_wait_secs": 1})
    with ThreadPoolExecutor(max_workers=1) as pool:
        blocker = pool.submit(chat, gateway, key, "blocker")
        wait_until(lambda: engine_stats(gated)["waiting"] == 1, "the blocker holds the slot")
        r = HTTP.post(
            gateway.url + "/v1/messages",
            json={"model": "sim-small", "max_tokens": 8, "messages": HI},
            headers={"x-api-key": key, "anthropic-version": "2023-06-01"},
        )
        configure(gated, slots=1)
        assert blocker.result().status_code == 200
    assert r.status_code == 529, r.text
    assert r.headers["retry-after"] == "1"
    assert r.json() == {
        "type": "error",
        "error": {
            "type": "overloaded_error",
            "message": "No capacity for 'sim-small' within 1 seconds; try again later.",
        },
    }


def test_a_high_class_message_overtakes_queued_low_chat_requests(gateway, make_sim):
    settings_update(values={"gateway.priority_enabled": True})
    gated = make_sim(slots=0, tokens=1, token_delay=0)
    add_backend("solo", gated.url, max_inflight=1)
    low, high = make_user("lou"), make_user("hal")
    make_group("batch", priority="low", members=[low])
    make_group("interactive", priority="high", members=[high])
    low_key = make_token_with_secret(low, name="batch")[1]
    high_key = make_token_with_secret(high, name="agent")[1]
    with ThreadPoolExecutor(max_workers=4) as pool:
        futures = [pool.submit(chat, gateway, low_key, "blocker")]
        wait_until(lambda: engine_stats(gated)["waiting"] == 1, "the blocker holds the slot")
        for n, label in enumerate(("low-1", "low-2"), 1):
            futures.append(pool.submit(chat, gateway, low_key, label))
            wait_until(lambda n=n: gateway.runtime.queue.waiting == n, f"{label} waits")
        message = pool.submit(
            HTTP.post,
            gateway.url + "/v1/messages",
            json={"model": "sim-small", "max_tokens": 8,
                  "messages": [{"role": "user", "content": "agent"}]},
            headers={"x-api-key": high_key},
        )  # fmt: skip
        wait_until(lambda: gateway.runtime.queue.waiting == 3, "the message waits")
        configure(gated, slots=1)
        assert message.result().status_code == 200
        assert all(f.result().status_code == 200 for f in futures)
    assert labels_seen(gated) == ["blocker", "agent", "low-1", "low-2"]


def test_a_client_that_leaves_a_streamed_message_frees_the_slot(gateway, make_sim, key):
    engine = make_sim(tokens=200, token_delay=0.02)
    add_backend("slow", engine.url, max_inflight=1)
    host, port = gateway.url.removeprefix("http://").split(":")
    body = (
        b'{"model":"sim-small","max_tokens":500,"stream":true,'
        b'"messages":[{"role":"user","content":"x"}]}'
    )
    sock = socket.create_connection((host, int(port)))
    sock.sendall(
        b"POST /v1/messages HTTP/1.1\r\nHost: gw\r\nContent-Type: application/json\r\n"
        + f"x-api-key: {key}\r\nContent-Length: {len(body)}\r\n\r\n".encode()
        + body
    )
    received = b""
    while b"message_start" not in received:
        chunk = sock.recv(65536)
        assert chunk, received
        received += chunk
    sock.close()
    wait_until(lambda: gateway.runtime.slots["slow"].inflight == 0, "the slot is free")
    wait_until(lambda: engine_stats(engine)["cancelled"] == 1, "the engine saw the client leave")


def test_count_tokens_without_a_counting_backend_is_the_documented_estimate(gateway, engine, key):
    from gateway.dialects.anthropic.count_tokens import count_tokens_estimate

    body = {"model": "sim-small", "messages": HI, "system": "Be brief."}
    counted = client(gateway, key).messages.count_tokens(**body)

    assert counted.input_tokens == count_tokens_estimate(body)
    assert engine_records(engine) == []  # nothing was generated, no slot was taken


def test_a_message_leaves_a_record_naming_its_surface_and_usage(gateway, engine, key):
    client(gateway, key).messages.create(model="sim-small", max_tokens=8, messages=HI)

    wait_until(lambda: ActivityRecord.objects.exists(), "the record is written", 15)
    record = ActivityRecord.objects.get()
    assert (record.surface, record.path, record.outcome) == (
        "messages",
        "/v1/messages",
        "immediate",
    )
    assert (record.input_tokens, record.output_tokens) == (2, 3)


def test_a_malformed_messages_body_is_a_400_in_the_anthropic_envelope(gateway, engine, key):
    for raw in (b"[]", b"{", b'{"model": "sim-small"}', b"[" * 100_000):
        r = httpx.post(
            gateway.url + "/v1/messages",
            content=raw,
            headers={"x-api-key": key, "content-type": "application/json"},
            timeout=10,
        )
        assert r.status_code == 400, (raw[:20], r.text)
        assert r.json()["type"] == "error"
        assert r.json()["error"]["type"] == "invalid_request_error"


# ----- native pass-through, per backend ----------------------------------------------------------


def test_a_backend_that_serves_messages_itself_gets_them_passed_through(gateway, make_sim, key):
    native = make_sim(tokens=3, token_delay=0, messages=True)
    add_backend("native", native.url)  # identified when saved: it serves /v1/messages

    with client(gateway, key).messages.stream(
        model="sim-small", max_tokens=64, messages=HI
    ) as stream:
        final = stream.get_final_message()

    assert final.content[0].text.startswith("tok0")
    assert engine_records(native)[-1]["path"] == "/v1/messages"
    wait_until(lambda: ActivityRecord.objects.exists(), "the record is written", 15)
    record = ActivityRecord.objects.get()
    assert (record.surface, record.output_tokens) == ("messages", 3)


def test_translate_mode_overrides_what_detection_found(gateway, make_sim, key):

    native = make_sim(tokens=3, token_delay=0, messages=True)
    add_backend("native", native.url)
    services.backend_save(data={"name": "native", "surfaces": {"messages": "translate"}})

    client(gateway, key).messages.create(model="sim-small", max_tokens=8, messages=HI)

    assert engine_records(native)[-1]["path"] == "/v1/chat/completions"


def test_count_tokens_is_the_native_backends_own_count(gateway, make_sim, key):
    native = make_sim(tokens=3, token_delay=0, messages=True)
    add_backend("native", native.url)

    counted = client(gateway, key).messages.count_tokens(model="sim-small", messages=HI)

    assert counted.input_tokens == 2  # the sim's word count, not the estimate
    assert engine_records(native)[-1]["path"] == "/v1/messages/count_tokens"
