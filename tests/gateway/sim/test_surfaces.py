"""The simulated engine's tool calls and its native /v1/messages and /v1/responses.

The answers are read with the official `anthropic` and `openai` packages where a client would,
and as raw events where the exact sequence matters. `test_row_<n>_...` tests prove rows 12-18
of the fidelity table in gateway/sim/engine.py's docstring.
"""

from __future__ import annotations

import asyncio
import json
import socket
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Iterator
from dataclasses import asdict
from typing import Any
from urllib.parse import urlsplit

import aiohttp
import anthropic
import httpx
import openai
import pytest

from gateway.engines.detection import detect_engine
from gateway.sim.config import QUEUE_FULL, SimConfig
from gateway.sim.server import SimServer

BASE = SimConfig(tokens=4, token_delay=0.0, messages=True, responses=True)
HELLO = [{"role": "user", "content": "hello brave new world"}]
WEATHER_SCHEMA = {
    "type": "object",
    "properties": {"unit": {"type": "integer"}, "city": {"type": "string"}},
    "required": ["unit", "city"],
}
CHAT_TOOLS = [
    {"type": "function", "function": {"name": "weather", "parameters": WEATHER_SCHEMA}},
    {"type": "function", "function": {"name": "search", "parameters": {"type": "object"}}},
]
ANTHROPIC_TOOLS = [
    {"name": "weather", "description": "the weather", "input_schema": WEATHER_SCHEMA},
    {"name": "search", "input_schema": {"type": "object"}},
]
RESPONSES_TOOLS = [
    {"type": "function", "name": "weather", "parameters": WEATHER_SCHEMA},
    {"type": "function", "name": "search", "parameters": {"type": "object"}},
]
# The arguments the sim derives from HELLO for `weather`, and the fragments they stream in.
WEATHER_ARGS = '{"city": "hello brave new world"}'
WEATHER_PIECES = ['{"city": ', '"hello ', "brave ", "new ", 'world"}']


@pytest.fixture(scope="module")
def sim() -> Iterator[SimServer]:
    with SimServer(SimConfig(**asdict(BASE))) as server:
        yield server


@pytest.fixture(scope="module")
def http(sim: SimServer) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=sim.url, timeout=10) as client:
        yield client


@pytest.fixture(autouse=True)
def fresh_engine(http: httpx.Client) -> None:
    http.post("/sim/config", json=asdict(BASE)).raise_for_status()
    http.post("/sim/reset").raise_for_status()


@pytest.fixture
def claude(sim: SimServer) -> Iterator[anthropic.Anthropic]:
    with anthropic.Anthropic(base_url=sim.url, api_key="x", max_retries=0) as client:
        yield client


@pytest.fixture
def oai(sim: SimServer) -> Iterator[openai.OpenAI]:
    with openai.OpenAI(base_url=sim.url + "/v1", api_key="x", max_retries=0) as client:
        yield client


@pytest.fixture
async def client(sim: SimServer) -> AsyncIterator[aiohttp.ClientSession]:
    async with aiohttp.ClientSession(base_url=sim.url) as session:
        yield session


def configure(http: httpx.Client, **changes: Any) -> None:
    http.post("/sim/config", json=changes).raise_for_status()


def events_of(http: httpx.Client, path: str, body: dict[str, Any]) -> list[tuple[str, Any]]:
    """A stream's events as (event name, parsed data); the name is "" for a bare data line."""
    events: list[tuple[str, Any]] = []
    name = ""
    with http.stream("POST", path, json=body) as resp:
        assert resp.status_code == 200
        assert resp.headers["content-type"].startswith("text/event-stream")
        for line in resp.iter_lines():
            if line.startswith("event: "):
                name = line[7:]
            elif line.startswith("data: "):
                data = line[6:]
                events.append((name, data if data == "[DONE]" else json.loads(data)))
                name = ""
    return events


def message(**body: Any) -> dict[str, Any]:
    return {"model": "sim-small", "max_tokens": 100, "messages": HELLO, **body}


def chat_body(**body: Any) -> dict[str, Any]:
    return {"model": "sim-small", "messages": HELLO, **body}


# ----- 12. tool calls on chat completions ------------------------------------------------------


def test_row_12_a_chat_with_tools_answers_a_plain_question_in_text_as_agents_need(
    http: httpx.Client,
) -> None:
    # Agents offer their tools on every turn: a prompt that names none gets words, not a call.
    body = http.post("/v1/chat/completions", json=chat_body(tools=CHAT_TOOLS)).json()
    (choice,) = body["choices"]
    assert choice["finish_reason"] == "stop"
    assert "tool_calls" not in choice["message"]
    assert choice["message"]["content"]


def test_row_12_a_prompt_that_names_a_tool_gets_a_call_to_it(http: httpx.Client) -> None:
    ask = [{"role": "user", "content": "what does search say"}]
    body = http.post("/v1/chat/completions", json=chat_body(messages=ask, tools=CHAT_TOOLS)).json()
    (choice,) = body["choices"]
    assert choice["finish_reason"] == "tool_calls"
    (call,) = choice["message"]["tool_calls"]
    assert call["function"]["name"] == "search"


def test_row_12_a_chat_that_must_use_a_tool_calls_the_first_with_arguments_from_the_prompt(
    http: httpx.Client,
) -> None:
    chat = chat_body(tools=CHAT_TOOLS, tool_choice="required")
    body = http.post("/v1/chat/completions", json=chat).json()
    (choice,) = body["choices"]
    assert choice["finish_reason"] == "tool_calls"
    message = choice["message"]
    assert message["content"] is None
    (call,) = message["tool_calls"]
    assert call["type"] == "function"
    assert call["function"] == {"name": "weather", "arguments": WEATHER_ARGS}
    assert call["id"].startswith("call_")
    assert body["usage"] == {
        "prompt_tokens": 4,
        "completion_tokens": len(WEATHER_PIECES),
        "total_tokens": 4 + len(WEATHER_PIECES),
    }


