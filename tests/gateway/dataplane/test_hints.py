"""The priority hint parser refuses any hostile value with a short 400, never an exception."""

from __future__ import annotations

from typing import Any

import pytest

from gateway.core.classes import HIGH, LOW, MEDIUM
from gateway.core.errors import BadHint
from gateway.dataplane.hints import parse_hints


def nested(depth: int) -> Any:
    value: Any = []
    for _ in range(depth):
        value = [value]
    return value


def refusal(headers: dict[bytes, bytes], body: dict[str, Any]) -> BadHint:
    with pytest.raises(BadHint) as caught:
        parse_hints(headers, body)
    return caught.value


def test_a_value_nested_deeper_than_repr_can_go_is_refused_by_its_type() -> None:
    body = {"nvext": {"agent_hints": {"priority": nested(100_000)}}}
    error = refusal({}, body)
    assert error.message == "nvext.agent_hints.priority must be a 64-bit integer, not an array."
    assert error.param == "nvext.agent_hints.priority"


@pytest.mark.parametrize(
    ("value", "shown"),
    [
        ("x" * 100_000, "'" + "x" * 40 + "...'"),
        ({"a": "x" * 100_000}, "an object"),
        (10**4000, "a number of 4001 digits"),
        (2**63, str(2**63)),
        (1.5, "1.5"),
        (True, "true"),
    ],
)
def test_the_refusal_never_echoes_a_large_value(value: Any, shown: str) -> None:
    error = refusal({}, {"nvext": {"agent_hints": {"strict_priority": value}}})
    assert error.message == (
        f"nvext.agent_hints.strict_priority must be a 64-bit integer, not {shown}."
    )


@pytest.mark.parametrize(
    "raw", [b"9" * 4000, b"9" * 5000, b"1_0", b"0x10", b"\xb2", b"+", b"", b"1e3", b"12a"]
)
def test_a_header_that_is_no_plain_integer_is_refused(raw: bytes) -> None:
    error = refusal({b"x-llamaswap-priority": raw}, {})
    assert error.param == "X-LlamaSwap-Priority"
    assert len(error.message) < 120


def test_a_huge_integer_in_a_dynamo_header_is_refused() -> None:
    error = refusal({b"x-dynamo-request-priority": b"-" + b"9" * 30}, {})
    assert error.param == "x-dynamo-request-priority"


@pytest.mark.parametrize(
    ("raw", "band", "offset"),
    [(b" 12 ", MEDIUM, 12), (b"+60", HIGH, -40), (b"-9223372036854775808", LOW, -49)],
)
def test_a_signed_integer_with_spaces_is_still_a_hint(raw: bytes, band: int, offset: int) -> None:
    hint = parse_hints({b"x-llamaswap-priority": raw}, {})
    assert hint is not None
    assert (hint.band, hint.offset) == (band, offset)
    assert len(hint.describe()) < 60
