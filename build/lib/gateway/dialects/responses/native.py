"""Usage read from a native backend's Responses answer and events as they pass."""

from __future__ import annotations

import json

from gateway.core.usage import Usage
from gateway.core.usage import from_responses as _usage_from_responses
from gateway.dialects.responses.stream import _TERMINAL_TYPE, TERMINAL_EVENTS
from gateway.dialects.responses.validate import _one_of

# ----- native pass-through -------------------------------------------------------------------


class NativeUsage:
    """For native pass-through: reads usage from Responses stream events as they pass."""

    __slots__ = ("usage",)

    def __init__(self) -> None:
        self.usage: Usage | None = None

    def feed(self, event: object) -> None:
        """One parsed event; only the terminal ones carry the usage."""
        if isinstance(event, dict) and _one_of(event.get("type"), TERMINAL_EVENTS):
            response = event.get("response")
            if isinstance(response, dict):
                usage = _usage_from_responses(response.get("usage"))
                if usage is not None:
                    self.usage = usage

    def feed_sse(self, data: bytes) -> None:
        """Whole SSE events as the relay passes them (it cuts only at event boundaries): each
        event's `data:` payload, decoded only when it may be a terminal event."""
        if _TERMINAL_TYPE(data) is None:
            return
        for event in data.replace(b"\r\n", b"\n").split(b"\n\n"):
            payload = b"\n".join(
                line[5:].lstrip() for line in event.split(b"\n") if line.startswith(b"data:")
            )
            if payload:
                self.feed_data(payload)

    def feed_data(self, data: bytes) -> None:
        """One event's `data:` payload, parsed only if it may be a terminal event: the
        hot path of a native stream must not decode every delta."""
        if _TERMINAL_TYPE(data) is not None:
            try:
                self.feed(json.loads(data))
            except (ValueError, RecursionError):
                return


def usage_of_answer(answer: object) -> Usage | None:
    """The usage of a native non-streaming Response."""
    return _usage_from_responses(answer.get("usage")) if isinstance(answer, dict) else None
