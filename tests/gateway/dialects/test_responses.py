"""The Responses surface on a chat completions backend: requests, answers and streams translated
both ways, checked against the published shapes, the `openai` SDK's own types and stream
accumulator, and what Codex CLI reads."""

from __future__ import annotations

import copy
import json
from typing import Any

import httpx
import openai
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from openai.types.chat import ChatCompletion, ChatCompletionChunk
from openai.types.responses import Response, ResponseStreamEvent
from pydantic import TypeAdapter

from gateway.core.usage import Usage
from gateway.dialects.responses.errors import ResponsesError
from gateway.dialects.responses.from_chat import from_chat
from gateway.dialects.responses.native import NativeUsage, usage_of_answer
from gateway.dialects.responses.stream import StreamTranslator
from gateway.dialects.responses.to_chat import to_chat
from gateway.dialects.responses.validate import needs_state, state_error, validate

STREAM_EVENT: TypeAdapter[Any] = TypeAdapter(ResponseStreamEvent)
TERMINAL = {"response.completed", "response.incomplete", "response.failed"}


# ----- helpers ---------------------------------------------------------------------------------


def sse(data: bytes) -> list[dict[str, Any]]:
    """The events of a translated stream, each checked as the SDK's own type: `event:` names the
    data's type, sequence numbers count up from 0 without a gap."""
    assert data.endswith(b"\n\n")
    events = []
    for block in data[:-2].split(b"\n\n"):
        name, payload = block.split(b"\n")
        assert name.startswith(b"event: ") and payload.startswith(b"data: ")
        event = json.loads(payload[6:])
        assert name[7:].decode() == event["type"]
        assert event["sequence_number"] == len(events)
        STREAM_EVENT.validate_python(event, strict=True)
        events.append(event)
    return events


def kinds(data: bytes) -> list[str]:
    return [event["type"] for event in sse(data)]


def stream(
    chunks: list[Any], request: dict[str, Any] | None = None
) -> tuple[bytes, StreamTranslator]:
    translator = StreamTranslator(model="client-model", request=request or REQUEST)
    data = b"".join(translator.feed(chunk) for chunk in chunks) + translator.finish()
    return data, translator


def shape(response: dict[str, Any]) -> dict[str, Any]:
    """A Response without what differs between two translations of one answer: its ids and
    clock readings (call_id stays: it is the engine's)."""
    response = copy.deepcopy(response)
    for key in ("id", "created_at", "completed_at"):
        response.pop(key, None)
    for item in response["output"]:
        item.pop("id", None)
    return response


def sdk_stream(data: bytes, **params: Any) -> openai.OpenAI:
    """The real `openai` client over a transport that answers every request with `data`."""

    def answer(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, content=data, headers={"content-type": "text/event-stream"})

    http = httpx.Client(transport=httpx.MockTransport(answer))
    return openai.OpenAI(api_key="k", base_url="http://engine.invalid/v1", http_client=http)


def sdk_final(data: bytes) -> dict[str, Any]:
    """What the SDK's own stream accumulator (`client.responses.stream(...)`,
    openai/lib/streaming/responses/_responses.py) makes of a translated stream."""
    client = sdk_stream(data)
    with client.responses.stream(model="client-model", input="hi") as events:
        final = events.get_final_response().model_dump(mode="json")
    # What the SDK adds when it parses structured output is not on the wire.
    for item in final["output"]:
        item.pop("parsed_arguments", None)
        for part in item.get("content") or ():
            part.pop("parsed", None)
    return final  # type: ignore[no-any-return]


def response_dict(response: dict[str, Any]) -> dict[str, Any]:
    """A Response as the SDK reads it, in the same form as `sdk_final`."""
    return Response.model_validate(response, strict=True).model_dump(mode="json")


# What Codex CLI takes from a Responses stream, by the rules of its reader: openai/codex
# codex-rs/codex-api/src/sse/responses.rs (`process_sse`: response.created needs a response,
# output_item.added/.done items must parse as its `ResponseItem`, output_text.delta carries the
# text, response.completed needs response.id and may carry usage with input/output/total
# tokens, response.failed's response.error.message is the error, a stream without
# response.completed is an error) and codex-rs/protocol/src/models.rs (`ResponseItem`).
CODEX_CONTENT = {"input_text", "output_text", "input_image"}


def codex_item(item: dict[str, Any]) -> None:
    if item["type"] == "message":
        assert isinstance(item["role"], str)
        for part in item["content"]:
            assert part["type"] in CODEX_CONTENT and isinstance(part["text"], str)
    elif item["type"] == "function_call":
        assert all(isinstance(item[k], str) for k in ("name", "arguments", "call_id"))
    elif item["type"] == "reasoning":
        assert isinstance(item["summary"], list)
        for part in item.get("content") or []:
            assert part["type"] in ("reasoning_text", "text") and isinstance(part["text"], str)
        assert item.get("encrypted_content") is None or isinstance(item["encrypted_content"], str)


def codex_reads(data: bytes) -> dict[str, Any]:
    items, text, usage, error, completed = [], [], None, None, False
    for event in sse(data):
        kind = event["type"]
        if kind in ("response.output_item.added", "response.output_item.done"):
            codex_item(event["item"])
            if kind == "response.output_item.done":
                items.append(event["item"])
        elif kind == "response.output_text.delta":
            text.append(event["delta"])
        elif kind == "response.created":
            assert isinstance(event["response"], dict)
        elif kind == "response.failed":
            error = (event["response"].get("error") or {}).get("message") or "response.failed"
        elif kind == "response.completed":
            assert isinstance(event["response"]["id"], str)
            usage = event["response"].get("usage")
            if usage is not None:
                assert all(
                    isinstance(usage[k], int)
                    for k in ("input_tokens", "output_tokens", "total_tokens")
                )
            completed = True
    if not completed and error is None:
        error = "stream closed before response.completed"
    return {"items": items, "text": "".join(text), "usage": usage, "error": error}


# A chat completion and its chunks as the chat completions reference gives them:
# https://developers.openai.com/api/reference/resources/chat/subresources/completions/methods/create
# and .../streaming-events; openai-python src/openai/types/chat/chat_completion.py and
# chat_completion_chunk.py (each fixture is checked against those types below).


def answer(
    finish: str = "stop", usage: dict[str, Any] | None = None, **message: Any
) -> dict[str, Any]:
    body = {
        "id": "chatcmpl-1",
        "object": "chat.completion",
        "created": 1741569952,
        "model": "engine-model",
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": None, **message},
                "logprobs": None,
                "finish_reason": finish,
            }
        ],
        "usage": usage,
    }
    ChatCompletion.model_validate(body)
    return body


def chunk(finish: str | None = None, usage: Any = None, **delta: Any) -> dict[str, Any]:
    body = {
        "id": "chatcmpl-1",
        "object": "chat.completion.chunk",
        "created": 1741569952,
        "model": "engine-model",
        "choices": [{"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}],
        "usage": usage,
    }
    ChatCompletionChunk.model_validate(body)
    return body


def usage_chunk(usage: dict[str, Any]) -> dict[str, Any]:
    # stream_options.include_usage: "an additional chunk ... with an empty choices array".
    body = {
        "id": "chatcmpl-1",
        "object": "chat.completion.chunk",
        "created": 1741569952,
        "model": "engine-model",
        "choices": [],
        "usage": usage,
    }
    ChatCompletionChunk.model_validate(body)
    return body


def call_delta(
    index: int, *, id: str | None = None, name: str | None = None, args: str | None = None
) -> dict[str, Any]:
    function = {k: v for k, v in (("name", name), ("arguments", args)) if v is not None}
    delta: dict[str, Any] = {"index": index, "function": function}
    if id is not None:
        delta.update(id=id, type="function")
    return delta


USAGE = {"prompt_tokens": 19, "completion_tokens": 10, "total_tokens": 29}
WEATHER_TOOL = {
    "type": "function",
    "name": "get_weather",
    "description": "Get current temperature for a given location.",
    "parameters": {
        "type": "object",
        "properties": {"location": {"type": "string"}},
        "required": ["location"],
        "additionalProperties": False,
    },
    "strict": True,
}
CHAT_WEATHER_TOOL = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "description": "Get current temperature for a given location.",
        "parameters": WEATHER_TOOL["parameters"],
        "strict": True,
    },
}
REQUEST = {"model": "client-model", "input": "What is the weather like in Paris today?"}
TOOLS_REQUEST = {**REQUEST, "tools": [WEATHER_TOOL]}


# ----- requests --------------------------------------------------------------------------------