@pytest.mark.parametrize(
    ("schema", "arguments"),
    [
        ({"type": "object"}, {"query": "hello brave new world"}),
        (
            {
                "type": "object",
                "properties": {"a": {"type": "string"}, "b": {"type": "string"}},
                "required": ["b"],
            },
            {"b": "hello brave new world"},
        ),
        (
            {"type": "object", "properties": {"a": {"type": "string"}}},
            {"a": "hello brave new world"},
        ),
        ({"type": "object", "properties": {"n": {"type": "integer"}}}, {}),
    ],
)
def test_row_12_the_arguments_fill_the_first_required_string_property(
    http: httpx.Client, schema: dict[str, Any], arguments: dict[str, Any]
) -> None:
    tools = [{"type": "function", "function": {"name": "t", "parameters": schema}}]
    body = http.post(
        "/v1/chat/completions", json=chat_body(tools=tools, tool_choice="required")
    ).json()
    call = body["choices"][0]["message"]["tool_calls"][0]
    assert json.loads(call["function"]["arguments"]) == arguments


def test_row_12_a_tool_choice_by_name_calls_that_tool_and_finishes_with_stop(
    http: httpx.Client,
) -> None:
    choice = {"type": "function", "function": {"name": "search"}}
    body = http.post(
        "/v1/chat/completions", json=chat_body(tools=CHAT_TOOLS, tool_choice=choice)
    ).json()
    assert body["choices"][0]["finish_reason"] == "stop"
    (call,) = body["choices"][0]["message"]["tool_calls"]
    assert call["function"] == {
        "name": "search",
        "arguments": json.dumps({"query": "hello brave new world"}),
    }
    required = http.post(
        "/v1/chat/completions", json=chat_body(tools=CHAT_TOOLS, tool_choice="required")
    ).json()
    assert required["choices"][0]["finish_reason"] == "tool_calls"


def test_a_tool_choice_naming_no_tool_is_a_400(http: httpx.Client) -> None:
    choice = {"type": "function", "function": {"name": "nothing"}}
    resp = http.post("/v1/chat/completions", json=chat_body(tools=CHAT_TOOLS, tool_choice=choice))
    assert resp.status_code == 400
    assert resp.json()["error"]["code"] == "invalid_tool_choice"


def test_row_12_tool_choice_none_answers_text_and_a_tool_result_is_echoed(
    http: httpx.Client,
) -> None:
    body = http.post(
        "/v1/chat/completions", json=chat_body(tools=CHAT_TOOLS, tool_choice="none")
    ).json()
    assert body["choices"][0]["message"] == {"role": "assistant", "content": "tok0 tok1 tok2 tok3 "}
    assert body["choices"][0]["finish_reason"] == "stop"
    turn = [
        *HELLO,
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {"id": "c1", "type": "function", "function": {"name": "weather", "arguments": "{}"}}
            ],
        },
        {"role": "tool", "tool_call_id": "c1", "content": "sunny and 21 degrees"},
    ]
    body = http.post("/v1/chat/completions", json=chat_body(messages=turn, tools=CHAT_TOOLS)).json()
    assert body["choices"][0]["message"]["content"] == "sunny and 21 degrees "
    assert body["choices"][0]["finish_reason"] == "stop"
    assert body["usage"]["completion_tokens"] == 4


def test_row_12_a_streamed_tool_call_sends_id_type_and_name_first_then_argument_fragments(
    http: httpx.Client,
) -> None:
    events = events_of(
        http,
        "/v1/chat/completions",
        chat_body(
            tools=CHAT_TOOLS,
            tool_choice="required",
            stream=True,
            stream_options={"include_usage": True},
        ),
    )
    assert events[-1] == ("", "[DONE]")
    chunks = [data for _, data in events[:-1]]
    deltas = [c["choices"][0]["delta"] for c in chunks[:-2]]
    head, *pieces = deltas
    assert head == {
        "role": "assistant",
        "tool_calls": [
            {
                "index": 0,
                "id": head["tool_calls"][0]["id"],
                "type": "function",
                "function": {"name": "weather"},
            }
        ],
    }
    assert pieces == [
        {"tool_calls": [{"index": 0, "function": {"arguments": piece}}]} for piece in WEATHER_PIECES
    ]
    assert chunks[-2]["choices"][0]["finish_reason"] == "tool_calls"
    assert chunks[-1]["choices"] == []
    assert chunks[-1]["usage"]["completion_tokens"] == len(WEATHER_PIECES)


def test_row_12_parallel_calls_go_to_successive_tools_unless_parallel_tool_calls_is_false(
    http: httpx.Client,
) -> None:
    configure(http, tool_calls=2)
    body = http.post(
        "/v1/chat/completions", json=chat_body(tools=CHAT_TOOLS, tool_choice="required")
    ).json()
    calls = body["choices"][0]["message"]["tool_calls"]
    assert [c["function"]["name"] for c in calls] == ["weather", "search"]
    assert len({c["id"] for c in calls}) == 2
    events = events_of(
        http,
        "/v1/chat/completions",
        chat_body(tools=CHAT_TOOLS, tool_choice="required", stream=True),
    )
    heads = [
        d["tool_calls"][0]
        for _, c in events[:-1]
        for d in [c["choices"][0]["delta"]]
        if "id" in d.get("tool_calls", [{}])[0]
    ]
    assert [(h["index"], h["function"]["name"]) for h in heads] == [(0, "weather"), (1, "search")]
    single = http.post(
        "/v1/chat/completions",
        json=chat_body(tools=CHAT_TOOLS, tool_choice="required", parallel_tool_calls=False),
    ).json()
    assert len(single["choices"][0]["message"]["tool_calls"]) == 1


