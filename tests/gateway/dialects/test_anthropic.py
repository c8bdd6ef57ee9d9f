"""The Messages surface's translation: requests to chat, answers and chunks back, errors."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from typing import Any

import anthropic
import httpx2
import pytest
from anthropic._streaming import SSEDecoder
from anthropic.types import Message
from anthropic.types.shared import ErrorResponse
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from openai.lib.streaming.chat import ChatCompletionStreamState
from openai.types.chat import ChatCompletionChunk

from gateway.core.answers import ERROR_TYPES, error_type
from gateway.core.usage import Usage
from gateway.dialects.anthropic.count_tokens import count_tokens_estimate
from gateway.dialects.anthropic.errors import MessagesError, error_body, error_event
from gateway.dialects.anthropic.from_chat import from_chat
from gateway.dialects.anthropic.native import NativeUsage, usage_of_answer
from gateway.dialects.anthropic.stream import StreamTranslator
from gateway.dialects.anthropic.to_chat import reply_options, to_chat, wants_thinking
from gateway.dialects.anthropic.validate import validate

# The anthropic SDK runs offline: its HTTP client gets a transport that answers with the bytes
# under test, so its own SSE decoder, event types and MessageStream accumulator judge them.


def sdk(handler: Callable[[httpx2.Request], httpx2.Response]) -> anthropic.Anthropic:
    return anthropic.Anthropic(
        api_key="test",
        base_url="http://gateway.invalid",
        http_client=httpx2.Client(transport=httpx2.MockTransport(handler)),
        max_retries=0,
    )


def through_sdk(stream: bytes) -> Message:
    """What the SDK's `messages.stream(...).get_final_message()` makes of an event stream."""
    client = sdk(
        lambda _: httpx2.Response(
            200, headers={"content-type": "text/event-stream"}, content=stream
        )
    )
    with client.messages.stream(
        model="qwen3-coder", max_tokens=64, messages=[{"role": "user", "content": "Hi"}]
    ) as events:
        return events.get_final_message()


def events_of(stream: bytes) -> list[tuple[str, dict[str, Any]]]:
    """(event name, decoded data) of each event, by the SDK's own SSE decoder."""
    return [(sse.event or "", sse.json()) for sse in SSEDecoder().iter_bytes(iter([stream]))]


def translate(chunks: Iterable[object], **options: Any) -> tuple[bytes, StreamTranslator]:
    translator = StreamTranslator(**{"model": "qwen3-coder", **options})
    out = b"".join(translator.feed(chunk) for chunk in chunks) + translator.finish()
    return out, translator


def dump(message: Message) -> dict[str, Any]:
    return message.model_dump(exclude_none=True)


def assert_anthropic_order(events: list[tuple[str, dict[str, Any]]]) -> None:
    """The event grammar of Anthropic's streaming docs: message_start; each block started,
    given deltas and stopped before the next, indices from 0; message_delta; message_stop;
    pings anywhere; every event's data names its own type."""
    names = [name for name, _ in events if name != "ping"]
    assert names[0] == "message_start"
    assert names[-2:] == ["message_delta", "message_stop"]
    open_block, next_index = None, 0
    for name, data in events:
        assert data["type"] == name
        if name == "content_block_start":
            assert open_block is None
            assert data["index"] == next_index
            open_block = next_index
        elif name == "content_block_delta":
            assert data["index"] == open_block
        elif name == "content_block_stop":
            assert data["index"] == open_block
            open_block, next_index = None, next_index + 1
    assert open_block is None


# ----- requests -------------------------------------------------------------------------------

WEATHER_SCHEMA = {
    "type": "object",
    "properties": {
        "location": {"type": "string", "description": "The city and state, e.g. San Francisco, CA"}
    },
    "required": ["location"],
}
WEATHER_TOOL = {
    "name": "get_weather",
    "description": "Get the current weather in a given location",
    "input_schema": WEATHER_SCHEMA,
}
WEATHER_FUNCTION = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "parameters": WEATHER_SCHEMA,
        "description": "Get the current weather in a given location",
    },
}
PIXEL = (
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAQAAAC1HAwCAAAAC0lEQVR42mNkYAAAAAYAAjCB0C8AAAAASUVORK5CYII="
)


def messages_body(**fields: Any) -> dict[str, Any]:
    return {"model": "qwen3-coder", "max_tokens": 1024, **fields}


def chat_body(*messages: dict[str, Any], **fields: Any) -> dict[str, Any]:
    return {"model": "qwen3-coder", "messages": list(messages), "max_tokens": 1024, **fields}