# Responses requests: https://developers.openai.com/api/reference/resources/responses/methods/create
# (input a string or items, instructions "a system (or developer) message inserted into the
# model's context"), openai-python src/openai/types/responses/response_create_params.py,
# easy_input_message_param.py (roles user/assistant/system/developer), response_input_text_param,
# response_input_image_param.py ("a fully qualified URL or base64 encoded image in a data URL"),
# response_output_message_param.py (an assistant turn sent back), response_input_audio_param.py;
# https://developers.openai.com/api/docs/guides/images-vision.
# Chat requests: openai-python src/openai/types/chat/completion_create_params.py,
# chat_completion_content_part_image_param.py, chat_completion_content_part_input_audio_param.py.
MESSAGES = [
    pytest.param(
        {"model": "m", "input": "Tell me a three sentence bedtime story about a unicorn."},
        [{"role": "user", "content": "Tell me a three sentence bedtime story about a unicorn."}],
        id="a string input is one user message",
    ),
    pytest.param(
        {"model": "m", "instructions": "Talk like a pirate.", "input": "Are semicolons optional?"},
        [
            {"role": "system", "content": "Talk like a pirate."},
            {"role": "user", "content": "Are semicolons optional?"},
        ],
        id="instructions are the system message",
    ),
    pytest.param(
        {
            "model": "m",
            "instructions": "You are Codex.",
            "input": [
                {"role": "developer", "content": "Talk like a pirate."},
                {"type": "message", "role": "system", "content": "Be brief."},
                {"role": "user", "content": "Hi"},
                {"role": "assistant", "content": "Arr, hello."},
                {"role": "developer", "content": "Now switch to French."},
                {"role": "user", "content": "Bye"},
            ],
        },
        [
            {"role": "system", "content": "You are Codex.\n\nTalk like a pirate.\n\nBe brief."},
            {"role": "user", "content": "Hi"},
            {"role": "assistant", "content": "Arr, hello."},
            {"role": "system", "content": "Now switch to French."},
            {"role": "user", "content": "Bye"},
        ],
        id="the opening system and developer messages are one system message, later ones stay",
    ),
    pytest.param(
        {
            "model": "m",
            "input": [
                {
                    "role": "user",
                    "content": [
                        {"type": "input_text", "text": "what is in this image?"},
                        {
                            "type": "input_image",
                            "image_url": "https://upload.wikimedia.org/wikipedia/commons/3/3b/LibreOffice_Logo_Flat.svg",
                        },
                        {
                            "type": "input_image",
                            "image_url": "data:image/jpeg;base64,/9j/4AAQSkZJRg==",
                            "detail": "low",
                        },
                    ],
                }
            ],
        },
        [
            {
                "role": "user",
                "content": [
                    {"type": "text", "text": "what is in this image?"},
                    {
                        "type": "image_url",
                        "image_url": {
                            "url": "https://upload.wikimedia.org/wikipedia/commons/3/3b/LibreOffice_Logo_Flat.svg"
                        },
                    },
                    {
                        "type": "image_url",
                        "image_url": {
                            "url": "data:image/jpeg;base64,/9j/4AAQSkZJRg==",
                            "detail": "low",
                        },
                    },
                ],
            }
        ],
        id="images by URL and as base64 data URLs are image_url parts",
    ),
    pytest.param(
        {
            "model": "m",
            "input": [
                {
                    "role": "user",
                    "content": [
                        {"type": "input_text", "text": "First line."},
                        {"type": "input_text", "text": "Second line."},
                    ],
                },
                {
                    "id": "msg_67b73f697ba4819183a15cc17d011509",
                    "type": "message",
                    "role": "assistant",
                    "status": "completed",
                    "content": [
                        {"type": "output_text", "text": "An answer.", "annotations": []},
                        {"type": "refusal", "refusal": "Not that."},
                    ],
                },
            ],
        },
        [
            {"role": "user", "content": "First line.\nSecond line."},
            {"role": "assistant", "content": "An answer.\nNot that."},
        ],
        id="text parts are joined into one string, an assistant's output_text too",
    ),
    pytest.param(
        {
            "model": "m",
            "input": [
                {
                    "role": "user",
                    "content": [
                        {"type": "input_text", "text": "Transcribe."},
                        {
                            "type": "input_audio",
                            "input_audio": {"data": "UklGRg==", "format": "wav"},
                        },
                    ],
                }
            ],
        },
        [
            {
                "role": "user",
                "content": [
                    {"type": "text", "text": "Transcribe."},
                    {"type": "input_audio", "input_audio": {"data": "UklGRg==", "format": "wav"}},
                ],
            }
        ],
        id="audio is an input_audio part",
    ),
]

# Function calls sent back: https://developers.openai.com/api/docs/guides/function-calling (the
# model's function_call item appended to the input, then a function_call_output with its
# call_id), openai-python src/openai/types/responses/response_function_tool_call_param.py and
# response_input_item_param.py (FunctionCallOutput: output a string or input_text/input_image
# parts); reasoning items as Codex sends them back with store: false, openai/codex
# codex-rs/protocol/src/models.rs (ResponseItem::Reasoning; ids are not serialized).
# Chat: chat_completion_assistant_message_param.py (tool_calls),
# chat_completion_tool_message_param.py.
CALL = {
    "type": "function_call",
    "id": "fc_12345xyz",
    "call_id": "call_12345xyz",
    "name": "get_weather",
    "arguments": '{"location":"Paris, France"}',
}
CHAT_CALL = {
    "id": "call_12345xyz",
    "type": "function",
    "function": {"name": "get_weather", "arguments": '{"location":"Paris, France"}'},
}
CALLS = [
    pytest.param(
        [
            {"role": "user", "content": "What is the weather like in Paris today?"},
            CALL,
            {"type": "function_call_output", "call_id": "call_12345xyz", "output": "14°C"},
        ],
        [
            {"role": "user", "content": "What is the weather like in Paris today?"},
            {"role": "assistant", "content": None, "tool_calls": [CHAT_CALL]},
            {"role": "tool", "tool_call_id": "call_12345xyz", "content": "14°C"},
        ],
        id="a function call and its output are an assistant's tool call and a tool message",
    ),
    pytest.param(
        [
            {"role": "user", "content": "Weather in Paris and Bogotá?"},
            {
                "type": "reasoning",
                "summary": [],
                "content": [{"type": "reasoning_text", "text": "Two cities, two calls."}],
                "encrypted_content": None,
            },
            {
                "type": "message",
                "role": "assistant",
                "content": [{"type": "output_text", "text": "Checking."}],
            },
            CALL,
            {**CALL, "id": "fc_2", "call_id": "call_2", "arguments": '{"location":"Bogotá"}'},
            {"type": "function_call_output", "call_id": "call_12345xyz", "output": "14°C"},
            {"type": "function_call_output", "call_id": "call_2", "output": "18°C"},
            {"role": "user", "content": "Thanks"},
        ],
        [
            {"role": "user", "content": "Weather in Paris and Bogotá?"},
            {
                "role": "assistant",
                "content": "Checking.",
                "tool_calls": [
                    CHAT_CALL,
                    {
                        "id": "call_2",
                        "type": "function",
                        "function": {"name": "get_weather", "arguments": '{"location":"Bogotá"}'},
                    },
                ],
            },
            {"role": "tool", "tool_call_id": "call_12345xyz", "content": "14°C"},
            {"role": "tool", "tool_call_id": "call_2", "content": "18°C"},
            {"role": "user", "content": "Thanks"},
        ],
        id="one turn's text and parallel calls are one assistant message, reasoning is dropped",
    ),
    pytest.param(
        [
            {"role": "user", "content": "Show me the chart."},
            {**CALL, "name": "view_image", "arguments": '{"path":"chart.png"}'},
            {
                "type": "function_call_output",
                "call_id": "call_12345xyz",
                "output": [
                    {"type": "input_text", "text": "chart.png"},
                    {"type": "input_image", "image_url": "data:image/png;base64,iVBORw0KGgo="},
                ],
            },
            {"role": "user", "content": "Describe it."},
        ],
        [
            {"role": "user", "content": "Show me the chart."},
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {
                        "id": "call_12345xyz",
                        "type": "function",
                        "function": {"name": "view_image", "arguments": '{"path":"chart.png"}'},
                    }
                ],
            },
            {"role": "tool", "tool_call_id": "call_12345xyz", "content": "chart.png"},
            {
                "role": "user",
                "content": [
                    {
                        "type": "image_url",
                        "image_url": {"url": "data:image/png;base64,iVBORw0KGgo="},
                    }
                ],
            },
            {"role": "user", "content": "Describe it."},
        ],
        id="a function output's images follow the tool message as the user's",
    ),
]


@pytest.mark.parametrize(("request_", "messages"), MESSAGES)
def test_input_becomes_chat_messages(request_: dict[str, Any], messages: list[Any]) -> None:
    validate(request_)
    assert to_chat(request_) == {"model": "m", "messages": messages}


@pytest.mark.parametrize(("items", "messages"), CALLS)
def test_function_calls_and_outputs_become_tool_calls_and_tool_messages(
    items: list[Any], messages: list[Any]
) -> None:
    request_ = {"model": "m", "input": items, "tools": [WEATHER_TOOL]}
    validate(request_)
    chat = to_chat(request_)
    assert chat["messages"] == messages
    assert chat["tools"] == [CHAT_WEATHER_TOOL]


# Parameters: response_create_params.py (max_output_tokens, temperature 0-2, top_p,
# parallel_tool_calls, user, tool_choice, text.format, reasoning.effort) and
# https://developers.openai.com/api/docs/guides/structured-outputs (text.format json_schema:
# name, schema, strict); tool_choice_function_param.py ({"type": "function", "name"}),
# tool_choice_allowed_param.py. Chat: completion_create_params.py (max_tokens,
# response_format json_schema {name, schema, strict}, reasoning_effort, stream_options
# include_usage), chat_completion_named_tool_choice_param.py,
# chat_completion_function_tool_param.py / shared_params/function_definition.py.
# max_tokens rather than max_completion_tokens: vLLM (chat_completion/protocol.py) and SGLang
# read both, llama.cpp's server and Ollama's OpenAI compatibility read max_tokens.
PARAMETERS = [
    pytest.param(
        {"max_output_tokens": 256, "temperature": 0.2, "top_p": 0.9, "user": "alice"},
        {"max_tokens": 256, "temperature": 0.2, "top_p": 0.9, "user": "alice"},
        id="max_output_tokens is max_tokens, sampling and user pass",
    ),
    pytest.param(
        {"tools": [WEATHER_TOOL], "tool_choice": "required", "parallel_tool_calls": False},
        {"tools": [CHAT_WEATHER_TOOL], "tool_choice": "required", "parallel_tool_calls": False},
        id="function tools, tool_choice and parallel_tool_calls",
    ),
    pytest.param(
        {"tools": [WEATHER_TOOL], "tool_choice": {"type": "function", "name": "get_weather"}},
        {
            "tools": [CHAT_WEATHER_TOOL],
            "tool_choice": {"type": "function", "function": {"name": "get_weather"}},
        },
        id="a named tool_choice",
    ),
    pytest.param(
        {
            "tools": [WEATHER_TOOL, {"type": "function", "name": "get_time"}],
            "tool_choice": {
                "type": "allowed_tools",
                "mode": "required",
                "tools": [{"type": "function", "name": "get_time"}],
            },
        },
        {
            "tools": [{"type": "function", "function": {"name": "get_time"}}],
            "tool_choice": "required",
        },
        id="allowed_tools keeps only those tools, with its mode",
    ),
    pytest.param(
        {"tool_choice": "auto", "parallel_tool_calls": True},
        {},
        id="tool_choice and parallel_tool_calls without tools are left out",
    ),
    pytest.param(
        {
            "text": {
                "format": {
                    "type": "json_schema",
                    "name": "calendar_event",
                    "schema": {"type": "object", "properties": {"name": {"type": "string"}}},
                    "strict": True,
                }
            }
        },
        {
            "response_format": {
                "type": "json_schema",
                "json_schema": {
                    "name": "calendar_event",
                    "schema": {"type": "object", "properties": {"name": {"type": "string"}}},
                    "strict": True,
                },
            }
        },
        id="text.format json_schema is response_format json_schema",
    ),
    pytest.param(
        {"text": {"format": {"type": "json_object"}}},
        {"response_format": {"type": "json_object"}},
        id="text.format json_object is response_format json_object",
    ),
    pytest.param(
        {"text": {"format": {"type": "text"}, "verbosity": "low"}},
        {},
        id="text.format text is the default",
    ),
    pytest.param(
        {"reasoning": {"effort": "low", "summary": "auto"}},
        {"reasoning_effort": "low"},
        id="reasoning.effort is reasoning_effort",
    ),
    pytest.param(
        {"reasoning": {"effort": "minimal"}},
        {},
        id="an effort the engines do not know is left out",
    ),
    pytest.param(
        {"stream": True},
        {"stream": True, "stream_options": {"include_usage": True}},
        id="a stream asks for the usage chunk",
    ),
    pytest.param(
        {
            "store": False,
            "include": ["reasoning.encrypted_content"],
            "truncation": "disabled",
            "metadata": {"topic": "demo"},
            "prompt_cache_key": "3f0e",
            "service_tier": "auto",
        },
        {},
        id="what only OpenAI's servers act on is left out",
    ),
    pytest.param(
        {"seed": 7, "top_k": 20, "chat_template_kwargs": {"enable_thinking": False}},
        {"seed": 7, "top_k": 20, "chat_template_kwargs": {"enable_thinking": False}},
        id="a client's chat-only engine fields pass",
    ),
]


