"""The /v1 surfaces: each API dialect's path, errors and answers, over one admission path.

A surface parses its body and finds the model (making the output limits it names one, what its
allowance reserves: gateway/allowances/counters.py); at the final dispatch boundary it makes a
`Plan` for the backend actually chosen: which path to call with which body, and how the backend's
answer becomes the client's (passed through as it is, or translated), whole or event by event, with
the token usage read on the way. The relay (gateway/dataplane/relay.py) runs the plan.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from gateway.core import wire_json
from gateway.core.errors import GatewayError
from gateway.core.usage import Usage

if TYPE_CHECKING:
    pass


DONE_EVENT = b"data: [DONE]\n\n"


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


class Plan:
    """How one attempt talks to one backend and turns its answer into the client's.

    This one passes the answer through as the backend sent it; subclasses translate.
    """

    content_type: str | None = None  # None keeps the backend's

    def __init__(self, path: str, body: dict[str, Any]) -> None:
        self.path = path
        self.body = body
        self.usage: Usage | None = None

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


def _json(data: bytes) -> Any:
    try:
        return wire_json.loads(data)
    except (ValueError, RecursionError):
        return None


# ----- the Anthropic Messages surface ----------------------------------------------------------


class _NativePlan(Plan):
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