def test_the_openai_sdk_reads_tool_calls_whole_and_streamed(oai: openai.OpenAI) -> None:
    whole = oai.chat.completions.create(
        model="sim-small", messages=HELLO, tools=CHAT_TOOLS, tool_choice="required"
    )
    (call,) = whole.choices[0].message.tool_calls or []
    assert (call.function.name, call.function.arguments) == ("weather", WEATHER_ARGS)
    arguments = ""
    names = []
    for chunk in oai.chat.completions.create(
        model="sim-small", messages=HELLO, tools=CHAT_TOOLS, tool_choice="required", stream=True
    ):
        for delta_call in chunk.choices[0].delta.tool_calls or []:
            if delta_call.function and delta_call.function.name:
                names.append(delta_call.function.name)
            if delta_call.function and delta_call.function.arguments:
                arguments += delta_call.function.arguments
    assert (names, arguments) == (["weather"], WEATHER_ARGS)


def test_stop_sequences_cut_a_chat_answer_before_the_stop(http: httpx.Client) -> None:
    body = http.post("/v1/chat/completions", json=chat_body(stop=["ok2", "tok1"])).json()
    assert body["choices"][0]["message"]["content"] == "tok0 "
    assert body["choices"][0]["finish_reason"] == "stop"
    # The token that ran into the stop was generated too.
    assert body["usage"]["completion_tokens"] == 2
    events = events_of(
        http,
        "/v1/completions",
        {"model": "sim-small", "prompt": "x", "stop": "2 t", "stream": True},
    )
    texts = [data["choices"][0]["text"] for _, data in events[:-1]]
    assert "".join(texts) == "tok0 tok1 tok"
    assert events[-2][1]["choices"][0]["finish_reason"] == "stop"


# ----- 13. cached tokens in usage --------------------------------------------------------------


def test_row_13_cached_tokens_are_reported_in_prompt_tokens_details_whole_and_streamed(
    http: httpx.Client,
) -> None:
    assert (
        "prompt_tokens_details"
        not in http.post("/v1/chat/completions", json=chat_body()).json()["usage"]
    )
    configure(http, cached_tokens=3)
    usage = http.post("/v1/chat/completions", json=chat_body()).json()["usage"]
    assert usage == {
        "prompt_tokens": 4,
        "completion_tokens": 4,
        "total_tokens": 8,
        "prompt_tokens_details": {"cached_tokens": 3},
    }
    events = events_of(
        http,
        "/v1/chat/completions",
        chat_body(stream=True, stream_options={"include_usage": True}),
    )
    assert events[-2][1]["usage"]["prompt_tokens_details"] == {"cached_tokens": 3}
    # Never more than the prompt.
    configure(http, cached_tokens=100)
    usage = http.post("/v1/chat/completions", json=chat_body()).json()["usage"]
    assert usage["prompt_tokens_details"] == {"cached_tokens": 4}


# ----- 14. Anthropic's Messages API ------------------------------------------------------------


def test_row_14_the_anthropic_sdk_reads_a_whole_message_with_anthropics_fields(
    claude: anthropic.Anthropic, http: httpx.Client
) -> None:
    answer = claude.messages.create(
        model="sim-large",
        max_tokens=100,
        system=[{"type": "text", "text": "be very brief"}],
        messages=HELLO,
    )
    assert answer.id.startswith("msg_")
    assert (answer.type, answer.role, answer.model) == ("message", "assistant", "sim-large")
    assert [(b.type, getattr(b, "text", None)) for b in answer.content] == [
        ("text", "tok0 tok1 tok2 tok3 ")
    ]
    assert (answer.stop_reason, answer.stop_sequence) == ("end_turn", None)
    assert (answer.usage.input_tokens, answer.usage.output_tokens) == (7, 4)
    raw = http.post("/v1/messages", json=message(system="brief")).json()
    assert set(raw) == {
        "id",
        "type",
        "role",
        "model",
        "content",
        "stop_reason",
        "stop_sequence",
        "usage",
    }
    assert raw["usage"] == {
        "input_tokens": 5,
        "cache_creation_input_tokens": 0,
        "cache_read_input_tokens": 0,
        "output_tokens": 4,
    }


def test_row_14_a_stream_sends_anthropics_full_event_sequence(http: httpx.Client) -> None:
    events = events_of(http, "/v1/messages", message(stream=True, max_tokens=2))
    names = [name for name, _ in events]
    assert names == [
        "message_start",
        "ping",
        "content_block_start",
        "content_block_delta",
        "content_block_delta",
        "content_block_stop",
        "message_delta",
        "message_stop",
    ]
    assert all(data["type"] == name for name, data in events)
    start = events[0][1]["message"]
    assert start["content"] == [] and start["stop_reason"] is None
    assert (start["type"], start["role"], start["usage"]["input_tokens"]) == (
        "message",
        "assistant",
        4,
    )
    assert events[2][1] == {
        "type": "content_block_start",
        "index": 0,
        "content_block": {"type": "text", "text": ""},
    }
    assert [data["delta"] for _, data in events[3:5]] == [
        {"type": "text_delta", "text": "tok0 "},
        {"type": "text_delta", "text": "tok1 "},
    ]
    assert events[6][1] == {
        "type": "message_delta",
        "delta": {"stop_reason": "max_tokens", "stop_sequence": None},
        "usage": {"output_tokens": 2},
    }