@pytest.mark.parametrize(("extra", "expected"), PARAMETERS)
def test_parameters_become_chat_parameters(extra: dict[str, Any], expected: dict[str, Any]) -> None:
    request_ = {"model": "m", "input": "hi", **extra}
    validate(request_)
    assert to_chat(request_) == {
        "model": "m",
        "messages": [{"role": "user", "content": "hi"}],
        **expected,
    }


# The request Codex CLI sends: openai/codex codex-rs/codex-api/src/common.rs
# (ResponsesApiRequest: model, instructions, input, tools, tool_choice "auto",
# parallel_tool_calls, reasoning, store, stream, include, prompt_cache_key) with the input
# items of codex-rs/protocol/src/models.rs (developer and user messages with input_text parts,
# function_call, function_call_output, reasoning with encrypted_content null).
CODEX_REQUEST = {
    "model": "qwen3-coder",
    "instructions": "You are Codex, based on GPT-5. You are running as a coding agent.",
    "input": [
        {
            "type": "message",
            "role": "developer",
            "content": [{"type": "input_text", "text": "<permissions instructions>"}],
        },
        {
            "type": "message",
            "role": "user",
            "content": [
                {"type": "input_text", "text": "<environment_context>cwd</environment_context>"}
            ],
        },
        {
            "type": "message",
            "role": "user",
            "content": [{"type": "input_text", "text": "list the files"}],
        },
        {"type": "reasoning", "summary": [], "content": None, "encrypted_content": None},
        {
            "type": "function_call",
            "name": "shell",
            "arguments": '{"command":["ls"]}',
            "call_id": "call_1",
        },
        {"type": "function_call_output", "call_id": "call_1", "output": "README.md\n"},
    ],
    "tools": [
        {
            "type": "function",
            "name": "shell",
            "description": "Runs a shell command and returns its output.",
            "strict": False,
            "parameters": {
                "type": "object",
                "properties": {"command": {"type": "array", "items": {"type": "string"}}},
                "required": ["command"],
                "additionalProperties": False,
            },
        }
    ],
    "tool_choice": "auto",
    "parallel_tool_calls": False,
    "reasoning": None,
    "store": False,
    "stream": True,
    "include": [],
    "prompt_cache_key": "0199a213-81c0-7800-8aa1-bbab2a035a53",
}


def test_the_request_codex_sends_is_stateless_and_translates() -> None:
    validate(CODEX_REQUEST)
    assert needs_state(CODEX_REQUEST) is None
    chat = to_chat(CODEX_REQUEST)
    assert chat == {
        "model": "qwen3-coder",
        "messages": [
            {
                "role": "system",
                "content": "You are Codex, based on GPT-5. You are running as a coding agent."
                "\n\n<permissions instructions>",
            },
            {"role": "user", "content": "<environment_context>cwd</environment_context>"},
            {"role": "user", "content": "list the files"},
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {
                        "id": "call_1",
                        "type": "function",
                        "function": {"name": "shell", "arguments": '{"command":["ls"]}'},
                    }
                ],
            },
            {"role": "tool", "tool_call_id": "call_1", "content": "README.md\n"},
        ],
        "tools": [
            {
                "type": "function",
                "function": {
                    "name": "shell",
                    "description": "Runs a shell command and returns its output.",
                    "parameters": CODEX_REQUEST["tools"][0]["parameters"],  # type: ignore[index]
                    "strict": False,
                },
            }
        ],
        "tool_choice": "auto",
        "parallel_tool_calls": False,
        "stream": True,
        "stream_options": {"include_usage": True},
    }


def test_the_request_the_sdk_sends_without_store_is_stateless() -> None:
    # openai-python sends only what the caller passed: no store unless asked
    # (response_create_params.py: "Defaults to true when omitted" is the server's default).
    assert needs_state({"model": "m", "input": "hi", "stream": True}) is None


# State a chat completions backend cannot give: response_create_params.py (previous_response_id,
# conversation "items from this conversation are prepended", store "whether to store the
# generated model response for later retrieval", background, prompt "reference to a prompt
# template"), response_input_item_param.py (ItemReference: an id, type optional);
# https://developers.openai.com/api/docs/guides/conversation-state.
STATEFUL = [
    pytest.param(
        {"previous_response_id": "resp_123"}, "previous_response_id", id="previous_response_id"
    ),
    pytest.param(
        {"conversation": "conv_689667905b048191b4740501625afd940c7533ace33a2dab"},
        "conversation",
        id="a conversation id",
    ),
    pytest.param({"conversation": {"id": "conv_1"}}, "conversation", id="a conversation object"),
    pytest.param({"store": True}, "store", id="store true"),
    pytest.param({"background": True}, "background", id="background true"),
    pytest.param({"prompt": {"id": "pmpt_abc123", "version": "2"}}, "prompt", id="a stored prompt"),
    pytest.param(
        {"input": [{"type": "item_reference", "id": "msg_1"}]}, "input[0]", id="an item reference"
    ),
    pytest.param(
        {"input": [{"role": "user", "content": "hi"}, {"id": "msg_1"}]},
        "input[1]",
        id="an item by its id alone",
    ),
]


@pytest.mark.parametrize(("extra", "param"), STATEFUL)
def test_a_request_that_needs_server_state_is_refused_with_what_and_why(
    extra: dict[str, Any], param: str
) -> None:
    request_ = {"model": "m", "input": "hi", **extra}
    validate(request_)  # a native backend may serve it
    why = needs_state(request_)
    assert why is not None and "no backend of this model keeps Responses state for callers" in why
    assert param.split("[")[0] in why
    with pytest.raises(ResponsesError) as refused:
        to_chat(request_)
    assert (refused.value.status, refused.value.param, refused.value.message) == (400, param, why)
    body = json.loads(refused.value.body())["error"]
    assert body == {
        "message": why,
        "type": "invalid_request_error",
        "param": param,
        "code": "invalid_request",
    }


# What chat completions cannot express. Hosted tools: openai-python
# src/openai/types/responses/tool_param.py (web_search, file_search, computer_use_preview,
# code_interpreter, mcp, image_generation, local_shell, custom); Codex's default web_search
# tool: openai/codex codex-rs/tools (create_web_search_tool, cached mode by default) and
# https://developers.openai.com/codex (web_search = "disabled"). Files and logprobs:
# response_input_file_param.py, response_input_image_param.py (file_id), response_includable.py.
UNTRANSLATABLE = [
    pytest.param(
        {
            "tools": [
                {
                    "type": "custom",
                    "name": "apply_patch",
                    "format": {"type": "grammar", "syntax": "lark", "definition": "start: /.+/"},
                }
            ]
        },
        "tools[0]",
        "custom",
        id="a freeform custom tool",
    ),
    pytest.param(
        {"tools": [WEATHER_TOOL], "tool_choice": {"type": "web_search_preview"}},
        "tool_choice",
        "web_search_preview",
        id="a hosted tool_choice",
    ),
    pytest.param(
        {
            "input": [
                {
                    "role": "user",
                    "content": [{"type": "input_file", "file_id": "file-6F2ksmvXxt4VdoqmHRw6kL"}],
                }
            ]
        },
        "input[0].content[0]",
        "File inputs",
        id="a file input",
    ),
    pytest.param(
        {
            "input": [
                {
                    "role": "user",
                    "content": [{"type": "input_image", "file_id": "file-1", "detail": "auto"}],
                }
            ]
        },
        "input[0].content[0].file_id",
        "file stored on the server",
        id="an image by file_id",
    ),
    pytest.param(
        {
            "input": [
                {
                    "role": "developer",
                    "content": [{"type": "input_image", "image_url": "https://x.invalid/a.png"}],
                }
            ]
        },
        "input[0].content[0]",
        "Only text",
        id="an image in a developer message",
    ),
    pytest.param(
        {
            "input": [
                {
                    "type": "custom_tool_call",
                    "call_id": "c",
                    "name": "apply_patch",
                    "input": "*** Begin Patch",
                }
            ]
        },
        "input[0]",
        "custom_tool_call",
        id="a custom tool call item",
    ),
    pytest.param(
        {
            "input": [
                {
                    "type": "local_shell_call",
                    "id": "ls_1",
                    "call_id": "c",
                    "status": "completed",
                    "action": {"type": "exec", "command": ["ls"], "env": {}},
                }
            ]
        },
        "input[0]",
        "local_shell_call",
        id="a local shell call item",
    ),
    pytest.param(
        {"input": [{"type": "function_call_output", "output": "x"}]},
        "input[0].call_id",
        "call_id",
        id="a function output without its call_id",
    ),
    pytest.param({"top_logprobs": 5}, "top_logprobs", "Log probabilities", id="top_logprobs"),
    pytest.param(
        {"include": ["message.output_text.logprobs"]},
        "include",
        "Log probabilities",
        id="logprobs in include",
    ),
]


@pytest.mark.parametrize(("extra", "param", "says"), UNTRANSLATABLE)
def test_what_chat_completions_cannot_express_is_a_clear_400(
    extra: dict[str, Any], param: str, says: str
) -> None:
    request_ = {"model": "m", "input": "hi", **extra}
    validate(request_)  # a native backend may serve it
    assert needs_state(request_) is None
    with pytest.raises(ResponsesError) as refused:
        to_chat(request_)
    assert refused.value.status == 400 and refused.value.param == param
    assert says in refused.value.message


