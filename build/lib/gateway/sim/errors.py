"""The error answers the simulated engine gives, in each engine's shape."""

from __future__ import annotations

from http import HTTPStatus
from typing import Any

from gateway.sim.config import QUEUE_FULL
from gateway.sim.wire import _encode


def _error_body(message: str, type_: str, code: str, param: str | None = None) -> bytes:
    """The sim's own refusals (bad key, body or model): OpenAI's envelope in every style."""
    return _encode(
        {"error": {"message": message, "type": type_, "param": param, "code": code}}
    ).encode()


def _vllm_type(status: int) -> str:
    # vLLM names the error class: BadRequestError, NotFoundError, InternalServerError, ...
    try:
        phrase = HTTPStatus(status).phrase
    except ValueError:  # a status Python has no name for, such as Anthropic's 529
        return "Error"
    return "".join(phrase.split()) + "Error"


def _error_inner(shape: str, status: int, message: str, code: str) -> dict[str, Any]:
    if shape == "sglang":
        return {"object": "error", "message": message, "type": str(status), "param": None,
                "code": status}  # fmt: skip
    if shape == "vllm-flat":
        return {"object": "error", "message": message, "type": _vllm_type(status),
                "param": None, "code": status}  # fmt: skip
    if shape == "vllm":
        return {"message": message, "type": _vllm_type(status), "param": None, "code": status}
    return {"message": message, "type": _error_type(status), "param": None, "code": code}


def shaped_error(shape: str, status: int, message: str, code: str) -> bytes:
    """A non-streaming error body as the engine of `shape` writes it (`code` for openai only)."""
    inner = _error_inner(shape, status, message, code)
    body = {"error": inner} if shape in ("openai", "vllm") else inner
    return _encode(body).encode()


def shaped_error_event(shape: str, status: int, message: str, code: str) -> bytes:
    """The error event that ends a failed stream: {"error": ...} in the engine's inner shape."""
    inner = _error_inner(shape, status, message, code)
    if shape == "sglang":
        # In a stream SGLang names the status (SERVICE_UNAVAILABLE) instead of numbering it.
        inner["type"] = HTTPStatus(status).name
    return b"data: " + _encode({"error": inner}).encode() + b"\n\n"


_SHUTTING_DOWN = _error_body("The engine is shutting down", "server_error", "sim_shutting_down")


def _error_type(status: int) -> str:
    if status == 429:
        return "rate_limit_error"
    if status >= 500:
        return "server_error"
    return "invalid_request_error"


# Anthropic's error types by status (its API reference, "Errors"); other 5xx are api_error.
_ANTHROPIC_TYPES = {
    400: "invalid_request_error",
    401: "authentication_error",
    403: "permission_error",
    404: "not_found_error",
    413: "request_too_large",
    429: "rate_limit_error",
    503: "overloaded_error",
    529: "overloaded_error",
}

ANTHROPIC_SHAPES = ("anthropic", "anthropic-vllm")


def _anthropic_error(shape: str, status: int, message: str) -> bytes:
    """Anthropic's envelope; vLLM names the error by its class (anthropic/api_router.py)."""
    if shape == "anthropic-vllm":
        type_ = _vllm_type(status)
    else:
        type_ = _ANTHROPIC_TYPES.get(
            status, "api_error" if status >= 500 else "invalid_request_error"
        )
    return _encode({"type": "error", "error": {"type": type_, "message": message}}).encode()


def _vllm_validation_error(shape: str, message: str) -> bytes:
    """vLLM's handler of a body that does not validate, for every path: 400 "Bad Request"."""
    inner = _error_inner(shape, 400, message, "")
    inner["type"] = HTTPStatus.BAD_REQUEST.phrase
    return _encode({"error": inner} if shape == "vllm" else inner).encode()


class _Refused(Exception):
    """The bounded queue turned the request away (full, or evicted by a better arrival)."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message
        # The code the generic sim's OpenAI envelope gives it (the engines' shapes number it).
        self.code = "queue_full" if message == QUEUE_FULL else "evicted"
