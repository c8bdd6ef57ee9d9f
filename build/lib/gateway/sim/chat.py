"""A tool-call turn as a chat completion: its body and its stream's events."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

from gateway.sim.jobs import _turn_of, _usage_event
from gateway.sim.text import _tok_text
from gateway.sim.wire import _encode

if TYPE_CHECKING:
    from gateway.sim.jobs import _Job
    from gateway.sim.turns import _Turn


def _chat_finish(turn: _Turn) -> str:
    # OpenAI and vLLM end a call forced by name with "stop" (vLLM chat_completion/serving.py).
    if turn.finish == "tool":
        return "stop" if turn.named else "tool_calls"
    return "length" if turn.finish == "length" else "stop"


def _chat_body(job: _Job, seq: int) -> bytes:
    """A whole chat or text completion with its turn, or plain tokens with cached usage."""
    turn = job.turn
    if turn is None:
        content, finish, calls = "".join(_tok_text[: job.n]), job.finish, []
    else:
        content, finish, calls = turn.text, _chat_finish(turn), turn.calls
    created = int(time.time())
    if job.chat:
        message: dict[str, Any] = {"role": "assistant", "content": None if calls else content}
        if calls:
            message["tool_calls"] = [
                {
                    "id": c.id,
                    "type": "function",
                    "function": {"name": c.name, "arguments": c.arguments},
                }
                for c in calls
            ]
        choice = {"index": 0, "message": message, "logprobs": None, "finish_reason": finish}
        head = {"id": f"chatcmpl-sim{seq}", "object": "chat.completion"}
    else:
        choice = {"index": 0, "text": content, "logprobs": None, "finish_reason": finish}
        head = {"id": f"cmpl-sim{seq}", "object": "text_completion"}
    answer = {
        **head,
        "created": created,
        "model": job.model,
        "choices": [choice],
        "usage": job.usage(),
    }
    return _encode(answer).encode()


def _chat_turn_events(job: _Job, base: dict[str, Any]) -> list[tuple[bytes, bool]]:
    """A streamed turn's chunks, each marked whether the model generated it (paced).

    Tool calls stream as vLLM's tool parsers send them: index, id, type and name first, then
    the arguments in fragments (e.g. vllm tool_parsers/hermes_tool_parser.py).
    """
    turn = _turn_of(job)

    def chunk(delta: dict[str, Any], finish: str | None = None) -> bytes:
        choice = {"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}
        return b"data: " + _encode({**base, "choices": [choice]}).encode() + b"\n\n"

    def text_chunk(text: str, finish: str | None = None) -> bytes:
        choice = {"index": 0, "text": text, "logprobs": None, "finish_reason": finish}
        return b"data: " + _encode({**base, "choices": [choice]}).encode() + b"\n\n"

    finish = _chat_finish(turn)
    if not job.chat:
        events = [(text_chunk(text), True) for text in turn.texts]
        events.append((text_chunk("", finish), False))
    else:
        role: dict[str, Any] = {"role": "assistant"}
        events = [
            (chunk({**role, "content": text} if i == 0 else {"content": text}), True)
            for i, text in enumerate(turn.texts)
        ]
        if turn.texts:
            role = {}
        for index, call in enumerate(turn.calls):
            head = {
                "index": index,
                "id": call.id,
                "type": "function",
                "function": {"name": call.name},
            }
            events.append((chunk({**role, "tool_calls": [head]}), True))
            role = {}
            for piece in call.fragments:
                delta = {"tool_calls": [{"index": index, "function": {"arguments": piece}}]}
                events.append((chunk(delta), True))
        events.append((chunk({}, finish), False))
    if job.usage_chunk:
        events.append((_usage_event(base, job), False))
    return events
