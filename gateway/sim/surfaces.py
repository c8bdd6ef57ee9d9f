"""How each API renders a simulated generation, its errors and its stream's end.

A surface sees the engine through two views, so that this module needs nothing of the engine's
own modules: `ConfigView` (the configuration and error shape every layer of the engine has) and
`EngineView` (the generation the engine runs, gateway/sim/generation.py).
"""

from __future__ import annotations

import time
from collections.abc import Coroutine
from typing import Any, Protocol

from gateway.core.asgi import Send
from gateway.sim.config import ERROR_SHAPES, SimConfig
from gateway.sim.errors import (
    ANTHROPIC_SHAPES,
    anthropic_error,
    error_body,
    shaped_error,
    shaped_error_event,
    vllm_validation_error,
)
from gateway.sim.jobs import Job, Record
from gateway.sim.messages import message_body, message_events
from gateway.sim.responses import response_error_event, response_events, response_object
from gateway.sim.wire import DONE, encode


class ConfigView(Protocol):
    """What a surface reads of any engine: the configuration and the imitated error shape."""

    config: SimConfig

    def error_shape(self) -> str: ...


class EngineView(ConfigView, Protocol):
    """What a surface asks of the engine that generates: chat answers, streams, the store."""

    def chat_whole(self, job: Job) -> bytes: ...

    def chat_events(self, job: Job) -> list[tuple[bytes, bool]]: ...

    async def stream_tokens(
        self, send: Send, record: Record, job: Job, delay: float
    ) -> bytes | None: ...

    async def stream_events(
        self, send: Send, record: Record, job: Job, delay: float, surface: Surface
    ) -> bytes | None: ...

    def keep_response(self, job: Job) -> None: ...


# -- surfaces: one generation, each API's dialect --


class Surface:
    """How one API renders a generation, its errors and its stream's end (chat: the default)."""

    tail = DONE
    shapes: tuple[str, ...] = ERROR_SHAPES

    def shape(self, engine: ConfigView) -> str:
        return engine.error_shape()

    def error(self, shape: str, status: int, message: str, code: str) -> bytes:
        return shaped_error(shape, status, message, code)

    def error_event(self, shape: str, status: int, message: str, code: str, number: int) -> bytes:
        return shaped_error_event(shape, status, message, code)

    def served(self, engine: ConfigView) -> bool:
        """Does the engine serve this API (else its paths are a 404, as on the engine it
        imitates)?"""
        return True

    def invalid(self, engine: ConfigView, message: str) -> bytes:
        return error_body(message, "invalid_request_error", "invalid_request")

    def early(self, engine: ConfigView) -> int:
        """How many of a stream's first events go out before its request is admitted."""
        return 0

    def whole(self, engine: EngineView, job: Job) -> bytes:
        return engine.chat_whole(job)

    def events(self, engine: EngineView, job: Job) -> list[tuple[bytes, bool]]:
        return engine.chat_events(job)

    def sent(self, engine: EngineView, job: Job) -> None:
        """Called once a stream's last event went out."""

    def stream(
        self, engine: EngineView, send: Send, record: Record, job: Job, delay: float
    ) -> Coroutine[Any, Any, bytes | None]:
        # Only a plain chat job has no turn; every other streams its surface's events.
        if job.turn is None:
            return engine.stream_tokens(send, record, job, delay)
        return engine.stream_events(send, record, job, delay, self)


class _Messages(Surface):
    tail = b""
    shapes = ANTHROPIC_SHAPES + ERROR_SHAPES

    def served(self, engine: ConfigView) -> bool:
        return engine.config.messages

    def shape(self, engine: ConfigView) -> str:
        return "anthropic-vllm" if engine.config.server_info == "vllm" else "anthropic"

    def error(self, shape: str, status: int, message: str, code: str) -> bytes:
        if shape in ANTHROPIC_SHAPES:
            return anthropic_error(shape, status, message)
        return shaped_error(shape, status, message, code)

    def error_event(self, shape: str, status: int, message: str, code: str, number: int) -> bytes:
        if shape in ANTHROPIC_SHAPES:
            return b"event: error\ndata: " + anthropic_error(shape, status, message) + b"\n\n"
        return shaped_error_event(shape, status, message, code)

    def invalid(self, engine: ConfigView, message: str) -> bytes:
        if engine.config.server_info == "vllm":
            return vllm_validation_error(engine.error_shape(), message)
        return anthropic_error("anthropic", 400, message)

    def whole(self, engine: EngineView, job: Job) -> bytes:
        return message_body(job, engine.config.server_info == "vllm")

    def events(self, engine: EngineView, job: Job) -> list[tuple[bytes, bool]]:
        return message_events(job, engine.config.server_info == "vllm")


class _Responses(Surface):
    tail = b""

    def served(self, engine: ConfigView) -> bool:
        return engine.config.responses

    def error_event(self, shape: str, status: int, message: str, code: str, number: int) -> bytes:
        return response_error_event(message, code, number)

    def invalid(self, engine: ConfigView, message: str) -> bytes:
        # vLLM's and SGLang's handlers answer /v1/responses in the nested envelope.
        if engine.config.server_info in ("vllm", "sglang"):
            return vllm_validation_error("vllm", message)
        return error_body(message, "invalid_request_error", "invalid_request")

    def early(self, engine: ConfigView) -> int:
        # vLLM yields response.created and .in_progress before it iterates the engine.
        return 2 if engine.config.server_info == "vllm" else 0

    def whole(self, engine: EngineView, job: Job) -> bytes:
        engine.keep_response(job)
        return encode(response_object(job, int(time.time()), done=True)).encode()

    def events(self, engine: EngineView, job: Job) -> list[tuple[bytes, bool]]:
        return response_events(job, int(time.time()), engine.config.server_info == "vllm")

    def sent(self, engine: EngineView, job: Job) -> None:
        engine.keep_response(job)


CHAT = Surface()

MESSAGES = _Messages()

RESPONSES = _Responses()
