"""uvicorn's HTTP protocols with deadlines for a request's headers and body and a connection bound.

uvicorn bounds only the idle time of a kept-alive connection: a client that opens a connection
and sends its headers or its body slowly, or never, holds the connection (and, mid-body, the
request's task) for ever. These subclasses keep one timer per connection, for the phase it is in:

    opened ──(first byte)──> headers ──(last header)──> body ──(end)──> the app's turn
      └ header deadline: close   └ header deadline: 408     └ body deadlines: 408

The header deadline runs from the connection's opening (or, on a kept-alive connection, from the
next request's first byte) to its last header. The body has two: an idle one between two pieces
(a client that stalls) and a total one (a client that trickles a byte at a time); a large body
over a slow link keeps sending, so only the generous total can end it. A stall the server
causes (reading paused while the app has not taken what came, or a client waiting for
`100 Continue`) is never the client's fault. On expiry the client gets 408 while an answer is
still possible, the app (if it is reading the body) gets `http.disconnect`, and the connection
closes.

Beyond `max_connections` open connections (HTTP and websocket) a new connection is refused:
its headers are read (under the header deadline) and answered 503 with Retry-After, without the
app. Connections that are already open keep working, unlike uvicorn's `limit_concurrency`, which
counts open connections and running tasks and then turns away requests on every connection. At
most `refusing` connections wait for their 503; beyond that a new one is closed at once, so
refused connections never pile up.

On the hot path this costs four calls a request (about 1 µs); a request that arrives in one
piece arms no timer. Under httptools an answer's head also waits for its first piece of body,
so the two leave in one write (`StatusLineHeld`): about 70 µs of CPU less per request at
concurrency 64 on two cores, measured against uvicorn's two writes.
"""

from __future__ import annotations

import asyncio
import json
import weakref
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar, Literal

import h11  # uvicorn's own dependency: always there

from aiplane.envelope import error_body

if TYPE_CHECKING:
    from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol as _Base
    from uvicorn.server import ServerState
else:
    _Base = object  # at run time the mixins sit in front of the uvicorn class they extend


# The scope key of a future the connection resolves when the client goes away before its answer
# is complete. The app awaits it instead of a task per request that waits on `receive()` for
# `http.disconnect` (a task's creation, its first step and its cancellation cost more than
# the rest of a request's reading); servers without it (daphne) get that task.
GONE = "aiplane.gone"


