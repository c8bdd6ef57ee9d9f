"""A request's own wait budget: `X-AIplane-Max-Wait` shortens the gateway's, never lengthens it.

A caller that would rather have no answer than a late one says how long it may wait for a
slot: `X-AIplane-Max-Wait: 5` (seconds), `2.5s` or `500ms`. The budget is the smaller of that
and `gateway.upstream_wait_secs`; 0 tries once, as the setting does. It bounds the wait in line
only (as the setting does), not the answer. A value that does not read as one is a 400, not a
silently ignored deadline.
"""

from __future__ import annotations

import re

from gateway.core.errors import BadMaxWait, echoed

MAX_WAIT_HEADER = b"x-aiplane-max-wait"

# Up to nine digits and six decimals: a deadline, not a number to bloat the error with.
_VALUE = re.compile(r"([0-9]{1,9}(?:\.[0-9]{1,6})?) ?(ms|s)?", re.IGNORECASE)


def wait_budget(headers: dict[bytes, bytes], gateway_secs: float) -> float:
    """The seconds this request may wait for a slot."""
    raw = headers.get(MAX_WAIT_HEADER)
    if raw is None:
        return gateway_secs
    text = raw.decode("latin-1").strip()
    match = _VALUE.fullmatch(text)
    if match is None:
        raise BadMaxWait(
            "X-AIplane-Max-Wait must be a wait in seconds (5, 2.5s) or milliseconds (500ms), "
            f"not {echoed(text, 40)!r}.",
            param="X-AIplane-Max-Wait",
        )
    value = float(match[1])
    secs = value / 1000 if (match[2] or "").lower() == "ms" else value
    return min(gateway_secs, secs)


def queue_wait_header(queue_ms: float) -> tuple[bytes, bytes]:
    """`x-aiplane-queue-wait-ms`: how long the answer waited in line for a slot, whole ms."""
    return (b"x-aiplane-queue-wait-ms", str(round(queue_ms)).encode())
