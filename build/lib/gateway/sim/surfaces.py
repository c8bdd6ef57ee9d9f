"""How each API renders a simulated generation, its errors and its stream's end."""

from __future__ import annotations

import time
from collections.abc import Coroutine
from typing import TYPE_CHECKING, Any

from gateway.sim.config import ERROR_SHAPES
from gateway.sim.errors import (
    ANTHROPIC_SHAPES,
    _anthropic_error,
    _error_body,
    _vllm_validation_error,
    shaped_error,
    shaped_error_event,
)
from gateway.sim.messages import _message_body, _message_events
from gateway.sim.responses import _response_error_event, _response_events, _response_object
from gateway.sim.wire import _DONE, _encode

if TYPE_CHECKING:
    from gateway.core.asgi import Send
    from gateway.sim.engine import SimEngine
    from gateway.sim.jobs import _Job, _Record


# -- surfaces: one generation, each API's dialect --


class _Surface:
    """How one API renders a generation, its errors and its stream's end (chat: the default)."""

    tail = _DONE
    shapes: tuple[str, ...] = ERROR_SHAPES

    def shape(self, engine: SimEngine) -> str:
        return engine._shape()

    def error(self, shape: str, status: int, message: str, code: str) -> bytes:
        return shaped_error(shape, status, message, code)

    def error_event(self, shape: str, status: int, message: str, code: str, number: int) -> bytes:
        return shaped_error_event(shape, status, message, code)

    def invalid(self, engine: SimEngine, message: str) -> bytes:
        return _error_body(message, "invalid_request_error", "invalid_request")

    def early(self, engine: SimEngine) -> int:
        """How many of a stream's first events go out before its request is admitted."""
        return 0

    def whole(self, engine: SimEngine, job: _Job) -> bytes:
        return engine._whole(job)

    def events(self, engine: SimEngine, job: _Job) -> list[tuple[bytes, bool]]:
        return engine._chat_events(job)

    def sent(self, engine: SimEngine, job: _Job) -> None:
        """Called once a stream's last event went out."""

    def stream(
        self, engine: SimEngine, send: Send, record: _Record, job: _Job, delay: float
    ) -> Coroutine[Any, Any, bytes | None]:
        # Only a plain chat job has no turn; every other streams its surface's events.
        if job.turn is None:
            return engine._stream(send, record, job, delay)
        return engine._stream_events(send, record, job, delay, self)


class _Messages(_Surface):
    tail = b""
    shapes = ANTHROPIC_SHAPES + ERROR_SHAPES

    def shape(self, engine: SimEngine) -> str:
        return "anthropic-vllm" if engine.config.server_info == "vllm" else "anthropic"

    def error(self, shape: str, status: int, message: str, code: str) -> bytes:
        if shape in ANTHROPIC_SHAPES:
            return _anthropic_error(shape, status, message)
        return shaped_error(shape, status, message, code)

    def error_event(self, shape: str, status: int, message: str, code: str, number: int) -> bytes:
        if shape in ANTHROPIC_SHAPES:
            return b"event: error\ndata: " + _anthropic_error(shape, status, message) + b"\n\n"
        return shaped_error_event(shape, status, message, code)

    def invalid(self, engine: SimEngine, message: str) -> bytes:
        if engine.config.server_info == "vllm":
            return _vllm_validation_error(engine._shape(), message)
        return _anthropic_error("anthropic", 400, message)

    def whole(self, engine: SimEngine, job: _Job) -> bytes:
        return _message_body(job, engine.config.server_info == "vllm")

    def events(self, engine: SimEngine, job: _Job) -> list[tuple[bytes, bool]]:
        return _message_events(job, engine.config.server_info == "vllm")


class _Responses(_Surface):
    tail = b""

    def error_event(self, shape: str, status: int, message: str, code: str, number: int) -> bytes:
        return _response_error_event(message, code, number)

    def invalid(self, engine: SimEngine, message: str) -> bytes:
        # vLLM's and SGLang's handlers answer /v1/responses in the nested envelope.
        if engine.config.server_info in ("vllm", "sglang"):
            return _vllm_validation_error("vllm", message)
        return _error_body(message, "invalid_request_error", "invalid_request")

    def early(self, engine: SimEngine) -> int:
        # vLLM yields response.created and .in_progress before it iterates the engine.
        return 2 if engine.config.server_info == "vllm" else 0

    def whole(self, engine: SimEngine, job: _Job) -> bytes:
        engine._keep(job)
        return _encode(_response_object(job, int(time.time()), done=True)).encode()

    def events(self, engine: SimEngine, job: _Job) -> list[tuple[bytes, bool]]:
        return _response_events(job, int(time.time()), engine.config.server_info == "vllm")

    def sent(self, engine: SimEngine, job: _Job) -> None:
        engine._keep(job)


_CHAT = _Surface()

_MESSAGES = _Messages()

_RESPONSES = _Responses()