# Request shapes from the Messages API reference (https://docs.anthropic.com/en/api/messages),
# the tool use guide (https://docs.anthropic.com/en/docs/agents-and-tools/tool-use/implement-tool-use:
# get_weather, tool_choice auto/any/tool/none, disable_parallel_tool_use, tool_result with
# is_error and with content blocks), the vision guide
# (https://docs.anthropic.com/en/docs/build-with-claude/vision: base64 and url sources), prompt
# caching (https://docs.anthropic.com/en/docs/build-with-claude/prompt-caching: cache_control on
# system blocks), extended thinking
# (https://docs.anthropic.com/en/docs/build-with-claude/extended-thinking) and structured outputs
# (https://platform.claude.com/docs/en/build-with-claude/structured-outputs); the chat shapes
# from https://platform.openai.com/docs/api-reference/chat/create (messages with content parts
# and image_url, tool messages, tools, tool_choice, parallel_tool_calls, stop, user,
# stream_options.include_usage, response_format json_schema); top_k as vLLM and SGLang take it
# (vllm-project/vllm vllm/entrypoints/openai/protocol.py ChatCompletionRequest.top_k). The
# billing block is the one vLLM drops for the same reason (vllm/entrypoints/anthropic/serving.py).
REQUESTS = [
    # Mid-conversation system messages: platform.claude.com/docs/en/about-claude/models/
    # whats-new-claude-4-8 ("role: system messages immediately after a user turn"); Claude Code
    # 2.1 sends one as messages[1] (captured from a real run against the gateway).
    pytest.param(
        messages_body(
            messages=[
                {"role": "user", "content": "Hi"},
                {"role": "system", "content": [{"type": "text", "text": "Agents: claude."}]},
                {"role": "user", "content": "Go on."},
            ]
        ),
        chat_body(
            {"role": "user", "content": "Hi"},
            {"role": "system", "content": "Agents: claude."},
            {"role": "user", "content": "Go on."},
        ),
        id="a system message mid-conversation stays where it is",
    ),
    pytest.param(
        messages_body(system="You are a pirate.", messages=[{"role": "user", "content": "Hi"}]),
        chat_body(
            {"role": "system", "content": "You are a pirate."}, {"role": "user", "content": "Hi"}
        ),
        id="system string and one user turn",
    ),
    pytest.param(
        messages_body(
            system=[
                {"type": "text", "text": "x-anthropic-billing-header: cc_version=2.1.0; cch=9f2;"},
                {
                    "type": "text",
                    "text": "You are Claude Code.",
                    "cache_control": {"type": "ephemeral"},
                },
                {"type": "text", "text": "Be brief.", "cache_control": {"type": "ephemeral"}},
            ],
            messages=[{"role": "user", "content": "Hi"}],
        ),
        chat_body(
            {"role": "system", "content": "You are Claude Code.\n\nBe brief."},
            {"role": "user", "content": "Hi"},
        ),
        id="system blocks joined as paragraphs without cache_control or billing header",
    ),
    pytest.param(
        messages_body(
            messages=[
                {"role": "user", "content": "Hello there."},
                {"role": "assistant", "content": "Hi, I'm Claude. How can I help you?"},
                {"role": "user", "content": "Can you explain LLMs in plain English?"},
            ]
        ),
        chat_body(
            {"role": "user", "content": "Hello there."},
            {"role": "assistant", "content": "Hi, I'm Claude. How can I help you?"},
            {"role": "user", "content": "Can you explain LLMs in plain English?"},
        ),
        id="multi-turn",
    ),
    pytest.param(
        messages_body(
            messages=[
                {"role": "user", "content": "What's the Greek name for Sun? (A) Sol (B) Helios"},
                {"role": "assistant", "content": "The best answer is ("},
            ]
        ),
        chat_body(
            {"role": "user", "content": "What's the Greek name for Sun? (A) Sol (B) Helios"},
            {"role": "assistant", "content": "The best answer is ("},
        ),
        id="a prefilled assistant turn stays last",
    ),
    pytest.param(
        messages_body(
            messages=[
                {
                    "role": "user",
                    "content": [
                        {
                            "type": "image",
                            "source": {"type": "base64", "media_type": "image/png", "data": PIXEL},
                        },
                        {"type": "text", "text": "Describe this image."},
                    ],
                }
            ]
        ),
        chat_body(
            {
                "role": "user",
                "content": [
                    {"type": "image_url", "image_url": {"url": f"data:image/png;base64,{PIXEL}"}},
                    {"type": "text", "text": "Describe this image."},
                ],
            }
        ),
        id="a base64 image as a data URL part",
    ),
    pytest.param(
        messages_body(
            messages=[
                {
                    "role": "user",
                    "content": [
                        {
                            "type": "image",
                            "source": {"type": "url", "url": "https://example.com/ant.jpg"},
                        },
                        {"type": "text", "text": "What is this?"},
                        {"type": "text", "text": "Be brief."},
                    ],
                }
            ]
        ),
        chat_body(
            {
                "role": "user",
                "content": [
                    {"type": "image_url", "image_url": {"url": "https://example.com/ant.jpg"}},
                    {"type": "text", "text": "What is this?"},
                    {"type": "text", "text": "Be brief."},
                ],
            }
        ),
        id="an image url and two text blocks as parts",
    ),
    pytest.param(
        messages_body(
            tools=[WEATHER_TOOL],
            messages=[{"role": "user", "content": "What's the weather like in San Francisco?"}],
        ),
        chat_body(
            {"role": "user", "content": "What's the weather like in San Francisco?"},
            tools=[WEATHER_FUNCTION],
        ),
        id="tools as functions with the input schema as parameters",
    ),
    pytest.param(
        messages_body(
            tools=[WEATHER_TOOL],
            tool_choice={"type": "auto"},
            messages=[{"role": "user", "content": "Weather?"}],
        ),
        chat_body(
            {"role": "user", "content": "Weather?"}, tools=[WEATHER_FUNCTION], tool_choice="auto"
        ),
        id="tool_choice auto",
    ),
    pytest.param(
        messages_body(
            tools=[WEATHER_TOOL],
            tool_choice={"type": "any", "disable_parallel_tool_use": True},
            messages=[{"role": "user", "content": "Weather?"}],
        ),
        chat_body(
            {"role": "user", "content": "Weather?"},
            tools=[WEATHER_FUNCTION],
            tool_choice="required",
            parallel_tool_calls=False,
        ),
        id="tool_choice any without parallel tool use",
    ),
    pytest.param(
        messages_body(
            tools=[WEATHER_TOOL],
            tool_choice={"type": "tool", "name": "get_weather"},
            messages=[{"role": "user", "content": "Weather?"}],
        ),
        chat_body(
            {"role": "user", "content": "Weather?"},
            tools=[WEATHER_FUNCTION],
            tool_choice={"type": "function", "function": {"name": "get_weather"}},
        ),
        id="tool_choice tool names the function",
    ),
    pytest.param(
        messages_body(
            tools=[WEATHER_TOOL],
            tool_choice={"type": "none"},
            messages=[{"role": "user", "content": "Weather?"}],
        ),
        chat_body(
            {"role": "user", "content": "Weather?"}, tools=[WEATHER_FUNCTION], tool_choice="none"
        ),
        id="tool_choice none",
    ),
    pytest.param(
        messages_body(
            tool_choice={"type": "any"}, messages=[{"role": "user", "content": "Weather?"}]
        ),
        chat_body({"role": "user", "content": "Weather?"}),
        id="tool_choice without tools is dropped",
    ),
    pytest.param(
        messages_body(
            tools=[WEATHER_TOOL],
            messages=[
                {"role": "user", "content": "What's the weather like in San Francisco?"},
                {
                    "role": "assistant",
                    "content": [
                        {"type": "text", "text": "I'll check the weather."},
                        {
                            "type": "tool_use",
                            "id": "toolu_01A09q90qw90lq917835lq9",
                            "name": "get_weather",
                            "input": {"location": "San Francisco, CA", "unit": "°C"},
                        },
                    ],
                },
                {
                    "role": "user",
                    "content": [
                        {
                            "type": "tool_result",
                            "tool_use_id": "toolu_01A09q90qw90lq917835lq9",
                            "content": "15 degrees",
                        }
                    ],
                },
            ],
        ),
        chat_body(
            {"role": "user", "content": "What's the weather like in San Francisco?"},
            {
                "role": "assistant",
                "content": "I'll check the weather.",
                "tool_calls": [
                    {
                        "id": "toolu_01A09q90qw90lq917835lq9",
                        "type": "function",
                        "function": {
                            "name": "get_weather",
                            "arguments": '{"location": "San Francisco, CA", "unit": "°C"}',
                        },
                    }
                ],
            },
            {
                "role": "tool",
                "tool_call_id": "toolu_01A09q90qw90lq917835lq9",
                "content": "15 degrees",
            },
            tools=[WEATHER_FUNCTION],
        ),
        id="tool_use and tool_result round trip",
    ),
    pytest.param(
        messages_body(
            messages=[
                {
                    "role": "assistant",
                    "content": [
                        {"type": "tool_use", "id": "toolu_1", "name": "get_weather", "input": {}},
                        {"type": "tool_use", "id": "toolu_2", "name": "get_time", "input": {}},
                    ],
                },
                {
                    "role": "user",
                    "content": [
                        {"type": "tool_result", "tool_use_id": "toolu_1", "content": "15 degrees"},
                        {
                            "type": "tool_result",
                            "tool_use_id": "toolu_2",
                            "content": "ConnectionError: the time service is down",
                            "is_error": True,
                        },
                        {"type": "text", "text": "What should I do next?"},
                    ],
                },
            ]
        ),
        chat_body(
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {
                        "id": "toolu_1",
                        "type": "function",
                        "function": {"name": "get_weather", "arguments": "{}"},
                    },
                    {
                        "id": "toolu_2",
                        "type": "function",
                        "function": {"name": "get_time", "arguments": "{}"},
                    },
                ],
            },
            {"role": "tool", "tool_call_id": "toolu_1", "content": "15 degrees"},
            {
                "role": "tool",
                "tool_call_id": "toolu_2",
                "content": "Error: ConnectionError: the time service is down",
            },
            {"role": "user", "content": "What should I do next?"},
        ),
        id="parallel tool results in order, an error visible, the text after them",
    ),
    pytest.param(
        messages_body(
            messages=[
                {
                    "role": "user",
                    "content": [
                        {
                            "type": "tool_result",
                            "tool_use_id": "toolu_1",
                            "content": [
                                {"type": "text", "text": "Screenshot taken."},
                                {
                                    "type": "image",
                                    "source": {
                                        "type": "base64",
                                        "media_type": "image/png",
                                        "data": PIXEL,
                                    },
                                },
                            ],
                        }
                    ],
                }
            ]
        ),
        chat_body(
            {"role": "tool", "tool_call_id": "toolu_1", "content": "Screenshot taken."},
            {
                "role": "user",
                "content": [
                    {"type": "image_url", "image_url": {"url": f"data:image/png;base64,{PIXEL}"}}
                ],
            },
        ),
        id="a tool result's image follows its tool message",
    ),
    pytest.param(
        messages_body(
            messages=[
                {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_1"}]},
                {
                    "role": "user",
                    "content": [
                        {"type": "tool_result", "tool_use_id": "toolu_2", "is_error": True}
                    ],
                },
            ]
        ),
        chat_body(
            {"role": "tool", "tool_call_id": "toolu_1", "content": ""},
            {"role": "tool", "tool_call_id": "toolu_2", "content": "Error"},
        ),
        id="tool results without content",
    ),
    pytest.param(
        messages_body(
            stop_sequences=["\n\nHuman:", "END"],
            temperature=0.2,
            top_p=0.9,
            top_k=40,
            metadata={"user_id": "13803d75-b4b5-4c3e-b2a2-6f21399b021b"},
            stream=True,
            messages=[{"role": "user", "content": "Count."}],
        ),
        chat_body(
            {"role": "user", "content": "Count."},
            temperature=0.2,
            top_p=0.9,
            top_k=40,
            stop=["\n\nHuman:", "END"],
            user="13803d75-b4b5-4c3e-b2a2-6f21399b021b",
            stream=True,
            stream_options={"include_usage": True},
        ),
        id="sampling, stop sequences, metadata and stream with usage",
    ),
    pytest.param(
        messages_body(
            thinking={"type": "enabled", "budget_tokens": 10000},
            messages=[
                {"role": "user", "content": "Are there infinitely many primes?"},
                {
                    "role": "assistant",
                    "content": [
                        {"type": "thinking", "thinking": "Euclid...", "signature": "WaUjzkyp"},
                        {"type": "redacted_thinking", "data": "EmwKAhgBEgy3va3p"},
                        {"type": "text", "text": "Yes."},
                    ],
                },
                {"role": "user", "content": "Why?"},
            ],
        ),
        chat_body(
            {"role": "user", "content": "Are there infinitely many primes?"},
            {"role": "assistant", "content": "Yes."},
            {"role": "user", "content": "Why?"},
        ),
        id="thinking is not forwarded and earlier thinking blocks are dropped",
    ),
    pytest.param(
        messages_body(
            output_config={
                "format": {"type": "json_schema", "schema": {"type": "object"}},
                "effort": "low",
            },
            messages=[{"role": "user", "content": "JSON please."}],
        ),
        chat_body(
            {"role": "user", "content": "JSON please."},
            response_format={
                "type": "json_schema",
                "json_schema": {"name": "output", "schema": {"type": "object"}},
            },
        ),
        id="a structured output format as a json_schema response format",
    ),
    pytest.param(
        messages_body(
            tools=[{**WEATHER_TOOL, "strict": True}],
            messages=[
                {"role": "user", "content": "Weather?"},
                {
                    "role": "assistant",
                    "content": [{"type": "thinking", "thinking": "Hm.", "signature": "s"}],
                },
            ],
        ),
        chat_body(
            {"role": "user", "content": "Weather?"},
            {"role": "assistant", "content": ""},
            tools=[
                {"type": "function", "function": {**WEATHER_FUNCTION["function"], "strict": True}}
            ],
        ),
        id="a strict tool and an assistant turn of thinking only",
    ),
    pytest.param(
        messages_body(
            temperature=None,
            tools=None,
            priority=-5,
            service_tier="auto",
            messages=[{"role": "user", "content": []}],
        ),
        chat_body({"role": "user", "content": ""}),
        id="null fields count as absent and fields chat cannot carry stay behind",
    ),
]


