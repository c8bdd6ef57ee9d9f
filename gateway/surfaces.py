"""The /v1 surfaces: each API dialect's path, errors and answers, over one admission path.

A surface parses its body and finds the model (making the output limits it names one, what its
allowance reserves: gateway/allowances.py); at the final dispatch boundary it makes a `Plan`
for the backend actually chosen: which path to call with which body, and how the backend's
answer becomes the client's (passed through as it is, or translated), whole or event by event,
with the token usage read on the way. The relay (gateway/relay.py) runs the plan.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

from gateway import media_urls, messages, responses, stored_state, wire_json
from gateway.allowances import one_output_limit
from gateway.errors import BadRequest, GatewayError
from gateway.mapping import apply_mapping
from gateway.scheduling_fields import refusal, refused_field
from gateway.usage import Usage, from_chat

if TYPE_CHECKING:
    from gateway.admission import Route
    from gateway.registry import Upstream
    from gateway.stored_state import RequestState

DONE_EVENT = b"data: [DONE]\n\n"
_USAGE_MARKS = (b'"usage":{', b'"usage": {')


dump = wire_json.dumps


def split_events(data: bytes) -> list[bytes]:
    """Whole SSE events (each without its blank line) from bytes that end on a boundary."""
    text = data.replace(b"\r\n", b"\n")
    return [event for event in text.split(b"\n\n") if event.strip()]


def event_data(event: bytes) -> bytes | None:
    """The data of one SSE event (its data lines joined), or None when it has none."""
    lines = [
        line[5:].removeprefix(b" ") for line in event.split(b"\n") if line.startswith(b"data:")
    ]
    return b"\n".join(lines) if lines else None


class Plan:
    """How one attempt talks to one backend and turns its answer into the client's.

    This one passes the answer through as the backend sent it; subclasses translate.
    """

    content_type: str | None = None  # None keeps the backend's

    def __init__(self, path: str, body: dict[str, Any]) -> None:
        self.path = path
        self.body = body
        self.usage: Usage | None = None

    def answer(self, data: bytes, parsed: Any) -> bytes:
        """A whole JSON answer (`parsed` is its decoded form): the bytes the client gets.

        Raises ValueError when it is not the answer this surface expects (a 502)."""
        return data

    def events(self, data: bytes) -> bytes:
        """Whole events of an event stream (ending on a boundary): the bytes the client gets.

        Raises ValueError for events this surface cannot pass on (the stream then fails)."""
        return data

    def complete(self, sent: bytes) -> bool:
        """Whether the client's stream has ended, `sent` being the last bytes it got: after
        `data: [DONE]` nothing the backend does (or fails to do) is the client's business."""
        return sent.rstrip().endswith(b"data: [DONE]")

    def end(self) -> bytes:
        """The backend ended its stream cleanly: anything still to send."""
        return b""

    def fail(self, error: GatewayError) -> bytes:
        """The backend failed mid-stream: the final event(s) that say so (on a boundary)."""
        return b"data: " + error.body() + b"\n\n" + DONE_EVENT


class ChatPlan(Plan):
    """Chat and text completions and embeddings, passed through; usage read as it passes.

    A stream only reports usage when asked (`stream_options.include_usage`): the plan asks for
    it when the client did not, and then keeps the extra usage-only chunk from the client.
    """

    def __init__(self, path: str, body: dict[str, Any]) -> None:
        super().__init__(path, body)
        self.hide_usage_chunk = False
        if body.get("stream") is True and path != "/v1/embeddings":
            options = body.get("stream_options")
            if not (isinstance(options, dict) and options.get("include_usage") is True):
                body["stream_options"] = {
                    **(options if isinstance(options, dict) else {}),
                    "include_usage": True,
                }
                self.hide_usage_chunk = True

    def answer(self, data: bytes, parsed: Any) -> bytes:
        if isinstance(parsed, dict):
            self.usage = from_chat(parsed.get("usage")) or self.usage
        return data

    def events(self, data: bytes) -> bytes:
        # A data line right after another line of the same event (not after a blank line) means
        # an event of several data lines: two counts tell, and only then is the event read.
        if data.count(b"\ndata:") != data.count(b"\n\ndata:"):
            _check_data_lines(data)
        # The common chunk carries no usage: a bytes search, no JSON.
        if not any(mark in data for mark in _USAGE_MARKS):
            return data
        kept: list[bytes] = []
        for event in split_events(data):
            payload = event_data(event)
            chunk = _json(payload) if payload and any(m in payload for m in _USAGE_MARKS) else None
            if isinstance(chunk, dict):
                usage = from_chat(chunk.get("usage"))
                if usage is not None:
                    self.usage = usage
                    if self.hide_usage_chunk and chunk.get("choices") == []:
                        continue  # we asked for it, the client did not
            kept.append(event + b"\n\n")
        return b"".join(kept)


