"""Whatever an engine answers, the client gets a well-formed answer, promptly, and the slot comes
back: malformed framing, silence, odd statuses, the engines' own error shapes, bodies cut short.

The engines here are raw sockets playing a script (tests.gateway.drive.ScriptedEngine), so they
can break HTTP in ways no server library would.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from aiplane.catalog import settings_update
from tests.support.drive import (
    HTTP,
    ScriptedEngine,
    chat,
    chunk,
    engine_records,
    http_head,
    json_answer,
    wait_until,
)
from tests.support.factories import make_token_with_secret, make_user
from tests.support.live import add_backend

# The database only sets the test up (what an engine's faults become on the wire):
# the PostgreSQL pass of `make test` leaves it to the SQLite pass.
pytestmark = pytest.mark.database_neutral

SSE_HEAD = http_head(content_type="text/event-stream", transfer_encoding="chunked")
JSON_CHUNKED_HEAD = http_head(content_type="application/json", transfer_encoding="chunked")
EVENT = b'data: {"choices":[{"index":0,"delta":{"content":"tok0 "}}]}\n\n'


@pytest.fixture
def key(transactional_db: None) -> str:
    return make_token_with_secret(make_user("alice"), name="laptop")[1]


@pytest.fixture
def scripted() -> Iterator[Any]:
    """Start raw-socket engines playing a script; each closes after the test."""
    engines: list[ScriptedEngine] = []

    def start(script: Any) -> ScriptedEngine:
        engine = ScriptedEngine(script)
        engines.append(engine)
        return engine

    yield start
    for engine in engines:
        engine.close()


def stream(gateway: Any, key: str, timeout: float = 20) -> tuple[int, bytes]:
    """A streaming chat; the raw bytes of its body."""
    with httpx.stream(
        "POST",
        gateway.v1 + "/chat/completions",
        json={"model": "sim-small", "stream": True, "messages": [{"role": "user", "content": "x"}]},
        headers={"Authorization": f"Bearer {key}"},
        timeout=timeout,
    ) as r:
        return r.status_code, b"".join(r.iter_raw())


def slot_freed(gateway: Any, name: str) -> None:
    wait_until(lambda: gateway.runtime.slots[name].inflight == 0, f"{name}'s slot is free")


def events_of(body: bytes) -> list[bytes]:
    return [event for event in body.split(b"\n\n") if event]


def error_event(body: bytes) -> dict[str, Any]:
    """The stream's last event before [DONE], which must be an error in the envelope."""
    events = events_of(body)
    assert events[-1] == b"data: [DONE]", events
    assert events[-2].startswith(b"data: {"), events
    return json.loads(events[-2].removeprefix(b"data: "))["error"]


# ----- malformed answers and silence end promptly ---------------------------------------------


def test_a_stream_whose_chunked_framing_breaks_after_its_first_chunk_ends_at_once(
    gateway, scripted, key
):
    # aiohttp's C parser leaves the body's reader waiting here (FACTS.md): the request used to
    # hang with its slot held until the 600 s read timeout.
    engine = scripted([SSE_HEAD, chunk(EVENT), 0.2, b"zz\r\nnot a chunk\r\n"])
    add_backend("broken", engine.url)

    status, body = stream(gateway, key, timeout=15)

    assert status == 200
    assert events_of(body)[0] == EVENT.strip()
    assert error_event(body)["code"] == "upstream_error"
    slot_freed(gateway, "broken")


def test_a_stream_that_goes_quiet_is_ended_after_the_idle_timeout(gateway, scripted, key):
    settings_update(values={"gateway.idle_timeout_secs": 1})
    engine = scripted([SSE_HEAD, chunk(EVENT)])  # then nothing, connection kept open
    add_backend("quiet", engine.url)

    status, body = stream(gateway, key, timeout=15)

    assert status == 200
    error = error_event(body)
    assert error["code"] == "upstream_error"
    assert "idle" in error["message"]
    slot_freed(gateway, "quiet")


def test_an_engine_that_never_starts_answering_times_out_with_504(gateway, scripted, key):
    settings_update(values={"gateway.first_byte_timeout_secs": 1})
    engine = scripted([])  # reads the request, then silence
    add_backend("mute", engine.url)

    r = chat(gateway, key)

    assert r.status_code == 504, r.text
    assert r.json()["error"] == {
        "message": "The model server mute sent nothing within 1 seconds.",
        "type": "api_error",
        "param": None,
        "code": "upstream_timeout",
    }
    assert len(engine.requests) == 1  # a timed-out engine may still be working: no retry
    slot_freed(gateway, "mute")


