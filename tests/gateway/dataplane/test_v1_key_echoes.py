"""An engine that quotes the gateway's key back (in a 401's message, a stream's error event, a
header, a probe's answer) never makes it reach a client, an activity record or an
administrator's page: everything the engine says passes gateway/core/redaction.py first.

The engines are raw sockets (tests.gateway.drive.ScriptedEngine) that echo what they were sent.
"""

from __future__ import annotations

import asyncio
import json
import re
from typing import Any

import httpx
import pytest

from tests.support.drive import (
    ScriptedEngine,
    chat,
    chunk,
    http_head,
    json_answer,
    key_for,
    wait_until,
)
from tests.support.live import add_backend

# What a bare echo of it would not look like to the generic patterns: only the exact key finds it.
BACKEND_KEY = "t0ps3cret.backend.key.xyz"
MODELS = "/api/v0/admin/models"
SSE_HEAD = http_head(content_type="text/event-stream", transfer_encoding="chunked")
EVENT = b'data: {"choices":[{"index":0,"delta":{"content":"tok0 "}}]}\n\n'


def sent_key(request: bytes) -> str:
    """The Authorization header the engine got ("Bearer <key>"), to quote back."""
    found = re.search(rb"(?im)^authorization:\s*(.+?)\r?$", request)
    assert found is not None, request
    return found.group(1).decode()


@pytest.fixture
def echoes() -> Any:
    engines: list[ScriptedEngine] = []

    def start(answer: Any, *, name: str = "echo", **fields: Any) -> ScriptedEngine:
        engine = ScriptedEngine(answer, **fields)
        engines.append(engine)
        add_backend(name, engine.url, api_key=BACKEND_KEY)
        return engine

    yield start
    for engine in engines:
        engine.close()


def stream(gateway: Any, key: str) -> tuple[int, bytes]:
    with httpx.stream(
        "POST",
        gateway.v1 + "/chat/completions",
        json={"model": "sim-small", "stream": True, "messages": [{"role": "user", "content": "x"}]},
        headers={"Authorization": f"Bearer {key}"},
        timeout=20,
    ) as r:
        return r.status_code, b"".join(r.iter_raw())


def last_error(client: Any) -> dict[str, Any]:
    response = client.get(MODELS)
    assert response.status_code == 200, response.content
    [model] = [m for m in response.json()["models"] if m["name"] == "sim-small"]
    [route] = model["routes"]
    error: dict[str, Any] = route["last_error"]
    return error


def stored_error() -> str:
    from gateway.models import ActivityRecord

    wait_until(lambda: ActivityRecord.objects.exists(), "the activity record is written", 15)
    [error] = ActivityRecord.objects.values_list("error", flat=True)
    return str(error)


# ----- an engine's refusal ----------------------------------------------------------------------


def test_a_401_quoting_the_key_leaves_it_out_of_the_answer_the_last_error_and_the_record(
    gateway: Any, echoes: Any, carol_client: Any
) -> None:
    echoes(
        lambda request: [
            json_answer(
                401, {"error": {"message": f"Invalid API key: {sent_key(request)} ({BACKEND_KEY})"}}
            )
        ]
    )

    answer = chat(gateway, key_for("alice"))

    assert answer.status_code == 502, answer.text
    assert answer.json()["error"]["message"] == (
        "The model server echo refused the gateway's credentials (401): "
        "Invalid API key: Bearer [redacted] ([redacted])"
    )
    assert BACKEND_KEY not in answer.text
    error = last_error(carol_client)
    assert error["message"].endswith("Invalid API key: Bearer [redacted] ([redacted])")
    assert BACKEND_KEY not in json.dumps(error)
    stored = stored_error()
    assert "Bearer [redacted]" in stored
    assert BACKEND_KEY not in stored