@dataclass(frozen=True)
class Bounds:
    """How long a client may take to send a request, and how many connections a process holds."""

    header: float  # seconds from opening (or a request's first byte) to its last header
    body: float  # seconds from the last header to the end of the body, in all
    body_idle: float  # seconds the body may pause between two pieces
    keepalive: float  # seconds an idle connection stays open between two requests
    max_connections: int  # open connections (HTTP and websocket) of one process

    @property
    def refusing(self) -> int:
        """How many connections beyond the bound may wait for their 503 at the same time."""
        return max(8, self.max_connections // 8)


_TIMEOUT_BODY = json.dumps(
    error_body(
        "The request was not received in time.",
        "invalid_request_error",
        code="request_timeout",
    )
).encode()
_FULL_BODY = json.dumps(
    error_body(
        "The server has too many open connections. Try again later.",
        "api_error",
        code="too_many_connections",
    )
).encode()
_FULL_HEADERS = [
    (b"content-type", b"application/json"),
    (b"content-length", b"%d" % len(_FULL_BODY)),
    (b"retry-after", b"1"),
    (b"connection", b"close"),
]


async def _too_many_connections(scope: Any, receive: Any, send: Any) -> None:
    """The app a refused connection gets instead of ours."""
    await send({"type": "http.response.start", "status": 503, "headers": _FULL_HEADERS})
    await send({"type": "http.response.body", "body": _FULL_BODY})


_MALFORMED_BODY = json.dumps(
    error_body(
        "The request is not valid HTTP (a header holds a control character, or the request "
        "line or framing is broken).",
        "invalid_request_error",
        code="malformed_request",
    )
).encode()


def _timeout_answer(default_headers: list[tuple[bytes, bytes]]) -> bytes:
    return _closing_answer(b"408 Request Timeout", _TIMEOUT_BODY, default_headers)


def _closing_answer(
    status: bytes, body: bytes, default_headers: list[tuple[bytes, bytes]]
) -> bytes:
    lines = [b"HTTP/1.1 " + status + b"\r\n"]
    lines += [name + b": " + value + b"\r\n" for name, value in default_headers]
    lines.append(
        b"content-type: application/json\r\ncontent-length: %d\r\nconnection: close\r\n\r\n"
        % len(body)
    )
    lines.append(body)
    return b"".join(lines)


# The phase a connection is in; each has at most one deadline.
_OPENED, _HEADERS, _BODY, _RECEIVED, _UPGRADED = range(5)

# Connections of each server that wait for their 503 (they do not count in its connections).
_refusing: weakref.WeakKeyDictionary[ServerState, set[Any]] = weakref.WeakKeyDictionary()


class _Bounded(_Base):
    """What both protocols share: the refusal, the timer, and what happens when it fires."""

    bounds: ClassVar[Bounds]
    # The uvicorn class this extends. The per-request callbacks call it directly: in Python 3.11
    # super() costs about 1,600 instructions a call, more than the rest of a callback.
    _base: ClassVar[Any]
    # Slots, not the instance's dict: uvicorn's protocol has nearly 30 attributes already, and
    # more would turn its dict from key-sharing into a plain one, which slows every `self.x`
    # in uvicorn's code (about 3,000 instructions a request, measured with callgrind).
    __slots__ = ("_body_seen", "_body_start", "_deadline", "_phase", "_refused")

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        self._phase = _OPENED
        self._deadline: asyncio.TimerHandle | None = None
        self._body_start = self._body_seen = 0.0
        self._refused = False
        super().connection_made(transport)
        if len(self.connections) > self.bounds.max_connections:
            self.connections.discard(self)
            refusing = _refusing.setdefault(self.server_state, set())
            self._refused = True
            if len(refusing) >= self.bounds.refusing:
                transport.close()
                return
            refusing.add(self)
            self.app = _too_many_connections
        self._deadline = self.loop.call_later(self.bounds.header, self._expire)

    def send_400_response(self, msg: str) -> None:
        # What the parser refuses (httptools), or where h11's own state machine failed, gets
        # the one envelope too, not uvicorn's plain text; written as bytes in both.
        self.transport.write(
            _closing_answer(b"400 Bad Request", _MALFORMED_BODY, self.server_state.default_headers)
        )
        self.transport.close()

    def connection_lost(self, exc: Exception | None) -> None:
        self._cancel()
        cycle = self.cycle
        if cycle is not None and not cycle.response_complete:
            gone: asyncio.Future[None] | None = cycle.scope.get(GONE)  # type: ignore[assignment]
            if gone is not None and not gone.done():
                gone.set_result(None)
        if self._refused:
            _refusing.get(self.server_state, set()).discard(self)
        super().connection_lost(exc)

    def handle_websocket_upgrade(self, *args: Any) -> None:
        self._cancel()
        self._phase = _UPGRADED
        super().handle_websocket_upgrade(*args)

    def _should_upgrade(self) -> bool:
        # A refused connection must not become a websocket: that would count it after all.
        return not self._refused and super()._should_upgrade()

    def _unsupported_upgrade_warning(self) -> None:
        if not self._refused:
            super()._unsupported_upgrade_warning()

    def _cancel(self) -> None:
        if self._deadline is not None:
            self._deadline.cancel()
            self._deadline = None

    def _received(self) -> None:
        """The request's body has come in full."""
        self._phase = _RECEIVED
        # uvicorn stops reading while more than 64 KB of body waits for the app, and reads
        # again at the app's next `receive()`. Told of a disconnect by GONE, the app never asks
        # again after the body, and a socket left paused would hide the client's leaving (its
        # FIN unread) until the answer: a waiter kept in the queue, a slot held for nobody.
        # (Under h11 this also lifts a pause for a pipelined request's bytes read with the end
        # of this body; h11 pauses again at the next read, so one read at most is buffered.)
        self.flow.resume_reading()

    def _headers_pending(self) -> None:
        """Part of a request's headers has come: make sure their deadline runs."""
        if self._deadline is None:
            self._deadline = self.loop.call_later(self.bounds.header, self._expire)

    def _body_pending(self) -> None:
        """Part of a body has come (or none yet, right after the headers)."""
        now = self.loop.time()
        self._body_seen = now
        if self._deadline is None:
            self._body_start = now
            bounds = self.bounds
            self._deadline = self.loop.call_later(min(bounds.body_idle, bounds.body), self._expire)

    def _answered_early(self) -> None:
        """The request's end came after its answer: uvicorn armed its keep-alive timer at the
        answer and each later piece of the body cancelled it; without this, the connection
        would then stay open, idle, for ever."""
        if self.timeout_keep_alive_task is None and not self.transport.is_closing():
            self.timeout_keep_alive_task = self.loop.call_later(
                self.timeout_keep_alive, self.timeout_keep_alive_handler
            )

    def _expire(self) -> None:
        self._deadline = None
        cycle = self.cycle
        if self._phase == _BODY:
            now = self.loop.time()
            bounds = self.bounds
            if self.flow.read_paused or cycle.waiting_for_100_continue:
                # The app has not taken what came (or not asked for the body): our stall.
                self._body_seen = now
                self._deadline = self.loop.call_later(bounds.body_idle, self._expire)
                return
            due = min(self._body_seen + bounds.body_idle, self._body_start + bounds.body)
            if now < due:
                self._deadline = self.loop.call_later(due - now, self._expire)
                return
            answer = not cycle.response_started
            # At once, not when the transport reports the close: the app must not answer
            # after our 408, and a receive() waiting for the body returns http.disconnect.
            cycle.disconnected = True
            cycle.message_event.set()
        else:
            # Headers half sent: 408, unless a pipelined request before it is being answered.
            # A connection that never sent a byte has no request to answer.
            answer = self._phase == _HEADERS and (cycle is None or cycle.response_complete)
        if answer and not self.transport.is_closing():
            self.transport.write(_timeout_answer(self.server_state.default_headers))
        self.transport.close()


class StatusLineHeld:
    """A cycle's transport that holds its answer's status line and headers for the first piece
    of the body, so both leave in one write.

    uvicorn writes the head at `http.response.start` and each body piece at its own message; the
    relay sends the head and the first piece back to back, so without this every answer costs
    one more write call and one more loopback segment (and wakes the client twice). A head with
    no body after it in the same turn of the loop is written at the next turn.
    """

    __slots__ = ("_held", "_loop", "_transport")

    def __init__(self, transport: asyncio.Transport, loop: asyncio.AbstractEventLoop) -> None:
        self._transport = transport
        self._loop = loop
        self._held: bytes | None = None  # None: nothing written yet; b"": the head went

    def write(self, data: bytes) -> None:
        held = self._held
        if held is None:
            self._held = data
            self._loop.call_soon(self._flush)
            return
        if held:
            self._held = b""
            data = held + data
        self._transport.write(data)

    def _flush(self) -> None:
        held = self._held
        if held:
            self._held = b""
            if not self._transport.is_closing():
                self._transport.write(held)

    def is_closing(self) -> bool:
        return self._transport.is_closing()

    def close(self) -> None:
        self._flush()
        self._transport.close()


class _HttpToolsBounds(_Bounded):
    """The phases from httptools' parser callbacks; timers are armed after a whole read only."""

    def data_received(self, data: bytes) -> None:
        self._base.data_received(self, data)
        phase = self._phase
        if phase == _HEADERS:
            self._headers_pending()
        elif phase == _BODY:
            self._body_pending()

    def on_message_begin(self) -> None:
        self._base.on_message_begin(self)
        self._phase = _HEADERS

    def on_headers_complete(self) -> None:
        # _cancel() written out: these callbacks run for every request.
        if self._deadline is not None:
            self._deadline.cancel()
            self._deadline = None
        self._phase = _BODY
        self._base.on_headers_complete(self)
        cycle = self.cycle
        if cycle is not None and cycle.scope is self.scope:  # (not on a websocket upgrade)
            # Duck-typed: the cycle only writes, closes and asks is_closing().
            cycle.transport = StatusLineHeld(self.transport, self.loop)  # type: ignore[assignment]
            self.scope[GONE] = self.loop.create_future()  # type: ignore[literal-required]

    def on_message_complete(self) -> None:
        self._base.on_message_complete(self)
        if self._phase != _UPGRADED:
            if self._deadline is not None:
                self._deadline.cancel()
                self._deadline = None
            self._received()
            cycle = self.cycle
            # (A websocket upgrade has no cycle of its own: self.cycle is None or the last one.)
            if cycle is not None and cycle.response_complete and cycle.scope is self.scope:
                self._answered_early()


class _H11Bounds(_Bounded):
    """The phases from h11's view of the client's state after each read."""

    conn: h11.Connection

    def data_received(self, data: bytes) -> None:
        self._base.data_received(self, data)
        phase = self._phase
        if phase == _UPGRADED:
            return
        cycle = self.cycle
        if cycle is not None and GONE not in cycle.scope:
            # A request's task was created in this read and has not run yet, so its future is
            # there first; one started later (a pipelined request, after the answer before
            # it) has none and learns of a disconnect from `receive()`.
            cycle.scope[GONE] = self.loop.create_future()  # type: ignore[literal-required]
        state = self.conn.their_state
        if state is h11.IDLE:
            if phase == _BODY:
                # The body ended after its answer, and h11 moved on to the next request.
                self._cancel()
                if not self.conn.trailing_data[0]:
                    self._phase = _RECEIVED
                    self._answered_early()
                    return
            self._phase = _HEADERS
            self._headers_pending()
        elif state is h11.SEND_BODY:
            if phase != _BODY:
                self._cancel()
                self._phase = _BODY
            self._body_pending()
        elif phase != _RECEIVED:
            self._cancel()
            self._received()


def protocol_class(bounds: Bounds, http: Literal["httptools", "h11"]) -> type[asyncio.Protocol]:
    """uvicorn's protocol for `http` with these bounds, for `uvicorn.Config(http=...)`."""
    if http == "httptools":
        # Imported here: httptools is optional (uvicorn[standard]), the class chosen per call.
        from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

        base: type[asyncio.Protocol] = HttpToolsProtocol
        bounded: type[_Bounded] = _HttpToolsBounds
    else:
        # Imported here too: only the protocol asked for is loaded.
        from uvicorn.protocols.http.h11_impl import H11Protocol

        base, bounded = H11Protocol, _H11Bounds
    return type(f"Bounded{base.__name__}", (bounded, base), {"bounds": bounds, "_base": base})