# Hosted tools only a hosted service runs (the same sources as UNTRANSLATABLE): a model behind
# chat completions cannot call them, so they are left out; Codex sends web_search by default.
HOSTED = [
    pytest.param(
        {"tools": [{"type": "web_search", "external_web_access": False}]},
        "tools[0]",
        "web_search",
        id="Codex's web_search tool",
    ),
    pytest.param(
        {"tools": [WEATHER_TOOL, {"type": "file_search", "vector_store_ids": ["vs_1"]}]},
        "tools[1]",
        "file_search",
        id="file_search",
    ),
    pytest.param(
        {
            "tools": [
                {
                    "type": "computer_use_preview",
                    "display_width": 1024,
                    "display_height": 768,
                    "environment": "browser",
                }
            ]
        },
        "tools[0]",
        "computer_use_preview",
        id="computer use",
    ),
    pytest.param(
        {"tools": [{"type": "code_interpreter", "container": {"type": "auto"}}]},
        "tools[0]",
        "code_interpreter",
        id="code_interpreter",
    ),
    pytest.param(
        {
            "tools": [
                {
                    "type": "mcp",
                    "server_label": "deepwiki",
                    "server_url": "https://mcp.deepwiki.com/mcp",
                }
            ]
        },
        "tools[0]",
        "mcp",
        id="an MCP server",
    ),
]


@pytest.mark.parametrize(("extra", "param", "kind"), HOSTED)
def test_hosted_tools_are_left_out_of_the_chat_request(extra, param, kind) -> None:
    chat = to_chat({"model": "m", "input": "hi", **extra})
    names = [tool["function"]["name"] for tool in chat.get("tools", [])]
    assert names == (["get_weather"] if len(extra["tools"]) > 1 else [])


# Namespaces: openai-python src/openai/types/responses/namespace_tool.py ("Groups function/custom
# tools under a shared namespace"; "the namespace name used in tool calls") and
# response_function_tool_call.py (`namespace`); Codex 0.171 sends its sub-agent tools as the
# namespace multi_agent_v1 (captured from a real run against the gateway).
AGENTS = {
    "type": "namespace",
    "name": "multi_agent_v1",
    "description": "Tools for spawning and managing sub-agents.",
    "tools": [
        {
            "type": "function",
            "name": "close_agent",
            "description": "Close an agent.",
            "parameters": {"type": "object", "properties": {"id": {"type": "string"}}},
        }
    ],
}


def test_a_namespace_of_functions_becomes_chat_functions_named_by_namespace_and_name() -> None:
    chat = to_chat({"model": "m", "input": "hi", "tools": [WEATHER_TOOL, AGENTS]})
    assert [tool["function"]["name"] for tool in chat["tools"]] == [
        "get_weather",
        "multi_agent_v1__close_agent",
    ]
    assert chat["tools"][1]["function"]["description"] == "Close an agent."


def test_a_call_to_a_namespaced_function_names_its_namespace_again() -> None:
    request = {"model": "m", "input": "hi", "tools": [AGENTS]}
    answer = {
        "id": "chatcmpl-1",
        "object": "chat.completion",
        "choices": [
            {
                "index": 0,
                "finish_reason": "tool_calls",
                "message": {
                    "role": "assistant",
                    "content": None,
                    "tool_calls": [
                        {
                            "id": "call_1",
                            "type": "function",
                            "function": {
                                "name": "multi_agent_v1__close_agent",
                                "arguments": '{"id": "a1"}',
                            },
                        }
                    ],
                },
            }
        ],
    }
    (call,) = from_chat(answer, model="m", request=request)["output"]
    assert (call["namespace"], call["name"], call["call_id"]) == (
        "multi_agent_v1",
        "close_agent",
        "call_1",
    )
    # And back in the next turn's input, as Codex sends it.
    follow_up = to_chat(
        {
            "model": "m",
            "tools": [AGENTS],
            "input": [
                {"role": "user", "content": "hi"},
                {**call, "type": "function_call"},
                {"type": "function_call_output", "call_id": "call_1", "output": "closed"},
            ],
        }
    )
    sent = follow_up["messages"][1]["tool_calls"][0]["function"]
    assert sent == {"name": "multi_agent_v1__close_agent", "arguments": '{"id": "a1"}'}


def test_a_streamed_call_to_a_namespaced_function_names_its_namespace_again() -> None:
    request = {"model": "m", "input": "hi", "tools": [AGENTS], "stream": True}
    stream = StreamTranslator(model="m", request=request)
    delta = {
        "index": 0,
        "id": "call_1",
        "type": "function",
        "function": {"name": "multi_agent_v1__close_agent", "arguments": "{}"},
    }
    chunk = {
        "id": "c",
        "object": "chat.completion.chunk",
        "choices": [{"index": 0, "delta": {"tool_calls": [delta]}, "finish_reason": "tool_calls"}],
    }
    data = stream.feed(chunk) + stream.finish()
    done = [
        json.loads(line.removeprefix(b"data: "))
        for line in data.split(b"\n")
        if line.startswith(b"data: ") and b"response.output_item.done" in line
    ]
    assert [(d["item"]["namespace"], d["item"]["name"]) for d in done] == [
        ("multi_agent_v1", "close_agent")
    ]


# Types and ranges of response_create_params.py (temperature "between 0 and 2", top_p,
# top_logprobs "between 0 and 20", truncation auto/disabled, metadata string values); the
# wording is OpenAI's own ("Invalid type for 'x': expected ..., but got ... instead.").
INVALID = [
    pytest.param([], None, id="a body that is not an object"),
    pytest.param({"input": "hi"}, "model", id="no model"),
    pytest.param({"model": 5, "input": "hi"}, "model", id="a model that is not a string"),
    pytest.param({"model": "", "input": "hi"}, "model", id="an empty model"),
    pytest.param(
        {"model": "m", "input": 5}, "input", id="an input that is neither string nor array"
    ),
    pytest.param(
        {"model": "m", "input": ["hi"]}, "input[0]", id="an input item that is not an object"
    ),
    pytest.param(
        {"model": "m", "input": [{}]}, "input[0]", id="an input item without type, role or id"
    ),
    pytest.param(
        {"model": "m", "input": [{"role": "robot", "content": "hi"}]},
        "input[0].role",
        id="an unknown role",
    ),
    pytest.param(
        {"model": "m", "input": [{"role": "user", "content": 5}]},
        "input[0].content",
        id="content that is neither string nor array",
    ),
    pytest.param(
        {"model": "m", "input": [{"role": "user", "content": [{"text": "hi"}]}]},
        "input[0].content[0].type",
        id="a content part without type",
    ),
    pytest.param(
        {"model": "m", "input": [{"type": 5}]},
        "input[0].type",
        id="an item type that is not a string",
    ),
    pytest.param(
        {"model": "m", "temperature": "hot"}, "temperature", id="a temperature that is not a number"
    ),
    pytest.param({"model": "m", "temperature": 2.5}, "temperature", id="a temperature above 2"),
    pytest.param(
        {"model": "m", "temperature": float("nan")}, "temperature", id="a temperature that is NaN"
    ),
    pytest.param({"model": "m", "top_p": -0.1}, "top_p", id="a top_p below 0"),
    pytest.param(
        {"model": "m", "max_output_tokens": 0}, "max_output_tokens", id="max_output_tokens 0"
    ),
    pytest.param(
        {"model": "m", "max_output_tokens": 10.5},
        "max_output_tokens",
        id="max_output_tokens not whole",
    ),
    pytest.param(
        {"model": "m", "max_output_tokens": True},
        "max_output_tokens",
        id="max_output_tokens a boolean",
    ),
    pytest.param({"model": "m", "top_logprobs": 21}, "top_logprobs", id="top_logprobs above 20"),
    pytest.param({"model": "m", "stream": "yes"}, "stream", id="stream not a boolean"),
    pytest.param({"model": "m", "store": 1}, "store", id="store not a boolean"),
    pytest.param(
        {"model": "m", "instructions": ["be brief"]}, "instructions", id="instructions not a string"
    ),
    pytest.param({"model": "m", "tools": {"type": "function"}}, "tools", id="tools not an array"),
    pytest.param(
        {"model": "m", "tools": [{"name": "f"}]}, "tools[0].type", id="a tool without type"
    ),
    pytest.param(
        {"model": "m", "tool_choice": "sometimes"}, "tool_choice", id="an unknown tool_choice"
    ),
    pytest.param(
        {"model": "m", "tool_choice": {"name": "f"}},
        "tool_choice.type",
        id="a tool_choice without type",
    ),
    pytest.param(
        {"model": "m", "metadata": {"n": 1}}, "metadata.n", id="a metadata value not a string"
    ),
    pytest.param({"model": "m", "include": [1]}, "include[0]", id="an include entry not a string"),
    pytest.param(
        {"model": "m", "truncation": []}, "truncation", id="a truncation that is an array"
    ),
    pytest.param(
        {"model": "m", "reasoning": {"effort": ["high"]}},
        "reasoning.effort",
        id="a reasoning effort that is not a string",
    ),
    pytest.param(
        {"model": "m", "input": [{"role": [], "content": "hi"}]},
        "input[0].role",
        id="a role that is an array",
    ),
    pytest.param({"model": "m", "truncation": "middle"}, "truncation", id="an unknown truncation"),
    pytest.param(
        {"model": "m", "text": {"format": "json"}}, "text.format", id="a text.format not an object"
    ),
    pytest.param({"model": "m", "reasoning": "high"}, "reasoning", id="reasoning not an object"),
    pytest.param(
        {"model": "m", "conversation": 5},
        "conversation",
        id="a conversation neither string nor object",
    ),
]


@pytest.mark.parametrize(("body", "param"), INVALID)
def test_a_malformed_request_is_a_400_naming_its_param(body: Any, param: str | None) -> None:
    with pytest.raises(ResponsesError) as refused:
        validate(body)
    assert refused.value.status == 400 and refused.value.param == param
    assert refused.value.code == "invalid_request" and refused.value.message
    with pytest.raises(ResponsesError):
        to_chat(body)


