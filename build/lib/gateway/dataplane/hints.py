"""Per-request priority hints: headers and body fields that may only lower the caller's class.

Accepted: `X-AIplane-Priority: low|medium|high`; llama-swap's `X-LlamaSwap-Priority` (a signed
integer or interactive/normal/batch); Dynamo's `x-dynamo-request-priority` and
`x-dynamo-request-strict-priority` headers and `nvext.agent_hints.priority` / `strict_priority` in
the body (a header overrides the matching body field). A number maps to a band (>= 50 high,
<= -50 low, else medium) plus an in-band offset; the request runs at min(class, band).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from gateway.core.classes import BAND_ANCHORS, HIGH, LOW, MEDIUM, NAMED
from gateway.core.errors import BadHint, echoed

LLAMASWAP_ALIASES = {"interactive": 100, "normal": 0, "batch": -100}

HINT_HEADERS = (
    b"x-aiplane-priority",
    b"x-llamaswap-priority",
    b"x-dynamo-request-priority",
    b"x-dynamo-request-strict-priority",
)


@dataclass(frozen=True, slots=True)
class Hint:
    """What the caller asked for: a band and an offset inside it, and where it came from."""

    band: int
    offset: int
    source: str
    raw: str

    def describe(self) -> str:
        return f"{self.source}={self.raw}"


def band_of(value: int) -> tuple[int, int]:
    """A signed priority number as (band, offset): anchors 100 apart, offset bounded to +-49."""
    if value >= 50:
        band = HIGH
    elif value <= -50:
        band = LOW
    else:
        band = MEDIUM
    offset = max(-49, min(49, value - BAND_ANCHORS[band]))
    return band, offset


# Hints are machine integers (llama-swap parses an int64); past that a value is a mistake, and
# its digits would only bloat the error and the activity record.
HINT_MIN, HINT_MAX = -(2**63), 2**63 - 1

_INTEGER = re.compile(r"[+-]?[0-9]{1,19}")


def _shown(raw: object) -> str:
    """The offending value for the error message: short text quoted, anything else by type.

    Never the repr of a whole JSON value: a deeply nested one fails to repr at all, and a large
    one would be echoed back at its full size.
    """
    if isinstance(raw, str):
        return repr(echoed(raw, 40))
    if isinstance(raw, bool):
        return "true" if raw else "false"
    if isinstance(raw, int | float):
        text = str(raw)
        return text if len(text) <= 40 else "a number of " + str(len(text)) + " digits"
    return "an array" if isinstance(raw, list) else "an object"


def _int(raw: object, source: str) -> int:
    value: int | None = None
    if isinstance(raw, int) and not isinstance(raw, bool):
        value = raw
    elif isinstance(raw, str):
        text = raw.strip()
        # Not int(): it also takes "1_000" and other scripts' digits, and any number of them.
        if _INTEGER.fullmatch(text):
            value = int(text)
    if value is None or not HINT_MIN <= value <= HINT_MAX:
        raise BadHint(f"{source} must be a 64-bit integer, not {_shown(raw)}.", param=source)
    return value


def _strict_band(value: int) -> int:
    """Dynamo's strict tier relative to its default 0: above runs first, below runs last."""
    return HIGH if value > 0 else LOW if value < 0 else MEDIUM


def parse_hints(headers: dict[bytes, bytes], body: dict) -> Hint | None:
    """Every hint the request carries, combined to the lowest one; a malformed hint is a 400."""
    found: list[Hint] = []
    raw = headers.get(b"x-aiplane-priority")
    if raw is not None:
        text = raw.decode("latin-1").strip().lower()
        if text not in NAMED:
            raise BadHint(
                "X-AIplane-Priority must be low, medium or high.", param="X-AIplane-Priority"
            )
        found.append(Hint(NAMED[text], 0, "x-aiplane-priority", text))
    raw = headers.get(b"x-llamaswap-priority")
    if raw is not None:
        text = raw.decode("latin-1").strip().lower()
        value = LLAMASWAP_ALIASES.get(text)
        if value is None:
            value = _int(text, "X-LlamaSwap-Priority")
        found.append(Hint(*band_of(value), "x-llamaswap-priority", text))

    agent = _agent_hints(body)
    dynamo = _dynamo(headers, "x-dynamo-request-priority", agent, "priority")
    if dynamo is not None:
        value, source = dynamo
        found.append(Hint(*band_of(value), source, str(value)))
    dynamo = _dynamo(headers, "x-dynamo-request-strict-priority", agent, "strict_priority")
    if dynamo is not None:
        value, source = dynamo
        found.append(Hint(_strict_band(value), 0, source, str(value)))
    if not found:
        return None
    return min(found, key=lambda h: (h.band, h.offset))


def _dynamo(
    headers: dict[bytes, bytes], header: str, agent: dict | None, field: str
) -> tuple[int, str] | None:
    """One of Dynamo's hints and where it was read: its header wins over the body's
    nvext.agent_hints field."""
    raw = headers.get(header.encode())
    if raw is not None:
        return _int(raw.decode("latin-1"), header), header
    value = agent.get(field) if agent else None
    if value is None:
        return None
    source = "nvext.agent_hints." + field
    return _int(value, source), source


def _agent_hints(body: dict) -> dict | None:
    nvext = body.get("nvext")
    if nvext is None:
        return None
    if not isinstance(nvext, dict):
        raise BadHint("nvext must be an object.", param="nvext")
    hints = nvext.get("agent_hints")
    if hints is None:
        return None
    if not isinstance(hints, dict):
        raise BadHint("nvext.agent_hints must be an object.", param="nvext.agent_hints")
    return hints


def apply_hint(cls: int, hint: Hint | None) -> tuple[int, int]:
    """The class and in-band offset a request runs at: a hint can lower it, never raise it.

    In the caller's own band only a negative offset counts: a positive one would put it ahead of
    its peers, which is raising it. In a lower band any offset is still below what it may use.
    """
    if hint is None:
        return cls, 0
    if hint.band > cls:
        return cls, 0
    if hint.band < cls:
        return hint.band, hint.offset
    return cls, min(0, hint.offset)