def _check_data_lines(data: bytes) -> None:
    """Raise ValueError for an event whose data lines do not join into one JSON document.

    SSE joins an event's data lines with newlines, so JSON spread over several lines is still
    one chunk; an event that ran into the next (its blank line lost) is two, and no client can
    read it.
    """
    for event in split_events(data):
        payload = event_data(event)
        if payload is None or b"\n" not in payload or payload == b"[DONE]":
            continue
        try:
            wire_json.loads(payload)
        except (ValueError, RecursionError):
            raise ValueError("an event whose data lines are not one JSON document") from None


def _json(data: bytes) -> Any:
    try:
        return wire_json.loads(data)
    except (ValueError, RecursionError):
        return None


class Surface:
    """One API dialect under /v1: chat completions and friends pass through as they are."""

    keeps_state = False  # whether its requests may refer to state a backend keeps

    def __init__(self, name: str, path: str, kind: str) -> None:
        self.name = name  # the activity record's word for it
        self.path = path  # the client's path, and the backend's when served natively
        self.kind = kind  # the pool kind that serves it: chat or embedding

    def parse(self, body: dict[str, Any], *, media: str) -> str:
        """Check the body before admission, its output limits made one; returns the model it
        asks for. `media`: the gateway.media_urls setting (which media URLs engines may be
        given to fetch)."""
        model = body.get("model")
        if not isinstance(model, str) or not model:
            raise BadRequest("'model' is required and must be a string.", param="model")
        refused = refused_field(body)
        if refused is not None:
            raise BadRequest(f"'{refused}' is {refusal(refused)}", param=refused)
        found = media_urls.in_chat(body, embedding=self.kind == "embedding")
        media_urls.refuse_inside(found, media)
        if self.kind == "chat":
            one_output_limit(body)
        return model

    def api_key(self, headers: dict[bytes, bytes]) -> bytes | None:
        """A key sent the surface's own way when there is no Authorization header."""
        return None

    def check_route(self, body: dict[str, Any], route: Route, upstreams: dict[str, Any]) -> None:
        """Refuse, before it waits, a request no backend of its route could serve."""

    async def admit_state(
        self, body: dict[str, Any], route: Route, upstreams: dict[str, Any], state: RequestState
    ) -> frozenset[str]:
        """For a surface that `keeps_state`: the backends the request may not run on."""
        return frozenset()

    def plan(
        self,
        client_body: dict[str, Any],
        upstream: Upstream,
        *,
        model: str,
        cls: int,
        state: RequestState | None = None,
    ) -> Plan:
        """The final dispatch boundary: a fresh body for the backend actually chosen."""
        # A fresh copy per attempt, so a retry never inherits another backend's model id or
        # priority field.
        body = dict(client_body)
        body["model"] = model
        apply_mapping(body, upstream.mapping, cls)
        return ChatPlan(self.path, body)

    def error(self, err: GatewayError) -> tuple[int, list[tuple[bytes, bytes]], bytes]:
        """The client's answer to a refusal: status, headers and body in this surface's shape."""
        return err.status, err.headers(), err.body()


CHAT = Surface("chat", "/v1/chat/completions", "chat")
COMPLETIONS = Surface("completions", "/v1/completions", "chat")
EMBEDDINGS = Surface("embeddings", "/v1/embeddings", "embedding")

SURFACES: dict[str, Surface] = {s.path: s for s in (CHAT, COMPLETIONS, EMBEDDINGS)}


# ----- the Anthropic Messages surface ----------------------------------------------------------