@pytest.mark.parametrize(("body", "expected"), REQUESTS)
def test_a_messages_request_becomes_the_chat_request_it_means(
    body: dict[str, Any], expected: dict[str, Any]
) -> None:
    validate(body)
    assert to_chat(body) == expected


# What chat completions cannot carry, from the same documents: PDF documents
# (https://docs.anthropic.com/en/docs/build-with-claude/pdf-support), Files API image sources
# (https://docs.anthropic.com/en/docs/build-with-claude/files), server tools
# (https://docs.anthropic.com/en/docs/agents-and-tools/tool-use/web-search-tool) and search
# results (https://docs.anthropic.com/en/docs/build-with-claude/search-results).
PDF = {
    "type": "document",
    "source": {"type": "base64", "media_type": "application/pdf", "data": "JVBERi0="},
}
REFUSED = [
    pytest.param(
        messages_body(messages=[{"role": "user", "content": [PDF]}]),
        "messages.0.content.0: document blocks",
        id="a PDF document",
    ),
    pytest.param(
        messages_body(
            messages=[
                {
                    "role": "user",
                    "content": [
                        {"type": "image", "source": {"type": "file", "file_id": "file_011"}}
                    ],
                }
            ]
        ),
        "messages.0.content.0.source: image files",
        id="an image from the Files API",
    ),
    pytest.param(
        messages_body(
            tools=[{"type": "web_search_20250305", "name": "web_search", "max_uses": 5}],
            messages=[{"role": "user", "content": "News?"}],
        ),
        "tools.0: the server tool 'web_search_20250305'",
        id="a server tool",
    ),
    pytest.param(
        messages_body(
            messages=[
                {
                    "role": "user",
                    "content": [
                        {
                            "type": "tool_result",
                            "tool_use_id": "toolu_1",
                            "content": [
                                {
                                    "type": "search_result",
                                    "source": "https://example.com",
                                    "title": "T",
                                    "content": [{"type": "text", "text": "x"}],
                                }
                            ],
                        }
                    ],
                }
            ]
        ),
        "messages.0.content.0.content.0: search_result blocks",
        id="a search result in a tool result",
    ),
    pytest.param(
        messages_body(
            messages=[
                {
                    "role": "assistant",
                    "content": [
                        {
                            "type": "server_tool_use",
                            "id": "srvtoolu_1",
                            "name": "web_search",
                            "input": {},
                        }
                    ],
                }
            ]
        ),
        "messages.0.content.0: server_tool_use blocks",
        id="a server tool use in an assistant turn",
    ),
    pytest.param(
        messages_body(
            messages=[
                {
                    "role": "assistant",
                    "content": [
                        {"type": "image", "source": {"type": "url", "url": "https://x.io/a.png"}}
                    ],
                }
            ]
        ),
        "messages.0.content.0: chat completions take no images in assistant messages",
        id="an image in an assistant turn",
    ),
]


@pytest.mark.parametrize(("body", "says"), REFUSED)
def test_what_chat_completions_cannot_carry_is_a_400_that_names_it(
    body: dict[str, Any], says: str
) -> None:
    validate(body)  # well-formed Messages: a native backend could serve it
    with pytest.raises(MessagesError) as caught:
        to_chat(body)
    assert (caught.value.status, caught.value.type) == (400, "invalid_request_error")
    assert caught.value.message.startswith(says)


def user(content: Any) -> dict[str, Any]:
    return messages_body(messages=[{"role": "user", "content": content}])


# The request's documented shape (https://docs.anthropic.com/en/api/messages: required model,
# max_tokens >= 1 and messages; roles user and assistant; temperature and top_p 0-1; the block
# shapes of the tool use and vision guides; thinking budget_tokens >= 1024 in
# https://docs.anthropic.com/en/docs/build-with-claude/extended-thinking).
INVALID = [
    pytest.param([], "The request body must be a JSON object", id="not an object"),
    pytest.param(
        {"max_tokens": 1, "messages": [{"role": "user", "content": "x"}]}, "model:", id="no model"
    ),
    pytest.param(messages_body(model=7, messages=[]), "model:", id="a model that is a number"),
    pytest.param({**user("x"), "max_tokens": 0}, "max_tokens:", id="max_tokens zero"),
    pytest.param({**user("x"), "max_tokens": "100"}, "max_tokens:", id="max_tokens a string"),
    pytest.param({**user("x"), "max_tokens": True}, "max_tokens:", id="max_tokens true"),
    pytest.param(messages_body(messages=[]), "messages:", id="no messages"),
    pytest.param(messages_body(messages={"role": "user"}), "messages:", id="messages an object"),
    pytest.param(messages_body(messages=["hi"]), "messages.0:", id="a message that is a string"),
    pytest.param(
        messages_body(messages=[{"role": "robot", "content": "x"}]),
        "messages.0.role:",
        id="an unknown role",
    ),
    pytest.param(
        messages_body(messages=[{"role": "system", "content": [{"type": "image", "source": {}}]}]),
        "messages.0.content.0:",
        id="a system message with an image",
    ),
    pytest.param(user(42), "messages.0.content:", id="content a number"),
    pytest.param(user([{"text": "x"}]), "messages.0.content.0.type:", id="a block without type"),
    pytest.param(
        user([{"type": "text", "text": 1}]), "messages.0.content.0.text:", id="text not a string"
    ),
    pytest.param(
        user(
            [
                {
                    "type": "image",
                    "source": {"type": "base64", "media_type": "image/bmp", "data": "x"},
                }
            ]
        ),
        "messages.0.content.0.source.media_type:",
        id="an image type Anthropic does not take",
    ),
    pytest.param(
        user([{"type": "image", "source": {"type": "ftp", "url": "x"}}]),
        "messages.0.content.0.source.type:",
        id="an unknown image source",
    ),
    pytest.param(
        user([{"type": "tool_use", "id": "t", "name": "f", "input": {}}]),
        "messages.0.content.0: tool_use blocks belong in assistant messages",
        id="a tool use from the user",
    ),
    pytest.param(
        messages_body(
            messages=[
                {
                    "role": "assistant",
                    "content": [{"type": "tool_use", "id": "t", "name": "f", "input": "x"}],
                }
            ]
        ),
        "messages.0.content.0.input:",
        id="a tool use whose input is not an object",
    ),
    pytest.param(
        messages_body(
            messages=[
                {"role": "assistant", "content": [{"type": "tool_result", "tool_use_id": "t"}]}
            ]
        ),
        "messages.0.content.0: tool_result blocks belong in user messages",
        id="a tool result from the assistant",
    ),
    pytest.param(
        user([{"type": "tool_result", "tool_use_id": "t", "is_error": "yes"}]),
        "messages.0.content.0.is_error:",
        id="is_error not a boolean",
    ),
    pytest.param(
        user([{"type": "tool_result", "tool_use_id": "t", "content": [{"type": "text"}]}]),
        "messages.0.content.0.content.0.text:",
        id="a tool result's text block without text",
    ),
    pytest.param(user(["text"]), "messages.0.content.0:", id="a block that is a string"),
    pytest.param(
        user([{"type": "image"}]), "messages.0.content.0.source:", id="an image without source"
    ),
    pytest.param(
        user([{"type": "image", "source": {"type": "base64", "media_type": "image/png"}}]),
        "messages.0.content.0.source.data:",
        id="a base64 image without data",
    ),
    pytest.param(
        user([{"type": "image", "source": {"type": "url"}}]),
        "messages.0.content.0.source.url:",
        id="an image url source without url",
    ),
    pytest.param(
        user([{"type": "image", "source": {"type": "file"}}]),
        "messages.0.content.0.source.file_id:",
        id="an image file source without file id",
    ),
    pytest.param(
        messages_body(
            messages=[
                {"role": "assistant", "content": [{"type": "tool_use", "name": "f", "input": {}}]}
            ]
        ),
        "messages.0.content.0.id:",
        id="a tool use without id",
    ),
    pytest.param(
        messages_body(
            messages=[
                {"role": "assistant", "content": [{"type": "tool_use", "id": "t", "input": {}}]}
            ]
        ),
        "messages.0.content.0.name:",
        id="a tool use without name",
    ),
    pytest.param(
        user([{"type": "tool_result", "content": "x"}]),
        "messages.0.content.0.tool_use_id:",
        id="a tool result without the id of its tool use",
    ),
    pytest.param(
        user([{"type": "tool_result", "tool_use_id": "t", "content": 3}]),
        "messages.0.content.0.content:",
        id="a tool result whose content is a number",
    ),
    pytest.param(
        messages_body(messages=[{"role": "assistant", "content": [{"type": "thinking"}]}]),
        "messages.0.content.0.thinking:",
        id="a thinking block without thinking",
    ),
    pytest.param(
        messages_body(messages=[{"role": "assistant", "content": [{"type": "redacted_thinking"}]}]),
        "messages.0.content.0.data:",
        id="a redacted thinking block without data",
    ),
    pytest.param({**user("x"), "metadata": "me"}, "metadata:", id="metadata a string"),
    pytest.param({**user("x"), "tools": ["f"]}, "tools.0:", id="a tool that is a string"),
    pytest.param(
        {**user("x"), "tools": [{"name": "f", "type": 3}]},
        "tools.0.type:",
        id="a tool type that is a number",
    ),
    pytest.param(
        {**user("x"), "tools": [{"name": "f", "input_schema": {}, "description": 1}]},
        "tools.0.description:",
        id="a tool description that is a number",
    ),
    pytest.param({**user("x"), "tool_choice": "auto"}, "tool_choice:", id="tool choice a string"),
    pytest.param({**user("x"), "output_config": []}, "output_config:", id="output config a list"),
    pytest.param({**user("x"), "system": 5}, "system:", id="system a number"),
    pytest.param(
        {**user("x"), "system": [{"type": "image"}]}, "system.0:", id="a system block not text"
    ),
    pytest.param({**user("x"), "temperature": 1.5}, "temperature:", id="temperature above 1"),
    pytest.param({**user("x"), "top_p": float("nan")}, "top_p:", id="top_p not a number"),
    pytest.param({**user("x"), "top_k": -1}, "top_k:", id="top_k negative"),
    pytest.param(
        {**user("x"), "stop_sequences": "END"}, "stop_sequences:", id="stop_sequences a string"
    ),
    pytest.param({**user("x"), "stream": "yes"}, "stream:", id="stream a string"),
    pytest.param(
        {**user("x"), "metadata": {"user_id": 7}}, "metadata.user_id:", id="a numeric user id"
    ),
    pytest.param({**user("x"), "tools": {"name": "f"}}, "tools:", id="tools an object"),
    pytest.param(
        {**user("x"), "tools": [{"name": "f"}]}, "tools.0.input_schema:", id="a tool without schema"
    ),
    pytest.param(
        {**user("x"), "tools": [{"input_schema": {}}]}, "tools.0.name:", id="a tool without name"
    ),
    pytest.param(
        {**user("x"), "tool_choice": {"type": "some"}},
        "tool_choice.type:",
        id="an unknown tool choice",
    ),
    pytest.param(
        {**user("x"), "tool_choice": {"type": "tool"}},
        "tool_choice.name:",
        id="tool choice without name",
    ),
    pytest.param(
        {**user("x"), "tool_choice": {"type": "auto", "disable_parallel_tool_use": 1}},
        "tool_choice.disable_parallel_tool_use:",
        id="disable_parallel_tool_use a number",
    ),
    pytest.param(
        {**user("x"), "thinking": {"type": "enabled", "budget_tokens": 100}},
        "thinking.budget_tokens:",
        id="a thinking budget below 1024",
    ),
    pytest.param(
        {**user("x"), "thinking": {"type": "on"}}, "thinking.type:", id="an unknown thinking type"
    ),
    pytest.param(
        {**user("x"), "output_config": {"format": {"type": "json_object"}}},
        "output_config.format:",
        id="an output format that is not a json schema",
    ),
]