def test_row_14_the_anthropic_sdk_accumulates_a_streamed_message(
    claude: anthropic.Anthropic,
) -> None:
    with claude.messages.stream(model="sim-small", max_tokens=100, messages=HELLO) as stream:
        text = "".join(stream.text_stream)
        final = stream.get_final_message()
    assert text == "tok0 tok1 tok2 tok3 "
    assert final.stop_reason == "end_turn"
    assert (final.usage.input_tokens, final.usage.output_tokens) == (4, 4)


def test_row_14_tool_use_is_a_block_whole_and_streamed_with_input_json_deltas(
    claude: anthropic.Anthropic, http: httpx.Client
) -> None:
    answer = claude.messages.create(
        model="sim-small",
        max_tokens=100,
        messages=HELLO,
        tools=ANTHROPIC_TOOLS,
        tool_choice={"type": "any"},
    )
    (block,) = answer.content
    assert block.type == "tool_use"
    assert block.id.startswith("toolu_")
    assert (block.name, block.input) == ("weather", {"city": "hello brave new world"})
    assert answer.stop_reason == "tool_use"
    assert answer.usage.output_tokens == len(WEATHER_PIECES)

    events = events_of(
        http,
        "/v1/messages",
        message(stream=True, tools=ANTHROPIC_TOOLS, tool_choice={"type": "any"}),
    )
    assert [name for name, _ in events[:3]] == ["message_start", "ping", "content_block_start"]
    assert events[2][1]["content_block"] == {
        "type": "tool_use",
        "id": events[2][1]["content_block"]["id"],
        "name": "weather",
        "input": {},
    }
    deltas = [data["delta"] for name, data in events if name == "content_block_delta"]
    assert deltas == [
        {"type": "input_json_delta", "partial_json": piece} for piece in ["", *WEATHER_PIECES]
    ]
    assert events[-2][1]["delta"]["stop_reason"] == "tool_use"

    with claude.messages.stream(
        model="sim-small",
        max_tokens=100,
        messages=HELLO,
        tools=ANTHROPIC_TOOLS,
        tool_choice={"type": "tool", "name": "search"},
    ) as stream:
        final = stream.get_final_message()
    (block,) = final.content
    assert block.type == "tool_use"
    assert (block.name, block.input) == ("search", {"query": "hello brave new world"})
    # Anthropic ends a forced call with tool_use too (unlike chat's "stop").
    assert final.stop_reason == "tool_use"


def test_row_14_a_tool_result_is_answered_with_its_text(claude: anthropic.Anthropic) -> None:
    answer = claude.messages.create(
        model="sim-small",
        max_tokens=100,
        tools=ANTHROPIC_TOOLS,
        messages=[
            *HELLO,
            {
                "role": "assistant",
                "content": [{"type": "tool_use", "id": "t1", "name": "weather", "input": {}}],
            },
            {
                "role": "user",
                "content": [{"type": "tool_result", "tool_use_id": "t1", "content": "rainy, 9"}],
            },
        ],
    )
    assert [getattr(b, "text", None) for b in answer.content] == ["rainy, 9 "]
    assert answer.stop_reason == "end_turn"


def test_row_14_stop_sequences_and_max_tokens_set_the_stop_reason(
    claude: anthropic.Anthropic,
) -> None:
    stopped = claude.messages.create(
        model="sim-small", max_tokens=100, messages=HELLO, stop_sequences=["nope", "tok2"]
    )
    assert stopped.content[0].text == "tok0 tok1 "
    assert (stopped.stop_reason, stopped.stop_sequence) == ("stop_sequence", "tok2")
    assert stopped.usage.output_tokens == 3
    cut = claude.messages.create(model="sim-small", max_tokens=1, messages=HELLO)
    assert cut.content[0].text == "tok0 "
    assert (cut.stop_reason, cut.usage.output_tokens) == ("max_tokens", 1)


def test_row_14_count_tokens_counts_what_message_start_reports(
    claude: anthropic.Anthropic, http: httpx.Client
) -> None:
    request: dict[str, Any] = {
        "model": "sim-small",
        "system": "you are terse",
        "messages": [*HELLO, {"role": "assistant", "content": [{"type": "text", "text": "ok"}]}],
    }
    counted = claude.messages.count_tokens(**request)
    assert counted.input_tokens == 8
    assert http.post("/v1/messages/count_tokens", json=request).json() == {"input_tokens": 8}
    events = events_of(http, "/v1/messages", {**request, "max_tokens": 5, "stream": True})
    assert events[0][1]["message"]["usage"]["input_tokens"] == 8
    records = http.get("/sim/requests").json()
    assert [r["path"] for r in records] == ["/v1/messages/count_tokens"] * 2 + ["/v1/messages"]


def test_row_14_errors_come_in_anthropics_envelope(
    claude: anthropic.Anthropic, http: httpx.Client
) -> None:
    with pytest.raises(anthropic.NotFoundError) as missing:
        claude.messages.create(model="nothing", max_tokens=10, messages=HELLO)
    assert missing.value.body == {
        "type": "error",
        "error": {"type": "not_found_error", "message": "model: nothing"},
    }
    for bad in (
        {},
        {"model": "sim-small", "messages": HELLO},
        message(max_tokens=0),
        message(messages=[{"role": "robot", "content": "x"}]),
    ):
        resp = http.post("/v1/messages", json=bad)
        assert resp.status_code == 400, bad
        assert resp.json()["type"] == "error"
        assert resp.json()["error"]["type"] == "invalid_request_error"
    resp = http.post("/v1/messages", content=b"{nope")
    assert (resp.status_code, resp.json()["error"]["type"]) == (400, "invalid_request_error")
    with pytest.raises(anthropic.BadRequestError):
        claude.messages.count_tokens(model="sim-small", messages="hello")


