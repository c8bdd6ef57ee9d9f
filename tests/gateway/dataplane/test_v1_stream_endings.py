"""How a stream ends when its engine ends it wrongly: with nothing, after [DONE], or mid-event.

Found by the chaos run (bench/chaos.py): an engine's 204 (or an empty event stream) reached the
client as a bodiless 204 or 200; a stream whose engine broke its framing after `data: [DONE]` got
an error event and a second [DONE] after its first; an event that ran into the next (two data
lines, no chat chunk) reached the client as it was.
"""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest

from aiplane.catalog import settings_update
from gateway.models import ActivityRecord
from tests.support.drive import ScriptedEngine, chunk, http_head, wait_until
from tests.support.factories import make_token_with_secret, make_user
from tests.support.live import add_backend

SSE_HEAD = http_head(content_type="text/event-stream", transfer_encoding="chunked")
TOKEN = b'data: {"choices":[{"index":0,"delta":{"content":"tok0 "},"finish_reason":null}]}\n\n'
FINISH = b'data: {"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}\n\n'
DONE = b"data: [DONE]\n\n"
END = b"0\r\n\r\n"  # the last chunk of a chunked body


@pytest.fixture
def key(transactional_db: None) -> str:
    return make_token_with_secret(make_user("alice"), name="laptop")[1]


@pytest.fixture
def scripted() -> Any:
    engines: list[ScriptedEngine] = []

    def start(script: Any) -> ScriptedEngine:
        engine = ScriptedEngine(script)
        engines.append(engine)
        return engine

    yield start
    for engine in engines:
        engine.close()


def stream(gateway: Any, key: str, status: int = 200) -> bytes:
    with httpx.stream(
        "POST",
        gateway.v1 + "/chat/completions",
        json={"model": "sim-small", "stream": True, "messages": [{"role": "user", "content": "x"}]},
        headers={"Authorization": f"Bearer {key}"},
        timeout=20,
    ) as r:
        assert r.status_code == status
        return b"".join(r.iter_raw())


def the_record() -> ActivityRecord:
    wait_until(ActivityRecord.objects.exists, "the record is written", 15)
    (record,) = ActivityRecord.objects.all()
    return record


@pytest.mark.parametrize(
    "answer",
    [
        http_head(204, "No Content", content_type="text/event-stream"),
        SSE_HEAD + END,
        http_head(204, "No Content", content_type="application/json"),
        http_head(content_type="application/json", transfer_encoding="chunked") + END,
    ],
    ids=["no-content-stream", "empty-stream", "no-content", "empty-chunked-body"],
)
def test_an_answer_without_a_byte_of_body_is_a_502_not_an_empty_answer(
    gateway, scripted, key, answer
):
    engine = scripted([answer])
    add_backend("empty", engine.url)

    body = stream(gateway, key, status=502)

    assert json.loads(body)["error"] == {
        "message": "The model server empty failed before answering.",
        "type": "api_error",
        "param": None,
        "code": "upstream_error",
    }
    assert the_record().outcome == "upstream_error"


@pytest.mark.parametrize(
    "after_done",
    [
        [0.2, b"zz\r\n"],  # the chunked framing breaks after the last event
        [0.2, None],  # the connection drops before the terminating chunk
        [],  # nothing more: the engine keeps the connection open (the idle bound ends it)
    ],
    ids=["broken-framing", "dropped", "silent"],
)
def test_a_stream_that_fails_after_its_done_event_ends_as_it_was_complete(
    gateway, scripted, key, after_done
):
    settings_update(values={"gateway.idle_timeout_secs": 1})
    engine = scripted([SSE_HEAD, chunk(TOKEN), chunk(FINISH), chunk(DONE), *after_done])
    add_backend("late", engine.url)

    body = stream(gateway, key)

    # The client's answer ended with [DONE]: nothing may follow it, and it was answered.
    assert body == TOKEN + FINISH + DONE
    wait_until(lambda: gateway.runtime.slots["late"].inflight == 0, "the slot is free")
    assert the_record().outcome == "immediate"


def test_an_event_that_runs_into_the_next_ends_the_stream_with_an_error_event(
    gateway, scripted, key
):
    # Two data lines in one event: joined, they are no chat chunk an OpenAI client can read.
    merged = TOKEN[:-1] + TOKEN
    engine = scripted([SSE_HEAD, chunk(TOKEN), 0.1, chunk(merged), chunk(FINISH), chunk(DONE), END])
    add_backend("merged", engine.url)

    body = stream(gateway, key)

    events = [e for e in body.split(b"\n\n") if e]
    assert events[0] == TOKEN.strip()
    assert merged.strip() not in body
    assert events[-1] == b"data: [DONE]"
    error = json.loads(events[-2].removeprefix(b"data: "))["error"]
    assert error["code"] == "upstream_error"
    assert the_record().outcome == "upstream_error"


def test_an_event_whose_data_lines_join_into_json_is_passed_on(gateway, scripted, key):
    # SSE joins an event's data lines with a newline: pretty-printed JSON over several lines is
    # still one chunk, and is passed on untouched.
    split = (
        b'data: {"choices":[{"index":0,\ndata: "delta":{"content":"a"},"finish_reason":null}]}\n\n'
    )
    engine = scripted([SSE_HEAD, chunk(split), chunk(FINISH), chunk(DONE), END])
    add_backend("pretty", engine.url)

    assert stream(gateway, key) == split + FINISH + DONE