@pytest.mark.parametrize(("body", "says"), INVALID)
def test_a_malformed_request_is_a_400_that_names_the_field(body: Any, says: str) -> None:
    with pytest.raises(MessagesError) as caught:
        validate(body)
    assert (caught.value.status, caught.value.type) == (400, "invalid_request_error")
    assert caught.value.message.startswith(says)


def test_a_count_tokens_body_needs_no_max_tokens() -> None:
    # https://docs.anthropic.com/en/api/messages-count-tokens: model and messages, no max_tokens.
    body = {"model": "qwen3-coder", "messages": [{"role": "user", "content": "Hello"}]}
    validate(body, counting=True)
    with pytest.raises(MessagesError, match="max_tokens"):
        validate(body)


def test_unknown_block_types_pass_validation_for_a_native_backend_to_judge() -> None:
    body = user([{"type": "container_upload", "file_id": "file_1"}])
    validate(body)
    with pytest.raises(MessagesError, match="container_upload blocks cannot be translated"):
        to_chat(body)


def test_a_tool_input_nested_too_deeply_is_a_400_not_a_crash() -> None:
    deep: dict[str, Any] = {}
    for _ in range(100_000):
        deep = {"a": deep}
    body = messages_body(
        messages=[
            {
                "role": "assistant",
                "content": [{"type": "tool_use", "id": "t", "name": "f", "input": deep}],
            }
        ]
    )
    validate(body)
    with pytest.raises(MessagesError, match="nested too deeply"):
        to_chat(body)
    assert count_tokens_estimate(body) >= 1


def test_reply_options_carry_the_clients_model_thinking_and_stop_sequences() -> None:
    body = {**user("x"), "thinking": {"type": "adaptive"}, "stop_sequences": ["END"]}
    assert reply_options(body) == {
        "model": "qwen3-coder",
        "thinking": True,
        "stop_sequences": ("END",),
    }
    assert reply_options(user("x"))["stop_sequences"] == ()
    assert not wants_thinking({**user("x"), "thinking": {"type": "disabled"}})


# ----- answers --------------------------------------------------------------------------------


def chat_answer(
    message: dict[str, Any],
    finish: str | None = "stop",
    *,
    usage: dict[str, Any] | None = None,
    **choice: Any,
) -> dict[str, Any]:
    return {
        "id": "chatcmpl-B9MBs8CjcvOU2jLn4n570S5qMJKcT",
        "object": "chat.completion",
        "created": 1741569952,
        "model": "qwen3-8b",
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", **message},
                "logprobs": None,
                "finish_reason": finish,
                **choice,
            }
        ],
        "usage": usage
        if usage is not None
        else {"prompt_tokens": 19, "completion_tokens": 10, "total_tokens": 29},
    }


def messages_answer(
    content: list[dict[str, Any]],
    stop_reason: str = "end_turn",
    stop_sequence: str | None = None,
    usage: dict[str, int] | None = None,
) -> dict[str, Any]:
    return {
        "id": "msg_B9MBs8CjcvOU2jLn4n570S5qMJKcT",
        "type": "message",
        "role": "assistant",
        "model": "qwen3-coder",
        "content": content,
        "stop_reason": stop_reason,
        "stop_sequence": stop_sequence,
        "usage": usage or {"input_tokens": 19, "output_tokens": 10},
    }


WEATHER_CALL = {
    "id": "call_12345xyz",
    "type": "function",
    "function": {"name": "get_weather", "arguments": '{"location":"Paris, France"}'},
}
WEATHER_USE = {
    "type": "tool_use",
    "id": "call_12345xyz",
    "name": "get_weather",
    "input": {"location": "Paris, France"},
}
TEXT = "Hello! How can I assist you today?"

