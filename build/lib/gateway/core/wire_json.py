"""JSON on the request path: orjson wherever it reads and writes what Python's json would.

Reading a request body and writing it on to the engine is most of what a small request costs
in JSON; orjson does both several times faster. It differs from Python's json only at the
edges, and there json answers instead, so a document reads the same whichever parser took it:

- integers beyond 64 bits (orjson reads them as floats): a document with a run of 19 digits
  or more goes to json, which keeps them exact;
- what orjson refuses (lone surrogates, nesting deeper than 1,024, NaN, numbers out of a
  double's range, invalid UTF-8, a byte order mark) is read by json, which accepts it or says
  why not;
- what orjson cannot write (lone surrogates, integers beyond 64 bits, keys that are not
  strings, nesting deeper than 254) is written by json, which escapes all non-ASCII text then
  (the same text to any reader).

A client's body (`loads_body`) is read more strictly than an engine's answer (`loads`): numbers
JSON has not (NaN, Infinity, or a literal beyond a double's range such as 1e400) are refused,
as an engine would choke on them, and a body with more brackets than json's stack can nest is
read by json, so that nesting too deep for the engine is refused before admission, not after.
"""

from __future__ import annotations

import json
from typing import Any

import orjson

from aiplane.json_numbers import finite_float, refuse_constant

# 19 digits reach 2**63: shorter runs are integers orjson keeps exact (and most long runs in a
# prompt are text, which json then reads just as well). Found as a run of zeros once every digit
# is one: a C loop and a substring search, several times faster than a regular expression.
_DIGITS_AS_ZERO = bytes.maketrans(b"123456789", b"000000000")
_LONG_RUN = b"0" * 19
# Python's json refuses nesting at about 990 levels (less in a deep stack), orjson at 1,024: a
# body that may nest deeper than this is left to json, which finds out.
_SHALLOW = 900


# Made once: json.loads with an option builds a new decoder on every call.
_decode = json.JSONDecoder(parse_constant=refuse_constant, parse_float=finite_float).decode
_encode = json.JSONEncoder(separators=(",", ":")).encode


def loads(raw: bytes) -> Any:
    """What json.loads reads from `raw` (an engine's answer, an event's data)."""
    if _LONG_RUN not in raw.translate(_DIGITS_AS_ZERO):
        try:
            return orjson.loads(raw)
        except orjson.JSONDecodeError:
            pass  # json reads it or says why it is not JSON
    return json.loads(raw)


def loads_body(raw: bytes) -> Any:
    """A client's request body; ValueError (UnicodeDecodeError included) or RecursionError
    when it is not JSON or has numbers JSON has not, with json's own message."""
    if (
        _LONG_RUN not in raw.translate(_DIGITS_AS_ZERO)
        and raw.count(b"[") + raw.count(b"{") <= _SHALLOW
    ):
        try:
            return orjson.loads(raw)
        except orjson.JSONDecodeError:
            pass
    return _decode(raw.decode())


def dumps(value: Any) -> bytes:
    """`value` as compact JSON (non-ASCII text as UTF-8)."""
    try:
        return orjson.dumps(value)
    except TypeError:
        return _encode(value).encode()
