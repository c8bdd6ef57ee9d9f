"""Anthropic's error envelope and the requests the Messages dialect refuses."""

from __future__ import annotations

import json

from gateway.core.answers import ERROR_TYPES

# Encoders made once: json.dumps with options builds a new encoder on every call.
_encode_compact = json.JSONEncoder(separators=(",", ":")).encode


class MessagesError(Exception):
    """A request the Messages surface refuses (400s), in Anthropic's words."""

    def __init__(self, status: int, type_: str, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.type = type_
        self.message = message

    def body(self) -> bytes:
        return error_body(self.type, self.message)


def error_body(type_: str, message: str) -> bytes:
    """Anthropic's error envelope: `{"type":"error","error":{"type":...,"message":...}}`."""
    return _encode_compact({"type": "error", "error": {"type": type_, "message": message}}).encode()


def error_event(type_: str, message: str) -> bytes:
    """The same envelope as the `error` event that ends a stream."""
    return b"event: error\ndata: " + error_body(type_, message) + b"\n\n"


def _invalid(message: str) -> MessagesError:
    return MessagesError(400, ERROR_TYPES[400], message)
