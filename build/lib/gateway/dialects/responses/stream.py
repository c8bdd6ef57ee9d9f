"""Chat completion chunks in, Responses stream events out."""

from __future__ import annotations

import json
import re
import time
from typing import Any

from gateway.core.usage import Usage
from gateway.core.usage import from_chat as _usage_from_chat
from gateway.dialects.responses.from_chat import (
    INCOMPLETE_REASONS,
    _call_item,
    _echo,
    _message_item,
    _new_id,
    _reasoning_item,
    _reasoning_of,
    _reasoning_tokens,
    _response,
    _usage,
)
from gateway.dialects.responses.tools import namespaces

# ----- streams -------------------------------------------------------------------------------

_encode = json.JSONEncoder(separators=(",", ":"), check_circular=False).encode

_quote: Any = getattr(json.encoder, "c_encode_basestring_ascii", None) or (
    json.encoder.encode_basestring_ascii
)

# The code of a response that failed mid-stream: of the codes the SDK's ResponseError allows,
# OpenAI's own for a failure on the server's side. A value of OpenAI's stream, not one of the
# gateway's error codes (those are GatewayError.code, each with its Fluent message).
FAILED_CODE = "server_error"

TERMINAL_EVENTS = frozenset({"response.completed", "response.incomplete", "response.failed"})

_TERMINAL_TYPE = re.compile(rb'"response\.(?:completed|incomplete|failed)"').search


def _sse(kind: str, payload: dict[str, Any]) -> bytes:
    return b"event: " + kind.encode() + b"\ndata: " + _encode(payload).encode() + b"\n\n"


class _Item:
    """One output item being streamed: a message, a reasoning item or a function call."""

    __slots__ = (
        "call_id", "closed", "id", "index", "kind", "known", "name", "parts", "prefix", "status",
    )  # fmt: skip

    def __init__(
        self, kind: str, item_id: str, index: int, known: frozenset[str] = frozenset()
    ) -> None:
        self.kind = kind
        self.known = known  # the request's namespaces
        self.id = item_id
        self.index = index  # its output_index
        self.parts: list[str] = []  # text, reasoning or arguments, as streamed
        self.closed = False
        self.status = "in_progress"  # as its output_item.done said, once closed
        self.name = ""
        self.call_id = ""
        self.prefix = b""  # the start of its delta events, encoded once

    def text(self) -> str:
        if len(self.parts) > 1:
            self.parts = ["".join(self.parts)]
        return self.parts[0] if self.parts else ""

    def item(self, status: str) -> dict[str, Any]:
        if self.kind == "message":
            return _message_item(self.id, self.text(), status)
        if self.kind == "reasoning":
            return _reasoning_item(self.id, self.text(), status)
        return _call_item(self.id, self.call_id, self.name, self.text(), status, self.known)


class _Call:
    """A chat tool call by its index, until its name is known and its item can be added."""

    __slots__ = ("call_id", "item", "name", "pending")

    def __init__(self) -> None:
        self.call_id: str | None = None
        self.name: str | None = None
        self.pending: list[str] = []  # arguments that came before the name
        self.item: _Item | None = None


