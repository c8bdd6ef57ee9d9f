"""The Responses dialect: its plan for a native backend and for a chat one."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

from gateway.core.errors import GatewayError
from gateway.core.output_limits import one_output_limit
from gateway.core.usage import from_chat
from gateway.dialects import media_urls, stored_state
from gateway.dialects.openai.dialect import Surface
from gateway.dialects.plan import Plan, _json, _NativePlan, dump, event_data, split_events
from gateway.dialects.responses import from_chat as responses_from_chat
from gateway.dialects.responses import native, to_chat, validate
from gateway.dialects.responses import stream as responses_stream
from gateway.engines.priority_forwarding import apply_mapping

if TYPE_CHECKING:
    from gateway.admission.types import Route
    from gateway.dialects.stored_state import RequestState
    from gateway.runtime.registry import Upstream


# ----- the OpenAI Responses surface -----------------------------------------------------------


class ResponsesPlan(_NativePlan):
    """/v1/responses to a backend that serves it: passed through, usage read as it passes.

    On a backend that keeps Responses state (`state` given), every id its answer creates is
    claimed for the caller as it passes (gateway/dialects/stored_state.py).
    """

    api = native

    def __init__(
        self, body: dict[str, Any], state: RequestState | None = None, backend: str = ""
    ) -> None:
        super().__init__("/v1/responses", body)
        self.state = state
        self.backend = backend

    def answer(self, data: bytes, parsed: Any) -> bytes:
        if self.state is not None:
            self.state.created(stored_state.created_ids(parsed), self.backend)
        return super().answer(data, parsed)

    def events(self, data: bytes) -> bytes:
        if self.state is not None and _RESPONSE_EVENT(data) is not None:
            for event in split_events(data):
                payload = event_data(event)
                if payload is None or _RESPONSE_EVENT(payload) is None:
                    continue
                parsed = _json(payload)
                if isinstance(parsed, dict):
                    ids = stored_state.created_ids(parsed.get("response"))
                    self.state.created(ids, self.backend)
        return super().events(data)

    def fail(self, error: GatewayError) -> bytes:
        # The Responses stream's own error event (its `error` type).
        event = {"type": "error", "code": error.code, "message": error.message, "param": None}
        return b"event: error\ndata: " + dump(event) + b"\n\n"


class ResponsesFromChat(Plan):
    """/v1/responses translated: chat completions asked of the backend, its answer turned back
    into a response, event by event as it streams."""

    def __init__(self, chat: dict[str, Any], request: dict[str, Any]) -> None:
        super().__init__("/v1/chat/completions", chat)
        self.request = request
        self.stream = responses_stream.StreamTranslator(model=request["model"], request=request)

    def answer(self, data: bytes, parsed: Any) -> bytes:
        answer = responses_from_chat.from_chat(
            parsed, model=self.request["model"], request=self.request
        )
        self.usage = from_chat(parsed.get("usage"))
        return dump(answer)

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
        return self.stream.finish()

    def fail(self, error: GatewayError) -> bytes:
        return self.stream.fail(error.message)


class ResponsesSurface(Surface):
    """OpenAI's Responses API, for Codex CLI and the openai SDK's `client.responses`."""

    keeps_state = True

    def parse(self, body: dict[str, Any], *, media: str) -> str:
        validate.validate(body)  # its errors are BadRequests, in this surface's envelope
        media_urls.refuse_inside(media_urls.in_responses(body), media)
        one_output_limit(body)
        return str(body["model"])

    def check_route(self, body: dict[str, Any], route: Route, upstreams: dict[str, Any]) -> None:
        # State is kept only where an operator let a native backend keep it; refuse before
        # waiting for one.
        refusal = validate.state_error(body)
        if refusal is not None and not keeping(route, upstreams, usable=True):
            raise refusal

    async def admit_state(
        self, body: dict[str, Any], route: Route, upstreams: dict[str, Any], state: RequestState
    ) -> frozenset[str]:
        """The backends this request may not run on, for the stored state it refers to or
        asks for (gateway/dialects/stored_state.py); a reference not the caller's is a 404."""
        names = {t.slot.name for t in (*route.primary, *route.fallback)}
        return await stored_state.admit(body, names, keeping(route, upstreams), state)

    def plan(
        self,
        client_body: dict[str, Any],
        upstream: Upstream,
        *,
        model: str,
        cls: int,
        state: RequestState | None = None,
    ) -> Plan:
        if upstream.native("responses"):
            body = dict(client_body)
            body["model"] = model
            apply_mapping(body, upstream.mapping, cls)
            if upstream.keeps_responses:
                return ResponsesPlan(body, state, upstream.name)
            refusal = validate.state_error(body)
            if refusal is not None:
                raise refusal
            body["store"] = False  # an engine's default may be to keep it, for anyone to read
            return ResponsesPlan(body)
        chat = to_chat.to_chat(client_body)  # refuses state it cannot keep, and says why
        chat["model"] = model
        apply_mapping(chat, upstream.mapping, cls)
        return ResponsesFromChat(chat, client_body)


def keeping(route: Route, upstreams: dict[str, Any], *, usable: bool = False) -> frozenset[str]:
    """The backends of a route that keep Responses state (only those up, with `usable`)."""
    targets = route.usable_targets() if usable else (*route.primary, *route.fallback)
    return frozenset(
        t.slot.name
        for t in targets
        if (up := upstreams.get(t.slot.name)) is not None and up.keeps_responses
    )


# The events whose `response` names the ids a stored response creates: the first and the last.
_RESPONSE_EVENT = re.compile(rb'"response\.(?:created|completed|incomplete|failed)"').search

RESPONSES = ResponsesSurface("responses", "/v1/responses", "chat")
