"""A chat completion as a Responses answer."""

from __future__ import annotations

import json
import os
import time
from typing import Any

from gateway.core.usage import Usage
from gateway.core.usage import from_chat as _usage_from_chat
from gateway.dialects.openai.answer import first_choice
from gateway.dialects.responses.tools import _split, namespaces

# ----- answer: chat completion -> Response ---------------------------------------------------

INCOMPLETE_REASONS = {"length": "max_output_tokens", "content_filter": "content_filter"}


def _new_id(prefix: str) -> str:
    return prefix + os.urandom(16).hex()


def _echo(request: object) -> dict[str, Any]:
    """The request's fields a Response repeats, as the API reference lists them."""
    req = request if isinstance(request, dict) else {}

    def pick(name: str, default: Any = None) -> Any:
        value = req.get(name)
        return default if value is None else value

    return {
        "background": False,
        "instructions": pick("instructions"),
        "max_output_tokens": pick("max_output_tokens"),
        "metadata": pick("metadata", {}),
        "parallel_tool_calls": pick("parallel_tool_calls", True),
        "previous_response_id": None,
        "reasoning": pick("reasoning"),
        "store": False,
        "temperature": pick("temperature"),
        "text": pick("text", {"format": {"type": "text"}}),
        "tool_choice": pick("tool_choice", "auto"),
        "tools": pick("tools", []),
        "top_p": pick("top_p"),
        "truncation": pick("truncation", "disabled"),
        "user": pick("user"),
    }


def _response(
    echo: dict[str, Any],
    *,
    rid: str,
    created: int,
    model: str,
    status: str,
    output: list[dict[str, Any]],
    usage: dict[str, Any] | None = None,
    incomplete: str | None = None,
    error: dict[str, Any] | None = None,
) -> dict[str, Any]:
    response = {
        "id": rid,
        "object": "response",
        "created_at": created,
        "status": status,
        "model": model,
        "output": output,
        "usage": usage,
        "error": error,
        "incomplete_details": None if incomplete is None else {"reason": incomplete},
        "completed_at": int(time.time()) if status == "completed" else None,
    }
    response.update(echo)
    return response


def _usage(usage: Usage | None, reasoning: int) -> dict[str, Any] | None:
    if usage is None:
        return None
    return {
        "input_tokens": usage.input,
        "input_tokens_details": {"cached_tokens": usage.cached or 0, "cache_write_tokens": 0},
        "output_tokens": usage.output,
        "output_tokens_details": {"reasoning_tokens": reasoning},
        "total_tokens": usage.input + usage.output,
    }


def _reasoning_tokens(usage: object) -> int:
    details = usage.get("completion_tokens_details") if isinstance(usage, dict) else None
    value = details.get("reasoning_tokens") if isinstance(details, dict) else None
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else 0


def _message_item(mid: str, text: str, status: str) -> dict[str, Any]:
    return {
        "id": mid,
        "type": "message",
        "status": status,
        "role": "assistant",
        "content": [{"type": "output_text", "text": text, "annotations": [], "logprobs": []}],
    }


def _reasoning_item(rid: str, text: str, status: str) -> dict[str, Any]:
    content = [{"type": "reasoning_text", "text": text}] if text else []
    return {"id": rid, "type": "reasoning", "status": status, "summary": [], "content": content}


def _call_item(
    fid: str,
    call_id: str,
    name: str,
    arguments: str,
    status: str,
    known: frozenset[str] = frozenset(),
) -> dict[str, Any]:
    """A function_call item; `known` are the request's namespaces, so that a namespaced
    function's call names its namespace and its own name again."""
    namespace, name = _split(name, known)
    item = {
        "id": fid,
        "type": "function_call",
        "status": status,
        "call_id": call_id,
        "name": name,
        "arguments": arguments,
    }
    if namespace is not None:
        item["namespace"] = namespace
    return item


def _reasoning_of(message: dict[str, Any]) -> object:
    # SGLang, llama.cpp and older vLLM say reasoning_content; newer vLLM and Ollama reasoning.
    text = message.get("reasoning_content")
    return text if text else message.get("reasoning")


def from_chat(answer: object, *, model: str, request: object) -> dict[str, Any]:
    """A chat completion as the Response the client asked for (ValueError if it is none)."""
    answer, choice, message = first_choice(answer)
    content, reasoning = message.get("content"), _reasoning_of(message)
    if content is not None and not isinstance(content, str):
        raise ValueError("the answer's content is not a string")
    if reasoning is not None and not isinstance(reasoning, str):
        raise ValueError("the answer's reasoning is not a string")
    raw_calls = message.get("tool_calls") or []
    if not isinstance(raw_calls, list):
        raise ValueError("the answer's tool_calls is not a list")
    finish = choice.get("finish_reason")
    incomplete = INCOMPLETE_REASONS.get(finish) if isinstance(finish, str) else None
    output: list[dict[str, Any]] = []
    if reasoning:
        output.append(_reasoning_item(_new_id("rs_"), reasoning, "completed"))
    known = namespaces(request)
    calls = [_answer_call(call, known) for call in raw_calls]
    if content and not (calls and content.isspace()):
        output.append(_message_item(_new_id("msg_"), content, "completed"))
    output.extend(calls)
    if not output:
        output.append(_message_item(_new_id("msg_"), "", "completed"))
    if incomplete is not None:
        output[-1]["status"] = "incomplete"  # what was cut short is the last item
    raw_usage = answer.get("usage")
    return _response(
        _echo(request),
        rid=_new_id("resp_"),
        created=int(time.time()),
        model=model,
        status="completed" if incomplete is None else "incomplete",
        output=output,
        usage=_usage(_usage_from_chat(raw_usage), _reasoning_tokens(raw_usage)),
        incomplete=incomplete,
    )


def _answer_call(call: object, known: frozenset[str] = frozenset()) -> dict[str, Any]:
    if not isinstance(call, dict):
        raise ValueError("a tool call of the answer is not an object")
    function = call.get("function")
    if not isinstance(function, dict):
        raise ValueError("a tool call of the answer has no function")
    name, arguments = function.get("name"), function.get("arguments")
    if not isinstance(name, str) or not name:
        raise ValueError("a tool call of the answer has no name")
    if isinstance(arguments, dict):
        arguments = json.dumps(arguments)  # an engine that forgot to encode them
    elif arguments is None:
        arguments = ""
    elif not isinstance(arguments, str):
        raise ValueError("a tool call's arguments are not a string")
    call_id = call.get("id")
    if not isinstance(call_id, str) or not call_id:
        call_id = _new_id("call_")
    return _call_item(_new_id("fc_"), call_id, name, arguments, "completed", known)
