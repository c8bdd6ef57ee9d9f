"""The requests the Responses dialect refuses, in OpenAI's words."""

from __future__ import annotations

from gateway.core.errors import BadRequest


class ResponsesError(BadRequest):
    """A request the Responses surface refuses (400), with the param it is about."""


def _kind(value: object) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "an array"
    if isinstance(value, dict):
        return "an object"
    return "a value of an unknown type"


def _wrong_type(param: str, expected: str, value: object) -> ResponsesError:
    # OpenAI's own wording, so that a client's error handling reads both alike.
    return ResponsesError(
        f"Invalid type for '{param}': expected {expected}, but got {_kind(value)} instead.",
        param=param,
    )


def _wrong_value(param: str, why: str) -> ResponsesError:
    return ResponsesError(f"Invalid value for '{param}': {why}", param=param)