class _NativePlan(Plan):
    """A surface passed through to a backend that serves it natively: the answer and its events
    go on unchanged, the usage read from them as they pass (`api`: its module's readers)."""

    api: Any  # gateway.messages or gateway.responses: usage_of_answer, NativeUsage

    def __init__(self, path: str, body: dict[str, Any]) -> None:
        super().__init__(path, body)
        self._native = self.api.NativeUsage()

    def answer(self, data: bytes, parsed: Any) -> bytes:
        self.usage = self.api.usage_of_answer(parsed)
        return data

    def events(self, data: bytes) -> bytes:
        if b'"usage"' in data:
            self._native.feed_sse(data)
            self.usage = self._native.usage
        return data


class MessagesPlan(_NativePlan):
    """/v1/messages to a backend that serves it: passed through, usage read as it passes."""

    api = messages

    def __init__(self, body: dict[str, Any]) -> None:
        super().__init__("/v1/messages", body)

    def fail(self, error: GatewayError) -> bytes:
        return messages.error_event(messages.error_type(error.status), error.message)


class MessagesFromChat(Plan):
    """/v1/messages translated: chat completions asked of the backend, its answer turned back
    into a message, event by event as it streams (never buffered)."""

    def __init__(self, chat: dict[str, Any], options: dict[str, Any]) -> None:
        super().__init__("/v1/chat/completions", chat)
        self.options = options
        self.stream = messages.StreamTranslator(**options)

    def answer(self, data: bytes, parsed: Any) -> bytes:
        message = messages.from_chat(parsed, **self.options)  # ValueError: the engine's fault
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
        return self.stream.fail(messages.error_type(error.status), error.message)


class MessagesSurface(Surface):
    """Anthropic's Messages API, for Claude Code and the anthropic SDK."""

    def parse(self, body: dict[str, Any], *, media: str) -> str:
        try:
            messages.validate(body)
        except messages.MessagesError as err:
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
            chat = messages.to_chat(client_body)
        except messages.MessagesError as err:
            raise BadRequest(err.message) from None
        chat["model"] = model
        apply_mapping(chat, upstream.mapping, cls)
        return MessagesFromChat(chat, messages.reply_options(client_body))

    def error(self, err: GatewayError) -> tuple[int, list[tuple[bytes, bytes]], bytes]:
        # Anthropic's clients back off and retry on 529: every "not now" is one here.
        status = 529 if err.status == 503 else err.status
        return status, err.headers(), messages.error_body(messages.error_type(status), err.message)


MESSAGES = MessagesSurface("messages", "/v1/messages", "chat")
SURFACES[MESSAGES.path] = MESSAGES


# ----- the OpenAI Responses surface -----------------------------------------------------------


class ResponsesPlan(_NativePlan):
    """/v1/responses to a backend that serves it: passed through, usage read as it passes.

    On a backend that keeps Responses state (`state` given), every id its answer creates is
    claimed for the caller as it passes (gateway/stored_state.py).
    """

    api = responses

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
        self.stream = responses.StreamTranslator(model=request["model"], request=request)

    def answer(self, data: bytes, parsed: Any) -> bytes:
        answer = responses.from_chat(parsed, model=self.request["model"], request=self.request)
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
        responses.validate(body)  # its errors are BadRequests, in this surface's envelope
        media_urls.refuse_inside(media_urls.in_responses(body), media)
        one_output_limit(body)
        return str(body["model"])

    def check_route(self, body: dict[str, Any], route: Route, upstreams: dict[str, Any]) -> None:
        # State is kept only where an operator let a native backend keep it; refuse before
        # waiting for one.
        refusal = responses.state_error(body)
        if refusal is not None and not keeping(route, upstreams, usable=True):
            raise refusal

    async def admit_state(
        self, body: dict[str, Any], route: Route, upstreams: dict[str, Any], state: RequestState
    ) -> frozenset[str]:
        """The backends this request may not run on, for the stored state it refers to or
        asks for (gateway/stored_state.py); a reference that is not the caller's is a 404."""
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
            refusal = responses.state_error(body)
            if refusal is not None:
                raise refusal
            body["store"] = False  # an engine's default may be to keep it, for anyone to read
            return ResponsesPlan(body)
        chat = responses.to_chat(client_body)  # refuses state it cannot keep, and says why
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
SURFACES[RESPONSES.path] = RESPONSES