def test_an_event_cut_mid_line_never_reaches_the_client_half_written(gateway, scripted, key):
    half = b'data: {"id":"half-written'
    engine = scripted([SSE_HEAD, chunk(EVENT + half), 0.1, None])
    add_backend("torn", engine.url)

    status, body = stream(gateway, key)

    assert status == 200
    assert half not in body
    # Every event the client got is whole: the error event starts on an event boundary.
    assert events_of(body)[0] == EVENT.strip()
    assert error_event(body)["code"] == "upstream_error"
    for event in events_of(body)[:-1]:
        json.loads(event.removeprefix(b"data: "))


def test_a_non_stream_answer_cut_short_looks_broken_to_the_client(gateway, scripted, key):
    # Today's trap: an empty final body ends a chunked answer normally, so half a JSON
    # document arrived as a clean 200.
    engine = scripted([JSON_CHUNKED_HEAD, chunk(b'{"id":"x","choices":['), 0.2, None])
    add_backend("cut", engine.url)

    with pytest.raises(httpx.RemoteProtocolError):
        chat(gateway, key)
    slot_freed(gateway, "cut")


def test_a_body_too_large_to_buffer_cut_short_looks_broken_to_the_client(gateway, scripted, key):
    big = b'{"pad":"' + b"x" * 300_000
    head = http_head(content_type="application/json", content_length=str(2 << 20))
    engine = scripted([head, big, 0.2, None])
    add_backend("cut", engine.url)

    with pytest.raises(httpx.RemoteProtocolError):
        chat(gateway, key)
    slot_freed(gateway, "cut")


def test_a_small_answer_that_is_not_the_json_it_claims_is_a_502(gateway, scripted, key):
    engine = scripted([_bad_json()])
    add_backend("garbled", engine.url)

    r = chat(gateway, key)

    assert r.status_code == 502, r.text
    assert r.json()["error"]["message"] == "The model server garbled answered with invalid JSON."


def _bad_json() -> bytes:
    body = b'{"choices": [ oops'
    return http_head(content_type="application/json", content_length=str(len(body))) + body


def test_a_status_outside_http_s_range_is_a_502_not_an_empty_answer(gateway, scripted, key):
    # uvicorn raised KeyError on status 999 once the answer had started: 0 bytes to the client.
    engine = scripted([http_head(999, "Weird", content_length="2") + b"hi"])
    add_backend("weird", engine.url)

    r = chat(gateway, key)

    assert r.status_code == 502, r.text
    assert r.json()["error"]["code"] == "upstream_error"
    assert "(999)" in r.json()["error"]["message"]


# ----- the engines' own errors -----------------------------------------------------------------


def test_an_engine_401_is_the_backends_fault_not_the_callers(gateway, scripted, key):
    engine = scripted([json_answer(401, {"error": {"message": "Invalid API key", "code": 401}})])
    add_backend("locked", engine.url)

    r = chat(gateway, key)

    assert r.status_code == 502, r.text
    assert r.json()["error"] == {
        "message": "The model server locked refused the gateway's credentials (401): "
        "Invalid API key",
        "type": "api_error",
        "param": None,
        "code": "backend_auth_failed",
    }


def test_an_engine_redirect_is_a_502_that_says_so(gateway, scripted, key):
    engine = scripted([http_head(302, "Found", location="http://elsewhere/", content_length="0")])
    add_backend("moved", engine.url)

    r = chat(gateway, key)

    assert r.status_code == 502, r.text
    assert "redirect (302)" in r.json()["error"]["message"]


def test_an_html_error_page_is_a_502_with_its_text(gateway, scripted, key):
    page = (
        b"<html><head><title>500</title></head><body><h1>Internal Server Error</h1></body></html>"
    )
    head = http_head(500, "Oops", content_type="text/html", content_length=str(len(page)))
    engine = scripted([head + page])
    add_backend("html", engine.url)

    r = chat(gateway, key)

    assert r.status_code == 502, r.text
    assert r.headers["content-type"] == "application/json"
    assert (
        r.json()["error"]["message"]
        == "The model server html failed (500): 500 Internal Server Error"
    )


