"""Who calls: a bearer token, Anthropic's x-api-key, or a signed-in browser's session."""

from __future__ import annotations

from gateway.core.errors import (
    BadRequest,
)


def _token_id(header: bytes | None) -> int | None:
    """The X-AIplane-Token header: the id of one of the signed-in person's tokens."""
    if header is None:
        return None
    text = header.decode("latin-1").strip()
    if not (text.isascii() and text.isdigit()) or len(text) > 18:
        raise BadRequest("X-AIplane-Token must be the id of one of your tokens.")
    return int(text)


def _cookie(header: bytes, name: str) -> str | None:
    for part in header.decode("latin-1").split(";"):
        key, _, value = part.strip().partition("=")
        if key == name:
            return value
    return None