# Chat answers as https://platform.openai.com/docs/api-reference/chat/object shows them (text,
# tool_calls from https://platform.openai.com/docs/guides/function-calling, usage with
# prompt_tokens_details.cached_tokens), vLLM's matched stop in choices[0].stop_reason (a string,
# or the int id of a stop token: vllm-project/vllm vllm/entrypoints/openai/protocol.py
# ChatCompletionResponseChoice.stop_reason), SGLang's in matched_stop (sgl-project/sglang
# python/sglang/srt/entrypoints/openai/protocol.py), reasoning_content as both serve it; the
# Messages answers as https://docs.anthropic.com/en/api/messages documents them (stop_reason
# values, stop_sequence, usage) with cache_read_input_tokens from
# https://docs.anthropic.com/en/docs/build-with-claude/prompt-caching (input_tokens excludes
# the tokens read from the cache).
ANSWERS = [
    pytest.param(
        chat_answer({"content": TEXT}),
        {},
        messages_answer([{"type": "text", "text": TEXT}]),
        id="text",
    ),
    pytest.param(
        chat_answer({"content": None, "tool_calls": [WEATHER_CALL]}, "tool_calls"),
        {},
        messages_answer([WEATHER_USE], "tool_use"),
        id="a tool call",
    ),
    pytest.param(
        chat_answer({"content": "Let me check.", "tool_calls": [WEATHER_CALL]}, "tool_calls"),
        {},
        messages_answer([{"type": "text", "text": "Let me check."}, WEATHER_USE], "tool_use"),
        id="text and a tool call",
    ),
    pytest.param(
        chat_answer({"content": "", "tool_calls": [WEATHER_CALL]}, "stop"),
        {},
        messages_answer([WEATHER_USE], "tool_use"),
        id="tool calls that finished with stop are tool_use",
    ),
    pytest.param(
        chat_answer({"content": "The story beg"}, "length"),
        {},
        messages_answer([{"type": "text", "text": "The story beg"}], "max_tokens"),
        id="length is max_tokens",
    ),
    pytest.param(
        chat_answer({"content": None}, "content_filter"),
        {},
        messages_answer([], "refusal"),
        id="content_filter is refusal",
    ),
    pytest.param(
        chat_answer({"content": "1, 2, 3, "}, "stop", stop_reason="END"),
        {"stop_sequences": ("END",)},
        messages_answer([{"type": "text", "text": "1, 2, 3, "}], "stop_sequence", "END"),
        id="vLLM's matched stop string is the stop sequence",
    ),
    pytest.param(
        chat_answer({"content": "Done."}, "stop", stop_reason=151645),
        {"stop_sequences": ("END",)},
        messages_answer([{"type": "text", "text": "Done."}]),
        id="vLLM's stop token id is end_turn",
    ),
    pytest.param(
        chat_answer({"content": "Done."}, "stop", stop_reason="NaN happened"),
        {"stop_sequences": ("END",)},
        messages_answer([{"type": "text", "text": "Done."}]),
        id="a matched string the client never asked for is end_turn",
    ),
    pytest.param(
        chat_answer({"content": "a b "}, "stop", matched_stop="STOP"),
        {"stop_sequences": ("STOP",)},
        messages_answer([{"type": "text", "text": "a b "}], "stop_sequence", "STOP"),
        id="SGLang's matched_stop is the stop sequence",
    ),
    pytest.param(
        chat_answer(
            {"content": TEXT},
            usage={
                "prompt_tokens": 2006,
                "completion_tokens": 300,
                "total_tokens": 2306,
                "prompt_tokens_details": {"cached_tokens": 1920},
            },
        ),
        {},
        messages_answer(
            [{"type": "text", "text": TEXT}],
            usage={"input_tokens": 86, "output_tokens": 300, "cache_read_input_tokens": 1920},
        ),
        id="cached prompt tokens are cache reads outside input_tokens",
    ),
    pytest.param(
        chat_answer({"content": TEXT}, usage={}),
        {},
        messages_answer(
            [{"type": "text", "text": TEXT}], usage={"input_tokens": 0, "output_tokens": 0}
        ),
        id="no usage counts zero",
    ),
    pytest.param(
        chat_answer(
            {
                "content": None,
                "tool_calls": [
                    {
                        "id": "c1",
                        "type": "function",
                        "function": {"name": "f", "arguments": '{"a": '},
                    },
                    {
                        "id": "c2",
                        "type": "function",
                        "function": {"name": "g", "arguments": "[1, 2]"},
                    },
                    {"id": "c3", "type": "function", "function": {"name": "h", "arguments": ""}},
                    {
                        "id": "c4",
                        "type": "function",
                        "function": {"name": "k", "arguments": {"b": 1}},
                    },
                ],
            },
            "tool_calls",
        ),
        {},
        messages_answer(
            [
                {"type": "tool_use", "id": "c1", "name": "f", "input": {}},
                {"type": "tool_use", "id": "c2", "name": "g", "input": {}},
                {"type": "tool_use", "id": "c3", "name": "h", "input": {}},
                {"type": "tool_use", "id": "c4", "name": "k", "input": {"b": 1}},
            ],
            "tool_use",
        ),
        id="invalid, non-object or empty arguments are the input {}",
    ),
    pytest.param(
        chat_answer({"content": "42.", "reasoning_content": "6 times 7."}),
        {"thinking": True},
        messages_answer(
            [
                {"type": "thinking", "thinking": "6 times 7.", "signature": ""},
                {"type": "text", "text": "42."},
            ]
        ),
        id="reasoning is a thinking block when the client enabled thinking",
    ),
    pytest.param(
        chat_answer({"content": "42.", "reasoning": "6 times 7."}),
        {},
        messages_answer([{"type": "text", "text": "42."}]),
        id="reasoning is dropped when it did not",
    ),
    pytest.param(
        chat_answer({"content": [{"type": "text", "text": "Hel"}, {"type": "text", "text": "lo"}]}),
        {},
        messages_answer([{"type": "text", "text": "Hello"}]),
        id="content parts are one text",
    ),
]


@pytest.mark.parametrize(("answer", "options", "expected"), ANSWERS)
def test_a_chat_completion_becomes_the_messages_answer_it_means(
    answer: dict[str, Any], options: dict[str, Any], expected: dict[str, Any]
) -> None:
    translated = from_chat(answer, model="qwen3-coder", **options)
    assert translated == expected
    Message.model_validate(translated)


def test_the_answer_is_named_as_the_client_asked_and_gets_an_id_even_without_one() -> None:
    answer = chat_answer({"content": "x"})
    del answer["id"]
    translated = from_chat(answer, model="my-alias")
    assert translated["model"] == "my-alias"
    assert translated["id"].startswith("msg_") and len(translated["id"]) > 10


NOT_CHAT = [
    pytest.param([], id="not an object"),
    pytest.param({"object": "chat.completion"}, id="no choices"),
    pytest.param({"choices": []}, id="empty choices"),
    pytest.param({"choices": ["x"]}, id="a choice that is a string"),
    pytest.param({"choices": [{"index": 0}]}, id="no message"),
    pytest.param(chat_answer({"content": 5}), id="content a number"),
    pytest.param(chat_answer({"tool_calls": {"id": "x"}}), id="tool_calls an object"),
    pytest.param(
        chat_answer({"tool_calls": [{"id": "x", "function": {"arguments": "{}"}}]}),
        id="no tool name",
    ),
    pytest.param(chat_answer({"tool_calls": [{"id": "x"}]}), id="a tool call without function"),
]


@pytest.mark.parametrize("answer", NOT_CHAT)
def test_an_answer_that_is_not_a_chat_completion_is_a_value_error(answer: Any) -> None:
    with pytest.raises(ValueError):
        from_chat(answer, model="m")


# ----- the stream -----------------------------------------------------------------------------


def chunk(
    delta: dict[str, Any] | None = None, finish: str | None = None, **choice: Any
) -> dict[str, Any]:
    return {
        "id": "chatcmpl-9f8e7d",
        "object": "chat.completion.chunk",
        "created": 1741569952,
        "model": "qwen3-8b",
        "choices": [
            {"index": 0, "delta": delta or {}, "logprobs": None, "finish_reason": finish, **choice}
        ],
        "usage": None,
    }


def usage_chunk(prompt: int, completion: int, cached: int | None = None) -> dict[str, Any]:
    usage: dict[str, Any] = {
        "prompt_tokens": prompt,
        "completion_tokens": completion,
        "total_tokens": prompt + completion,
    }
    if cached is not None:
        usage["prompt_tokens_details"] = {"cached_tokens": cached}
    return {**chunk(), "choices": [], "usage": usage}


def call(
    index: int, arguments: str, *, id: str | None = None, name: str | None = None
) -> dict[str, Any]:
    fragment: dict[str, Any] = {"index": index, "function": {"arguments": arguments}}
    if id is not None:
        fragment.update(id=id, type="function")
        fragment["function"]["name"] = name
    return fragment


def accumulated(chunks: list[dict[str, Any]]) -> dict[str, Any]:
    """The chat completion the openai SDK's own accumulator makes of the chunks (with vLLM's
    matched stop, which it does not keep, copied from the chunk that carries it)."""
    state: ChatCompletionStreamState[Any] = ChatCompletionStreamState()
    for c in chunks:
        state.handle_chunk(ChatCompletionChunk.model_validate(c))
    answer = state.current_completion_snapshot.to_dict()
    for c in chunks:
        for choice in c["choices"]:
            if choice.get("stop_reason") is not None:
                answer["choices"][0]["stop_reason"] = choice["stop_reason"]
    return answer


ROLE = chunk({"role": "assistant", "content": ""})

