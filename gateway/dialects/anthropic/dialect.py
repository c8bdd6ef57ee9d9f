"""The Messages dialect: its plan for a native backend and for a chat one."""

from __future__ import annotations

from typing import Any

from gateway.core import answers
from gateway.core.errors import BadRequest, GatewayError
from gateway.core.output_limits import one_output_limit
from gateway.core.usage import from_chat
from gateway.dialects import media_urls
from gateway.dialects.anthropic import errors, native, to_chat, validate
from gateway.dialects.anthropic import from_chat as anthropic_from_chat
from gateway.dialects.anthropic import stream as anthropic_stream
from gateway.dialects.openai.dialect import Surface
from gateway.dialects.plan import (
    Backend,
    NativePlan,
    Plan,
    TranslatedPlan,
    dump,
)
from gateway.dialects.stored_state import RequestState


class MessagesPlan(NativePlan):
    """/v1/messages to a backend that serves it: passed through, usage read as it passes."""

    api = native

    def __init__(self, body: dict[str, Any]) -> None:
        super().__init__("/v1/messages", body)

    def fail(self, error: GatewayError) -> bytes:
        return errors.error_event(answers.error_type(error.status), error.message)


class MessagesFromChat(TranslatedPlan):
    """/v1/messages translated: chat completions asked of the backend, its answer turned back
    into a message, event by event as it streams (never buffered)."""

    stream: anthropic_stream.StreamTranslator

    def __init__(self, chat: dict[str, Any], options: dict[str, Any]) -> None:
        super().__init__(chat)
        self.options = options
        self.stream = anthropic_stream.StreamTranslator(**options)

    def answer(self, data: bytes, parsed: Any) -> bytes:
        message = anthropic_from_chat.from_chat(
            parsed, **self.options
        )  # ValueError: the engine's fault
        self.usage = from_chat(parsed.get("usage"))
        return dump(message)

    def fail(self, error: GatewayError) -> bytes:
        return self.stream.fail(answers.error_type(error.status), error.message)


class MessagesSurface(Surface):
    """Anthropic's Messages API, for Claude Code and the anthropic SDK."""

    def parse(self, body: dict[str, Any], *, media: str) -> str:
        try:
            validate.validate(body)
        except errors.MessagesError as err:
            raise BadRequest(err.message) from None
        media_urls.refuse_inside(media_urls.in_messages(body), media)
        one_output_limit(body)
        return str(body["model"])

    def api_key(self, headers: dict[bytes, bytes]) -> bytes | None:
        return headers.get(b"x-api-key")

    def plan(
        self,
        client_body: dict[str, Any],
        upstream: Backend,
        *,
        model: str,
        cls: int,
        state: RequestState | None = None,
    ) -> Plan:
        if upstream.native("messages"):
            body = dict(client_body)
            upstream.prepare(body, model=model, cls=cls)
            return MessagesPlan(body)
        try:
            chat = to_chat.to_chat(client_body)
        except errors.MessagesError as err:
            raise BadRequest(err.message) from None
        upstream.prepare(chat, model=model, cls=cls)
        return MessagesFromChat(chat, to_chat.reply_options(client_body))

    def error(self, err: GatewayError) -> tuple[int, list[tuple[bytes, bytes]], bytes]:
        status = answers.anthropic_status(err.status)
        return status, err.headers(), errors.error_body(answers.error_type(status), err.message)


MESSAGES = MessagesSurface("messages", "/v1/messages", "chat")
