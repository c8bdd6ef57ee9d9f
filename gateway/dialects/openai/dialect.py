"""Chat completions, completions and embeddings passed through, usage read on the way."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from gateway.core import wire_json
from gateway.core.errors import BadRequest, GatewayError
from gateway.core.output_limits import one_output_limit
from gateway.core.scheduling_fields import refusal, refused_field
from gateway.core.usage import Usage, from_chat
from gateway.dialects import media_urls
from gateway.dialects.plan import Backend, Plan, decoded, event_data, split_events
from gateway.dialects.stored_state import RequestState

_USAGE_MARKS = (b'"usage":{', b'"usage": {')


class ChatPlan(Plan):
    """Chat and text completions and embeddings, passed through; usage read as it passes.

    A stream only reports usage when asked (`stream_options.include_usage`): the plan asks for
    it when the client did not, and then keeps the extra usage-only chunk from the client. An
    engine may ignore the option (llama-cpp-python's server does): then a client that asked
    still gets its usage chunk before [DONE], the gateway's estimate (`Plan.estimate`), as
    OpenAI promises one to whoever asks and token accounting downstream waits for it.
    """

    counts_output = True

    def __init__(self, path: str, body: dict[str, Any]) -> None:
        super().__init__(path, body)
        self.hide_usage_chunk = False
        self.owes_usage = False  # the client asked for the usage chunk and has not had it
        self._first = b""  # the stream's first events: the usage chunk repeats their id
        if body.get("stream") is True and path != "/v1/embeddings":
            options = body.get("stream_options")
            if not (isinstance(options, dict) and options.get("include_usage") is True):
                body["stream_options"] = {
                    **(options if isinstance(options, dict) else {}),
                    "include_usage": True,
                }
                self.hide_usage_chunk = True
            else:
                self.owes_usage = True

    def answer(self, data: bytes, parsed: Any) -> bytes:
        if isinstance(parsed, dict):
            self.usage = from_chat(parsed.get("usage")) or self.usage
        return data

    def events(self, data: bytes) -> bytes:
        # A data line right after another line of the same event (not after a blank line) means
        # an event of several data lines: two counts tell, and only then is the event read.
        if data.count(b"\ndata:") != data.count(b"\n\ndata:"):
            _check_data_lines(data)
        self.count(data)
        if self.owes_usage and not self._first:
            self._first = data
        # The common chunk carries no usage: a bytes search, no JSON.
        if any(mark in data for mark in _USAGE_MARKS):
            data = self._read_usage(data)
        if self.owes_usage and b"[DONE]" in data:
            data = self._usage_before_done(data)
        return data

    def end(self) -> bytes:
        if not self.owes_usage or not self._first:
            return b""
        # An engine that ended without [DONE]: the usage chunk is still the last.
        self.owes_usage = False
        return self._usage_chunk()

    def _read_usage(self, data: bytes) -> bytes:
        kept: list[bytes] = []
        for event in split_events(data):
            payload = event_data(event)
            chunk = (
                decoded(payload) if payload and any(m in payload for m in _USAGE_MARKS) else None
            )
            if isinstance(chunk, dict):
                usage = from_chat(chunk.get("usage"))
                if usage is not None:
                    self.usage = usage
                    self.owes_usage = False
                    if self.hide_usage_chunk and chunk.get("choices") == []:
                        continue  # we asked for it, the client did not
            kept.append(event + b"\n\n")
        return b"".join(kept)

    def _usage_before_done(self, data: bytes) -> bytes:
        """The usage chunk the client asked for, which the engine never sent, before [DONE]."""
        events = split_events(data)
        done = next((i for i, e in enumerate(events) if _is_done(e)), None)
        if done is None:
            return data  # "[DONE]" in a chunk's text
        self.owes_usage = False
        head = b"".join(e + b"\n\n" for e in events[:done])
        tail = b"".join(e + b"\n\n" for e in events[done:])
        return head + self._usage_chunk() + tail

    def _usage_chunk(self) -> bytes:
        """A usage-only chunk as OpenAI sends it (no choices), with the gateway's estimate and
        the id, model and creation time of the stream's first chunk."""
        usage = self.estimate() or Usage()  # a chat plan counts what it relays: never None
        first: Any = None
        for event in split_events(self._first):
            payload = event_data(event)
            first = decoded(payload) if payload else None
            if isinstance(first, dict):
                break
        first = first if isinstance(first, dict) else {}
        chunk = {
            "id": first.get("id", ""),
            "object": first.get("object", "chat.completion.chunk"),
            "created": first.get("created", 0),
            "model": first.get("model", ""),
            "choices": [],
            "usage": {
                "prompt_tokens": usage.input,
                "completion_tokens": usage.output,
                "total_tokens": usage.input + usage.output,
            },
        }
        return b"data: " + wire_json.dumps(chunk) + b"\n\n"


def _is_done(event: bytes) -> bool:
    payload = event_data(event)
    return payload is not None and payload.strip() == b"[DONE]"


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

    def check_route(
        self, body: dict[str, Any], keeping_usable: Callable[[], frozenset[str]]
    ) -> None:
        """For a surface that `keeps_state`: refuse, before it waits, a request no backend of
        its route could serve. `keeping_usable`: the route's backends up that keep state (asked
        only when it matters)."""

    async def admit_state(
        self,
        body: dict[str, Any],
        names: frozenset[str],
        keeping: frozenset[str],
        state: RequestState,
    ) -> frozenset[str]:
        """For a surface that `keeps_state`: the backends the request may not run on, of its
        route's backends (`names`), `keeping` those of them that keep state."""
        return frozenset()

    def plan(
        self,
        client_body: dict[str, Any],
        upstream: Backend,
        *,
        model: str,
        cls: int,
        state: RequestState | None = None,
    ) -> Plan:
        """The final dispatch boundary: a fresh body for the backend actually chosen."""
        # A fresh copy per attempt, so a retry never inherits another backend's model id or
        # priority field.
        body = dict(client_body)
        upstream.prepare(body, model=model, cls=cls)
        return ChatPlan(self.path, body)

    def error(self, err: GatewayError) -> tuple[int, list[tuple[bytes, bytes]], bytes]:
        """The client's answer to a refusal: status, headers and body in this surface's shape."""
        return err.status, err.headers(), err.body()


CHAT = Surface("chat", "/v1/chat/completions", "chat")

COMPLETIONS = Surface("completions", "/v1/completions", "chat")

EMBEDDINGS = Surface("embeddings", "/v1/embeddings", "embedding")