@pytest.mark.parametrize(
    ("engine", "payload"),
    [
        (
            "sglang",
            {
                "object": "error",
                "message": "The prompt is too long.",
                "type": "BadRequestError",
                "param": None,
                "code": 400,
            },
        ),
        ("vllm-0.10", {"object": "error", "message": "The prompt is too long.", "code": 400}),
        (
            "vllm-0.33",
            {
                "error": {
                    "message": "The prompt is too long.",
                    "type": "BadRequestError",
                    "param": None,
                    "code": 400,
                }
            },
        ),
        ("fastapi", {"detail": "The prompt is too long."}),
    ],
)
def test_an_engine_refusal_in_any_engine_shape_reaches_the_client_in_the_openai_envelope(
    gateway, scripted, key, engine, payload
):
    server = scripted([json_answer(400, payload)])
    add_backend("strict", server.url)

    r = chat(gateway, key)

    assert r.status_code == 400, r.text
    error = r.json()["error"]
    assert set(error) == {"message", "type", "param", "code"}
    assert error["message"] == "The prompt is too long."
    assert error["code"] == "upstream_refused"


def test_an_engine_queue_full_answer_reaches_the_client_as_503_with_retry_after(
    gateway, scripted, key
):
    full = json_answer(
        503,
        {"object": "error", "message": "The request queue is full.", "type": "", "code": 503},
    )
    first, second = scripted([full]), scripted([full])
    add_backend("a-full", first.url)
    add_backend("b-full", second.url)

    r = chat(gateway, key)

    assert r.status_code == 503, r.text
    assert r.headers["retry-after"] == "5"
    assert r.json()["error"]["code"] == "backend_overloaded"
    assert r.json()["error"]["message"].endswith("(503): The request queue is full.")
    assert (len(first.requests), len(second.requests)) == (1, 1)  # retried once elsewhere


# ----- a slow engine is not a stalled client ---------------------------------------------------


def test_a_long_pause_between_two_tokens_is_not_taken_for_a_client_that_stopped_reading(
    gateway, make_sim, key
):
    import dataclasses

    rt = gateway.runtime
    # The watchdog used to time only the first send: a pause after it looked like a stall.
    rt.timeouts = dataclasses.replace(rt.timeouts, stalled_client=0.3, idle=30)
    engine = make_sim(tokens=3, token_delay=0.8)
    add_backend("slow", engine.url)

    status, body = stream(gateway, key)

    assert status == 200
    events = events_of(body)
    assert events[-1] == b"data: [DONE]"
    assert not any(b'"error"' in event for event in events)
    assert [e for e in events if b"tok" in e][-1].count(b"tok2") == 1
    slot_freed(gateway, "slow")


# ----- bad bodies are the caller's 400 ---------------------------------------------------------


@pytest.mark.parametrize("size", ["small", "large"])
def test_deeply_nested_json_is_a_400_not_a_500(gateway, make_sim, key, size):
    add_backend("solo", make_sim(tokens=1, token_delay=0).url)
    depth = 100_000 if size == "small" else 600_000  # large: over 1 MB, parsed off the loop
    body = b'{"model":"sim-small","messages":' + b"[" * depth + b"]" * depth + b"}"

    r = HTTP.post(
        gateway.v1 + "/chat/completions",
        content=body,
        headers={"Authorization": f"Bearer {key}", "Content-Type": "application/json"},
    )

    assert r.status_code == 400, r.text
    assert r.json()["error"]["message"] == "The request body is nested too deeply."


def test_a_body_nested_just_below_the_decoders_limit_is_a_400_not_a_500(gateway, scripted, key):
    # It decodes at the shallow stack of the parser; re-encoding it for the backend may not.
    answer = json_answer(200, {"choices": []}, "OK")
    engine = scripted(lambda request: [answer])
    add_backend("solo", engine.url)
    for depth in range(900, 1000, 10):
        content = "[" * depth + "]" * depth
        body = '{"model":"sim-small","messages":[{"role":"user","content":' + content + "}]}"
        r = HTTP.post(
            gateway.v1 + "/chat/completions",
            content=body.encode(),
            headers={"Authorization": f"Bearer {key}", "Content-Type": "application/json"},
        )
        assert r.status_code in (200, 400), (depth, r.text)


