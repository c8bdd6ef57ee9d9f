"""The relay: one dispatch to the backend chosen, its answer streamed back, its slot freed once.

The final dispatch boundary lives here (the surface's plan for the backend actually used: its
model id, its priority mapping, native or translated), then the answer is passed on as it comes:

- an event stream chunk by chunk, only ever up to an event boundary, so that a stream cut short
  can end with one well-formed error event and `data: [DONE]`, as vLLM and SGLang end theirs;
- a small body with a length whole, checked to be the JSON it claims to be;
- any other body chunk by chunk; cut short, the client's connection is dropped (`DropConnection`)
  so that it looks broken, never like a complete answer.

Failures before the client got a byte are `Retryable` (the caller may try another replica), with
the error the client gets when none is left. One watchdog per relay bounds the time to the first
byte, the idle time between chunks and a send to a client that stopped reading; the client
leaving cancels the relay at once. Every exit releases the slot in one place.

Nothing the engine says passes without gateway/core/redaction.py: its errors, the headers passed on
and its answer's bytes lose the backend's own key (an engine may quote it back).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import aiohttp
from aiohttp.client_exceptions import ClientPayloadError

from gateway.admission.types import Acquired
from gateway.allowances.counters import Ticket
from gateway.core import wire_json
from gateway.core.answers import MAX_ERROR_BODY, RETRY_STATUS, error_for_status, stream_error_status
from gateway.core.asgi import Send
from gateway.core.classes import CLASS_NAMES
from gateway.core.errors import (
    BadRequest,
    GatewayError,
    ShuttingDown,
    UpstreamError,
    UpstreamTimeout,
)
from gateway.core.outcomes import Outcome
from gateway.core.redaction import scrub_answer, scrub_header
from gateway.dataplane.wait_budget import queue_wait_header
from gateway.dataplane.watchdog import Watchdog
from gateway.dialects.openai.dialect import Surface
from gateway.dialects.plan import Plan, dump, event_data, split_events
from gateway.dialects.stored_state import RequestState
from gateway.observability.records import Entry
from gateway.runtime.registry import Upstream
from gateway.runtime.settings import Timeouts
from gateway.runtime.upstream import CLOSING, USED, Closing, close_used, wait_closed

log = logging.getLogger("aiplane.gateway")

BUFFERED_BODY = 1 << 20  # a non-stream answer up to this size (with a length) is read whole

MAX_PENDING_EVENT = 1 << 20  # an event longer than this is passed on without waiting for its end

LARGE_BODY = 1 << 20  # request bodies this big are serialized off the event loop

PASSED_RESPONSE_HEADERS = frozenset(
    {b"content-type", b"content-encoding", b"cache-control", b"retry-after"}
)

CLASS_BYTES = tuple(name.encode() for name in CLASS_NAMES)

_UPSTREAM_FAULTS = (aiohttp.ClientError, OSError, TimeoutError)

# Failures of a post whose request never left: no connection was made.
_NEVER_SENT = (aiohttp.ClientConnectorError, aiohttp.ConnectionTimeoutError)


class Retryable(Exception):
    """The backend failed before the client got a byte: another replica may take the request.

    `error` is what the client gets when no other replica can.
    """

    def __init__(self, reason: str, error: GatewayError) -> None:
        super().__init__(reason)
        self.error = error


class Preempted(Exception):
    """A higher class took this request's slot while it was in prefill: it waits again, at the
    head of its class, and its client has seen nothing."""


class DropConnection(Exception):
    """Raised out of the ASGI app so that the server drops the client's connection: an answer
    cut short must look broken (an empty final body would end it normally, FACTS.md), and a
    client that stopped reading must not keep its connection."""


# Why a relay was cut short by its watchdog, its client, the process stopping, or a higher class.
_CLIENT_LEFT, _CLIENT_STALLED, _NO_FIRST_BYTE, _UPSTREAM_IDLE, _SHUTDOWN, _PREEMPTED = range(6)

# What a client hears when the process stopped before its answer started, or in its midst.
NOT_STARTED = "This gateway process is shutting down; send the request again."
CUT_SHORT = "The gateway process shut down before the answer ended."


class Relay:
    """One attempt at one backend. `run()` returns when the answer was passed on (or the client
    left), raises `Retryable`, a `GatewayError` before the answer started, or `DropConnection`."""

    __slots__ = (
        "_abort", "_last", "_loop", "_mark", "_pending", "_reached", "_sending", "_task",
        "_watchdog", "acquired", "active", "body_kind", "chunks", "dispatched", "extra_headers",
        "gone", "plan", "preemptible", "record", "send", "session", "started", "state", "ticket",
        "timeouts", "upstream",
    )  # fmt: skip

    def __init__(
        self,
        session: aiohttp.ClientSession,
        upstream: Upstream,
        acquired: Acquired,
        *,
        send: Send,
        gone: asyncio.Future[Any],
        record: Entry,
        timeouts: Timeouts,
        extra_headers: list[tuple[bytes, bytes]] | None = None,
        ticket: Ticket | None = None,
        state: RequestState | None = None,
        preemptible: bool = False,
    ) -> None:
        self.session = session
        # May a higher class cut it while it is in prefill (gateway/dataplane/preemption.py)?
        # Only a stream: its first event ends the prefill; a whole answer's end is its first byte.
        self.preemptible = preemptible
        self.dispatched = 0.0  # loop time it was sent to the engine
        self.state = state  # stored Responses state: where it must run, what it claims
        self.extra_headers = extra_headers  # the caller's remaining allowance, when limited
        self.ticket = ticket  # its hold on that allowance: told when the request reached an engine
        self._reached = False
        self.upstream = upstream
        self.acquired = acquired
        self.send = send
        self.gone = gone
        self.record = record
        self.timeouts = timeouts
        self.started = False  # the client's answer has begun (its status line is gone)
        self.active = False
        self.body_kind = ""
        self.chunks = 0  # passed to the client, for a learned capacity's time per chunk
        self.plan: Plan = Plan("", {})  # the surface's, made at the final dispatch boundary
        self._abort: int | None = None
        self._task: asyncio.Task[Any] | None = None
        self._loop = asyncio.get_running_loop()
        self._watchdog: Watchdog | None = None
        self._mark = 0.0  # loop time of the last progress (request sent, chunk in, chunk out)
        self._sending = False  # a send to the client is in progress
        self._pending = b""  # the start of an event not yet complete
        self._last = b""  # the last bytes sent, to know whether an event boundary follows

    async def run(
        self, surface: Surface, client_body: dict[str, Any], *, large: bool = False
    ) -> None:
        closing: Closing = []
        CLOSING.set(closing)
        used: list[Any] = []
        USED.set(used)
        clean = False
        try:
            if self.gone.done():
                self._mark_cancelled()
                return
            state = self.state
            if state is not None and state.pinned not in (None, self.upstream.name):
                # The state it refers to is on another backend (a topology change moved it).
                raise self._retryable("does not hold the stored state the request refers to")
            self.plan = surface.plan(
                client_body,
                self.upstream,
                model=self.acquired.model,
                cls=self.acquired.waiter.cls,
                state=state,
            )
            payload = await self._payload(self.plan.body, large)
            self.plan.sent = len(payload)
            await self._relay(payload, self.plan.path)
            clean = self._abort is None
        finally:
            self.active = False
            if self._watchdog is not None:
                self._watchdog.forget(self)
            self.gone.remove_done_callback(self._client_left)
            try:
                if not clean and used:
                    close_used(used)
                if closing:
                    await wait_closed(closing)
            finally:
                self.acquired.release()
            usage = self.plan.usage
            if usage is None and self.started and self.body_kind == "events":
                usage = self.plan.estimate()  # streamed, never reported: what it relayed
            if usage is not None:
                record = self.record
                record.input_tokens, record.output_tokens = usage.input, usage.output
                record.cached_tokens = usage.cached
                record.usage_estimated = self.plan.estimated

    # ----- the final dispatch boundary ------------------------------------------------------

    async def _payload(self, body: dict[str, Any], large: bool) -> bytes:
        try:
            if large:
                loop = asyncio.get_running_loop()
                return await loop.run_in_executor(None, dump, body)  # type: ignore[no-any-return]
            return dump(body)
        except RecursionError:
            # It decoded at a shallower stack; re-encoding here may still run out of it.
            raise BadRequest("The request body is nested too deeply.") from None

    # ----- the exchange ---------------------------------------------------------------------

    async def _relay(self, payload: bytes, path: str) -> None:
        self.record.backend = self.upstream.name
        task = asyncio.current_task()
        if task is None:  # pragma: no cover - ASGI servers always run us in a task
            raise RuntimeError("the gateway must run inside an asyncio task")
        self._task = task
        self.active = True
        self.gone.add_done_callback(self._client_left)
        self._mark = self.dispatched = self._loop.time()
        self._watchdog = Watchdog.of(self._loop)
        self._watchdog.watch(self)
        resp: aiohttp.ClientResponse | None = None
        try:
            resp = await self._post(payload, path)
            self.record.status = resp.status
            if not 200 <= resp.status < 300:
                await self._refused(resp)
            content_type = resp.headers.get("content-type", "")
            self.body_kind = kind = _kind_of(resp, content_type)
            await _BODIES[kind](self, resp, content_type)
        except asyncio.CancelledError:
            reason = self._abort
            if reason is None:
                raise  # the server is stopping: not ours to handle
            task.uncancel()
            await self._on_cancel(reason, resp)
        except _UPSTREAM_FAULTS as err:
            if not self.started:
                raise self._retryable(f"{type(err).__name__} before answering") from None
            await self._broken(resp, f"failed mid-answer ({type(err).__name__})")
        finally:
            self.active = False
            if resp is not None:
                # close() drops the connection when the body was not read to its end, which is
                # how the engine learns that the client left mid-stream.
                resp.close()

    async def _post(self, payload: bytes, path: str) -> aiohttp.ClientResponse:
        """The request sent to the engine: its answer's head, or `Retryable` when none came."""
        # The engine has it from here on (a client leaving while it is sent included), and
        # may prefill it: charged its prompt unless it never arrived or was refused.
        self._reach(True)
        up = self.upstream
        try:
            return await self.session.post(
                up.url(path),
                data=payload,
                headers=up.headers,
                allow_redirects=False,
                timeout=self.timeouts.client,
            )
        except _UPSTREAM_FAULTS as err:
            if isinstance(err, _NEVER_SENT):
                self._reach(False)
            raise self._retryable(f"{type(err).__name__} before answering") from None

    async def _on_cancel(self, reason: int, resp: aiohttp.ClientResponse | None) -> None:
        """The watchdog or the client cut the relay short: note why, and end a started answer
        so that it looks broken (not when the client left: there is nobody to tell)."""
        self._aborted(reason)
        if not self.started or reason in (_CLIENT_LEFT,):
            return
        if reason == _SHUTDOWN:
            await self._broken(resp, "", failure=ShuttingDown(CUT_SHORT))
            return
        await self._broken(resp, "stopped sending within the idle timeout")

    def _reach(self, reached: bool) -> None:
        """Tell the ticket whether this attempt reached an engine that runs it (once each)."""
        ticket = self.ticket
        if ticket is not None and reached != self._reached:
            self._reached = reached
            ticket.reached += 1 if reached else -1

    async def _refused(self, resp: aiohttp.ClientResponse) -> None:
        """An engine's non-2xx answer: retry elsewhere (502/503/504) or the client's error."""
        self._reach(False)  # a refusal: it did not run the request
        status = resp.status
        try:
            body = await resp.content.read(MAX_ERROR_BODY)
        except _UPSTREAM_FAULTS:
            body = b""
        error = error_for_status(
            status,
            body,
            content_type=resp.headers.get("content-type", ""),
            retry_after=resp.headers.get("retry-after"),
            backend=self.upstream.name,
            secrets=self.upstream.secrets,
        )
        if status in RETRY_STATUS:
            raise Retryable(f"{self.upstream.name} answered {status}", error)
        log.info("backend %s answered %s: %s", self.upstream.name, status, error.message)
        raise error

    async def _buffered(self, resp: aiohttp.ClientResponse, content_type: str) -> None:
        """A small body with a length, read whole and checked to be the JSON it claims."""
        data = scrub_answer(await resp.read(), self.upstream.secrets)
        parsed: Any = None
        try:
            if "json" in content_type:
                parsed = wire_json.loads(data)
            data = self.plan.answer(data, parsed)
        except (ValueError, RecursionError):
            raise UpstreamError(
                f"The model server {self.upstream.name} answered with invalid JSON."
            ) from None
        if self.state is not None and self.state.pending:
            await self.state.settle()  # the ids it created are the caller's before it sees them
        headers = self._headers(resp)
        headers.append((b"content-length", str(len(data)).encode()))
        await self._start(resp, headers)
        await self.send({"type": "http.response.body", "body": data})

    async def _stream(self, resp: aiohttp.ClientResponse, content_type: str) -> None:
        """Any other body, chunk by chunk."""
        # The first bytes come before the status line goes: a backend that dies before sending
        # any can still be retried elsewhere, and status line and first token leave together.
        chunks = resp.content.iter_any().__aiter__()
        first = await anext(chunks, b"")
        if not first:
            raise self._retryable("ended its answer before its first byte")
        await self._start(resp, self._headers(resp))
        needle = self.upstream.secrets.needle
        if not needle:
            await self._pass(first)
            async for chunk in chunks:
                await self._pass(chunk)
        else:
            # Chunks split anywhere, a key too: the bytes that could start one wait for the next.
            keep, held = len(needle) - 1, b""
            async for chunk in _chained(first, chunks):
                data = scrub_answer(held + chunk, self.upstream.secrets)
                cut = max(0, len(data) - keep)
                data, held = data[:cut], data[cut:]
                if data:
                    await self._pass(data)
            if held:
                await self._pass(held)
        await self.send({"type": "http.response.body", "body": b""})

    async def _events(self, resp: aiohttp.ClientResponse, content_type: str) -> None:
        """An event stream, whole events at a time."""
        chunks = resp.content.iter_any().__aiter__()
        first = await anext(chunks, b"")
        # The first whole event decides: an engine that refuses a stream (SGLang's full queue)
        # answers 200 and one error event; that is its refusal, not the client's answer.
        while first and not _has_boundary(first) and len(first) <= MAX_PENDING_EVENT:
            more = await anext(chunks, b"")
            if not more:
                break
            first += more
        if not first:
            # Not one event (a 204, a stream closed at once): no answer; another replica may.
            raise self._retryable("ended its event stream before any event")
        if b'"error"' in first[:MAX_ERROR_BODY]:
            self._refused_in_stream(first)
        await self._start(resp, self._headers(resp))
        await self._event_bytes(first)
        async for chunk in chunks:
            await self._event_bytes(chunk)
        tail = b""
        if self._pending:
            # The engine ended mid-event but cleanly: its bytes, as it sent them.
            tail, self._pending = self._planned(self._clean(self._pending)), b""
        tail += self.plan.end()
        if tail:
            await self._pass(tail)
        await self.send({"type": "http.response.body", "body": b""})

    def _refused_in_stream(self, first: bytes) -> None:
        """Raise the engine's refusal when the stream's first event is an error, and only then."""
        events = split_events(first)
        data = event_data(events[0]) if events else None
        try:
            event = wire_json.loads(data) if data else None
        except (ValueError, RecursionError):
            return
        if not isinstance(event, dict) or "choices" in event:
            return
        error = event.get("error")
        if error is None and event.get("object") != "error":
            return
        status = stream_error_status(error if isinstance(error, dict) else event)
        self._reach(False)
        refusal = error_for_status(
            status,
            data or b"",
            content_type="application/json",
            retry_after=None,
            backend=self.upstream.name,
            secrets=self.upstream.secrets,
        )
        if status in RETRY_STATUS:
            raise Retryable(f"{self.upstream.name} refused the stream ({status})", refusal)
        raise refusal

    async def _event_bytes(self, chunk: bytes) -> None:
        """Pass on whole events only; hold back the start of one not yet complete."""
        if self._pending:
            chunk, self._pending = self._pending + chunk, b""
        if not (chunk.endswith(b"\n\n") or chunk.endswith(b"\r\n\r\n")):
            end = max(_after(chunk, b"\n\n"), _after(chunk, b"\r\n\r\n"))
            if end < len(chunk) and len(chunk) - end <= MAX_PENDING_EVENT:
                chunk, self._pending = chunk[:end], chunk[end:]
        if not chunk.isascii():
            try:
                chunk.decode()  # whole events never split a character: this is the engine's
            except UnicodeDecodeError:
                raise ClientPayloadError("the event stream is not UTF-8") from None
        chunk = self._planned(self._clean(chunk)) if chunk else chunk
        if not chunk:
            self._mark = self._loop.time()  # progress from the backend, nothing to send yet
            return
        if self.state is not None and self.state.pending:
            await self.state.settle()  # the ids it created are the caller's before it sees them
        await self._pass(chunk)

    def _clean(self, events: bytes) -> bytes:
        """The engine's events without its key (quoted back in an error event, say)."""
        return scrub_answer(events, self.upstream.secrets)

    def _planned(self, events: bytes) -> bytes:
        """The surface's bytes for whole events; events it cannot pass on are a broken stream."""
        try:
            return self.plan.events(events)
        except ValueError as err:
            raise ClientPayloadError(f"Malformed event stream: {err}") from None

    async def _pass(self, chunk: bytes) -> None:
        loop = self._loop
        self._mark = loop.time()
        self._sending = True
        await self.send({"type": "http.response.body", "body": chunk, "more_body": True})
        self._sending = False
        self._last = chunk
        self.chunks += 1
        self._mark = loop.time()

    async def _start(
        self, resp: aiohttp.ClientResponse, headers: list[tuple[bytes, bytes]]
    ) -> None:
        record = self.record
        record.first_byte_ms = (time.time() - record.started) * 1000
        self.started = True
        self._mark = self._loop.time()  # the answer started: idle and stall bounds from now
        await self.send({"type": "http.response.start", "status": resp.status, "headers": headers})

    def _headers(self, resp: aiohttp.ClientResponse) -> list[tuple[bytes, bytes]]:
        # The engine's bytes as they came (no decoding and encoding again per header), less
        # any key it quoted back.
        secrets = self.upstream.secrets
        out = [
            (name, scrub_header(value, secrets))
            for k, value in resp.raw_headers
            if (name := k.lower()) in PASSED_RESPONSE_HEADERS
        ]
        out.append((b"x-aiplane-backend", self.upstream.name.encode()))
        out.append((b"x-aiplane-queue-ms", f"{self.record.queue_ms:.1f}".encode()))
        out.append(queue_wait_header(self.record.queue_ms))
        out.append((b"x-aiplane-class", CLASS_BYTES[self.acquired.waiter.cls]))
        if self.extra_headers:
            out += self.extra_headers
        return out

    # ----- endings --------------------------------------------------------------------------

    def _retryable(self, reason: str) -> Retryable:
        name = self.upstream.name
        return Retryable(
            f"{name}: {reason}", UpstreamError(f"The model server {name} failed before answering.")
        )

    def _mark_cancelled(self) -> None:
        self.record.outcome, self.record.status = Outcome.CANCELLED, 499

    def _aborted(self, reason: int) -> None:
        """Note why the watchdog or the client cut the relay short (before any broken ending)."""
        record = self.record
        if reason == _CLIENT_LEFT:
            if self.started:
                record.outcome = Outcome.CLIENT_CLOSED
            else:
                self._mark_cancelled()  # the client closed the request; nothing is sent
        elif reason == _CLIENT_STALLED:
            record.outcome = Outcome.CLIENT_CLOSED
            record.error = "The client stopped reading its answer."
            raise DropConnection("the client stopped reading its answer")
        elif reason == _SHUTDOWN:
            if not self.started:
                raise ShuttingDown(NOT_STARTED, retry_after=1)
        elif reason == _PREEMPTED:
            self._reach(False)  # its prefill was thrown away by the gateway, not by the caller
            raise Preempted(self.upstream.name)
        elif not self.started:
            limit = self.timeouts.first_byte
            raise UpstreamTimeout(
                f"The model server {self.upstream.name} sent nothing within {limit:g} seconds."
            )

    async def _broken(
        self, resp: aiohttp.ClientResponse | None, what: str, failure: GatewayError | None = None
    ) -> None:
        """The answer had started when the backend failed (`what` it did), or the gateway ended
        it (`failure`, its own words): end it so that it looks broken."""
        name = self.upstream.name
        self.active = False  # the client leaving during the last send changes nothing now
        if self.body_kind == "events" and self.plan.complete(self._last):
            # The client's stream had ended ([DONE]): it was answered, whatever came after.
            log.warning("backend %s %s after the end of its answer", name, what)
            with contextlib.suppress(Exception):
                await self.send({"type": "http.response.body", "body": b""})
            return
        if failure is None:
            log.warning("backend %s %s", name, what)
            failure = UpstreamError(f"The model server {name} {what}.")
            self.record.outcome = Outcome.UPSTREAM_ERROR
        else:
            self.record.outcome = Outcome.ERROR  # the gateway ended it, not the engine
        self.record.error = failure.message
        if self.body_kind != "events":
            raise DropConnection(failure.message)
        # An event stream ends with the surface's error event at an event boundary (and, for
        # chat, [DONE], as vLLM and SGLang end theirs).
        head = b"" if not self._last or self._last.endswith(b"\n\n") else b"\n\n"
        if self._last.endswith(b"\n") and head:
            head = b"\n"
        tail = head + self.plan.fail(failure)
        with contextlib.suppress(Exception):
            await self.send({"type": "http.response.body", "body": tail})

    # ----- the watchdog and the client ------------------------------------------------------

    def check(self, now: float) -> None:
        """The watchdog's look at this relay: cut it short when it made no progress in time."""
        if not self.active:
            return
        t = self.timeouts
        if not self.started:
            limit, reason = t.first_byte, _NO_FIRST_BYTE
        elif self._sending:
            limit, reason = t.stalled_client, _CLIENT_STALLED
        else:
            limit, reason = t.idle, _UPSTREAM_IDLE
        if now >= self._mark + limit:
            self._cancel(reason)

    def preemptible_by(self, cls: int) -> bool:
        """Could a waiter of class `cls` take this one's slot now: a stream of a lower class,
        at the engine, whose client has not had a byte yet?"""
        return (
            self.preemptible
            and self.active
            and not self.started
            and self._abort is None
            and self.acquired.waiter.cls < cls
        )

    def preempt(self) -> None:
        """Cut it at the engine; `run` raises Preempted and the slot goes to the best waiter."""
        if self.preemptible_by(self.acquired.waiter.cls + 1):
            self._cancel(_PREEMPTED)

    def shut_down(self) -> None:
        """The process stops and its drain ended: cut the exchange, ending the client's answer."""
        if self.active:
            self._cancel(_SHUTDOWN)

    def _client_left(self, _: object) -> None:
        if self.active:
            self._cancel(_CLIENT_LEFT)

    def _cancel(self, reason: int) -> None:
        if self._abort is None and self._task is not None:
            self._abort = reason
            self._task.cancel()


def _kind_of(resp: aiohttp.ClientResponse, content_type: str) -> str:
    """How an engine's answer is passed on: as events, read whole, or chunk by chunk."""
    if content_type.startswith("text/event-stream"):
        return "events"
    if resp.content_length is not None and resp.content_length <= BUFFERED_BODY:
        return "buffered"
    return "stream"


# Each kind of answer body and how the relay passes it on (given the answer and its type).
_BODIES: dict[str, Callable[[Relay, aiohttp.ClientResponse, str], Awaitable[None]]] = {
    "events": Relay._events,
    "buffered": Relay._buffered,
    "stream": Relay._stream,
}


async def _chained(first: bytes, rest: AsyncIterator[bytes]) -> AsyncIterator[bytes]:
    yield first
    async for chunk in rest:
        yield chunk


def _has_boundary(data: bytes) -> bool:
    return b"\n\n" in data or b"\r\n\r\n" in data


def _after(data: bytes, separator: bytes) -> int:
    """The index just past the last `separator` in `data`, or 0."""
    at = data.rfind(separator)
    return 0 if at < 0 else at + len(separator)