# Chat chunks as https://platform.openai.com/docs/api-reference/chat-streaming/streaming and
# https://platform.openai.com/docs/guides/function-calling#streaming show them: a first chunk
# with the role, text in delta.content, tool calls in fragments by index (id, type and name in
# the first), finish_reason on the last choice chunk, then with stream_options.include_usage
# one chunk with empty choices and the usage, every other chunk with "usage": null;
# reasoning_content deltas and vLLM's choices[0].stop_reason as
# vllm-project/vllm vllm/entrypoints/openai/protocol.py (DeltaMessage,
# ChatCompletionResponseStreamChoice) streams them. The Anthropic events expected are those of
# https://docs.anthropic.com/en/docs/build-with-claude/streaming (text, tool use with
# input_json_delta, thinking_delta).
STREAMS = [
    pytest.param(
        [
            ROLE,
            chunk({"content": "Hel"}),
            chunk({"content": "lo!"}),
            chunk({}, "stop"),
            usage_chunk(12, 3),
        ],
        {},
        ["text"],
        ("end_turn", None),
        id="text only",
    ),
    pytest.param(
        [
            ROLE,
            chunk({"tool_calls": [call(0, "", id="call_abc", name="get_weather")]}),
            chunk({"tool_calls": [call(0, '{"locat')]}),
            chunk({"tool_calls": [call(0, 'ion": "Par')]}),
            chunk({"tool_calls": [call(0, 'is, France"}')]}),
            chunk({}, "tool_calls"),
            usage_chunk(80, 21),
        ],
        {},
        ["tool_use"],
        ("tool_use", None),
        id="a tool call whose arguments come in several deltas",
    ),
    pytest.param(
        [
            ROLE,
            chunk({"content": "I'll look that up."}),
            chunk(
                {"tool_calls": [call(0, '{"location": "Oslo"}', id="call_1", name="get_weather")]}
            ),
            chunk({}, "tool_calls"),
            usage_chunk(80, 30),
        ],
        {},
        ["text", "tool_use"],
        ("tool_use", None),
        id="text then a tool call",
    ),
    pytest.param(
        [
            ROLE,
            chunk({"tool_calls": [call(0, "", id="call_1", name="get_weather")]}),
            chunk({"tool_calls": [call(0, '{"location": "Oslo"}')]}),
            chunk({"tool_calls": [call(1, "", id="call_2", name="get_time")]}),
            chunk({"tool_calls": [call(1, '{"zone": "CET"}')]}),
            chunk({}, "tool_calls"),
            usage_chunk(80, 40),
        ],
        {},
        ["tool_use", "tool_use"],
        ("tool_use", None),
        id="two parallel tool calls",
    ),
    pytest.param(
        [
            ROLE,
            chunk(
                {
                    "tool_calls": [
                        call(0, '{"a": 1}', id="call_1", name="f"),
                        call(1, "{}", id="call_2", name="g"),
                    ]
                }
            ),
            chunk({}, "tool_calls"),
        ],
        {},
        ["tool_use", "tool_use"],
        ("tool_use", None),
        id="two tool calls in one chunk and no usage",
    ),
    pytest.param(
        [ROLE, chunk({"content": "Hi"}), chunk({}, "stop"), usage_chunk(2006, 2, cached=1920)],
        {},
        ["text"],
        ("end_turn", None),
        id="a usage chunk with cached tokens",
    ),
    pytest.param(
        [ROLE, chunk({"content": "The story beg"}, "length"), usage_chunk(5, 4)],
        {},
        ["text"],
        ("max_tokens", None),
        id="length",
    ),
    pytest.param(
        [
            ROLE,
            chunk({"content": "1, 2, 3, "}),
            chunk({}, "stop", stop_reason="END"),
            usage_chunk(5, 4),
        ],
        {"stop_sequences": ("END",)},
        ["text"],
        ("stop_sequence", "END"),
        id="a stop sequence vLLM names",
    ),
    pytest.param(
        [
            ROLE,
            chunk({"content": "Done."}),
            chunk({}, "stop", stop_reason=151645),
            usage_chunk(5, 4),
        ],
        {"stop_sequences": ("END",)},
        ["text"],
        ("end_turn", None),
        id="a stop token vLLM names",
    ),
    pytest.param(
        [ROLE, chunk({"content": None}, "content_filter")],
        {},
        [],
        ("refusal", None),
        id="content_filter",
    ),
    pytest.param(
        [
            ROLE,
            {**chunk(), "choices": []},
            chunk({"content": "Hi", "tool_calls": None, "reasoning_content": None}),
            {**chunk(), "choices": [], "usage": None},
            chunk({}, "stop"),
        ],
        {},
        ["text"],
        ("end_turn", None),
        id="empty choices and null fields",
    ),
    pytest.param(
        [
            ROLE,
            chunk({"reasoning_content": "6 times "}),
            chunk({"reasoning_content": "7."}),
            chunk({"content": "42."}),
            chunk({}, "stop"),
            usage_chunk(10, 8),
        ],
        {"thinking": True},
        ["thinking", "text"],
        ("end_turn", None),
        id="reasoning deltas as a thinking block when thinking is on",
    ),
    pytest.param(
        [
            ROLE,
            chunk({"reasoning_content": "6 times 7."}),
            chunk({"content": "42."}),
            chunk({}, "stop"),
            usage_chunk(10, 8),
        ],
        {},
        ["text"],
        ("end_turn", None),
        id="reasoning deltas dropped when thinking is off",
    ),
]


@pytest.mark.parametrize(("chunks", "options", "blocks", "stop"), STREAMS)
def test_a_translated_stream_accumulates_in_the_sdk_to_the_translated_answer(
    chunks: list[dict[str, Any]],
    options: dict[str, Any],
    blocks: list[str],
    stop: tuple[str, str | None],
) -> None:
    stream, _ = translate(chunks, **options)
    assert_anthropic_order(events_of(stream))
    final = through_sdk(stream)
    assert [block.type for block in final.content] == blocks
    assert (final.stop_reason, final.stop_sequence) == stop
    expected = from_chat(accumulated(chunks), model="qwen3-coder", **options)
    assert dump(final) == dump(Message.model_validate(expected))


def test_a_text_stream_has_exactly_anthropics_event_sequence() -> None:
    stream, _ = translate(
        [
            ROLE,
            chunk({"content": "Hel"}),
            chunk({"content": "lo!"}),
            chunk({}, "stop"),
            usage_chunk(12, 3),
        ]
    )
    events = events_of(stream)
    assert [name for name, _ in events] == [
        "message_start",
        "ping",
        "content_block_start",
        "content_block_delta",
        "content_block_delta",
        "content_block_stop",
        "message_delta",
        "message_stop",
    ]
    start = events[0][1]["message"]
    assert (start["id"], start["model"], start["content"]) == (
        "msg_9f8e7d",
        "qwen3-coder",
        [],
    )
    assert events[3][1]["delta"] == {"type": "text_delta", "text": "Hel"}
    assert events[6][1] == {
        "type": "message_delta",
        "delta": {"stop_reason": "end_turn", "stop_sequence": None},
        "usage": {"input_tokens": 12, "output_tokens": 3},
    }


def test_tool_arguments_pass_on_fragment_by_fragment() -> None:
    fragments = ['{"locat', 'ion": "Par', 'is, France"}']
    stream, _ = translate(
        [ROLE, chunk({"tool_calls": [call(0, "", id="call_abc", name="get_weather")]})]
        + [chunk({"tool_calls": [call(0, f)]}) for f in fragments]
        + [chunk({}, "tool_calls")]
    )
    events = events_of(stream)
    starts = [data for name, data in events if name == "content_block_start"]
    assert starts == [
        {
            "type": "content_block_start",
            "index": 0,
            "content_block": {
                "type": "tool_use",
                "id": "call_abc",
                "name": "get_weather",
                "input": {},
            },
        }
    ]
    deltas = [data["delta"] for name, data in events if name == "content_block_delta"]
    assert deltas == [{"type": "input_json_delta", "partial_json": f} for f in fragments]


def test_the_translator_keeps_the_usage_the_engine_reported_in_chats_terms() -> None:
    _, translator = translate(
        [ROLE, chunk({"content": "Hi"}, "stop"), usage_chunk(2006, 2, cached=1920)]
    )
    assert translator.usage == Usage(2006, 2, 1920)
    _, silent = translate([ROLE, chunk({"content": "Hi"}, "stop")])
    assert silent.usage is None


def test_an_engine_that_sends_usage_on_its_first_chunk_gives_message_start_the_input_count() -> (
    None
):
    first = {**ROLE, "usage": {"prompt_tokens": 30, "completion_tokens": 0}}
    stream, _ = translate([first, chunk({"content": "Hi"}, "stop")])
    assert events_of(stream)[0][1]["message"]["usage"] == {"input_tokens": 30, "output_tokens": 0}


def test_a_stream_with_nothing_before_its_end_is_an_empty_message() -> None:
    stream, _ = translate([])
    final = through_sdk(stream)
    assert (final.content, final.stop_reason, final.usage.output_tokens) == ([], "end_turn", 0)


def test_interleaved_tool_fragments_still_accumulate_to_each_call() -> None:
    # No documented engine does this; a lying one must not lose or misplace arguments.
    stream, _ = translate(
        [
            chunk({"tool_calls": [call(0, '{"a":', id="call_1", name="f")]}),
            chunk({"tool_calls": [call(1, '{"b":', id="call_2", name="g")]}),
            chunk({"tool_calls": [call(0, " 1}")]}),
            chunk({"tool_calls": [call(1, " 2}")]}),
            chunk({}, "tool_calls"),
        ]
    )
    final = through_sdk(stream)
    assert [(b.name, b.input) for b in final.content if b.type == "tool_use"] == [
        ("f", {"a": 1}),
        ("g", {"b": 2}),
    ]


def test_tool_fragments_without_index_follow_their_id_or_the_call_before() -> None:
    stream, _ = translate(
        [
            chunk(
                {"tool_calls": [{"id": "call_1", "function": {"name": "f", "arguments": '{"a"'}}]}
            ),
            chunk({"tool_calls": [{"function": {"arguments": ": 1}"}}]}),
            chunk({"tool_calls": [{"id": "call_2", "function": {"name": "g", "arguments": "{}"}}]}),
            chunk({}, "tool_calls"),
        ]
    )
    final = through_sdk(stream)
    assert [(b.id, b.input) for b in final.content if b.type == "tool_use"] == [
        ("call_1", {"a": 1}),
        ("call_2", {}),
    ]


def test_a_tool_call_without_an_id_gets_one() -> None:
    stream, _ = translate(
        [chunk({"tool_calls": [{"index": 0, "function": {"name": "f"}}]}, "tool_calls")]
    )
    (block,) = through_sdk(stream).content
    assert block.type == "tool_use" and block.id.startswith("toolu_") and block.input == {}


