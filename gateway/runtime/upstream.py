"""The upstream connector: aiohttp's protocol that fails a malformed body at once, and the
connections a relay closed."""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import functools
import logging
import socket
import struct
from typing import Any

import aiohttp
from aiohttp.client_exceptions import ClientPayloadError
from aiohttp.client_proto import ResponseHandler

log = logging.getLogger("aiplane.gateway")

CLOSE_SECS = 0.5  # a closing upstream connection still sending after this is aborted


# The connections a relay closed (their close and their transport), filled in by the protocol
# below in the relay's task: aiohttp closes one inside `post` when a cancel lands there.
Closing = list[tuple[asyncio.Future[None], Any]]

CLOSING: contextvars.ContextVar[Closing] = contextvars.ContextVar("closing")

# The connections a relay's requests were sent on, filled in when aiohttp readies one for a
# request (in the relay's task). A request cut short while its body was still being written is
# closed by aiohttp's writer task, a task of its own that runs after the relay's cancel: the
# relay closes what it used itself, so that it never hands its slot on before that close.
USED: contextvars.ContextVar[list[Any]] = contextvars.ContextVar("used")


def close_used(used: list[Any]) -> None:
    """Close every connection a cut-short relay sent on that is still open (registering each in
    CLOSING, for wait_closed, and reset: see _ResponseHandler.close); one that answered in full
    went back to the pool and is left."""
    for protocol in used:
        if protocol.transport is not None:
            protocol.close()


async def wait_closed(closing: Closing) -> None:
    """Wait until the connections a relay closed are closed, their FIN sent.

    A transport sends its FIN one loop iteration after close() (later still behind unsent
    bytes), while a freed slot's next request, or a RELEASE to shared admission sent on the
    same iteration, may already be on its way: the engine would run one more than its limit
    until it saw the close. A close still stalled after CLOSE_SECS is aborted.
    """
    futures = {future for future, _ in closing}
    _, stalled = await asyncio.wait(futures, timeout=CLOSE_SECS)
    if stalled:
        for future, transport in closing:
            if future in stalled:
                transport.abort()
        await asyncio.wait(stalled, timeout=CLOSE_SECS)
    for future in futures:
        if future.done() and not future.cancelled():
            future.exception()  # a connection lost with an error is as closed: retrieved


class _ResponseHandler(ResponseHandler):
    """aiohttp's connection protocol, but a framing error mid-body fails the body's reader, and
    a relay learns of the connections it closes (see wait_closed).

    With aiohttp's C parser (the default), a chunked body whose framing breaks after its first
    chunk closes the connection yet leaves the reader waiting for more (FACTS.md: a request hung
    with its slot held); its pure-Python parser fails the reader. This hands the parser's error
    to the reader, so every malformed answer ends at once.
    """

    def set_response_params(self, **params: Any) -> None:
        used = USED.get(None)
        if used is not None:
            used.append(self)
        super().set_response_params(**params)

    def close(self) -> None:
        transport = self._closing()
        super().close()
        if transport is not None:
            transport.abort()  # a relay's connection: reset now, its unsent bytes dropped

    def abort(self) -> None:
        self._closing()
        super().abort()

    def _closing(self) -> Any:
        """A connection a relay closes (a request cut short, inside aiohttp or by the relay) is
        registered for wait_closed and reset, not closed in turn: a graceful close delivers
        whatever of its body is still buffered (asyncio's buffer, then the kernel's: megabytes
        of a large prompt) before its FIN, and until then the engine cannot tell the request
        ended while the freed slot's next one may already be there. A reset (SO_LINGER 0)
        drops those bytes and tells the engine at once (vLLM and SGLang abort on it)."""
        closing = CLOSING.get(None)
        transport = self.transport
        if closing is None or transport is None or (closed := self.closed) is None:
            return None
        closing.append((closed, transport))
        sock = transport.get_extra_info("socket")
        if sock is not None:
            with contextlib.suppress(OSError):
                sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        return transport

    def set_exception(self, exc: BaseException, *args: Any) -> None:
        payload = self._payload
        super().set_exception(exc, *args)
        if payload is not None and not payload.is_eof() and payload.exception() is None:
            payload.set_exception(ClientPayloadError(f"Malformed response body: {exc}"))


def connector(**options: Any) -> aiohttp.TCPConnector:
    """The upstream connector, with the protocol that fails a malformed body at once."""
    conn = aiohttp.TCPConnector(**options)
    factory = getattr(conn, "_factory", None)
    if isinstance(factory, functools.partial) and factory.func is ResponseHandler:
        conn._factory = functools.partial(_ResponseHandler, **factory.keywords)  # type: ignore[attr-defined,assignment]
    else:  # pragma: no cover - a later aiohttp; the regression test says whether it still hangs
        log.warning("aiohttp's connector changed; malformed bodies end at the idle timeout")
    return conn