def test_row_14_the_key_may_come_as_x_api_key_or_bearer(sim: SimServer, http: httpx.Client) -> None:
    configure(http, api_key="sk-sim")
    with anthropic.Anthropic(base_url=sim.url, api_key="wrong", max_retries=0) as wrong:
        with pytest.raises(anthropic.AuthenticationError) as refused:
            wrong.messages.create(model="sim-small", max_tokens=10, messages=HELLO)
    assert refused.value.body["error"]["type"] == "authentication_error"
    with anthropic.Anthropic(base_url=sim.url, api_key="sk-sim", max_retries=0) as keyed:
        assert keyed.messages.create(model="sim-small", max_tokens=1, messages=HELLO).content
    with anthropic.Anthropic(base_url=sim.url, auth_token="sk-sim", max_retries=0) as bearer:
        assert bearer.messages.create(model="sim-small", max_tokens=1, messages=HELLO).content


def test_row_14_cache_reads_are_left_out_of_input_tokens(http: httpx.Client) -> None:
    configure(http, cached_tokens=3)
    usage = http.post("/v1/messages", json=message()).json()["usage"]
    assert usage == {
        "input_tokens": 1,
        "cache_creation_input_tokens": 0,
        "cache_read_input_tokens": 3,
        "output_tokens": 4,
    }


# ----- 15. vLLM's /v1/messages ---------------------------------------------------------------


def test_row_15_vllm_answers_whole_messages_without_null_fields_and_with_its_stop_reasons(
    http: httpx.Client,
) -> None:
    configure(http, server_info="vllm", cached_tokens=2)
    whole = http.post("/v1/messages", json=message(stop_sequences=["tok2"])).json()
    assert whole == {
        "id": whole["id"],
        "type": "message",
        "role": "assistant",
        "model": "sim-small",
        "content": [{"type": "text", "text": "tok0 tok1 "}],
        "stop_reason": "end_turn",
        "usage": {"input_tokens": 4, "output_tokens": 3},
    }
    assert whole["id"].startswith("chatcmpl-")
    named = http.post(
        "/v1/messages",
        json=message(tools=ANTHROPIC_TOOLS, tool_choice={"type": "tool", "name": "weather"}),
    ).json()
    assert named["stop_reason"] == "end_turn"
    assert named["content"][0]["id"].startswith("chatcmpl-tool-")
    counted = http.post("/v1/messages/count_tokens", json={"model": "sim-small", "messages": HELLO})
    assert counted.json() == {"input_tokens": 4, "context_management": {"original_input_tokens": 4}}


def test_row_15_vllm_streams_messages_without_ping_or_the_message_type(
    http: httpx.Client,
) -> None:
    configure(http, server_info="vllm")
    events = events_of(
        http,
        "/v1/messages",
        message(stream=True, tools=ANTHROPIC_TOOLS, tool_choice={"type": "any"}),
    )
    assert [name for name, _ in events] == [
        "message_start",
        "content_block_start",
        *["content_block_delta"] * len(WEATHER_PIECES),
        "content_block_stop",
        "message_delta",
        "message_stop",
    ]
    assert events[0][1]["message"] == {
        "id": events[0][1]["message"]["id"],
        "content": [],
        "model": "sim-small",
        "stop_reason": None,
        "stop_sequence": None,
        "usage": {"input_tokens": 4, "output_tokens": 0},
    }
    assert events[-2][1] == {
        "type": "message_delta",
        "delta": {"stop_reason": "tool_use"},
        "usage": {"input_tokens": 4, "output_tokens": len(WEATHER_PIECES)},
    }


def test_row_15_vllm_refuses_in_its_own_envelopes_and_reads_only_a_bearer_key(
    sim: SimServer, http: httpx.Client
) -> None:
    configure(http, server_info="vllm")
    invalid = http.post("/v1/messages", json={})
    assert invalid.status_code == 400
    assert invalid.json() == {
        "error": {
            "message": "model: Field required",
            "type": "Bad Request",
            "param": None,
            "code": 400,
        }
    }
    missing = http.post("/v1/messages", json=message(model="nothing"))
    assert missing.status_code == 404
    assert missing.json()["error"]["type"] == "NotFoundError"
    configure(http, api_key="sk-sim")
    refused = http.post("/v1/messages", json=message(), headers={"x-api-key": "sk-sim"})
    assert refused.status_code == 401
    allowed = http.post("/v1/messages", json=message(), headers={"authorization": "Bearer sk-sim"})
    assert allowed.status_code == 200


# ----- 16. OpenAI's Responses API --------------------------------------------------------------


def test_row_16_the_openai_sdk_reads_a_whole_response(oai: openai.OpenAI) -> None:
    response = oai.responses.create(model="sim-small", input="hello there", instructions="be kind")
    assert response.id.startswith("resp_")
    assert (response.object, response.status, response.model) == (
        "response",
        "completed",
        "sim-small",
    )
    assert response.output_text == "tok0 tok1 tok2 tok3 "
    (item,) = response.output
    assert (item.type, item.role, item.status) == ("message", "assistant", "completed")
    assert response.instructions == "be kind"
    usage = response.usage
    assert usage is not None
    assert (usage.input_tokens, usage.output_tokens, usage.total_tokens) == (4, 4, 8)
    assert usage.input_tokens_details.cached_tokens == 0
    items = oai.responses.create(
        model="sim-small",
        input=[
            {"role": "system", "content": "short"},
            {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "a b"}]},
        ],
    )
    assert items.usage is not None and items.usage.input_tokens == 3


