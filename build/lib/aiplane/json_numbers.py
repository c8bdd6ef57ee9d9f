"""The numbers a client's JSON may hold: NaN, Infinity and literals beyond a double are refused.

They are not JSON (RFC 8259) or not I-JSON (RFC 7493), and what reads them after us (an
engine, the database, a renderer) chokes on them. Both client surfaces read bodies with these
hooks, /v1 (gateway/core/wire_json.py) and /api/v0 (aiplane/parsers.py), each answering the
ValueError in its own envelope; no Django here, as the request path imports it.
"""

from __future__ import annotations

import math
from typing import Any


def refuse_constant(name: str) -> Any:
    """json's parse_constant: NaN, Infinity and -Infinity are refused."""
    raise ValueError(f"{name} is not a JSON number")


def finite_float(text: str) -> float:
    """json's parse_float: a literal a double cannot hold (1e400) is refused, not made inf."""
    value = float(text)
    if math.isinf(value):
        raise ValueError(f"the number {text[:40]} is too large")
    return value
