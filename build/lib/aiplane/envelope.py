"""The one error shape of aiplane, OpenAI's: `{"error": {"message", "type", "param", "code"}}`."""

from __future__ import annotations

from typing import Any


def error_body(message: str, type_: str, code: str, param: str | None = None) -> dict[str, Any]:
    """The envelope every API of aiplane (/v1, /api/v0, /metrics) answers errors with."""
    return {"error": {"message": message, "type": type_, "param": param, "code": code}}