TRANSLATION_INVALID = [
    pytest.param(
        {"tools": [{"type": "function"}]}, "tools[0].name", id="a function tool without a name"
    ),
    pytest.param(
        {"tools": [{"type": "function", "name": "f", "parameters": "{}"}]},
        "tools[0].parameters",
        id="function parameters not an object",
    ),
    pytest.param(
        {"input": [{"type": "function_call", "call_id": "c", "name": "f", "arguments": {}}]},
        "input[0].arguments",
        id="function call arguments not a string",
    ),
    pytest.param(
        {"input": [{"type": "function_call", "call_id": "c", "arguments": "{}"}]},
        "input[0].name",
        id="a function call without a name",
    ),
    pytest.param(
        {"input": [{"role": "user", "content": [{"type": "input_text"}]}]},
        "input[0].content[0].text",
        id="an input_text without text",
    ),
    pytest.param(
        {"input": [{"role": "user", "content": [{"type": "input_image"}]}]},
        "input[0].content[0].image_url",
        id="an input_image without an image",
    ),
    pytest.param(
        {"text": {"format": {"type": "json_schema", "schema": {}}}},
        "text.format.name",
        id="a json_schema without a name",
    ),
    pytest.param(
        {"text": {"format": {"type": "yaml"}}}, "text.format.type", id="an unknown text.format"
    ),
    pytest.param(
        {"tool_choice": {"type": "allowed_tools", "mode": "any", "tools": []}},
        "tool_choice.mode",
        id="an unknown allowed_tools mode",
    ),
    pytest.param({"input": []}, "input", id="nothing to say"),
    pytest.param(
        {
            "tool_choice": {
                "type": "allowed_tools",
                "mode": "auto",
                "tools": [{"type": "function", "name": "nope"}],
            }
        },
        "tool_choice.tools[0].name",
        id="an allowed tool that is not among the tools",
    ),
    pytest.param(
        {
            "tool_choice": {
                "type": "allowed_tools",
                "mode": "auto",
                "tools": [{"type": "function", "name": ["f"]}],
            }
        },
        "tool_choice.tools[0].name",
        id="an allowed tool whose name is not a string",
    ),
    pytest.param(
        {
            "input": [
                {
                    "role": "user",
                    "content": [
                        {
                            "type": "input_image",
                            "image_url": "https://x.invalid/a.png",
                            "detail": ["low"],
                        }
                    ],
                }
            ]
        },
        "input[0].content[0].detail",
        id="an image detail that is not a string",
    ),
]


@pytest.mark.parametrize(("extra", "param"), TRANSLATION_INVALID)
def test_a_request_that_cannot_be_translated_as_it_stands_is_a_400(
    extra: dict[str, Any], param: str
) -> None:
    with pytest.raises(ResponsesError) as refused:
        to_chat({"model": "m", "input": "hi", **extra})
    assert refused.value.status == 400 and refused.value.param == param


# ----- answers ---------------------------------------------------------------------------------

# The Response object: https://developers.openai.com/api/reference/resources/responses/methods/create
# (its example answer: output a message with output_text content and annotations [], usage
# input_tokens / input_tokens_details.cached_tokens / output_tokens /
# output_tokens_details.reasoning_tokens / total_tokens, the request's fields echoed),
# openai-python src/openai/types/responses/response.py, response_output_message.py,
# response_function_tool_call.py, response_reasoning_item.py, response_usage.py;
# status "incomplete" with incomplete_details.reason "max_output_tokens" or "content_filter".
# The reasoning field of chat engines: SGLang and llama.cpp `reasoning_content`, vLLM
# (chat_completion/protocol.py, newer) and Ollama `reasoning`.
MESSAGE_TEXT = {
    "type": "output_text",
    "text": "Hello! How can I help you today?",
    "annotations": [],
    "logprobs": [],
}
ANSWERS = [
    pytest.param(
        answer(content="Hello! How can I help you today?", usage=USAGE),
        "completed",
        None,
        [
            {
                "type": "message",
                "status": "completed",
                "role": "assistant",
                "content": [MESSAGE_TEXT],
            }
        ],
        id="text is a message with output_text",
    ),
    pytest.param(
        answer(
            finish="tool_calls",
            tool_calls=[
                {
                    "id": "call_12345xyz",
                    "type": "function",
                    "function": {
                        "name": "get_weather",
                        "arguments": '{"location":"Paris, France"}',
                    },
                }
            ],
        ),
        "completed",
        None,
        [
            {
                "type": "function_call",
                "status": "completed",
                "call_id": "call_12345xyz",
                "name": "get_weather",
                "arguments": '{"location":"Paris, France"}',
            }
        ],
        id="a tool call is a function_call with the tool call's id as call_id",
    ),
    pytest.param(
        answer(
            finish="tool_calls",
            content="Let me check both.",
            tool_calls=[
                {
                    "id": "call_1",
                    "type": "function",
                    "function": {"name": "get_weather", "arguments": '{"location":"Paris"}'},
                },
                {
                    "id": "call_2",
                    "type": "function",
                    "function": {"name": "get_weather", "arguments": '{"location":"Bogotá"}'},
                },
            ],
        ),
        "completed",
        None,
        [
            {
                "type": "message",
                "status": "completed",
                "role": "assistant",
                "content": [{**MESSAGE_TEXT, "text": "Let me check both."}],
            },
            {
                "type": "function_call",
                "status": "completed",
                "call_id": "call_1",
                "name": "get_weather",
                "arguments": '{"location":"Paris"}',
            },
            {
                "type": "function_call",
                "status": "completed",
                "call_id": "call_2",
                "name": "get_weather",
                "arguments": '{"location":"Bogotá"}',
            },
        ],
        id="text and parallel calls are a message then function_calls",
    ),
    pytest.param(
        answer(
            finish="tool_calls",
            content="\n\n",
            tool_calls=[
                {
                    "id": "call_1",
                    "type": "function",
                    "function": {"name": "get_weather", "arguments": "{}"},
                }
            ],
        ),
        "completed",
        None,
        [
            {
                "type": "function_call",
                "status": "completed",
                "call_id": "call_1",
                "name": "get_weather",
                "arguments": "{}",
            }
        ],
        id="whitespace before a call is no message",
    ),
    pytest.param(
        answer(finish="length", content="Once upon a"),
        "incomplete",
        {"reason": "max_output_tokens"},
        [
            {
                "type": "message",
                "status": "incomplete",
                "role": "assistant",
                "content": [{**MESSAGE_TEXT, "text": "Once upon a"}],
            }
        ],
        id="length is incomplete at max_output_tokens",
    ),
    pytest.param(
        answer(finish="content_filter", content=""),
        "incomplete",
        {"reason": "content_filter"},
        [
            {
                "type": "message",
                "status": "incomplete",
                "role": "assistant",
                "content": [{**MESSAGE_TEXT, "text": ""}],
            }
        ],
        id="content_filter is incomplete at content_filter",
    ),
    pytest.param(
        answer(content="42", reasoning_content="6 times 7."),
        "completed",
        None,
        [
            {
                "type": "reasoning",
                "status": "completed",
                "summary": [],
                "content": [{"type": "reasoning_text", "text": "6 times 7."}],
            },
            {
                "type": "message",
                "status": "completed",
                "role": "assistant",
                "content": [{**MESSAGE_TEXT, "text": "42"}],
            },
        ],
        id="reasoning_content is a reasoning item before the message",
    ),
    pytest.param(
        answer(content="42", reasoning="6 times 7."),
        "completed",
        None,
        [
            {
                "type": "reasoning",
                "status": "completed",
                "summary": [],
                "content": [{"type": "reasoning_text", "text": "6 times 7."}],
            },
            {
                "type": "message",
                "status": "completed",
                "role": "assistant",
                "content": [{**MESSAGE_TEXT, "text": "42"}],
            },
        ],
        id="vLLM's reasoning is a reasoning item too",
    ),
    pytest.param(
        answer(content=None),
        "completed",
        None,
        [
            {
                "type": "message",
                "status": "completed",
                "role": "assistant",
                "content": [{**MESSAGE_TEXT, "text": ""}],
            }
        ],
        id="no content is an empty message",
    ),
]


@pytest.mark.parametrize(("chat", "status", "incomplete", "output"), ANSWERS)
def test_a_chat_completion_becomes_a_response(
    chat: dict[str, Any], status: str, incomplete: Any, output: list[Any]
) -> None:
    response = from_chat(chat, model="client-model", request=TOOLS_REQUEST)
    Response.model_validate(response, strict=True)
    assert response["object"] == "response" and response["id"].startswith("resp_")
    assert response["model"] == "client-model"  # as the client asked, not the engine's id
    assert (response["status"], response["incomplete_details"]) == (status, incomplete)
    assert shape(response)["output"] == output
    prefixes = {"message": "msg_", "function_call": "fc_", "reasoning": "rs_"}
    assert all(item["id"].startswith(prefixes[item["type"]]) for item in response["output"])
    assert (response["completed_at"] is not None) == (status == "completed")


def test_usage_with_cached_and_reasoning_tokens_is_the_responses_usage() -> None:
    # vLLM and OpenAI: prompt_tokens_details.cached_tokens,
    # completion_tokens_details.reasoning_tokens.
    usage = {
        "prompt_tokens": 1200,
        "completion_tokens": 300,
        "total_tokens": 1500,
        "prompt_tokens_details": {"cached_tokens": 1024},
        "completion_tokens_details": {"reasoning_tokens": 120},
    }
    response = from_chat(answer(content="Hi", usage=usage), model="m", request=REQUEST)
    assert response["usage"] == {
        "input_tokens": 1200,
        "input_tokens_details": {"cached_tokens": 1024, "cache_write_tokens": 0},
        "output_tokens": 300,
        "output_tokens_details": {"reasoning_tokens": 120},
        "total_tokens": 1500,
    }
    Response.model_validate(response, strict=True)


def test_an_answer_without_usage_has_none() -> None:
    response = from_chat(answer(content="Hi"), model="m", request=REQUEST)
    assert response["usage"] is None
    Response.model_validate(response, strict=True)


def test_the_response_echoes_the_requests_fields() -> None:
    request_ = {
        "model": "client-model",
        "instructions": "Be brief.",
        "input": "hi",
        "tools": [WEATHER_TOOL],
        "tool_choice": "required",
        "temperature": 0.3,
        "top_p": 0.8,
        "max_output_tokens": 100,
        "parallel_tool_calls": False,
        "text": {"format": {"type": "json_object"}},
        "metadata": {"topic": "demo"},
        "user": "alice",
        "truncation": "auto",
        "reasoning": {"effort": "low"},
    }
    response = from_chat(answer(content="{}"), model="client-model", request=request_)
    Response.model_validate(response, strict=True)
    for name in (
        "instructions", "tools", "tool_choice", "temperature", "top_p", "max_output_tokens",
        "parallel_tool_calls", "text", "metadata", "user", "truncation", "reasoning",
    ):  # fmt: skip
        assert response[name] == request_[name], name
    assert (response["store"], response["background"], response["previous_response_id"]) == (
        False,
        False,
        None,
    )


def test_the_defaults_the_api_reference_gives_are_echoed_when_the_request_left_them_out() -> None:
    response = from_chat(answer(content="Hi"), model="m", request={"model": "m", "input": "hi"})
    assert response["tools"] == [] and response["tool_choice"] == "auto"
    assert response["parallel_tool_calls"] is True and response["truncation"] == "disabled"
    assert response["text"] == {"format": {"type": "text"}} and response["metadata"] == {}
    assert response["instructions"] is None and response["temperature"] is None


