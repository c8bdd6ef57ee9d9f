"""The error answers the simulated engine gives, in each engine's shape."""

from __future__ import annotations

from http import HTTPStatus
from typing import Any

from gateway.core.answers import error_type
from gateway.sim.config import QUEUE_FULL
from gateway.sim.wire import encode


def error_body(message: str, type_: str, code: str, param: str | None = None) -> bytes:
    """The sim's own refusals (bad key, body or model): OpenAI's envelope in every style."""
    return encode(
        {"error": {"message": message, "type": type_, "param": param, "code": code}}
    ).encode()


def _vllm_type(status: int) -> str:
    # vLLM names the error class: BadRequestError, NotFoundError, InternalServerError, ...
    try:
        phrase = HTTPStatus(status).phrase
    except ValueError:  # a status Python has no name for, such as Anthropic's 529
        return "Error"
    return "".join(phrase.split()) + "Error"


def error_inner(shape: str, status: int, message: str, code: str) -> dict[str, Any]:
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
    inner = error_inner(shape, status, message, code)
    body = {"error": inner} if shape in ("openai", "vllm") else inner
    return encode(body).encode()


def shaped_error_event(shape: str, status: int, message: str, code: str) -> bytes:
    """The error event that ends a failed stream: {"error": ...} in the engine's inner shape."""
    inner = error_inner(shape, status, message, code)
    if shape == "sglang":
        # In a stream SGLang names the status (SERVICE_UNAVAILABLE) instead of numbering it.
        inner["type"] = HTTPStatus(status).name
    return b"data: " + encode({"error": inner}).encode() + b"\n\n"


SHUTTING_DOWN = error_body("The engine is shutting down", "server_error", "sim_shutting_down")


def _error_type(status: int) -> str:
    if status == 429:
        return "rate_limit_error"
    if status >= 500:
        return "server_error"
    return "invalid_request_error"


ANTHROPIC_SHAPES = ("anthropic", "anthropic-vllm")


def anthropic_error(shape: str, status: int, message: str) -> bytes:
    """Anthropic's envelope; vLLM names the error by its class (anthropic/api_router.py)."""
    # Anthropic's type by status: the gateway's one table of them (its API reference, "Errors").
    type_ = _vllm_type(status) if shape == "anthropic-vllm" else error_type(status)
    return encode({"type": "error", "error": {"type": type_, "message": message}}).encode()


def vllm_validation_error(shape: str, message: str) -> bytes:
    """vLLM's handler of a body that does not validate, for every path: 400 "Bad Request"."""
    inner = error_inner(shape, 400, message, "")
    inner["type"] = HTTPStatus.BAD_REQUEST.phrase
    return encode({"error": inner} if shape == "vllm" else inner).encode()


class Refused(Exception):
    """The bounded queue turned the request away (full, or evicted by a better arrival)."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message
        # The code the generic sim's OpenAI envelope gives it (the engines' shapes number it).
        self.code = "queue_full" if message == QUEUE_FULL else "evicted"
