"""The /v1 surfaces: each API dialect's path, errors and answers, over one admission path.

A surface parses its body and finds the model (making the output limits it names one, what its
allowance reserves: gateway/allowances/counters.py); at the final dispatch boundary it makes a
`Plan` for the backend actually chosen: which path to call with which body, and how the backend's
answer becomes the client's (passed through as it is, or translated), whole or event by event, with
the token usage read on the way. The relay (gateway/dataplane/relay.py) runs the plan.
"""

from __future__ import annotations

import re
from typing import Any, Protocol

from gateway.core import wire_json
from gateway.core.errors import GatewayError
from gateway.core.usage import Usage, prompt_estimate

DONE_EVENT = b"data: [DONE]\n\n"

# One generated piece of a chat or text completion chunk: a delta's content, reasoning or text,
# or a fragment of a tool call's arguments, not empty. A stream whose engine reports no usage
# is counted a token a piece: the engines seen streaming without usage (llama-cpp-python's
# server, llama.cpp's) send one token a chunk, so this is their own count, where characters / 4
# is off by half for code or any language but English; it costs a search of the bytes, no JSON.
# A quote inside generated text is escaped (\"), so text never looks like a key here.
_PIECE = re.compile(rb'"(?:content|reasoning_content|reasoning|text|arguments)"\s*:\s*"(?!")')


dump = wire_json.dumps


def split_events(data: bytes) -> list[bytes]:
    """Whole SSE events (each without its blank line) from bytes that end on a boundary."""
    text = data.replace(b"\r\n", b"\n")
    return [event for event in text.split(b"\n\n") if event.strip()]


def event_data(event: bytes) -> bytes | None:
    """The data of one SSE event (its data lines joined), or None when it has none."""
    lines = [
        line[5:].removeprefix(b" ") for line in event.split(b"\n") if line.startswith(b"data:")
    ]
    return b"\n".join(lines) if lines else None


class Backend(Protocol):
    """What a dialect sees of the backend chosen for an attempt (the runtime's Upstream): it
    never reaches the backend's connection, key or slot."""

    @property
    def name(self) -> str: ...

    @property
    def keeps_responses(self) -> bool: ...

    def native(self, surface: str) -> bool: ...

    def prepare(self, body: dict[str, Any], *, model: str, cls: int) -> None: ...


class Plan:
    """How one attempt talks to one backend and turns its answer into the client's.

    This one passes the answer through as the backend sent it; subclasses translate.
    """

    content_type: str | None = None  # None keeps the backend's

    counts_output = False  # whether its events are chat chunks it counts (`estimate`)

    def __init__(self, path: str, body: dict[str, Any]) -> None:
        self.path = path
        self.body = body
        self.usage: Usage | None = None
        self.estimated = False  # `usage` is the gateway's own count: the engine reported none
        self.sent = 0  # the size of the body the engine was sent (the relay's), for `estimate`
        self.pieces = 0  # generated pieces of the chunks relayed (`count`)

    def count(self, data: bytes) -> None:
        """Count the generated pieces of chat chunks on their way to the client."""
        self.pieces += len(_PIECE.findall(data))

    def estimate(self) -> Usage | None:
        """The engine streamed without reporting usage: from now on `usage` is the gateway's
        count, its prompt as allowances estimate it and a token for each piece relayed (None
        where the plan passes a dialect through without counting it)."""
        if self.usage is None and self.counts_output:
            self.usage = Usage(prompt_estimate(self.sent), self.pieces)
            self.estimated = True
        return self.usage

    def answer(self, data: bytes, parsed: Any) -> bytes:
        """A whole JSON answer (`parsed` is its decoded form): the bytes the client gets.

        Raises ValueError when it is not the answer this surface expects (a 502)."""
        return data

    def events(self, data: bytes) -> bytes:
        """Whole events of an event stream (ending on a boundary): the bytes the client gets.

        Raises ValueError for events this surface cannot pass on (the stream then fails)."""
        return data

    def complete(self, sent: bytes) -> bool:
        """Whether the client's stream has ended, `sent` being the last bytes it got: after
        `data: [DONE]` nothing the backend does (or fails to do) is the client's business."""
        return sent.rstrip().endswith(b"data: [DONE]")

    def end(self) -> bytes:
        """The backend ended its stream cleanly: anything still to send."""
        return b""

    def fail(self, error: GatewayError) -> bytes:
        """The backend failed mid-stream: the final event(s) that say so (on a boundary)."""
        return b"data: " + error.body() + b"\n\n" + DONE_EVENT


def decoded(data: bytes) -> Any:
    """An event's data as JSON, or None when it is not (a translator reads that as broken)."""
    try:
        return wire_json.loads(data)
    except (ValueError, RecursionError):
        return None


class NativePlan(Plan):
    """A surface passed through to a backend that serves it natively: the answer and its events
    go on unchanged, the usage read from them as they pass (`api`: its module's readers)."""

    api: Any  # gateway.messages or gateway.responses: usage_of_answer, NativeUsage

    def __init__(self, path: str, body: dict[str, Any]) -> None:
        super().__init__(path, body)
        self._native = self.api.NativeUsage()

    def answer(self, data: bytes, parsed: Any) -> bytes:
        self.usage = self.api.usage_of_answer(parsed)
        return data

    def events(self, data: bytes) -> bytes:
        if b'"usage"' in data:
            self._native.feed_sse(data)
            self.usage = self._native.usage
        return data


class Translator(Protocol):
    """A stream translator: chat completion chunks in, the dialect's events out."""

    usage: Usage | None

    def feed(self, chunk: object) -> bytes: ...

    def finish(self) -> bytes: ...


class TranslatedPlan(Plan):
    """A dialect translated: chat completions asked of the backend, its stream turned back into
    the dialect's events by `stream`, event by event as it comes (never buffered). A stream the
    engine ended without usage ends with the gateway's estimate (`Plan.estimate`) in the
    dialect's final usage, never zeros."""

    stream: Translator

    counts_output = True

    def __init__(self, chat: dict[str, Any]) -> None:
        super().__init__("/v1/chat/completions", chat)

    def events(self, data: bytes) -> bytes:
        out = []
        stream = self.stream
        self.count(data)
        for event in split_events(data):
            payload = event_data(event)
            if payload is None:
                continue
            if payload.strip() == b"[DONE]":
                out.append(self._finish())
            else:
                out.append(stream.feed(decoded(payload)))
        self.usage = stream.usage
        return b"".join(out)

    def end(self) -> bytes:
        return self._finish()  # an engine that ended without [DONE]; nothing if it did

    def _finish(self) -> bytes:
        stream = self.stream
        if stream.usage is None:
            stream.usage = self.estimate()
        return stream.finish()
