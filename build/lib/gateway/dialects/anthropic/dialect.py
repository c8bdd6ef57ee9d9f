"""The Messages dialect: its plan for a native backend and for a chat one."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from gateway.core import answers
from gateway.core.errors import BadRequest, GatewayError
from gateway.core.output_limits import one_output_limit
from gateway.core.usage import from_chat
from gateway.dialects import media_urls
from gateway.dialects.anthropic import errors, native, to_chat, validate
from gateway.dialects.anthropic import from_chat as anthropic_from_chat
from gateway.dialects.anthropic import stream as anthropic_stream
from gateway.dialects.openai.dialect import Surface
from gateway.dialects.plan import Plan, _json, _NativePlan, dump, event_data, split_events
from gateway.engines.priority_forwarding import apply_mapping

if TYPE_CHECKING:
    from gateway.dialects.stored_state import RequestState
    from gateway.runtime.registry import Upstream


class MessagesPlan(_NativePlan):
    """/v1/messages to a backend that serves it: passed through, usage read as it passes."""

    api = native

    def __init__(self, body: dict[str, Any]) -> None:
        super().__init__("/v1/messages", body)

    def fail(self, error: GatewayError) -> bytes:
        return errors.error_event(answers.error_type(error.status), error.message)


class MessagesFromChat(Plan):
    """/v1/messages translated: chat completions asked of the backend, its answer turned back
    into a message, event by event as it streams (never buffered)."""

    def __init__(self, chat: dict[str, Any], options: dict[str, Any]) -> None:
        super().__init__("/v1/chat/completions", chat)
        self.options = options
        self.stream = anthropic_stream.StreamTranslator(**options)

    def answer(self, data: bytes, parsed: Any) -> bytes:
        message = anthropic_from_chat.from_chat(
            parsed, **self.options
        )  # ValueError: the engine's fault
        self.usage = from_chat(parsed.get("usage"))
        return dump(message)

    def events(self, data: bytes) -> bytes:
        out = []
        stream = self.stream
        for event in split_events(data):
            payload = event_data(event)
            if payload is None:
                continue
            if payload.strip() == b"[DONE]":
                out.append(stream.finish())
            else:
                out.append(stream.feed(_json(payload)))
        self.usage = stream.usage
        return b"".join(out)

    def end(self) -> bytes:
        return self.stream.finish()  # an engine that ended without [DONE]; nothing if it did

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
        upstream: Upstream,
        *,
        model: str,
        cls: int,
        state: RequestState | None = None,
    ) -> Plan:
        if upstream.native("messages"):
            body = dict(client_body)
            body["model"] = model
            apply_mapping(body, upstream.mapping, cls)
            return MessagesPlan(body)
        try:
            chat = to_chat.to_chat(client_body)
        except errors.MessagesError as err:
            raise BadRequest(err.message) from None
        chat["model"] = model
        apply_mapping(chat, upstream.mapping, cls)
        return MessagesFromChat(chat, to_chat.reply_options(client_body))

    def error(self, err: GatewayError) -> tuple[int, list[tuple[bytes, bytes]], bytes]:
        # Anthropic's clients back off and retry on 529: every "not now" is one here.
        status = 529 if err.status == 503 else err.status
        return status, err.headers(), errors.error_body(answers.error_type(status), err.message)


MESSAGES = MessagesSurface("messages", "/v1/messages", "chat")