NOT_CHAT = [
    pytest.param([], id="not an object"),
    pytest.param({"object": "chat.completion"}, id="no choices"),
    pytest.param({"choices": []}, id="empty choices"),
    pytest.param({"choices": ["x"]}, id="a choice that is not an object"),
    pytest.param({"choices": [{"message": "hi"}]}, id="a message that is not an object"),
    pytest.param({"choices": [{"message": {"content": 5}}]}, id="content that is not a string"),
    pytest.param(
        {"choices": [{"message": {"reasoning_content": ["x"]}}]},
        id="reasoning that is not a string",
    ),
    pytest.param(
        {"choices": [{"message": {"tool_calls": {"id": "c"}}}]}, id="tool_calls not a list"
    ),
    pytest.param(
        {"choices": [{"message": {"tool_calls": [{"id": "c", "function": {"arguments": "{}"}}]}}]},
        id="a tool call without a name",
    ),
    pytest.param(
        {
            "choices": [
                {
                    "message": {
                        "tool_calls": [{"id": "c", "function": {"name": "f", "arguments": 5}}]
                    }
                }
            ]
        },
        id="arguments that are not a string",
    ),
]


@pytest.mark.parametrize("chat", NOT_CHAT)
def test_an_answer_that_is_not_a_chat_completion_is_a_value_error(chat: Any) -> None:
    with pytest.raises(ValueError, match=r"the answer|a tool call"):
        from_chat(chat, model="m", request=REQUEST)


def test_a_tool_call_without_an_id_gets_one_and_encoded_arguments_stay() -> None:
    chat = {
        "choices": [
            {
                "message": {"tool_calls": [{"function": {"name": "f", "arguments": {"a": 1}}}]},
                "finish_reason": "tool_calls",
            }
        ]
    }
    call = from_chat(chat, model="m", request=REQUEST)["output"][0]
    assert call["call_id"].startswith("call_") and call["arguments"] == '{"a": 1}'


# ----- streams ---------------------------------------------------------------------------------

# Chat chunks: chat_completion_chunk.py and vLLM's serving (role first, then content deltas, a
# chunk with finish_reason, then with stream_options.include_usage a chunk with choices [] and
# usage; usage null on every other chunk). Responses events and their order:
# https://developers.openai.com/api/docs/guides/streaming-responses?api-mode=responses and
# https://developers.openai.com/api/reference/resources/responses/streaming-events;
# openai-python src/openai/types/responses/response_stream_event.py; vLLM's own order in
# vllm/entrypoints/openai/responses/simple_streaming_events.py (reasoning items with
# reasoning_text parts, then the message, then function calls).
START = ["response.created", "response.in_progress"]
TEXT_ITEM = [
    "response.output_item.added",
    "response.content_part.added",
]
TEXT_DONE = ["response.output_text.done", "response.content_part.done", "response.output_item.done"]
CALL_DONE = ["response.function_call_arguments.done", "response.output_item.done"]
REASONING_DONE = [
    "response.reasoning_text.done",
    "response.content_part.done",
    "response.output_item.done",
]

TEXT_CHUNKS = [
    chunk(role="assistant", content=""),
    chunk(content="Hello! How can I "),
    chunk(content="help you today?"),
    chunk(finish="stop"),
    usage_chunk(USAGE),
]
CALL_CHUNKS = [
    chunk(role="assistant", content=None),
    chunk(tool_calls=[call_delta(0, id="call_12345xyz", name="get_weather", args="")]),
    chunk(tool_calls=[call_delta(0, args='{"loca')]),
    chunk(tool_calls=[call_delta(0, args='tion":"Paris')]),
    chunk(tool_calls=[call_delta(0, args=', France"}')]),
    chunk(finish="tool_calls"),
    usage_chunk(USAGE),
]
STREAMS = [
    pytest.param(
        TEXT_CHUNKS,
        answer(content="Hello! How can I help you today?", usage=USAGE),
        [
            *START,
            *TEXT_ITEM,
            "response.output_text.delta",
            "response.output_text.delta",
            *TEXT_DONE,
            "response.completed",
        ],
        id="text only",
    ),
    pytest.param(
        CALL_CHUNKS,
        answer(
            finish="tool_calls",
            usage=USAGE,
            tool_calls=[
                {
                    "id": "call_12345xyz",
                    "type": "function",
                    "function": {
                        "name": "get_weather",
                        "arguments": '{"location":"Paris, France"}',
                    },
                }
            ],
        ),
        [
            *START,
            "response.output_item.added",
            *["response.function_call_arguments.delta"] * 3,
            *CALL_DONE,
            "response.completed",
        ],
        id="a function call whose arguments arrive in several deltas",
    ),
    pytest.param(
        [
            chunk(role="assistant", content="Let me check."),
            chunk(content="\n\n"),
            chunk(
                tool_calls=[
                    call_delta(0, id="call_1", name="get_weather", args='{"location":"Paris"}')
                ]
            ),
            chunk(finish="tool_calls", usage=None),
            usage_chunk(USAGE),
        ],
        answer(
            finish="tool_calls",
            usage=USAGE,
            content="Let me check.\n\n",
            tool_calls=[
                {
                    "id": "call_1",
                    "type": "function",
                    "function": {"name": "get_weather", "arguments": '{"location":"Paris"}'},
                }
            ],
        ),
        [
            *START,
            *TEXT_ITEM,
            "response.output_text.delta",
            "response.output_text.delta",
            *TEXT_DONE,
            "response.output_item.added",
            "response.function_call_arguments.delta",
            *CALL_DONE,
            "response.completed",
        ],
        id="text then a call",
    ),
    pytest.param(
        [
            chunk(role="assistant", content=None),
            chunk(tool_calls=[call_delta(0, id="call_1", name="get_weather", args="")]),
            chunk(tool_calls=[call_delta(0, args='{"location":"Paris"}')]),
            chunk(tool_calls=[call_delta(1, id="call_2", name="get_weather", args="")]),
            chunk(tool_calls=[call_delta(1, args='{"location":"Bogotá"}')]),
            chunk(finish="tool_calls"),
            usage_chunk(USAGE),
        ],
        answer(
            finish="tool_calls",
            usage=USAGE,
            tool_calls=[
                {
                    "id": "call_1",
                    "type": "function",
                    "function": {"name": "get_weather", "arguments": '{"location":"Paris"}'},
                },
                {
                    "id": "call_2",
                    "type": "function",
                    "function": {"name": "get_weather", "arguments": '{"location":"Bogotá"}'},
                },
            ],
        ),
        [
            *START,
            "response.output_item.added",
            "response.function_call_arguments.delta",
            *CALL_DONE,
            "response.output_item.added",
            "response.function_call_arguments.delta",
            *CALL_DONE,
            "response.completed",
        ],
        id="parallel calls",
    ),
    pytest.param(
        [
            chunk(role="assistant", reasoning_content="6 times"),
            chunk(reasoning_content=" 7."),
            chunk(content="42"),
            chunk(finish="stop"),
            usage_chunk(USAGE),
        ],
        answer(content="42", reasoning_content="6 times 7.", usage=USAGE),
        [
            *START,
            "response.output_item.added",
            "response.content_part.added",
            "response.reasoning_text.delta",
            "response.reasoning_text.delta",
            *REASONING_DONE,
            *TEXT_ITEM,
            "response.output_text.delta",
            *TEXT_DONE,
            "response.completed",
        ],
        id="reasoning_content deltas are a reasoning item",
    ),
    pytest.param(
        [
            chunk(role="assistant", content="Once upon"),
            chunk(content=" a"),
            chunk(finish="length"),
            usage_chunk(USAGE),
        ],
        answer(finish="length", content="Once upon a", usage=USAGE),
        [
            *START,
            *TEXT_ITEM,
            "response.output_text.delta",
            "response.output_text.delta",
            *TEXT_DONE,
            "response.incomplete",
        ],
        id="length ends incomplete",
    ),
    pytest.param(
        [chunk(role="assistant", content="Hi"), usage_chunk(USAGE), chunk(finish="stop")],
        answer(content="Hi", usage=USAGE),
        [*START, *TEXT_ITEM, "response.output_text.delta", *TEXT_DONE, "response.completed"],
        id="usage before the finish",
    ),
    pytest.param(
        [],
        answer(content=""),
        [*START, *TEXT_ITEM, *TEXT_DONE, "response.completed"],
        id="an engine that sent nothing",
    ),
]


@pytest.mark.parametrize(("chunks", "whole", "events"), STREAMS)
def test_chat_chunks_become_responses_events_in_the_documented_order(
    chunks: list[Any], whole: dict[str, Any], events: list[str]
) -> None:
    data, translator = stream(chunks, TOOLS_REQUEST)
    assert kinds(data) == events
    status = "incomplete" if events[-1] == "response.incomplete" else "completed"
    assert translator.status == status and translator.done


@pytest.mark.parametrize(("chunks", "whole", "events"), STREAMS)
def test_the_sdks_accumulated_stream_is_the_response_of_the_same_answer(
    chunks: list[Any], whole: dict[str, Any], events: list[str]
) -> None:
    data, _ = stream(chunks, TOOLS_REQUEST)
    final = sse(data)[-1]["response"]
    expected = from_chat(whole, model="client-model", request=TOOLS_REQUEST)
    assert shape(final) == shape(expected)
    if final["status"] == "completed":
        accumulated = sdk_final(data)
        assert shape(accumulated) == shape(response_dict(expected))
        assert accumulated["id"] == final["id"]


@pytest.mark.parametrize(("chunks", "whole", "events"), STREAMS)
def test_codex_reads_each_translated_stream(
    chunks: list[Any], whole: dict[str, Any], events: list[str]
) -> None:
    data, _ = stream(chunks, TOOLS_REQUEST)
    read = codex_reads(data)
    expected = from_chat(whole, model="client-model", request=TOOLS_REQUEST)
    assert shape({"output": read["items"]})["output"] == shape(expected)["output"]
    texts = [p["text"] for i in expected["output"] if i["type"] == "message" for p in i["content"]]
    assert read["text"] == "".join(texts)
    if events[-1] == "response.completed":
        assert read["error"] is None and read["usage"] == expected["usage"]
    else:
        # Codex has no use for an incomplete turn: it retries it (the newer reader says so).
        assert read["error"] is not None


def test_the_usage_chunk_is_the_streams_usage_and_chunks_with_null_usage_are_ignored() -> None:
    usage = {**USAGE, "prompt_tokens_details": {"cached_tokens": 16}}
    data, translator = stream(
        [chunk(content="Hi", usage=None), chunk(finish="stop", usage=None), usage_chunk(usage)]
    )
    assert translator.usage == Usage(input=19, output=10, cached=16)
    assert sse(data)[-1]["response"]["usage"]["input_tokens_details"]["cached_tokens"] == 16