def test_a_failure_mid_stream_ends_with_one_error_event_the_sdk_raises() -> None:
    translator = StreamTranslator(model="qwen3-coder")
    stream = translator.feed(ROLE) + translator.feed(chunk({"content": "Hel"}))
    stream += translator.fail("overloaded_error", "Overloaded")
    assert stream.endswith(
        b'event: error\ndata: {"type":"error",'
        b'"error":{"type":"overloaded_error","message":"Overloaded"}}\n\n'
    )
    assert b"message_stop" not in stream
    with pytest.raises(anthropic.APIStatusError) as caught:
        through_sdk(stream)
    assert caught.value.body == {
        "type": "error",
        "error": {"type": "overloaded_error", "message": "Overloaded"},
    }
    assert translator.error == "Overloaded"
    assert translator.finish() == b"" and translator.feed(chunk({"content": "x"})) == b""


# vLLM ends a failed stream with an error chunk, nested in newer versions and flat in older
# ones, SGLang likewise (vllm-project/vllm vllm/entrypoints/openai/serving_engine.py
# create_streaming_error_response; FACTS.md "Engines' error bodies differ").
ENGINE_ERRORS = [
    pytest.param(
        {"error": {"message": "CUDA out of memory", "type": "InternalServerError", "code": 500}},
        id="nested",
    ),
    pytest.param(
        {
            "object": "error",
            "message": "CUDA out of memory",
            "type": "InternalServerError",
            "code": 500,
        },
        id="flat",
    ),
]


@pytest.mark.parametrize("error", ENGINE_ERRORS)
def test_an_engines_error_chunk_becomes_an_error_event_with_its_message(
    error: dict[str, Any],
) -> None:
    translator = StreamTranslator(model="qwen3-coder")
    stream = translator.feed(ROLE) + translator.feed(error) + translator.finish()
    with pytest.raises(anthropic.APIStatusError) as caught:
        through_sdk(stream)
    assert caught.value.body == {
        "type": "error",
        "error": {
            "type": "api_error",
            "message": "The model server failed mid-answer: CUDA out of memory",
        },
    }
    assert translator.error is not None


def test_a_chunk_that_is_not_an_object_ends_the_stream_with_an_error() -> None:
    translator = StreamTranslator(model="m")
    stream = translator.feed(ROLE) + translator.feed(["not", "a", "chunk"]) + translator.finish()
    assert events_of(stream)[-1][0] == "error"


# ----- native usage ---------------------------------------------------------------------------

# The events of the streaming docs' basic example (https://docs.anthropic.com/en/docs/build-with-claude/streaming):
# message_start with the input count, message_delta with the cumulative output count.
NATIVE_EVENTS = [
    (
        "message_start",
        {
            "type": "message_start",
            "message": {
                "id": "msg_1nZdL29xx5MUA1yADyHTEsnR8uuvGzszyY",
                "type": "message",
                "role": "assistant",
                "content": [],
                "model": "claude-opus-4-1-20250805",
                "stop_reason": None,
                "stop_sequence": None,
                "usage": {"input_tokens": 25, "output_tokens": 1, "cache_read_input_tokens": 7},
            },
        },
    ),
    (
        "content_block_start",
        {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}},
    ),
    ("ping", {"type": "ping"}),
    (
        "content_block_delta",
        {
            "type": "content_block_delta",
            "index": 0,
            # Text that looks like an event line must not be read as one.
            "delta": {"type": "text_delta", "text": "say\nevent: message_delta\ndata: {}\n\n"},
        },
    ),
    ("content_block_stop", {"type": "content_block_stop", "index": 0}),
    (
        "message_delta",
        {
            "type": "message_delta",
            "delta": {"stop_reason": "end_turn", "stop_sequence": None},
            "usage": {"output_tokens": 15},
        },
    ),
    ("message_stop", {"type": "message_stop"}),
]
NATIVE_STREAM = b"".join(
    b"event: %s\ndata: %s\n\n" % (name.encode(), json.dumps(data).encode())
    for name, data in NATIVE_EVENTS
)


def test_native_usage_reads_message_start_then_the_cumulative_message_delta() -> None:
    reader = NativeUsage()
    for _, data in events_of(NATIVE_STREAM):
        reader.feed(data)
    assert reader.usage == Usage(32, 15, 7)  # input_tokens 25 + 7 read from the cache


def test_native_usage_reads_the_same_from_the_bytes_event_by_event() -> None:
    reader = NativeUsage()
    events = NATIVE_STREAM.split(b"\n\n")
    for event in events[:-1]:
        reader.feed_sse(event + b"\n\n")
    assert reader.usage == Usage(32, 15, 7)  # input_tokens 25 + 7 read from the cache
    whole = NativeUsage()
    whole.feed_sse(NATIVE_STREAM.replace(b"\n", b"\r\n"))
    assert whole.usage == Usage(32, 15, 7)


def test_a_message_delta_with_input_counts_overrides_message_starts() -> None:
    reader = NativeUsage()
    reader.feed(
        {"type": "message_start", "message": {"usage": {"input_tokens": 0, "output_tokens": 0}}}
    )
    reader.feed(
        {
            "type": "message_delta",
            "usage": {"input_tokens": 472, "output_tokens": 9, "cache_read_input_tokens": 3},
        }
    )
    assert reader.usage == Usage(475, 9, 3)


def test_a_message_delta_alone_is_usage_enough() -> None:
    reader = NativeUsage()
    reader.feed({"type": "message_delta", "usage": {"output_tokens": 9}})
    assert reader.usage == Usage(0, 9, None)


def test_native_usage_ignores_what_is_not_usage() -> None:
    reader = NativeUsage()
    for event in (
        [],
        {"type": "message_delta", "usage": "many"},
        {"type": "message_start", "message": 3},
    ):
        reader.feed(event)
    reader.feed_sse(b"event: message_delta\ndata: {not json\n\n")
    assert reader.usage is None


def test_the_usage_of_a_native_answer() -> None:
    # The example answer of https://docs.anthropic.com/en/api/messages.
    answer = {
        "id": "msg_013Zva2CMHLNnXjNJJKqJ2EF",
        "type": "message",
        "role": "assistant",
        "content": [{"type": "text", "text": "Hi! My name is Claude."}],
        "model": "qwen3-coder",
        "stop_reason": "end_turn",
        "stop_sequence": None,
        "usage": {"input_tokens": 2095, "output_tokens": 503},
    }
    assert usage_of_answer(answer) == Usage(2095, 503, None)
    assert usage_of_answer("garbage") is None


# ----- errors ---------------------------------------------------------------------------------

# Statuses and types from https://docs.anthropic.com/en/api/errors (504 timeout_error as the
# SDK's GatewayTimeoutErrorObject has it); the exception classes are the SDK's own mapping.
SDK_ERRORS = [
    (400, anthropic.BadRequestError),
    (401, anthropic.AuthenticationError),
    (403, anthropic.PermissionDeniedError),
    (404, anthropic.NotFoundError),
    (413, anthropic.ContentTooLargeError),
    (429, anthropic.RateLimitError),
    (500, anthropic.InternalServerError),
    (502, anthropic.InternalServerError),
    (503, anthropic.ServiceUnavailableError),
    (504, anthropic.GatewayTimeoutError),
    (529, anthropic.OverloadedError),
]


@pytest.mark.parametrize(("status", "exception"), SDK_ERRORS)
def test_each_error_envelope_reaches_the_sdk_as_its_own_error(
    status: int, exception: type[Exception]
) -> None:
    body = error_body(ERROR_TYPES[status], "Something happened.")
    client = sdk(
        lambda _: httpx2.Response(
            status, headers={"content-type": "application/json"}, content=body
        )
    )
    with pytest.raises(exception) as caught:
        client.messages.create(model="m", max_tokens=1, messages=[{"role": "user", "content": "x"}])
    assert caught.value.body == {
        "type": "error",
        "error": {"type": ERROR_TYPES[status], "message": "Something happened."},
    }  # type: ignore[attr-defined]
    if ERROR_TYPES[status] != "request_too_large":  # Cloudflare's type; not in the SDK's union
        ErrorResponse.model_validate_json(body)


def test_statuses_outside_the_table_get_the_documented_fallback_types() -> None:
    assert [error_type(s) for s in (400, 405, 422, 500, 501, 529)] == [
        "invalid_request_error",
        "invalid_request_error",
        "invalid_request_error",
        "api_error",
        "api_error",
        "overloaded_error",
    ]


def test_the_error_event_is_the_envelope_framed_as_an_event() -> None:
    assert (
        error_event("api_error", "x")
        == b"event: error\ndata: " + error_body("api_error", "x") + b"\n\n"
    )
    assert MessagesError(400, "invalid_request_error", "bad").body() == error_body(
        "invalid_request_error", "bad"
    )


# ----- count_tokens ---------------------------------------------------------------------------


