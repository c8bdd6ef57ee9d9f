"""Chat completion chunks in, Anthropic stream events out."""

from __future__ import annotations

from collections.abc import Collection
from json.encoder import encode_basestring_ascii
from typing import Any

from gateway.core.usage import Usage
from gateway.core.usage import from_chat as usage_from_chat
from gateway.dialects.anthropic.errors import _encode_compact, error_event
from gateway.dialects.anthropic.from_chat import _matched, _message_id, _stop, _tool_id, _usage_dict

# ----- the stream ----------------------------------------------------------------------------

_START_MESSAGE_HEAD = b'event: message_start\ndata: {"type":"message_start","message":{"id":'

_START_MESSAGE_MODEL = b',"type":"message","role":"assistant","model":'

_START_MESSAGE_USAGE = b',"content":[],"stop_reason":null,"stop_sequence":null,"usage":'

_PING = b'event: ping\ndata: {"type":"ping"}\n\n'

_MESSAGE_STOP = b'event: message_stop\ndata: {"type":"message_stop"}\n\n'

_DELTA_HEAD = b'event: content_block_delta\ndata: {"type":"content_block_delta","index":'

_DELTA_KIND = {
    1: b',"delta":{"type":"text_delta","text":',
    2: b',"delta":{"type":"thinking_delta","thinking":',
    3: b',"delta":{"type":"input_json_delta","partial_json":',
}

_DELTA_END = b"}}\n\n"

_START_HEAD = b'event: content_block_start\ndata: {"type":"content_block_start","index":'

_STOP_HEAD = b'event: content_block_stop\ndata: {"type":"content_block_stop","index":'

_TEXT_START = b',"content_block":{"type":"text","text":""}}\n\n'

_THINKING_START = b',"content_block":{"type":"thinking","thinking":"","signature":""}}\n\n'

_NONE, _TEXT, _THINKING, _TOOL = 0, 1, 2, 3


def _json_str(text: str) -> bytes:
    # ASCII escapes: never fails, even on the lone surrogates a lying engine's JSON can carry.
    return encode_basestring_ascii(text).encode("ascii")


def _dumps(value: object) -> bytes:
    return _encode_compact(value).encode()


