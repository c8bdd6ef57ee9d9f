"""Usage read from a native backend's Messages answer and events as they pass."""

from __future__ import annotations

import json

from gateway.core.usage import Usage
from gateway.core.usage import from_messages as usage_from_messages

# ----- native pass-through -------------------------------------------------------------------


class NativeUsage:
    """For native pass-through: reads usage from Anthropic stream events as they pass."""

    __slots__ = ("usage",)

    def __init__(self) -> None:
        self.usage: Usage | None = None

    def feed(self, event: object) -> None:
        """One decoded event: message_start.message.usage, then message_delta.usage (cumulative
        totals; a count it leaves out keeps message_start's)."""
        if not isinstance(event, dict):
            return
        kind = event.get("type")
        if kind == "message_start":
            message = event.get("message")
            if isinstance(message, dict):
                found = usage_from_messages(message.get("usage"))
                if found is not None:
                    self.usage = found
        elif kind == "message_delta":
            raw = event.get("usage")
            found = usage_from_messages(raw)
            if found is None or not isinstance(raw, dict):
                return
            old = self.usage
            if old is None:
                self.usage = found
                return
            self.usage = Usage(
                found.input if _is_count(raw.get("input_tokens")) else old.input,
                found.output if _is_count(raw.get("output_tokens")) else old.output,
                found.cached if found.cached is not None else old.cached,
            )

    def feed_sse(self, data: bytes) -> None:
        """Whole SSE events as the relay passes them (it cuts only at event boundaries): only
        message_start and message_delta are decoded, the text deltas in between are skipped."""
        if b"event: message_" not in data and b"event:message_" not in data:
            return
        for event in data.replace(b"\r\n", b"\n").split(b"\n\n"):
            if not event.startswith(b"event:"):
                continue
            name, _, rest = event.partition(b"\n")
            if name[6:].strip() not in (b"message_start", b"message_delta"):
                continue
            for line in rest.split(b"\n"):
                if line.startswith(b"data:"):
                    try:
                        self.feed(json.loads(line[5:]))
                    except (ValueError, RecursionError):
                        pass


def _is_count(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def usage_of_answer(answer: object) -> Usage | None:
    """The usage of a native non-streaming Messages answer."""
    return usage_from_messages(answer.get("usage")) if isinstance(answer, dict) else None
