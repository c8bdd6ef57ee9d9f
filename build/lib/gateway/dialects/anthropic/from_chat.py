"""A chat completion as a Messages answer."""

from __future__ import annotations

import json
import uuid
from collections.abc import Collection
from typing import Any

from gateway.core.usage import Usage
from gateway.core.usage import from_chat as usage_from_chat
from gateway.dialects.openai.answer import first_choice

# ----- the answer ----------------------------------------------------------------------------


def from_chat(
    answer: object,
    *,
    model: str,
    thinking: bool = False,
    stop_sequences: Collection[str] | None = None,
) -> dict[str, Any]:
    """A chat completion as a Messages answer, named `model` (the client's name for it).

    `thinking`: the client enabled thinking (reasoning becomes thinking blocks).
    `stop_sequences`: the client's; a matched stop the engine names counts only if it is one of
    them (None trusts the engine). Raises ValueError for an answer that is not a chat
    completion: the engine's fault, a 502.
    """
    answer, choice, message = first_choice(answer)
    content: list[dict[str, Any]] = []
    if thinking:
        reasoning = message.get("reasoning_content") or message.get("reasoning")
        if isinstance(reasoning, str) and reasoning:
            content.append({"type": "thinking", "thinking": reasoning, "signature": ""})
    text = message.get("content")
    if isinstance(text, list):  # content parts, as a few engines answer
        text = "".join(
            p["text"] for p in text if isinstance(p, dict) and isinstance(p.get("text"), str)
        )
    if isinstance(text, str):
        if text:
            content.append({"type": "text", "text": text})
    elif text is not None:
        raise ValueError("the answer's content is neither text nor null")
    calls = message.get("tool_calls")
    if calls is not None:
        if not isinstance(calls, list):
            raise ValueError("the answer's tool_calls is not a list")
        content.extend(_tool_use(call) for call in calls)
    stop_reason, stop_sequence = _stop(
        choice.get("finish_reason"), _matched(choice), bool(calls), stop_sequences
    )
    return {
        "id": _message_id(answer.get("id")),
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": content,
        "stop_reason": stop_reason,
        "stop_sequence": stop_sequence,
        "usage": _usage_dict(usage_from_chat(answer.get("usage"))),
    }


def _tool_use(call: object) -> dict[str, Any]:
    if not isinstance(call, dict) or not isinstance(call.get("function"), dict):
        raise ValueError("a tool call of the answer is not a function call")
    function = call["function"]
    name = function.get("name")
    if not isinstance(name, str) or not name:
        raise ValueError("a tool call of the answer has no name")
    arguments = function.get("arguments")
    parsed: object = None
    if isinstance(arguments, dict):  # a few engines send the object itself
        parsed = arguments
    elif isinstance(arguments, str) and arguments.strip():
        try:
            parsed = json.loads(arguments)
        except (ValueError, RecursionError):
            parsed = None
    call_id = call.get("id")
    return {
        "type": "tool_use",
        "id": call_id if isinstance(call_id, str) and call_id else _tool_id(),
        "name": name,
        "input": parsed if isinstance(parsed, dict) else {},
    }


def _matched(choice: dict[str, Any]) -> object:
    """The stop string the engine matched: vLLM's `stop_reason`, SGLang's `matched_stop`."""
    matched = choice.get("stop_reason")
    return choice.get("matched_stop") if matched is None else matched


def _stop(
    finish: object, matched: object, has_tools: bool, stops: Collection[str] | None
) -> tuple[str, str | None]:
    if finish == "length":
        return "max_tokens", None
    if finish == "content_filter":
        return "refusal", None
    if has_tools:
        return "tool_use", None
    if (
        finish == "stop"
        and isinstance(matched, str)
        and matched
        and (stops is None or matched in stops)
    ):
        return "stop_sequence", matched
    return "end_turn", None


def _usage_dict(usage: Usage | None) -> dict[str, int]:
    if usage is None:
        return {"input_tokens": 0, "output_tokens": 0}
    cached = usage.cached
    out = {"input_tokens": max(usage.input - (cached or 0), 0), "output_tokens": usage.output}
    if cached is not None:
        out["cache_read_input_tokens"] = cached
    return out


def _message_id(chat_id: object) -> str:
    if isinstance(chat_id, str) and 0 < len(chat_id) <= 200:
        tail = chat_id.removeprefix("chatcmpl-")
        if tail:
            return "msg_" + tail
    return "msg_" + uuid.uuid4().hex


def _tool_id() -> str:
    return "toolu_" + uuid.uuid4().hex