@pytest.mark.parametrize(
    "body",
    [
        pytest.param(lambda said: json_answer(400, {"error": {"message": said}}), id="nested"),
        pytest.param(
            lambda said: json_answer(400, {"object": "error", "message": said, "code": 400}),
            id="flat",
        ),
        pytest.param(lambda said: json_answer(422, {"detail": [{"msg": said}]}), id="fastapi"),
        pytest.param(
            lambda said: (
                http_head(
                    400,
                    "Bad Request",
                    content_type="text/html",
                    content_length=str(
                        len(page := f"<html><body><p>{said}</p></body></html>".encode())
                    ),
                )
                + page
            ),
            id="html",
        ),
        pytest.param(
            lambda said: (
                http_head(
                    400,
                    "Bad Request",
                    content_type="text/plain",
                    content_length=str(len(said.encode())),
                )
                + said.encode()
            ),
            id="plain",
        ),
    ],
)
def test_a_refusal_in_any_shape_passes_the_engines_words_on_without_the_key(
    gateway: Any, echoes: Any, body: Any
) -> None:
    echoes(lambda request: [body(f"key {BACKEND_KEY} may not use this model")])

    answer = chat(gateway, key_for("alice"))

    assert 400 <= answer.status_code < 500, answer.text
    assert "key [redacted] may not use this model" in answer.json()["error"]["message"]
    assert BACKEND_KEY not in answer.text


# ----- inside an answer's stream -----------------------------------------------------------------


def test_a_stream_refused_in_its_first_event_quoting_the_key_does_not_pass_it_on(
    gateway: Any, echoes: Any, carol_client: Any
) -> None:
    def refusal(request: bytes) -> list[bytes]:
        event = {"error": {"message": f"Invalid API key: {sent_key(request)}", "code": 401}}
        return [SSE_HEAD, chunk(b"data: " + json.dumps(event).encode() + b"\n\n"), chunk(b"")]

    echoes(refusal)

    status, body = stream(gateway, key_for("alice"))

    assert status == 502, body
    assert b"Invalid API key: Bearer [redacted]" in body
    assert BACKEND_KEY.encode() not in body
    assert BACKEND_KEY not in json.dumps(last_error(carol_client))


def test_an_error_event_mid_stream_quoting_the_key_reaches_the_client_without_it(
    gateway: Any, echoes: Any
) -> None:
    def fails_later(request: bytes) -> list[bytes]:
        event = {"error": {"message": f"engine lost {BACKEND_KEY} ({sent_key(request)})"}}
        failed = b"data: " + json.dumps(event).encode() + b"\n\n"
        return [SSE_HEAD, chunk(EVENT), 0.05, chunk(failed + b"data: [DONE]\n\n"), chunk(b"")]

    echoes(fails_later)

    status, body = stream(gateway, key_for("alice"))

    assert status == 200
    events = [e for e in body.split(b"\n\n") if e]
    assert events[0] == EVENT.strip()
    error = json.loads(events[1].removeprefix(b"data: "))["error"]
    assert error["message"] == "engine lost [redacted] (Bearer [redacted])"
    assert BACKEND_KEY.encode() not in body


def test_an_error_event_translated_to_the_messages_dialect_comes_without_the_key(
    gateway: Any, echoes: Any
) -> None:
    # The engine speaks chat; the gateway writes Anthropic's events from its words.
    def fails_later(request: bytes) -> list[bytes]:
        event = {"error": {"message": f"engine lost {sent_key(request)}"}}
        failed = b"data: " + json.dumps(event).encode() + b"\n\n"
        return [SSE_HEAD, chunk(EVENT), 0.05, chunk(failed), chunk(b"")]

    echoes(fails_later)

    with httpx.stream(
        "POST",
        gateway.url + "/v1/messages",
        json={
            "model": "sim-small",
            "max_tokens": 8,
            "stream": True,
            "messages": [{"role": "user", "content": "x"}],
        },
        headers={"x-api-key": key_for("alice"), "anthropic-version": "2023-06-01"},
        timeout=20,
    ) as r:
        body = b"".join(r.iter_raw())

    assert r.status_code == 200
    assert b"event: error" in body
    assert b"engine lost Bearer [redacted]" in body
    assert BACKEND_KEY.encode() not in body


# ----- a 2xx answer's headers and body ------------------------------------------------------------


def test_a_header_quoting_the_key_is_passed_on_without_it(gateway: Any, echoes: Any) -> None:
    payload = json.dumps({"choices": [{"message": {"content": "hi"}}]}).encode()

    def answer(request: bytes) -> list[bytes]:
        head = http_head(
            content_type="application/json",
            cache_control=f"private, key={BACKEND_KEY}",
            retry_after=sent_key(request),
            content_length=str(len(payload)),
        )
        return [head + payload]

    echoes(answer)

    r = chat(gateway, key_for("alice"))

    assert r.status_code == 200, r.text
    assert r.headers["cache-control"] == "private, key=[redacted]"
    assert r.headers["retry-after"] == "Bearer [redacted]"
    assert BACKEND_KEY not in str(r.headers)