def test_row_16_a_stream_sends_the_typed_events_numbered_from_zero(http: httpx.Client) -> None:
    events = events_of(
        http,
        "/v1/responses",
        {"model": "sim-small", "input": "hi", "stream": True, "max_output_tokens": 2},
    )
    names = [name for name, _ in events]
    assert names == [
        "response.created",
        "response.in_progress",
        "response.output_item.added",
        "response.content_part.added",
        "response.output_text.delta",
        "response.output_text.delta",
        "response.output_text.done",
        "response.content_part.done",
        "response.output_item.done",
        "response.incomplete",
    ]
    assert [data["sequence_number"] for _, data in events] == list(range(len(events)))
    assert all(data["type"] == name for name, data in events)
    created = events[0][1]["response"]
    assert (created["status"], created["output"], created["usage"]) == ("in_progress", [], None)
    assert [data["delta"] for _, data in events[4:6]] == ["tok0 ", "tok1 "]
    assert events[6][1]["text"] == "tok0 tok1 "
    final = events[-1][1]["response"]
    assert (final["status"], final["incomplete_details"]) == (
        "incomplete",
        {"reason": "max_output_tokens"},
    )
    assert final["usage"]["output_tokens"] == 2


def test_row_16_the_openai_sdk_accumulates_a_streamed_response(oai: openai.OpenAI) -> None:
    with oai.responses.stream(model="sim-small", input="hello there") as stream:
        kinds = [event.type for event in stream]
        final = stream.get_final_response()
    assert kinds[0] == "response.created" and kinds[-1] == "response.completed"
    assert final.output_text == "tok0 tok1 tok2 tok3 "
    assert final.usage is not None and final.usage.output_tokens == 4


def test_row_16_function_calls_whole_and_streamed_and_their_output_is_echoed(
    oai: openai.OpenAI, http: httpx.Client
) -> None:
    response = oai.responses.create(
        model="sim-small", input=HELLO, tools=RESPONSES_TOOLS, tool_choice="required"
    )
    (call,) = response.output
    assert call.type == "function_call"
    assert (call.name, call.arguments, call.status) == ("weather", WEATHER_ARGS, "completed")
    assert call.call_id.startswith("call_")

    events = events_of(
        http,
        "/v1/responses",
        {
            "model": "sim-small",
            "input": HELLO,
            "tools": RESPONSES_TOOLS,
            "tool_choice": "required",
            "stream": True,
        },
    )
    names = [name for name, _ in events]
    assert names == [
        "response.created",
        "response.in_progress",
        "response.output_item.added",
        *["response.function_call_arguments.delta"] * len(WEATHER_PIECES),
        "response.function_call_arguments.done",
        "response.output_item.done",
        "response.completed",
    ]
    added = events[2][1]["item"]
    assert (added["type"], added["status"], added["arguments"]) == (
        "function_call",
        "in_progress",
        "",
    )
    assert [data["delta"] for _, data in events[3:-3]] == WEATHER_PIECES
    assert events[-3][1]["arguments"] == WEATHER_ARGS

    with oai.responses.stream(
        model="sim-small",
        tools=RESPONSES_TOOLS,
        input=[
            *HELLO,
            {
                "type": "function_call",
                "call_id": call.call_id,
                "name": "weather",
                "arguments": call.arguments,
            },
            {"type": "function_call_output", "call_id": call.call_id, "output": "cold, -3"},
        ],
    ) as stream:
        final = stream.get_final_response()
    assert final.output_text == "cold, -3 "


@pytest.mark.parametrize(
    ("style", "last"), [("none", "response.incomplete"), ("vllm", "response.completed")]
)
def test_row_16_max_output_tokens_makes_the_response_incomplete(
    http: httpx.Client, oai: openai.OpenAI, style: str, last: str
) -> None:
    configure(http, server_info=style)
    response = oai.responses.create(model="sim-small", input="hi", max_output_tokens=1)
    assert response.status == "incomplete"
    assert response.incomplete_details is not None
    assert response.incomplete_details.reason == "max_output_tokens"
    assert response.output_text == "tok0 "
    events = events_of(
        http,
        "/v1/responses",
        {"model": "sim-small", "input": "hi", "stream": True, "max_output_tokens": 1},
    )
    assert events[-1][0] == last
    assert events[-1][1]["response"]["status"] == "incomplete"


async def test_row_16_vllm_sends_created_and_in_progress_before_admission(
    sim: SimServer, client: aiohttp.ClientSession
) -> None:
    await post_config(client, server_info="vllm", slots=0)
    reader, writer = await raw_post(sim.url, "/v1/responses", {"input": "hi", "stream": True})
    try:
        head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), 5)
        assert head.startswith(b"HTTP/1.1 200 OK\r\n")
        seen = b""
        while b"response.in_progress" not in seen:
            seen += await asyncio.wait_for(reader.read(65536), 5)
        assert b"output_text" not in seen
        assert (await stats(client))["waiting"] == 1
        await post_config(client, slots=1)
        while b"response.completed" not in seen:
            seen += await asyncio.wait_for(reader.read(65536), 5)
    finally:
        writer.close()


# ----- 17. stored responses --------------------------------------------------------------------


@pytest.mark.parametrize(
    ("style", "status", "param"),
    [("none", 400, "previous_response_id"), ("vllm", 404, "response_id")],
)
def test_row_17_without_a_store_a_previous_response_is_not_found(
    http: httpx.Client, style: str, status: int, param: str
) -> None:
    configure(http, server_info=style)
    first = http.post("/v1/responses", json={"model": "sim-small", "input": "hi", "store": True})
    assert first.json()["store"] is False  # ignored, as vLLM ignores it by default
    later = http.post(
        "/v1/responses",
        json={"model": "sim-small", "input": "more", "previous_response_id": first.json()["id"]},
    )
    assert later.status_code == status
    assert later.json()["error"]["param"] == param
    assert "not found" in later.json()["error"]["message"]