def test_the_token_estimate_follows_its_documented_rule() -> None:
    body = {
        "model": "m",
        "system": "s" * 10,
        "tools": [{"name": "get", "description": "d" * 5, "input_schema": {"type": "object"}}],
        "messages": [
            {"role": "user", "content": "u" * 7},
            {
                "role": "assistant",
                "content": [
                    {"type": "thinking", "thinking": "t" * 4, "signature": ""},
                    {"type": "text", "text": "a" * 3},
                    {"type": "tool_use", "id": "t", "name": "f", "input": {"a": 1}},
                    {"type": "tool_use", "id": "v", "name": "g", "input": {}},
                ],
            },
            {
                "role": "user",
                "content": [
                    {
                        "type": "tool_result",
                        "tool_use_id": "t",
                        "content": [
                            {"type": "text", "text": "r" * 2},
                            {
                                "type": "image",
                                "source": {"type": "url", "url": "https://x.io/b.png"},
                            },
                        ],
                    },
                    {"type": "tool_result", "tool_use_id": "v", "content": "q" * 5},
                    {"type": "image", "source": {"type": "url", "url": "https://x.io/a.png"}},
                ],
            },
        ],
    }
    validate(body, counting=True)
    # Characters: system 10, user 7, thinking 4, text 3, tool uses "f" + '{"a":1}' 1 + 7 and
    # "g" + "{}" 1 + 2, results 2 + 5, tool "get" + 5 + '{"type":"object"}' 3 + 5 + 17:
    # 67, so 17 tokens; 3 messages 12; 2 images.
    assert count_tokens_estimate(body) == 17 + 12 + 2 * 1600


def test_the_token_estimate_grows_with_the_text() -> None:
    short = user("x" * 40)
    assert count_tokens_estimate(short) == 10 + 4
    assert count_tokens_estimate(user("x" * 41)) == 11 + 4


# ----- property tests -------------------------------------------------------------------------

JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=6),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3)
    ),
    max_leaves=12,
)


def some(values: list[Any]) -> st.SearchStrategy[Any]:
    """Mostly the values that matter, sometimes anything: a body must get past its first fields
    for the checks of its deeper ones to run at all."""
    good = st.sampled_from(values)
    return st.one_of(good, good, good, good, JSON)


SOURCE = st.fixed_dictionaries(
    {"type": some(["base64", "url", "file"])},
    optional={
        "media_type": some(["image/png", "image/bmp"]),
        "data": some(["AAAA"]),
        "url": some(["https://x.io/a.png", ""]),
        "file_id": some(["file_1"]),
    },
)
LEAF_BLOCK = st.fixed_dictionaries(
    {"type": some(["text", "image", "document", "search_result", "tool_reference"])},
    optional={"text": some(["hi", ""]), "source": SOURCE | JSON},
)
BLOCK = st.fixed_dictionaries(
    {
        "type": some(
            [
                "text",
                "image",
                "tool_use",
                "tool_result",
                "thinking",
                "redacted_thinking",
                "document",
                "server_tool_use",
            ]
        )
    },
    optional={
        "text": some(["hi", "x-anthropic-billing-header: 1"]),
        "source": SOURCE | JSON,
        "id": some(["toolu_1", ""]),
        "name": some(["get_weather", ""]),
        "input": some([{}, {"a": [1, {"b": None}]}]),
        "tool_use_id": some(["toolu_1"]),
        "content": st.text(max_size=5) | st.lists(LEAF_BLOCK, max_size=3) | JSON,
        "is_error": some([True, False]),
        "thinking": some(["hmm"]),
        "signature": some(["sig"]),
        "data": some(["d"]),
        "cache_control": some([{"type": "ephemeral"}]),
    },
)
MESSAGE = st.fixed_dictionaries(
    {
        "role": some(["user", "assistant", "system"]),
        "content": st.text(max_size=5) | st.lists(BLOCK, max_size=4) | JSON,
    }
)
TOOL = st.fixed_dictionaries(
    {"name": some(["get_weather", ""])},
    optional={
        "type": some(["custom", "web_search_20250305"]),
        "description": some(["d"]),
        "input_schema": some([{"type": "object"}]),
        "strict": some([True]),
    },
)
BODY = st.fixed_dictionaries(
    {
        "model": some(["qwen3-coder", ""]),
        "max_tokens": st.integers(-1, 5) | JSON,
        "messages": st.lists(MESSAGE, max_size=4) | JSON,
    },
    optional={
        "system": st.text(max_size=5) | st.lists(LEAF_BLOCK, max_size=3) | JSON,
        "tools": st.lists(TOOL, max_size=3) | JSON,
        "tool_choice": st.fixed_dictionaries(
            {"type": some(["auto", "any", "tool", "none"])},
            optional={"name": some(["get_weather"]), "disable_parallel_tool_use": some([True])},
        )
        | JSON,
        "stop_sequences": st.lists(st.text(max_size=3), max_size=2) | JSON,
        "temperature": st.floats() | JSON,
        "top_p": st.floats() | JSON,
        "top_k": st.integers(-2, 50) | JSON,
        "stream": some([True, False]),
        "metadata": st.fixed_dictionaries({}, optional={"user_id": some(["u1"])}) | JSON,
        "thinking": st.fixed_dictionaries(
            {"type": some(["enabled", "disabled", "adaptive"])},
            optional={"budget_tokens": st.integers(0, 5000) | JSON},
        )
        | JSON,
        "output_config": st.fixed_dictionaries(
            {},
            optional={
                "format": st.fixed_dictionaries({"type": some(["json_schema"]), "schema": JSON})
            },
        )
        | JSON,
    },
)
PROPERTY = settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@pytest.mark.parametrize("content", ["", "Be brief."])
def test_a_conversation_of_system_messages_alone_is_refused(content: str) -> None:
    body = {"model": "m", "max_tokens": 1, "messages": [{"role": "system", "content": content}]}
    with pytest.raises(MessagesError, match="at least one user or assistant message"):
        validate(body)


@PROPERTY
@given(BODY | JSON)
def test_validate_and_to_chat_raise_nothing_but_messages_errors(body: Any) -> None:
    try:
        validate(body)
        chat = to_chat(body)
    except MessagesError as err:
        assert (err.status, err.type) == (400, "invalid_request_error") and err.message
        return
    json.dumps(chat)  # what the relay will send
    assert chat["model"] == body["model"] and chat["messages"]
    validate(body, counting=True)
    assert count_tokens_estimate(body) >= 1


TOOL_CALL = st.fixed_dictionaries(
    {},
    optional={
        "index": some([0, 1, True, -1]),
        "id": some(["call_1", "call_2", ""]),
        "type": some(["function"]),
        "function": st.fixed_dictionaries(
            {}, optional={"name": some(["f", ""]), "arguments": some(['{"a":', " 1}", "", "{}"])}
        )
        | JSON,
    },
)
DELTA = st.fixed_dictionaries(
    {},
    optional={
        "role": some(["assistant"]),
        "content": st.text(max_size=4) | JSON,
        "reasoning_content": st.text(max_size=4) | JSON,
        "reasoning": st.text(max_size=4) | JSON,
        "tool_calls": st.lists(TOOL_CALL | JSON, max_size=3) | JSON,
    },
)
CHOICE = st.fixed_dictionaries(
    {},
    optional={
        "index": JSON,
        "delta": DELTA | JSON,
        "message": JSON,
        "finish_reason": some(["stop", "length", "tool_calls", "content_filter", "abort"]),
        "stop_reason": some(["END", 7]),
        "matched_stop": some(["END", 7]),
    },
)
USAGE = st.fixed_dictionaries(
    {},
    optional={
        "prompt_tokens": st.integers(-5, 100) | JSON,
        "completion_tokens": st.integers(-5, 100) | JSON,
        "prompt_tokens_details": st.fixed_dictionaries(
            {}, optional={"cached_tokens": st.integers(-1, 100) | JSON}
        )
        | JSON,
    },
)
CHUNK = st.fixed_dictionaries(
    {},
    optional={
        "id": some(["chatcmpl-1"]),
        "object": some(["chat.completion.chunk", "error"]),
        "choices": st.lists(CHOICE | JSON, max_size=2) | JSON,
        "usage": USAGE | JSON,
        "error": some([None, {"message": "boom"}]),
    },
)


@PROPERTY
@given(st.lists(CHUNK | JSON, max_size=8), st.booleans())
def test_feeding_any_chunks_makes_well_framed_events_and_never_raises(
    chunks: list[Any], thinking: bool
) -> None:
    translator = StreamTranslator(model="m", thinking=thinking)
    out = b"".join(translator.feed(c) for c in chunks) + translator.finish()
    events = events_of(out)
    assert events[0][0] in ("message_start", "error")
    assert events[-1][0] in ("message_stop", "error")
    for name, data in events:
        assert data["type"] == name
    if events[-1][0] == "message_stop":
        try:
            through_sdk(out)
        except ValueError as err:  # arguments the engine streamed were not JSON: the SDK says so
            assert "tool parameter JSON" in str(err)


ANSWER = st.fixed_dictionaries(
    {
        "choices": st.lists(
            CHOICE.map(lambda c: {**c, "message": c.get("delta")}) | JSON, max_size=2
        )
        | JSON
    },
    optional={"id": some(["chatcmpl-1"]), "usage": USAGE | JSON},
)


@PROPERTY
@given(ANSWER | JSON, st.booleans())
def test_from_chat_raises_only_value_errors_and_answers_only_valid_messages(
    answer: Any, thinking: bool
) -> None:
    try:
        translated = from_chat(answer, model="m", thinking=thinking, stop_sequences=("END",))
    except ValueError:
        return
    Message.model_validate(translated)