@pytest.mark.parametrize("constant", ["NaN", "Infinity", "-Infinity"])
def test_json_that_python_reads_but_json_has_not_is_a_400(gateway, make_sim, key, constant):
    engine = make_sim(tokens=1, token_delay=0)
    add_backend("solo", engine.url)
    body = '{"model":"sim-small","temperature":' + constant + ',"messages":[]}'

    r = HTTP.post(
        gateway.v1 + "/chat/completions",
        content=body.encode(),
        headers={"Authorization": f"Bearer {key}", "Content-Type": "application/json"},
    )

    assert r.status_code == 400, r.text
    assert constant.lstrip("-") in r.json()["error"]["message"]
    assert engine_records(engine) == []


# ----- the simulated engine's own faults, through the gateway ----------------------------------


def faulty_chat(gateway: Any, key: str, directive: str, *, stream: bool = False) -> httpx.Response:
    body = {
        "model": "sim-small",
        "stream": stream,
        "messages": [{"role": "user", "content": f"{directive} hello"}],
    }
    return HTTP.post(
        gateway.v1 + "/chat/completions", json=body, headers={"Authorization": f"Bearer {key}"}
    )


def test_sglangs_queue_full_on_a_stream_is_a_503_with_retry_after_not_a_200(gateway, make_sim, key):
    # SGLang refuses a stream with 200, one error event and [DONE]: read before answering.
    engine = make_sim(server_info="sglang", directives=True, tokens=2, token_delay=0)
    add_backend("sg", engine.url)

    r = faulty_chat(gateway, key, "[[sim:queue-full]]", stream=True)

    assert r.status_code == 503, r.text
    assert r.headers["retry-after"] == "5"
    assert r.json()["error"]["code"] == "backend_overloaded"
    assert "The request queue is full." in r.json()["error"]["message"]
    slot_freed(gateway, "sg")


def test_a_stream_refused_by_a_replica_is_retried_on_another(gateway, make_sim, key):
    full = make_sim(server_info="sglang", directives=True, tokens=2, token_delay=0)
    steady = make_sim(tokens=2, token_delay=0)
    add_backend("a-full", full.url)
    add_backend("b-steady", steady.url)

    r = faulty_chat(gateway, key, "[[sim:evicted]]", stream=True)  # the steady one ignores it

    assert r.status_code == 200, r.text
    assert r.headers["x-aiplane-backend"] == "b-steady"
    assert r.text.endswith("data: [DONE]\n\n")


def test_a_stream_that_turns_to_garbage_ends_with_an_error_event(gateway, make_sim, key):
    engine = make_sim(directives=True, tokens=4, token_delay=0)
    add_backend("noisy", engine.url)

    with httpx.stream(
        "POST",
        gateway.v1 + "/chat/completions",
        json={
            "model": "sim-small",
            "stream": True,
            "messages": [{"role": "user", "content": "[[sim:garbage after=1]] hi"}],
        },
        headers={"Authorization": f"Bearer {key}"},
        timeout=15,
    ) as r:
        body = b"".join(r.iter_raw())
    body.decode()  # the client never gets bytes that are not UTF-8
    assert error_event(body)["code"] == "upstream_error"
    slot_freed(gateway, "noisy")


@pytest.mark.parametrize(
    ("directive", "stream"),
    [
        ("[[wire:status code=999]]", False),
        ("[[wire:chunked after=3]]", True),  # a break before the first would be a 502
        ("[[wire:reset after=400]]", True),  # the head, one event and half of the next
    ],
)
def test_wire_faults_in_front_of_a_real_engine_end_in_a_well_formed_answer(
    gateway, make_sim, key, directive, stream
):
    from gateway.sim.faults import FaultProxy

    engine = make_sim(tokens=8, token_delay=0.01)
    with FaultProxy(engine.url) as proxy:
        add_backend("proxied", proxy.url)
        r = faulty_chat(gateway, key, directive, stream=stream)
    if stream:
        assert r.status_code == 200
        assert error_event(r.content)["code"] == "upstream_error"
        for event in events_of(r.content)[:-2]:
            json.loads(event.removeprefix(b"data: "))  # nothing glued to a partial line
    else:
        assert r.status_code == 502, r.text
        assert r.json()["error"]["code"] == "upstream_error"
    slot_freed(gateway, "proxied")