def test_row_17_with_a_store_a_response_continues_the_stored_conversation(
    http: httpx.Client, oai: openai.OpenAI
) -> None:
    configure(http, responses_store=True)
    first = oai.responses.create(model="sim-small", input="one two three")
    assert first.store is True
    second = oai.responses.create(model="sim-small", input="four", previous_response_id=first.id)
    # The stored input (3) and output (4) come before the new input (1).
    assert second.usage is not None and second.usage.input_tokens == 8
    assert second.previous_response_id == first.id
    unstored = oai.responses.create(model="sim-small", input="x", store=False)
    with pytest.raises(openai.BadRequestError):
        oai.responses.create(model="sim-small", input="y", previous_response_id=unstored.id)
    http.post("/sim/reset").raise_for_status()
    with pytest.raises(openai.BadRequestError):
        oai.responses.create(model="sim-small", input="y", previous_response_id=first.id)


def test_responses_reject_bad_bodies_in_openais_envelope(http: httpx.Client) -> None:
    for bad in (
        {},
        {"model": "sim-small"},
        {"model": "sim-small", "input": 3},
        {"model": "sim-small", "input": "x", "max_output_tokens": 0},
        {"model": "sim-small", "input": "x", "tools": [{"type": "function"}]},
    ):
        resp = http.post("/v1/responses", json=bad)
        assert resp.status_code == 400, bad
        assert set(resp.json()["error"]) == {"message", "type", "param", "code"}
    missing = http.post("/v1/responses", json={"model": "nothing", "input": "x"})
    assert (missing.status_code, missing.json()["error"]["code"]) == (404, "model_not_found")


# ----- 18. what detection reads ----------------------------------------------------------------


async def test_row_18_detection_reads_each_surface_as_served_only_with_its_flag(
    sim: SimServer, client: aiohttp.ClientSession
) -> None:
    for style in ("none", "vllm", "sglang"):
        for messages, responses in ((True, False), (False, True), (False, False)):
            await post_config(client, server_info=style, messages=messages, responses=responses)
            async with httpx.AsyncClient() as probe:
                profile = await detect_engine(probe, sim.url + "/v1", None, now=0.0)
            assert (profile.messages, profile.responses) == (messages, responses), style


# ----- the new paths are engine requests like chat ---------------------------------------------


async def post_config(client: aiohttp.ClientSession, **changes: Any) -> None:
    async with client.post("/sim/config", json=changes) as resp:
        assert resp.status == 200, await resp.text()


async def stats(client: aiohttp.ClientSession) -> dict[str, int]:
    async with client.get("/sim/stats") as resp:
        result: dict[str, int] = await resp.json()
        return result


async def wait_for_stats(client: aiohttp.ClientSession, **expected: int) -> dict[str, int]:
    deadline = time.monotonic() + 5
    while True:
        current = await stats(client)
        if all(current[k] == v for k, v in expected.items()):
            return current
        assert time.monotonic() < deadline, f"stats stayed {current}, wanted {expected}"
        await asyncio.sleep(0.005)


async def raw_post(url: str, path: str, body: dict[str, Any]) -> tuple[asyncio.StreamReader, Any]:
    parts = urlsplit(url)
    reader, writer = await asyncio.open_connection(parts.hostname, parts.port)
    data = json.dumps({"model": "sim-small", **body}).encode()
    writer.write(
        b"POST %b HTTP/1.1\r\nHost: sim\r\nContent-Type: application/json\r\n"
        b"Content-Length: %d\r\n\r\n" % (path.encode(), len(data)) + data
    )
    await writer.drain()
    return reader, writer


SURFACES = {
    "chat": ("/v1/chat/completions", {"model": "sim-small", "messages": HELLO}),
    "messages": ("/v1/messages", message()),
    "responses": ("/v1/responses", {"model": "sim-small", "input": "hello"}),
}


async def test_the_new_paths_are_open_wait_in_priority_order_and_are_recorded(
    client: aiohttp.ClientSession,
) -> None:
    await post_config(client, slots=0, server_info="sglang", priority_scheduling=True)
    finished: list[str] = []

    async def run(name: str, priority: int) -> None:
        path, body = SURFACES[name]
        async with client.post(path, json={**body, "priority": priority}) as resp:
            assert resp.status == 200, await resp.text()
            await resp.read()
        finished.append(name)

    tasks = []
    for count, (name, priority) in enumerate(
        [("chat", 1), ("messages", 5), ("responses", 3)], start=1
    ):
        tasks.append(asyncio.create_task(run(name, priority)))
        await wait_for_stats(client, waiting=count)
    current = await stats(client)
    assert (current["open"], current["max_open_seen"]) == (3, 3)
    await post_config(client, slots=1)
    await asyncio.gather(*tasks)
    assert finished == ["messages", "responses", "chat"]
    current = await wait_for_stats(client, open=0)
    assert current["max_inflight_seen"] == 1
    async with client.get("/sim/requests") as resp:
        records = await resp.json()
    assert [r["path"] for r in records] == [
        "/v1/chat/completions",
        "/v1/messages",
        "/v1/responses",
    ]
    assert all(r["status"] == 200 and r["finished"] for r in records)


@pytest.mark.parametrize("name", ["messages", "responses"])
async def test_a_client_leaving_mid_stream_frees_the_slot(
    client: aiohttp.ClientSession, name: str
) -> None:
    await post_config(client, slots=1, tokens=10_000, token_delay=0.01)
    path, body = SURFACES[name]
    resp = await client.post(path, json={**body, "stream": True})
    seen = b""
    while b"delta" not in seen:
        seen += await resp.content.readany()
    resp.close()
    await wait_for_stats(client, cancelled=1, inflight=0, open=0)
    async with client.post(path, json={**body, "max_tokens": 1, "max_output_tokens": 1}) as again:
        assert again.status == 200