class StreamTranslator:
    """Chat completion chunks in, Responses stream events out (SSE-framed bytes,
    `event: <type>\\ndata: {...}\\n\\n`, each with its sequence_number).

    `feed` once per chunk, then `finish` when the engine's stream ended ([DONE] or its end), or
    `fail` when it broke. None of them raises: a chunk that is not a chat completion chunk, an
    engine's error chunk or a tool call without a name ends the stream with `response.failed`
    (`failure` says why). After the terminal event every call returns b"". `status` is None
    until then, then "completed", "incomplete" or "failed"; `usage` is the engine's last.
    """

    __slots__ = (
        "_calls", "_created", "_echo", "_echo_json", "_finish", "_held", "_namespaces", "_open",
        "_output", "_rid", "_seq", "_started", "failure", "model", "reasoning_tokens", "status",
        "usage",
    )  # fmt: skip

    def __init__(self, *, model: str, request: object) -> None:
        self.model = model
        self._echo = _echo(request)
        self._echo_json: str | None = None
        self._namespaces = namespaces(request)
        self._rid = _new_id("resp_")
        self._created = int(time.time())
        self._seq = 0
        self._started = False
        self._output: list[_Item] = []
        self._open: _Item | None = None
        self._calls: dict[int, _Call] = {}
        self._held = ""  # whitespace before any item: kept only if no call follows
        self._finish: str | None = None
        self.usage: Usage | None = None
        self.reasoning_tokens = 0
        self.status: str | None = None
        self.failure: str | None = None

    @property
    def done(self) -> bool:
        return self.status is not None

    # ----- the public steps --------------------------------------------------------------

    def feed(self, chunk: object) -> bytes:
        if self.status is not None:
            return b""
        out: list[bytes] = [] if self._started else self._start()
        if not isinstance(chunk, dict):
            return self._join(out, self._broken("a stream chunk that is not a JSON object"))
        usage = chunk.get("usage")
        if usage is not None:
            read = _usage_from_chat(usage)
            if read is not None:
                self.usage = read
                self.reasoning_tokens = _reasoning_tokens(usage)
        failure = _engine_error(chunk)
        if failure is not None:
            return self._join(out, self.fail(failure))
        choices = chunk.get("choices")
        if choices is None:
            return self._join(out, b"")
        if not isinstance(choices, list):
            return self._join(out, self._broken("a stream chunk whose choices are not a list"))
        for choice in choices:
            if not isinstance(choice, dict):
                return self._join(out, self._broken("a stream choice that is not an object"))
            if choice.get("index") not in (0, None) or self._finish is not None:
                continue  # one choice is asked for; nothing counts after its finish
            broken = self._delta(choice.get("delta"), out)
            if broken is not None:
                return self._join(out, self._broken(broken))
            finish = choice.get("finish_reason")
            if isinstance(finish, str) and finish:
                self._finish = finish
                broken = self._close_all(out)
                if broken is not None:
                    return self._join(out, self._broken(broken))
        return b"".join(out)

    def finish(self) -> bytes:
        if self.status is not None:
            return b""
        out = [] if self._started else self._start()
        if self._finish is None:
            broken = self._close_all(out)  # an engine that ended without a finish_reason
            if broken is not None:
                return self._join(out, self._broken(broken))
        incomplete = INCOMPLETE_REASONS.get(self._finish or "")
        self.status = "completed" if incomplete is None else "incomplete"
        response = self._response(self.status, incomplete=incomplete)
        out.append(self._lifecycle("response." + self.status, response))
        return b"".join(out)

    def fail(self, message: str) -> bytes:
        if self.status is not None:
            return b""
        out = [] if self._started else self._start()
        self.status, self.failure = "failed", message
        error = {"code": FAILED_CODE, "message": message}
        out.append(self._lifecycle("response.failed", self._response("failed", error=error)))
        return b"".join(out)

    # ----- the machinery -----------------------------------------------------------------

    def _event(self, kind: str, payload: dict[str, Any]) -> bytes:
        payload["type"] = kind
        payload["sequence_number"] = self._seq
        self._seq += 1
        return _sse(kind, payload)

    def _join(self, out: list[bytes], last: bytes) -> bytes:
        out.append(last)
        return b"".join(out)

    def _broken(self, what: str) -> bytes:
        return self.fail(f"The model server sent {what}.")

    def _start(self) -> list[bytes]:
        self._started = True
        response = self._response("in_progress")  # the same object in both events
        return [
            self._lifecycle("response.created", response),
            self._lifecycle("response.in_progress", response),
        ]

    def _lifecycle(self, kind: str, response: str) -> bytes:
        """An event that carries the whole response (as JSON)."""
        seq = self._seq
        self._seq = seq + 1
        head = f'event: {kind}\ndata: {{"type":"{kind}","sequence_number":{seq},"response":'
        return (head + response + "}\n\n").encode()

    def _response(
        self, status: str, *, incomplete: str | None = None, error: dict[str, Any] | None = None
    ) -> str:
        """The response as JSON. The request's fields it repeats (Codex's tools run to tens of
        kilobytes) are encoded once per stream, not in each of its three or four events."""
        if self._echo_json is None:
            self._echo_json = "," + _encode(self._echo)[1:]
        # An item still open when the stream failed was cut short.
        output = [item.item(item.status if item.closed else "incomplete") for item in self._output]
        usage = _usage(self.usage, self.reasoning_tokens) if status != "in_progress" else None
        head = _response(
            {},
            rid=self._rid,
            created=self._created,
            model=self.model,
            status=status,
            output=output,
            usage=usage,
            incomplete=incomplete,
            error=error,
        )
        return _encode(head)[:-1] + self._echo_json

    def _delta(self, delta: object, out: list[bytes]) -> str | None:
        """Events for one delta into `out`; what is wrong with it, if something is."""
        if delta is None:
            return None
        if not isinstance(delta, dict):
            return "a stream delta that is not an object"
        reasoning = _reasoning_of(delta)
        content = delta.get("content")
        calls = delta.get("tool_calls")
        if reasoning is not None and not isinstance(reasoning, str):
            return "reasoning that is not a string"
        if content is not None and not isinstance(content, str):
            return "content that is not a string"
        if calls is not None and not isinstance(calls, list):
            return "tool calls that are not a list"
        if reasoning:
            self._stream("reasoning", reasoning, out)
        if content:
            if self._open is not None and self._open.kind == "message":
                out.append(self._text_delta(self._open, content))
            elif content.isspace():
                self._held += content  # vLLM's parsers emit "\n\n" before a tool call
            else:
                content, self._held = self._held + content, ""
                self._stream("message", content, out)
        for call in calls or ():
            broken = self._call_delta(call, out)
            if broken is not None:
                return broken
        return None

    def _stream(self, kind: str, text: str, out: list[bytes]) -> None:
        """Text for a message or reasoning item, opening one if that kind is not open."""
        item = self._open
        if item is None or item.kind != kind:
            if item is not None:
                self._close(item, "completed", out)
            item = self._add(kind, "msg_" if kind == "message" else "rs_", out)
        out.append(self._text_delta(item, text))

    def _add(self, kind: str, prefix: str, out: list[bytes], call: _Call | None = None) -> _Item:
        item = _Item(kind, _new_id(prefix), len(self._output), self._namespaces)
        if call is not None:
            item.name, item.call_id = call.name or "", call.call_id or _new_id("call_")
        self._output.append(item)
        self._open = item
        head = item.item("in_progress")
        if kind == "message":
            head["content"] = []  # its part is added by the next event
        added = {"output_index": item.index, "item": head}
        out.append(self._event("response.output_item.added", added))
        ids = f'"item_id":"{item.id}","output_index":{item.index}'
        if kind == "message":
            part = {"type": "output_text", "text": "", "annotations": [], "logprobs": []}
            kinds = "response.output_text.delta"
            item.prefix = f',"content_index":0,"logprobs":[],{ids},"delta":'.encode()
        elif kind == "reasoning":
            part = {"type": "reasoning_text", "text": ""}
            kinds = "response.reasoning_text.delta"
            item.prefix = f',"content_index":0,{ids},"delta":'.encode()
        else:
            kinds = "response.function_call_arguments.delta"
            item.prefix = f',{ids},"delta":'.encode()
        item.prefix = (
            b"event: " + kinds.encode() + b'\ndata: {"type":"' + kinds.encode() + b'"' + item.prefix
        )
        if kind != "function_call":
            added = {"item_id": item.id, "output_index": item.index, "content_index": 0}
            out.append(self._event("response.content_part.added", {**added, "part": part}))
        return item

    def _text_delta(self, item: _Item, text: str) -> bytes:
        # The hot path: one event per token, built from bytes encoded when the item opened.
        item.parts.append(text)
        seq = self._seq
        self._seq = seq + 1
        return b'%b%b,"sequence_number":%d}\n\n' % (item.prefix, _quote(text).encode(), seq)

    def _call_delta(self, raw: object, out: list[bytes]) -> str | None:
        if not isinstance(raw, dict):
            return "a tool call delta that is not an object"
        function = raw.get("function")
        if function is None:
            function = {}
        if not isinstance(function, dict):
            return "a tool call delta whose function is not an object"
        name, arguments, call_id = function.get("name"), function.get("arguments"), raw.get("id")
        if isinstance(arguments, dict):
            arguments = json.dumps(arguments)
        if (
            (name is not None and not isinstance(name, str))
            or (arguments is not None and not isinstance(arguments, str))
            or (call_id is not None and not isinstance(call_id, str))
        ):
            return "a tool call delta with a name, arguments or id that is not a string"
        index = raw.get("index")
        if not isinstance(index, int) or isinstance(index, bool):
            index = self._index_of(call_id)
        call = self._calls.get(index)
        if call is None:
            call = self._calls[index] = _Call()
            self._held = ""  # whitespace before a call is the parser's, not the model's
            if self._open is not None:
                self._close(self._open, "completed", out)
        elif call.item is not None and call.item.closed:
            return "a tool call that went on after the next one had started"
        if call_id and call.call_id is None:
            call.call_id = call_id
        if name and call.name is None:
            call.name = name
        if arguments:
            call.pending.append(arguments)
        if call.item is None and call.name:
            call.item = self._add("function_call", "fc_", out, call)
        if call.item is not None and call.pending:
            out.append(self._text_delta(call.item, "".join(call.pending)))
            call.pending = []
        return None

    def _index_of(self, call_id: str | None) -> int:
        """The index of a tool call delta without one: engines that leave it out stream one
        call at a time, so a new id starts the next call and no id continues the last."""
        if not self._calls:
            return 0
        last = max(self._calls)
        if call_id is None or any(c.call_id == call_id for c in self._calls.values()):
            return last
        return last + 1

    def _close(self, item: _Item, status: str, out: list[bytes]) -> None:
        self._open = None
        item.closed, item.status = True, status
        text = item.text()
        where = {"item_id": item.id, "output_index": item.index}
        if item.kind == "message":
            out.append(self._event("response.output_text.done", {
                **where, "content_index": 0, "text": text, "logprobs": []
            }))  # fmt: skip
            part = {"type": "output_text", "text": text, "annotations": [], "logprobs": []}
            out.append(self._event("response.content_part.done", {
                **where, "content_index": 0, "part": part
            }))  # fmt: skip
        elif item.kind == "reasoning":
            out.append(self._event("response.reasoning_text.done", {
                **where, "content_index": 0, "text": text
            }))  # fmt: skip
            part = {"type": "reasoning_text", "text": text}
            out.append(self._event("response.content_part.done", {
                **where, "content_index": 0, "part": part
            }))  # fmt: skip
        else:
            out.append(self._event("response.function_call_arguments.done", {
                **where, "arguments": text
            }))  # fmt: skip
        out.append(self._event("response.output_item.done", {
            "output_index": item.index, "item": item.item(status)
        }))  # fmt: skip

    def _close_all(self, out: list[bytes]) -> str | None:
        """Every item done, at the finish: the last one incomplete if the answer was cut."""
        for call in self._calls.values():
            if call.item is None:
                return "a tool call without a name"
        status = "incomplete" if self._finish in INCOMPLETE_REASONS else "completed"
        if self._held and not self._calls:
            # Whitespace alone, no call after it: it was the model's answer after all.
            text, self._held = self._held, ""
            self._stream("message", text, out)
        if not self._output:
            self._add("message", "msg_", out)  # an empty answer is still a message
        if self._open is not None:  # every stream has its last item open until now
            self._close(self._open, status, out)
        return None


def _engine_error(chunk: dict[str, Any]) -> str | None:
    """The message of an engine's error event: vLLM's and OpenAI's nested `error`, SGLang's
    flat `{"object": "error", "message"}`."""
    error = chunk.get("error")
    if isinstance(error, dict):
        message = error.get("message")
        return message if isinstance(message, str) and message else "The model server failed."
    if isinstance(error, str) and error:
        return error
    if chunk.get("object") == "error":
        message = chunk.get("message")
        return message if isinstance(message, str) and message else "The model server failed."
    return None
