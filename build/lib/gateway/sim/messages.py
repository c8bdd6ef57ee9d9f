"""Anthropic Messages answers and events as the simulated engine writes them."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from gateway.sim.jobs import _turn_of
from gateway.sim.text import _count_words
from gateway.sim.turns import _int_or_none, _text_of
from gateway.sim.wire import _encode, _sse

if TYPE_CHECKING:
    from gateway.sim.jobs import _Job
    from gateway.sim.turns import _Turn


def _anthropic_usage(job: _Job, output: int, vllm: bool) -> dict[str, int]:
    # Anthropic's input_tokens leave out what was read from the cache; vLLM reports no cache.
    if vllm:
        return {"input_tokens": job.prompt_tokens, "output_tokens": output}
    cached = job.cached_tokens()
    return {
        "input_tokens": job.prompt_tokens - cached,
        "cache_creation_input_tokens": 0,
        "cache_read_input_tokens": cached,
        "output_tokens": output,
    }


def _anthropic_stop(turn: _Turn, vllm: bool) -> tuple[str, str | None]:
    """stop_reason and stop_sequence; vLLM maps its chat finish_reason (stop_reason_map)."""
    if turn.finish == "tool":
        return ("end_turn" if vllm and turn.named else "tool_use"), None
    if turn.finish == "length":
        return "max_tokens", None
    if turn.finish == "stop_sequence" and not vllm:
        return "stop_sequence", turn.stop_sequence
    return "end_turn", None


def _anthropic_blocks(turn: _Turn, vllm: bool) -> list[dict[str, Any]]:
    blocks: list[dict[str, Any]] = []
    # vLLM leaves out an empty text; Anthropic's answer always has a block.
    if turn.texts or not (turn.calls or vllm):
        blocks.append({"type": "text", "text": turn.text})
    for call in turn.calls:
        blocks.append(
            {
                "type": "tool_use",
                "id": call.id,
                "name": call.name,
                "input": json.loads(call.arguments),
            }
        )
    return blocks


def _message_body(job: _Job, vllm: bool) -> bytes:
    turn = _turn_of(job)
    stop_reason, stop_sequence = _anthropic_stop(turn, vllm)
    message: dict[str, Any] = {
        "id": job.ident,
        "type": "message",
        "role": "assistant",
        "model": job.model,
        "content": _anthropic_blocks(turn, vllm),
        "stop_reason": stop_reason,
        "stop_sequence": stop_sequence,
        "usage": _anthropic_usage(job, turn.generated, vllm),
    }
    if vllm:
        # model_dump(exclude_none=True) drops a stop_sequence of None.
        del message["stop_sequence"]
    return _encode(message).encode()


def _message_events(job: _Job, vllm: bool) -> list[tuple[bytes, bool]]:
    """Anthropic's event sequence, or vLLM's (anthropic/serving.py message_stream_converter)."""
    turn = _turn_of(job)
    if vllm:
        # Built with exclude_unset: the message's type and role are defaults, so left out.
        start: dict[str, Any] = {
            "id": job.ident,
            "content": [],
            "model": job.model,
            "stop_reason": None,
            "stop_sequence": None,
            "usage": {"input_tokens": job.prompt_tokens, "output_tokens": 0},
        }
    else:
        start = {
            "id": job.ident,
            "type": "message",
            "role": "assistant",
            "model": job.model,
            "content": [],
            "stop_reason": None,
            "stop_sequence": None,
            "usage": _anthropic_usage(job, 1, False),
        }
    events = [(_sse("message_start", {"type": "message_start", "message": start}), False)]
    if not vllm:
        events.append((_sse("ping", {"type": "ping"}), False))
    index = 0
    if turn.texts or not (turn.calls or vllm):
        text_block = {"type": "text", "text": ""}
        events.append(
            (
                _sse(
                    "content_block_start",
                    {"type": "content_block_start", "index": 0, "content_block": text_block},
                ),
                False,
            )
        )
        for text in turn.texts:
            delta = {"type": "text_delta", "text": text}
            events.append(
                (
                    _sse(
                        "content_block_delta",
                        {"type": "content_block_delta", "index": 0, "delta": delta},
                    ),
                    True,
                )
            )
        events.append(
            (_sse("content_block_stop", {"type": "content_block_stop", "index": 0}), False)
        )
        index = 1
    for call in turn.calls:
        block = {"type": "tool_use", "id": call.id, "name": call.name, "input": {}}
        events.append(
            (
                _sse(
                    "content_block_start",
                    {"type": "content_block_start", "index": index, "content_block": block},
                ),
                True,
            )
        )
        # Anthropic opens a tool's input with an empty fragment; vLLM's first delta has none.
        pieces = call.fragments if vllm else ["", *call.fragments]
        for piece in pieces:
            delta = {"type": "input_json_delta", "partial_json": piece}
            events.append(
                (
                    _sse(
                        "content_block_delta",
                        {"type": "content_block_delta", "index": index, "delta": delta},
                    ),
                    bool(piece),
                )
            )
        events.append(
            (_sse("content_block_stop", {"type": "content_block_stop", "index": index}), False)
        )
        index += 1
    stop_reason, stop_sequence = _anthropic_stop(turn, vllm)
    if vllm:
        final: dict[str, Any] = {
            "type": "message_delta",
            "delta": {"stop_reason": stop_reason},
            "usage": {"input_tokens": job.prompt_tokens, "output_tokens": turn.generated},
        }
    else:
        final = {
            "type": "message_delta",
            "delta": {"stop_reason": stop_reason, "stop_sequence": stop_sequence},
            "usage": {"output_tokens": turn.generated},
        }
    events.append((_sse("message_delta", final), False))
    events.append((_sse("message_stop", {"type": "message_stop"}), False))
    return events


def _messages_problem(body: dict[str, Any], *, count: bool) -> str | None:
    """Why a Messages (or count_tokens) body does not validate, None when it does."""
    model = body.get("model")
    if not isinstance(model, str) or not model:
        return "model: Field required"
    if not count:
        max_tokens = _int_or_none(body.get("max_tokens"))
        if max_tokens is None:
            return "max_tokens: Field required"
        if max_tokens < 1:
            return "max_tokens: Input should be greater than or equal to 1"
    messages = body.get("messages")
    if not isinstance(messages, list):
        return "messages: Field required"
    for i, message in enumerate(messages):
        if not isinstance(message, dict) or message.get("role") not in ("user", "assistant"):
            return f"messages.{i}.role: Input should be 'user' or 'assistant'"
        if not isinstance(message.get("content"), str | list):
            return f"messages.{i}.content: Input should be a string or a list of content blocks"
    if not isinstance(body.get("system", ""), str | list):
        return "system: Input should be a string or a list of text blocks"
    stops = body.get("stop_sequences")
    if stops is not None and not (
        isinstance(stops, list) and all(isinstance(s, str) for s in stops)
    ):
        return "stop_sequences: Input should be a list of strings"
    tools = body.get("tools")
    if tools is not None and not (
        isinstance(tools, list)
        and all(isinstance(t, dict) and isinstance(t.get("name"), str) for t in tools)
    ):
        return "tools: Input should be a list of tools with a name"
    choice = body.get("tool_choice")
    if choice is not None:
        if not isinstance(choice, dict) or choice.get("type") not in (
            "auto",
            "any",
            "tool",
            "none",
        ):
            return "tool_choice.type: Input should be 'auto', 'any', 'tool' or 'none'"
        if choice["type"] == "tool" and not isinstance(choice.get("name"), str):
            return "tool_choice.name: Field required"
    return None


def _messages_prompt(body: dict[str, Any]) -> int:
    """The sim's count of a Messages prompt: words in the system prompt and the messages."""
    words = _count_words(body.get("system")) + _count_words(body.get("messages"))
    return words if words > 0 else 1


def _anthropic_tool_result(message: Any) -> str | None:
    """The text of the tool results a user message carries, None when it carries none."""
    if not isinstance(message, dict) or message.get("role") != "user":
        return None
    content = message.get("content")
    if not isinstance(content, list):
        return None
    results = [b for b in content if isinstance(b, dict) and b.get("type") == "tool_result"]
    if not results:
        return None
    return " ".join(_text_of(b.get("content"), ("text",)) for b in results)