def test_usage_on_every_chunk_counts_the_last() -> None:
    # vLLM's stream_options.continuous_usage_stats puts running usage on every chunk.
    chunks = [
        chunk(content="a", usage={"prompt_tokens": 5, "completion_tokens": 1, "total_tokens": 6}),
        chunk(content="b", usage={"prompt_tokens": 5, "completion_tokens": 2, "total_tokens": 7}),
        chunk(finish="stop", usage={"prompt_tokens": 5, "completion_tokens": 2, "total_tokens": 7}),
    ]
    _, translator = stream(chunks)
    assert translator.usage == Usage(input=5, output=2, cached=None)


def test_a_stream_without_usage_ends_with_usage_null() -> None:
    data, translator = stream([chunk(content="Hi"), chunk(finish="stop")])
    assert translator.usage is None and sse(data)[-1]["response"]["usage"] is None


def test_empty_choices_without_usage_change_nothing() -> None:
    empty = {**usage_chunk(USAGE), "usage": None}
    translator = StreamTranslator(model="m", request=REQUEST)
    first = translator.feed(empty)
    assert kinds(first) == START
    assert translator.feed(empty) == b""
    assert translator.usage is None


def test_vllms_reasoning_deltas_are_a_reasoning_item_too() -> None:
    data, _ = stream([chunk(reasoning="hmm"), chunk(content="ok"), chunk(finish="stop")])
    output = sse(data)[-1]["response"]["output"]
    assert [item["type"] for item in output] == ["reasoning", "message"]
    assert output[0]["content"] == [{"type": "reasoning_text", "text": "hmm"}]


def test_whitespace_before_a_call_is_no_message_but_whitespace_alone_is_the_answer() -> None:
    before_call, _ = stream(
        [
            chunk(content="\n\n"),
            chunk(tool_calls=[call_delta(0, id="c", name="f", args="{}")]),
            chunk(finish="tool_calls"),
        ]
    )
    assert [i["type"] for i in sse(before_call)[-1]["response"]["output"]] == ["function_call"]
    alone, _ = stream([chunk(content=" "), chunk(finish="stop")])
    assert sse(alone)[-1]["response"]["output"][0]["content"][0]["text"] == " "


def test_a_call_whose_name_comes_after_its_first_arguments_is_added_once_named() -> None:
    data, _ = stream(
        [
            chunk(tool_calls=[call_delta(0, id="call_1", args='{"a"')]),
            chunk(tool_calls=[call_delta(0, name="f", args=":1}")]),
            chunk(finish="tool_calls"),
        ]
    )
    events = sse(data)
    assert [e["type"] for e in events][2:] == [
        "response.output_item.added",
        "response.function_call_arguments.delta",
        *CALL_DONE,
        "response.completed",
    ]
    assert events[3]["delta"] == '{"a":1}'
    call = events[-1]["response"]["output"][0]
    assert (call["call_id"], call["name"], call["arguments"]) == ("call_1", "f", '{"a":1}')


def test_tool_call_deltas_without_an_index_follow_their_ids() -> None:
    no_index = [
        {"id": "call_1", "type": "function", "function": {"name": "f", "arguments": "{}"}},
        {"function": {"arguments": ""}},
        {"id": "call_2", "type": "function", "function": {"name": "g", "arguments": "[]"}},
    ]
    chunks = [{"choices": [{"index": 0, "delta": {"tool_calls": [d]}}]} for d in no_index]
    data, _ = stream([*chunks, chunk(finish="tool_calls")])
    output = sse(data)[-1]["response"]["output"]
    assert [(i["call_id"], i["name"], i["arguments"]) for i in output] == [
        ("call_1", "f", "{}"),
        ("call_2", "g", "[]"),
    ]


def test_a_whole_call_in_one_delta_with_object_arguments_is_one_encoded_call() -> None:
    # Some engines (Ollama's native shape) give the arguments as an object.
    chunks = [
        {
            "choices": [
                {
                    "index": 0,
                    "delta": {
                        "tool_calls": [
                            {
                                "index": 0,
                                "id": "c",
                                "function": {"name": "f", "arguments": {"x": 1}},
                            }
                        ]
                    },
                }
            ]
        }
    ]
    data, _ = stream([*chunks, chunk(finish="tool_calls")])
    assert sse(data)[-1]["response"]["output"][0]["arguments"] == '{"x": 1}'


def test_an_engine_that_ends_without_a_finish_reason_completes() -> None:
    data, translator = stream([chunk(content="Hi")])
    assert (
        kinds(data)[-4:] == [*TEXT_DONE, "response.completed"] and translator.status == "completed"
    )


def test_a_failure_mid_stream_is_response_failed_with_the_output_so_far() -> None:
    translator = StreamTranslator(model="m", request=REQUEST)
    data = translator.feed(chunk(content="Hel"))
    data += translator.feed(chunk(tool_calls=[call_delta(0, id="call_1", name="f", args='{"a":')]))
    data += translator.fail("The model server failed mid-answer (ClientPayloadError).")
    events = sse(data)
    assert events[-1]["type"] == "response.failed" and kinds(data).count("response.failed") == 1
    failed = events[-1]["response"]
    assert failed["status"] == "failed"
    assert failed["error"] == {
        "code": "server_error",
        "message": "The model server failed mid-answer (ClientPayloadError).",
    }
    assert [(i["type"], i["status"]) for i in failed["output"]] == [
        ("message", "completed"),
        ("function_call", "incomplete"),
    ]
    # The half-streamed call got no output_item.done: no client may run it.
    done = [e["item"]["type"] for e in events if e["type"] == "response.output_item.done"]
    assert done == ["message"]
    assert translator.status == "failed" and translator.failure is not None
    assert (
        translator.feed(chunk(content="more")) == b""
        and translator.finish() == b""
        and translator.fail("x") == b""
    )
    assert codex_reads(data)["error"] == "The model server failed mid-answer (ClientPayloadError)."


def test_the_sdk_yields_response_failed_with_its_error() -> None:
    translator = StreamTranslator(model="m", request=REQUEST)
    data = translator.feed(chunk(content="Hel")) + translator.fail("The model server stopped.")
    with sdk_stream(data).responses.stream(model="m", input="hi") as events:
        seen = list(events)
    assert seen[-1].type == "response.failed"
    assert (
        seen[-1].response.error is not None
        and seen[-1].response.error.message == "The model server stopped."
    )
    assert seen[-1].response.output[0].type == "message"


def test_a_failure_before_any_chunk_still_starts_the_response() -> None:
    data = StreamTranslator(model="m", request=REQUEST).fail("The model server stopped.")
    assert kinds(data) == [*START, "response.failed"]


# Engines end a failed stream with an error event (FACTS.md): vLLM's and OpenAI's nested
# {"error": {...}}, SGLang's flat {"object": "error", "message", "code": int}.
ENGINE_ERRORS = [
    pytest.param(
        {"error": {"message": "prompt is too long", "type": "BadRequestError", "code": 400}},
        "prompt is too long",
        id="nested",
    ),
    pytest.param(
        {
            "object": "error",
            "message": "The request queue is full.",
            "type": "BadRequestError",
            "code": 503,
        },
        "The request queue is full.",
        id="flat",
    ),
]


@pytest.mark.parametrize(("error", "message"), ENGINE_ERRORS)
def test_an_engines_error_event_mid_stream_fails_the_response_with_its_message(
    error: dict[str, Any], message: str
) -> None:
    translator = StreamTranslator(model="m", request=REQUEST)
    data = translator.feed(chunk(content="Hi")) + translator.feed(error) + translator.finish()
    assert kinds(data)[-1] == "response.failed" and translator.failure == message
    assert sse(data)[-1]["response"]["error"]["message"] == message


BROKEN_CHUNKS = [
    pytest.param("data", id="not an object"),
    pytest.param({"choices": {"index": 0}}, id="choices not a list"),
    pytest.param({"choices": [5]}, id="a choice not an object"),
    pytest.param({"choices": [{"index": 0, "delta": "hi"}]}, id="a delta not an object"),
    pytest.param({"choices": [{"index": 0, "delta": {"content": 5}}]}, id="content not a string"),
    pytest.param(
        {"choices": [{"index": 0, "delta": {"tool_calls": {"index": 0}}}]},
        id="tool_calls not a list",
    ),
    pytest.param(
        {
            "choices": [
                {"index": 0, "delta": {"tool_calls": [{"index": 0, "function": {"name": 5}}]}}
            ]
        },
        id="a tool name not a string",
    ),
]


@pytest.mark.parametrize("broken", BROKEN_CHUNKS)
def test_a_chunk_that_is_not_a_chat_completion_chunk_fails_the_stream(broken: Any) -> None:
    translator = StreamTranslator(model="m", request=REQUEST)
    data = translator.feed(chunk(content="Hi")) + translator.feed(broken)
    assert kinds(data)[-1] == "response.failed" and translator.status == "failed"
    assert translator.failure is not None and translator.failure.startswith("The model server sent")


def test_a_tool_call_that_never_gets_a_name_fails_the_stream() -> None:
    data, translator = stream(
        [chunk(tool_calls=[call_delta(0, id="call_1", args="{}")]), chunk(finish="tool_calls")]
    )
    assert (
        kinds(data)[-1] == "response.failed"
        and translator.failure == "The model server sent a tool call without a name."
    )


def test_a_call_that_goes_on_after_the_next_one_started_fails_the_stream() -> None:
    data, translator = stream(
        [
            chunk(tool_calls=[call_delta(0, id="a", name="f", args="{")]),
            chunk(tool_calls=[call_delta(1, id="b", name="g", args="{}")]),
            chunk(tool_calls=[call_delta(0, args="}")]),
        ]
    )
    assert kinds(data)[-1] == "response.failed" and "went on after" in (translator.failure or "")


def test_text_after_the_finish_and_other_choices_are_ignored() -> None:
    other = {"choices": [{"index": 1, "delta": {"content": "other"}, "finish_reason": None}]}
    data, _ = stream([chunk(content="Hi"), other, chunk(finish="stop"), chunk(content="late")])
    assert sse(data)[-1]["response"]["output"][0]["content"][0]["text"] == "Hi"


def test_each_item_is_added_empty_and_filled_by_its_deltas() -> None:
    # The streaming-events reference: output_item.added carries a message with content [],
    # a function_call with arguments "", a reasoning item with no content yet.
    chunks = [
        chunk(reasoning_content="hmm"),
        chunk(content="Hi"),
        chunk(tool_calls=[call_delta(0, id="call_1", name="f", args="{}")]),
        chunk(finish="tool_calls"),
    ]
    data, _ = stream(chunks)
    added = [e["item"] for e in sse(data) if e["type"] == "response.output_item.added"]
    assert [(i["type"], i["status"]) for i in added] == [
        ("reasoning", "in_progress"),
        ("message", "in_progress"),
        ("function_call", "in_progress"),
    ]
    assert added[0]["content"] == [] and added[1]["content"] == [] and added[2]["arguments"] == ""
    parts = [e["part"] for e in sse(data) if e["type"] == "response.content_part.added"]
    assert parts == [
        {"type": "reasoning_text", "text": ""},
        {"type": "output_text", "text": "", "annotations": [], "logprobs": []},
    ]