class StreamTranslator:
    """Chat completion chunks in, Anthropic stream events out (SSE-framed bytes).

    Event order as Anthropic streams it: message_start and a ping first; then each content
    block opened, given its deltas and closed before the next one opens; at the end
    message_delta (stop reason, usage) and message_stop. `feed` takes any decoded JSON and
    never raises: a chunk that is not an object, or an engine's error chunk
    (`{"error": ...}` or `{"object": "error", ...}`), ends the stream with an `error` event
    and sets `error`; other parts of a chunk that make no sense are ignored. The rare engine
    that interleaves two tool calls' argument fragments gets each fragment sent to its own
    block's index, which the SDKs accumulate correctly.
    """

    __slots__ = (
        "_finish", "_head", "_id", "_kind", "_last_tool", "_matched", "_next", "_open",
        "_started", "_tools", "done", "error", "model", "stop_sequences", "thinking", "usage",
    )  # fmt: skip

    def __init__(
        self,
        *,
        model: str,
        thinking: bool = False,
        stop_sequences: Collection[str] | None = None,
    ) -> None:
        self.model = model
        self.thinking = thinking
        self.stop_sequences = stop_sequences
        self.usage: Usage | None = None  # what the engine reported (None until it does)
        self.done = False  # finished or failed: nothing more is sent
        self.error: str | None = None  # why the stream failed, if it did
        self._started = False
        self._open = -1  # the index of the open content block
        self._kind = _NONE  # and what it is
        self._head = b""  # its delta events' bytes up to the delta's JSON string
        self._next = 0  # the index of the next block
        self._tools: dict[int | str, int] = {}  # the engine's tool call index (or id) -> block
        self._last_tool: int | str | None = None
        self._finish: object = None
        self._matched: object = None
        self._id = ""

    def feed(self, chunk: object) -> bytes:
        """One decoded chat chunk; the events it makes (possibly b"")."""
        if self.done:
            return b""
        if not isinstance(chunk, dict):
            return self._engine_failed("The model server sent a chunk that is not an object.")
        if chunk.get("error") is not None or chunk.get("object") == "error":
            return self._engine_failed(_engine_error(chunk))
        out: list[bytes] = []
        if not self._started:
            out.append(self._start(chunk))
        raw_usage = chunk.get("usage")
        if raw_usage is not None:
            usage = usage_from_chat(raw_usage)
            if usage is not None:
                self.usage = usage
        choices = chunk.get("choices")
        if choices and isinstance(choices, list):
            choice = choices[0]
            if isinstance(choice, dict):
                delta = choice.get("delta")
                if isinstance(delta, dict):
                    self._delta(delta, out)
                finish = choice.get("finish_reason")
                if finish is not None:
                    self._finish = finish
                matched = _matched(choice)
                if matched is not None:
                    self._matched = matched
        if len(out) == 1:
            return out[0]
        return b"".join(out)

    def finish(self) -> bytes:
        """At the engine's [DONE] or clean end: the open block's stop, message_delta with the
        stop reason and usage, message_stop."""
        if self.done:
            return b""
        self.done = True
        out = [] if self._started else [self._start({})]
        if self._open >= 0:
            out.append(_STOP_HEAD + str(self._open).encode() + b"}\n\n")
        stop_reason, stop_sequence = _stop(
            self._finish, self._matched, bool(self._tools), self.stop_sequences
        )
        usage = self.usage
        delta = {
            "type": "message_delta",
            "delta": {"stop_reason": stop_reason, "stop_sequence": stop_sequence},
            # Cumulative totals, as Anthropic's message_delta gives them; the input count is
            # only known now (message_start went out before the engine reported it).
            "usage": _usage_dict(usage) if usage is not None else {"output_tokens": 0},
        }
        out.append(b"event: message_delta\ndata: " + _dumps(delta) + b"\n\n")
        out.append(_MESSAGE_STOP)
        return b"".join(out)

    def fail(self, type_: str, message: str) -> bytes:
        """A failure mid-stream: one `error` event, as Anthropic's own streams end on an error
        (no block or message is closed after it; the SDKs raise on it)."""
        if self.done:
            return b""
        self.done = True
        self.error = message
        return error_event(type_, message)

    # ----- inside -------------------------------------------------------------------------

    def _engine_failed(self, message: str) -> bytes:
        return self.fail("api_error", message)

    def _start(self, chunk: dict[str, Any]) -> bytes:
        self._started = True
        self._id = _message_id(chunk.get("id"))
        usage = _usage_dict(usage_from_chat(chunk.get("usage")))
        usage["output_tokens"] = 0
        return b"".join(
            (
                _START_MESSAGE_HEAD,
                _json_str(self._id),
                _START_MESSAGE_MODEL,
                _json_str(self.model),
                _START_MESSAGE_USAGE,
                _dumps(usage),
                b"}}\n\n",
                _PING,
            )
        )

    def _delta(self, delta: dict[str, Any], out: list[bytes]) -> None:
        if self.thinking:
            reasoning = delta.get("reasoning_content") or delta.get("reasoning")
            if reasoning and isinstance(reasoning, str):
                if self._kind != _THINKING:
                    out.append(self._open_block(_THINKING, _THINKING_START))
                out.append(self._head + _json_str(reasoning) + _DELTA_END)
        text = delta.get("content")
        if text and isinstance(text, str):
            if self._kind != _TEXT:
                out.append(self._open_block(_TEXT, _TEXT_START))
            out.append(self._head + _json_str(text) + _DELTA_END)
        calls = delta.get("tool_calls")
        if calls and isinstance(calls, list):
            for call in calls:
                if isinstance(call, dict):
                    self._tool_delta(call, out)

    def _open_block(self, kind: int, start_tail: bytes) -> bytes:
        index = self._next
        self._next += 1
        head = b""
        if self._open >= 0:
            head = _STOP_HEAD + str(self._open).encode() + b"}\n\n"
        self._open, self._kind = index, kind
        number = str(index).encode()
        self._head = _DELTA_HEAD + number + _DELTA_KIND[kind]
        return head + _START_HEAD + number + start_tail

    def _tool_delta(self, call: dict[str, Any], out: list[bytes]) -> None:
        function = call.get("function")
        if not isinstance(function, dict):
            function = {}
        index = call.get("index")
        call_id = call.get("id")
        key: int | str | None
        if isinstance(index, int) and not isinstance(index, bool):
            key = index
        elif isinstance(call_id, str) and call_id:
            key = call_id
        else:
            key = self._last_tool
        block = self._tools.get(key) if key is not None else None
        if block is None:
            name = function.get("name")
            tool_id = call_id if isinstance(call_id, str) and call_id else _tool_id()
            if key is None:
                key = tool_id
            content_block = {
                "type": "tool_use",
                "id": tool_id,
                "name": name if isinstance(name, str) else "",
                "input": {},
            }
            tail = b',"content_block":' + _dumps(content_block) + b"}\n\n"
            out.append(self._open_block(_TOOL, tail))
            block = self._open
            self._tools[key] = block
        self._last_tool = key
        arguments = function.get("arguments")
        if arguments and isinstance(arguments, str):
            if block == self._open:
                head = self._head
            else:
                head = _DELTA_HEAD + str(block).encode() + _DELTA_KIND[_TOOL]
            out.append(head + _json_str(arguments) + _DELTA_END)


def _engine_error(chunk: dict[str, Any]) -> str:
    inner = chunk.get("error")
    source = inner if isinstance(inner, dict) else chunk
    message = source.get("message")
    if isinstance(message, str) and message:
        return f"The model server failed mid-answer: {message[:500]}"
    if isinstance(inner, str) and inner:
        return f"The model server failed mid-answer: {inner[:500]}"
    return "The model server failed mid-answer."
