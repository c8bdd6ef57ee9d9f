"""OpenAI Responses answers and events as the simulated engine writes them."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from gateway.sim.jobs import _turn_of
from gateway.sim.text import _count_words
from gateway.sim.turns import _int_or_none
from gateway.sim.wire import _sse

if TYPE_CHECKING:
    from gateway.sim.jobs import _Job
    from gateway.sim.turns import _Call


# -- OpenAI's Responses API --


def _response_items(value: Any) -> list[dict[str, Any]]:
    if isinstance(value, str):
        return [{"type": "message", "role": "user", "content": value}]
    return [item for item in value if isinstance(item, dict)] if isinstance(value, list) else []


def _responses_problem(body: dict[str, Any]) -> str | None:
    model = body.get("model")
    if not isinstance(model, str) or not model:
        return "model: Field required"
    value = body.get("input")
    if not isinstance(value, str | list):
        return "input: Field required"
    if isinstance(value, list) and not all(isinstance(item, dict) for item in value):
        return "input: Input should be a string or a list of items"
    if not isinstance(body.get("instructions", ""), str | type(None)):
        return "instructions: Input should be a string"
    limit = body.get("max_output_tokens")
    if limit is not None and (_int_or_none(limit) is None or limit < 1):
        return "max_output_tokens: Input should be a positive integer"
    tools = body.get("tools")
    if tools is not None and not (
        isinstance(tools, list) and all(isinstance(t, dict) for t in tools)
    ):
        return "tools: Input should be a list of tools"
    for tool in tools or ():
        if tool.get("type") == "function" and not isinstance(tool.get("name"), str):
            return "tools: a function tool needs a name"
    choice = body.get("tool_choice")
    if (
        choice is not None
        and choice not in ("auto", "none", "required")
        and not isinstance(choice, dict)
    ):
        return "tool_choice: Input should be 'auto', 'none', 'required' or a tool"
    previous = body.get("previous_response_id")
    if previous is not None and not isinstance(previous, str):
        return "previous_response_id: Input should be a string"
    for name in ("store", "stream", "parallel_tool_calls"):
        if not isinstance(body.get(name, False), bool | type(None)):
            return f"{name}: Input should be a boolean"
    return None


def _responses_prompt(body: dict[str, Any], items: list[dict[str, Any]]) -> int:
    words = _count_words(body.get("instructions"))
    for item in items:
        kind = item.get("type", "message")
        if kind == "message":
            words += _count_words(item.get("content"))
        elif kind == "function_call_output":
            words += _count_words(item.get("output"))
    return words


def _function_item_id(call: _Call) -> str:
    return "fc_" + call.id.removeprefix("call_")


def _response_output(job: _Job) -> list[dict[str, Any]]:
    turn = _turn_of(job)
    items: list[dict[str, Any]] = []
    if turn.texts or not turn.calls:
        part = {"type": "output_text", "text": turn.text, "annotations": [], "logprobs": []}
        status = "incomplete" if turn.finish == "length" else "completed"
        items.append(
            {
                "id": "msg_" + job.ident.removeprefix("resp_"),
                "type": "message",
                "status": status,
                "role": "assistant",
                "content": [part],
            }
        )
    for call in turn.calls:
        items.append(
            {
                "id": _function_item_id(call),
                "type": "function_call",
                "status": "completed",
                "call_id": call.id,
                "name": call.name,
                "arguments": call.arguments,
            }
        )
    return items


def _response_object(job: _Job, created: int, *, done: bool) -> dict[str, Any]:
    """The Response object, as it stands at the start of a stream or when done."""
    turn, body = _turn_of(job), job.body or {}
    cut = done and turn.finish == "length"
    usage = None
    if done:
        usage = {
            "input_tokens": job.prompt_tokens,
            "input_tokens_details": {"cached_tokens": job.cached_tokens()},
            "output_tokens": turn.generated,
            "output_tokens_details": {"reasoning_tokens": 0},
            "total_tokens": job.prompt_tokens + turn.generated,
        }
    return {
        "id": job.ident,
        "object": "response",
        "created_at": created,
        "status": ("incomplete" if cut else "completed") if done else "in_progress",
        "background": False,
        "error": None,
        "incomplete_details": {"reason": "max_output_tokens"} if cut else None,
        "instructions": body.get("instructions"),
        "max_output_tokens": body.get("max_output_tokens"),
        "max_tool_calls": None,
        "model": job.model,
        "output": _response_output(job) if done else [],
        "parallel_tool_calls": body.get("parallel_tool_calls") is not False,
        "previous_response_id": body.get("previous_response_id"),
        "reasoning": {"effort": None, "summary": None},
        "service_tier": "default",
        "store": job.store,
        "temperature": body.get("temperature", 1.0),
        "text": {"format": {"type": "text"}},
        "tool_choice": body.get("tool_choice", "auto"),
        "tools": body.get("tools") or [],
        "top_logprobs": 0,
        "top_p": body.get("top_p", 1.0),
        "truncation": "disabled",
        "usage": usage,
        "user": None,
        "metadata": body.get("metadata") or {},
    }


def _response_events(job: _Job, created: int, vllm: bool) -> list[tuple[bytes, bool]]:
    """The typed events of a streamed response, numbered from 0.

    vLLM ends every stream with response.completed (responses/serving.py), where OpenAI ends
    a cut one with response.incomplete.
    """
    turn = _turn_of(job)
    pending = _response_object(job, created, done=False)
    done = _response_object(job, created, done=True)
    out: list[tuple[dict[str, Any], bool]] = [
        ({"type": "response.created", "response": pending}, False),
        ({"type": "response.in_progress", "response": pending}, False),
    ]
    items = done["output"]
    for index, item in enumerate(items):
        at = {"item_id": item["id"], "output_index": index}
        if item["type"] == "message":
            part = item["content"][0]
            text = part["text"]
            opened = {**item, "status": "in_progress", "content": []}
            empty = {**part, "text": ""}
            out.append(
                (
                    {"type": "response.output_item.added", "output_index": index, "item": opened},
                    False,
                )
            )
            out.append(
                (
                    {
                        "type": "response.content_part.added",
                        **at,
                        "content_index": 0,
                        "part": empty,
                    },
                    False,
                )
            )
            for piece in turn.texts:
                delta = {
                    "type": "response.output_text.delta",
                    **at,
                    "content_index": 0,
                    "delta": piece,
                }
                out.append(({**delta, "logprobs": []}, True))
            out.append(
                (
                    {
                        "type": "response.output_text.done",
                        **at,
                        "content_index": 0,
                        "text": text,
                        "logprobs": [],
                    },
                    False,
                )
            )
            out.append(
                (
                    {"type": "response.content_part.done", **at, "content_index": 0, "part": part},
                    False,
                )
            )
        else:
            call = turn.calls[index - (len(items) - len(turn.calls))]
            opened = {**item, "status": "in_progress", "arguments": ""}
            out.append(
                (
                    {"type": "response.output_item.added", "output_index": index, "item": opened},
                    True,
                )
            )
            for piece in call.fragments:
                out.append(
                    ({"type": "response.function_call_arguments.delta", **at, "delta": piece}, True)
                )
            out.append(
                (
                    {
                        "type": "response.function_call_arguments.done",
                        **at,
                        "name": call.name,
                        "arguments": call.arguments,
                    },
                    False,
                )
            )
        out.append(
            ({"type": "response.output_item.done", "output_index": index, "item": item}, False)
        )
    last = (
        "response.incomplete"
        if done["status"] == "incomplete" and not vllm
        else "response.completed"
    )
    out.append(({"type": last, "response": done}, False))
    return [
        (_sse(data["type"], {**data, "sequence_number": number}), paced)
        for number, (data, paced) in enumerate(out)
    ]


def _response_error_event(message: str, code: str, number: int) -> bytes:
    data = {
        "type": "error",
        "code": code,
        "message": message,
        "param": None,
        "sequence_number": number,
    }
    return _sse("error", data)