@pytest.mark.parametrize("stream", [False, True])
def test_a_full_queue_refuses_each_surface_in_its_envelope(
    http: httpx.Client, stream: bool
) -> None:
    configure(http, server_info="sglang", slots=0, max_queued_requests=0)
    resp = http.post("/v1/messages", json=message(stream=stream))
    if stream:
        assert resp.status_code == 200
        assert resp.text == (
            "event: error\ndata: "
            + json.dumps(
                {"type": "error", "error": {"type": "overloaded_error", "message": QUEUE_FULL}},
                separators=(",", ":"),
            )
            + "\n\n"
        )
    else:
        assert resp.status_code == 503
        assert resp.json() == {
            "type": "error",
            "error": {"type": "overloaded_error", "message": QUEUE_FULL},
        }
    resp = http.post("/v1/responses", json={"model": "sim-small", "input": "x", "stream": stream})
    if stream:
        (event,) = [line for line in resp.text.splitlines() if line.startswith("data: ")]
        assert json.loads(event[6:]) == {
            "type": "error",
            "code": "queue_full",
            "message": QUEUE_FULL,
            "param": None,
            "sequence_number": 0,
        }
    else:
        assert resp.status_code == 503
        assert resp.json()["message"] == QUEUE_FULL


def test_injected_failures_take_the_surfaces_envelope(http: httpx.Client) -> None:
    configure(http, fail_next=1, fail_status=529)
    resp = http.post("/v1/messages", json=message())
    assert resp.status_code == 529
    assert resp.json() == {
        "type": "error",
        "error": {"type": "overloaded_error", "message": "Injected failure 529"},
    }
    resp = http.post(
        "/v1/responses", json={"model": "sim-small", "input": "x"}, headers={"x-sim-fail": "500"}
    )
    assert resp.status_code == 500
    assert resp.json()["error"]["code"] == "sim_injected_failure"


def test_row_14_each_error_status_has_the_type_anthropic_documents(http: httpx.Client) -> None:
    # https://docs.anthropic.com/en/api/errors; an unlisted 4xx is invalid_request_error.
    documented = {
        400: "invalid_request_error",
        401: "authentication_error",
        403: "permission_error",
        404: "not_found_error",
        413: "request_too_large",
        422: "invalid_request_error",
        429: "rate_limit_error",
        500: "api_error",
        503: "overloaded_error",
        504: "timeout_error",
        529: "overloaded_error",
    }
    answered = {}
    for status in documented:
        resp = http.post("/v1/messages", json=message(), headers={"x-sim-fail": str(status)})
        assert resp.status_code == status
        answered[status] = resp.json()["error"]["type"]
    assert answered == documented


def test_directives_reach_the_new_paths(http: httpx.Client) -> None:
    configure(http, directives=True)

    def ask(text: str, **extra: Any) -> dict[str, Any]:
        return message(
            messages=[{"role": "user", "content": [{"type": "text", "text": text}]}], **extra
        )

    failed = http.post("/v1/messages", json=ask("[[sim:status code=503]] hi"))
    assert failed.status_code == 503
    assert failed.json()["error"]["type"] == "overloaded_error"
    flat = http.post("/v1/messages", json=ask("[[sim:status code=500 shape=sglang]] hi"))
    assert flat.json()["object"] == "error"
    bad = http.post("/v1/messages", json=ask("[[sim:nonsense]] hi"))
    assert (bad.status_code, bad.json()["error"]["type"]) == (400, "invalid_request_error")
    # A cut stream still sends the events before its first token, then `after` tokens.
    names = []
    with pytest.raises(httpx.RemoteProtocolError):
        with http.stream(
            "POST", "/v1/messages", json=ask("[[sim:cut after=1]] hi", stream=True)
        ) as resp:
            for line in resp.iter_lines():
                if line.startswith("event: "):
                    names.append(line[7:])
    assert names == ["message_start", "ping", "content_block_start", "content_block_delta"]
    full = http.post(
        "/v1/responses",
        json={"model": "sim-small", "stream": True, "input": "[[sim:queue-full]] hi"},
    )
    assert '"type":"error"' in full.text and QUEUE_FULL in full.text
    counted = http.post(
        "/v1/messages/count_tokens",
        json={
            "model": "sim-small",
            "messages": [{"role": "user", "content": "[[sim:bad-json]] x"}],
        },
    )
    assert counted.status_code == 200
    with pytest.raises(ValueError):
        counted.json()
    records = http.get("/sim/requests").json()
    assert [r["fault"] for r in records] == [
        "status",
        "status",
        None,
        "cut",
        "queue-full",
        "bad-json",
    ]


def test_the_command_line_turns_the_surfaces_on() -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    # A fixed argument list of our own module: nothing untrusted reaches the command.
    process = subprocess.Popen(  # noqa: S603
        [
            sys.executable,
            "-m",
            "gateway.sim",
            "--port",
            str(port),
            "--token-delay-ms",
            "0",
            "--messages",
            "--responses",
            "--responses-store",
            "--tool-calls",
            "2",
            "--cached-tokens",
            "3",
        ],
        stderr=subprocess.DEVNULL,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 10
        while True:
            try:
                state = httpx.post(url + "/sim/config", json={}).json()
                break
            except httpx.ConnectError:
                assert time.monotonic() < deadline and process.poll() is None
                time.sleep(0.02)
        assert {
            k: state[k]
            for k in ("messages", "responses", "responses_store", "tool_calls", "cached_tokens")
        } == {
            "messages": True,
            "responses": True,
            "responses_store": True,
            "tool_calls": 2,
            "cached_tokens": 3,
        }
        assert httpx.post(url + "/v1/messages", json=message()).status_code == 200
    finally:
        process.terminate()
        process.wait(5)