def test_each_streamed_item_keeps_its_ids_from_added_to_done() -> None:
    data, _ = stream(STREAMS[2].values[0], TOOLS_REQUEST)
    events = sse(data)
    added = {
        e["output_index"]: e["item"]["id"]
        for e in events
        if e["type"] == "response.output_item.added"
    }
    done = {
        e["output_index"]: e["item"]["id"]
        for e in events
        if e["type"] == "response.output_item.done"
    }
    final = {n: item["id"] for n, item in enumerate(events[-1]["response"]["output"])}
    assert added == done == final
    ids = {e["response"]["id"] for e in events if "response" in e}
    assert len(ids) == 1


# ----- native pass-through ---------------------------------------------------------------------

# A native backend's terminal events and answers: openai-python response_completed_event.py,
# response_incomplete_event.py, response_failed_event.py and response_usage.py; vLLM's own
# /v1/responses (vllm/entrypoints/openai/responses/serving.py) sends the same shapes.
NATIVE_USAGE = {
    "input_tokens": 36,
    "input_tokens_details": {"cached_tokens": 12},
    "output_tokens": 87,
    "output_tokens_details": {"reasoning_tokens": 0},
    "total_tokens": 123,
}


def native_response(status: str = "completed", usage: Any = NATIVE_USAGE) -> dict[str, Any]:
    return {
        "id": "resp_1",
        "object": "response",
        "created_at": 1741476542,
        "status": status,
        "model": "m",
        "output": [],
        "usage": usage,
    }


@pytest.mark.parametrize("kind", sorted(TERMINAL))
def test_native_usage_is_read_from_the_terminal_event(kind: str) -> None:
    reader = NativeUsage()
    reader.feed({"type": "response.output_text.delta", "delta": "hi", "sequence_number": 3})
    assert reader.usage is None
    reader.feed({"type": kind, "sequence_number": 9, "response": native_response()})
    assert reader.usage == Usage(input=36, output=87, cached=12)


def test_native_usage_from_event_bytes_parses_only_terminal_events() -> None:
    reader = NativeUsage()
    reader.feed_data(b'{"type":"response.output_text.delta","delta":"x","sequence_number":1}')
    reader.feed_data(
        b'{"type":"response.output_text.delta","delta":"\\"response.completed\\"","sequence_number":2}'
    )
    assert reader.usage is None
    event = {"response": native_response(), "sequence_number": 3, "type": "response.completed"}
    reader.feed_data(json.dumps(event).encode())
    assert reader.usage == Usage(input=36, output=87, cached=12)
    reader.feed_data(b'{"type":"response.completed", broken')
    assert reader.usage == Usage(input=36, output=87, cached=12)


def test_native_usage_without_usage_stays_none() -> None:
    reader = NativeUsage()
    reader.feed({"type": ["response.completed"], "response": native_response()})
    reader.feed({"type": "response.completed", "response": native_response(usage=None)})
    reader.feed({"type": "response.completed", "response": "nonsense"})
    assert reader.usage is None


def test_the_usage_of_a_native_answer() -> None:
    assert usage_of_answer(native_response()) == Usage(input=36, output=87, cached=12)
    assert usage_of_answer(native_response(usage=None)) is None
    assert usage_of_answer(["not", "a", "response"]) is None


# ----- properties ------------------------------------------------------------------------------

JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=6),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3)
    ),
    max_leaves=8,
)


def mostly(valid: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    """Valid values nine times in ten, anything JSON says otherwise."""
    return st.integers(0, 9).flatmap(lambda n: valid if n else JSON)


def known(*values: Any) -> st.SearchStrategy[Any]:
    return mostly(st.sampled_from(values))


TEXT = mostly(st.text(max_size=6))
PART = st.fixed_dictionaries(
    {
        "type": known(
            "input_text",
            "input_text",
            "output_text",
            "input_image",
            "input_file",
            "input_audio",
            "refusal",
        )
    },
    optional={
        "text": TEXT,
        "image_url": known("data:image/png;base64,AAAA", "https://x.invalid/a.png"),
        "file_id": TEXT,
        "detail": known("auto", "low", "original"),
        "input_audio": known({"data": "AAAA", "format": "wav"}),
        "refusal": TEXT,
    },
)
MESSAGE = st.fixed_dictionaries(
    {
        "role": known("user", "assistant", "system", "developer"),
        "content": TEXT | st.lists(PART, max_size=3),
    },
    optional={"type": known("message")},
)
CALL_ITEM = st.fixed_dictionaries(
    {
        "type": known("function_call"),
        "name": TEXT,
        "arguments": TEXT,
        "call_id": known("call_1", "call_2"),
    }
)
OUTPUT_ITEM = st.fixed_dictionaries(
    {
        "type": known("function_call_output"),
        "call_id": known("call_1", "call_2"),
        "output": TEXT | st.lists(PART, max_size=2),
    }
)
OTHER_ITEM = st.fixed_dictionaries(
    {"type": known("reasoning", "item_reference", "web_search_call")},
    optional={"id": TEXT, "summary": JSON},
)
ITEM = MESSAGE | CALL_ITEM | OUTPUT_ITEM | OTHER_ITEM | JSON
TOOL = st.fixed_dictionaries(
    {"type": known("function", "function", "web_search", "custom"), "name": TEXT},
    optional={
        "parameters": known({"type": "object"}),
        "description": TEXT,
        "strict": known(True, False),
    },
)
REQUESTS = st.fixed_dictionaries(
    {"model": known("m"), "input": TEXT | st.lists(ITEM, max_size=4)},
    optional={
        "instructions": TEXT,
        "tools": mostly(st.lists(TOOL, max_size=3)),
        "tool_choice": known(
            "auto",
            "none",
            "required",
            {"type": "function", "name": "f"},
            {"type": "allowed_tools", "mode": "auto", "tools": [{"type": "function", "name": "f"}]},
        ),
        "text": known(
            {"format": {"type": "json_schema", "name": "n", "schema": {}}},
            {"format": {"type": "json_object"}},
        ),
        "stream": known(True, False),
        "store": known(False, True),
        "max_output_tokens": known(1, 100),
        "temperature": known(0, 0.5, 2),
        "top_p": known(0.5),
        "previous_response_id": known(None, "resp_1"),
        "reasoning": known({"effort": "low"}),
        "include": known(["reasoning.encrypted_content"]),
        "metadata": known({"k": "v"}),
        "background": known(False),
    },
)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(mostly(REQUESTS))
def test_validate_needs_state_and_to_chat_raise_nothing_but_responses_error(body: Any) -> None:
    try:
        validate(body)
    except ResponsesError:
        pass
    needs_state(body)
    state_error(body)
    try:
        chat = to_chat(body)
    except ResponsesError as refused:
        assert refused.status == 400 and refused.message
    else:
        json.dumps(chat)  # what goes to the engine is JSON
        assert chat["messages"] and needs_state(body) is None


@settings(max_examples=200, deadline=None)
@given(JSON)
def test_from_chat_raises_nothing_but_value_error_and_what_it_returns_the_sdk_accepts(
    chat: Any,
) -> None:
    try:
        response = from_chat(chat, model="m", request=REQUEST)
    except ValueError:
        return
    Response.model_validate(response, strict=True)


FUNCTION = st.fixed_dictionaries(
    {}, optional={"name": known("f", "g", None), "arguments": known("{", "}", '"a"', None)}
)
TOOL_DELTA = st.fixed_dictionaries(
    {},
    optional={
        "index": known(0, 1, 2),
        "id": known("call_1", "call_2", None),
        "type": known("function"),
        "function": mostly(FUNCTION),
    },
)
DELTA = st.fixed_dictionaries(
    {},
    optional={
        "role": known("assistant"),
        "content": known("Hi", " ", "\n\n", None),
        "reasoning_content": known("hmm", None),
        "reasoning": known("hmm", None),
        "tool_calls": mostly(st.lists(TOOL_DELTA, max_size=2)),
    },
)
CHOICE = st.fixed_dictionaries(
    {"delta": mostly(DELTA)},
    optional={
        "index": known(0, 0, 1),
        "finish_reason": known(None, None, "stop", "length", "tool_calls"),
    },
)
CHUNK = st.fixed_dictionaries(
    {"choices": mostly(st.lists(CHOICE, max_size=2))},
    optional={"usage": known(USAGE, None, {"prompt_tokens": -1})},
)
# An engine's error event, now and then.
CHUNKS = st.lists(
    st.integers(0, 29).flatmap(
        lambda n: mostly(CHUNK) if n else st.just({"error": {"message": "boom"}})
    ),
    max_size=8,
)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(CHUNKS, st.sampled_from(["finish", "fail"]))
def test_any_chunks_make_a_stream_the_sdk_accepts_ending_in_one_terminal_event(
    chunks: list[Any], end: str
) -> None:
    translator = StreamTranslator(model="m", request=TOOLS_REQUEST)
    data = b"".join(translator.feed(c) for c in chunks)  # never raises
    data += translator.finish() if end == "finish" else translator.fail("The model server stopped.")
    events = sse(data)  # each one validated as the SDK's own event type
    assert [e["type"] in TERMINAL for e in events].count(True) == 1 and events[-1][
        "type"
    ] in TERMINAL
    status = {
        "response.completed": "completed",
        "response.incomplete": "incomplete",
        "response.failed": "failed",
    }
    assert status[events[-1]["type"]] == translator.status
    Response.model_validate(events[-1]["response"], strict=True)
    codex_reads(data)


def test_a_native_stream_passed_as_whole_sse_events_yields_its_usage() -> None:
    # The relay hands the plan whole events (event and data lines), not bare payloads.
    from gateway.dialects.responses.dialect import ResponsesPlan

    plan = ResponsesPlan({})
    plan.events(
        b'event: response.output_text.delta\ndata: {"type":"response.output_text.delta"}\n\n'
    )
    completed = {
        "type": "response.completed",
        "response": {"usage": {"input_tokens": 3, "output_tokens": 5}},
    }
    plan.events(
        b"event: response.completed\r\ndata: " + json.dumps(completed).encode() + b"\r\n\r\n"
    )
    assert plan.usage is not None
    assert (plan.usage.input, plan.usage.output) == (3, 5)
