"""The request path's JSON reads and writes what Python's json does, whichever parser ran."""

from __future__ import annotations

import json
import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gateway.core import wire_json

# Every JSON value, with the edges where orjson and json differ: integers beyond 64 bits,
# lone surrogates, NUL, non-ASCII text, very small and very large finite floats.
scalars = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**80), max_value=2**80)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(alphabet=st.characters(codec=None, min_codepoint=0, max_codepoint=0x10FFFF))
)
documents = st.recursive(
    scalars,
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4)
    ),
    max_leaves=20,
)


def same(a: object, b: object) -> bool:
    """Equal, and of the same types all the way down (1 is not 1.0; -0.0 is not 0.0)."""
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return list(a) == list(b) and all(same(a[k], b[k]) for k in a)  # type: ignore[index]
    if isinstance(a, list):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b, strict=True))  # type: ignore[arg-type]
    if isinstance(a, float):
        return math.copysign(1, a) == math.copysign(1, b) and a == b  # type: ignore[arg-type]
    return a == b


@settings(max_examples=400, deadline=None)
@given(documents, st.booleans(), st.sampled_from([wire_json.loads, wire_json.loads_body]))
def test_any_document_reads_as_pythons_json_reads_it(value, ascii_only, read):
    raw = json.dumps(value, ensure_ascii=ascii_only).encode("utf-8", "surrogatepass")
    try:
        expected = json.loads(raw.decode("utf-8", "surrogatepass"))
    except ValueError:
        return
    try:
        got = read(raw)
    except ValueError:
        # Only where the bytes are not UTF-8 (a lone surrogate written raw): json refuses too.
        with pytest.raises(UnicodeDecodeError):
            raw.decode()
        return
    assert same(got, expected)


@settings(max_examples=400, deadline=None)
@given(documents)
def test_any_value_is_written_as_json_that_reads_back_the_same(value):
    written = wire_json.dumps(value)
    assert same(json.loads(written.decode("utf-8", "surrogatepass")), value)


def test_an_integer_beyond_64_bits_stays_an_exact_integer():
    big = 123456789012345678901234567890
    assert wire_json.loads_body(b'{"seed": %d}' % big) == {"seed": big}
    assert wire_json.loads(b'{"seed": %d}' % big) == {"seed": big}
    assert wire_json.dumps({"seed": big}) == b'{"seed":%d}' % big


@pytest.mark.parametrize(
    "raw", [b'{"a": NaN}', b'{"a": Infinity}', b'{"a": -Infinity}', b'{"a": 1e400}', b"[-1e999]"]
)
def test_numbers_json_has_not_are_refused_in_a_clients_body(raw):
    with pytest.raises(ValueError, match=r"not a JSON number|too large"):
        wire_json.loads_body(raw)


@pytest.mark.parametrize(
    "raw",
    [b'{"a": NaN}', b"[-Infinity, 1e400]", b'\xef\xbb\xbf{"a": 1}', '{"a": 1}'.encode("utf-16")],
)
def test_an_engines_answer_reads_as_json_reads_it_numbers_json_has_not_included(raw):
    # An embedding or a logprob written by Python's json.dumps may be NaN: passed on, not a 502.
    assert repr(wire_json.loads(raw)) == repr(json.loads(raw))


def test_a_body_the_gateway_reads_it_can_also_write_to_the_engine_at_any_nesting():
    """Nesting too deep is refused when read (a 400 before admission), never only when the
    body is written for the engine after a slot was taken for it."""
    for depth in range(850, 1100, 10):
        raw = b'{"a":' + b"[" * depth + b"]" * depth + b"}"
        try:
            body = wire_json.loads_body(raw)
        except RecursionError:
            continue
        assert wire_json.dumps(body) == raw


def test_what_json_refuses_is_refused_with_its_own_message():
    with pytest.raises(ValueError, match="Expecting"):
        wire_json.loads_body(b'{"a": ')
    with pytest.raises(UnicodeDecodeError):
        wire_json.loads_body(b'{"a": "\xff"}')
    with pytest.raises(RecursionError):
        wire_json.loads_body(b"[" * 100_000 + b"]" * 100_000)


def test_a_lone_surrogate_escape_reads_and_writes_as_json_does():
    value = wire_json.loads_body(b'{"a": "\\ud800x"}')
    assert value == {"a": "\ud800x"}
    assert wire_json.dumps(value) == b'{"a":"\\ud800x"}'