def test_a_buffered_answer_quoting_the_key_reaches_the_client_without_it(
    gateway: Any, echoes: Any
) -> None:
    payload = json.dumps({"choices": [{"message": {"content": f"you sent {BACKEND_KEY}"}}]})
    echoes([json_answer(200, json.loads(payload), reason="OK")])

    r = chat(gateway, key_for("alice"))

    assert r.status_code == 200, r.text
    assert r.json()["choices"][0]["message"]["content"] == "you sent [redacted]"


def test_a_key_split_across_the_chunks_of_an_answer_is_found_whole(
    gateway: Any, echoes: Any
) -> None:
    # A chunked body (no length) is passed on as it comes: a key may straddle two chunks.
    payload = json.dumps({"choices": [{"message": {"content": f"you sent {BACKEND_KEY}"}}]})
    cut = payload.index(BACKEND_KEY) + 7
    head = http_head(content_type="application/json", transfer_encoding="chunked")
    parts = [payload[:cut].encode(), payload[cut:].encode()]
    echoes([head, chunk(parts[0]), 0.1, chunk(parts[1]), chunk(b"")])

    r = chat(gateway, key_for("alice"))

    assert r.status_code == 200, r.text
    assert r.json()["choices"][0]["message"]["content"] == "you sent [redacted]"


# ----- the health checker and detection -----------------------------------------------------------


def test_a_health_probe_failure_quoting_the_key_is_noted_without_it(
    gateway: Any, echoes: Any, carol_client: Any
) -> None:
    # A garbled header line echoing the request's: the transport's error quotes it whole.
    def garbled(request: bytes) -> list[bytes]:
        return [f"HTTP/1.1 401 Unauthorized\r\nyou-sent {sent_key(request)}\r\n\r\n".encode()]

    echoes(garbled, answer_gets=True)
    rt = gateway.runtime

    asyncio.run_coroutine_threadsafe(rt.probe_all_health(), rt.loop).result(10)

    error = last_error(carol_client)
    assert error["source"] == "health"
    assert "RemoteProtocolError" in error["message"]
    assert "Bearer [redacted]" in error["message"]
    assert BACKEND_KEY not in error["message"]


def test_a_detection_failure_quoting_the_key_is_shown_without_it(
    gateway: Any, echoes: Any, carol_client: Any
) -> None:
    def refused(request: bytes) -> list[bytes]:
        return [json_answer(401, {"error": {"message": f"bad key {sent_key(request)}"}})]

    echoes(refused, answer_gets=True)

    response = carol_client.post("/api/v0/admin/backends/echo/detect")

    assert response.status_code == 200, response.content
    detection = response.json()["detection"]
    assert (detection["ok"], detection["reason"], detection["status"]) == (False, "status", 401)
    assert "bad key Bearer [redacted]" in detection["error"]
    assert BACKEND_KEY not in response.content.decode()


def test_an_engine_reporting_the_key_as_its_version_has_it_left_out_of_its_profile(
    gateway: Any, echoes: Any, carol_client: Any
) -> None:
    models = {"object": "list", "data": [{"id": "sim-small", "owned_by": "vllm"}]}

    def reports(request: bytes) -> list[bytes]:
        if request.startswith(b"GET /v1/models"):
            return [json_answer(200, models, reason="OK")]
        if request.startswith(b"GET /version"):
            return [json_answer(200, {"version": f"0.8.0+{BACKEND_KEY}"}, reason="OK")]
        return [json_answer(404, {"detail": "Not Found"})]

    echoes(reports, answer_gets=True)

    response = carol_client.post("/api/v0/admin/backends/echo/detect")

    assert response.status_code == 200, response.content
    assert response.json()["profile"]["version"] == "0.8.0+[redacted]"
    from gateway.models import Backend

    assert Backend.objects.get(name="echo").profile["version"] == "0.8.0+[redacted]"
