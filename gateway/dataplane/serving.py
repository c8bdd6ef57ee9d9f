"""Serving the gateway: uvicorn with the connection bounds, daphne's idle timeout, open files."""

from __future__ import annotations

import asyncio
import logging
import resource
import socket
from types import FrameType
from typing import Any, Literal

import uvicorn

from gateway.core import serving
from gateway.dataplane.drain import Drain, DrainSettings
from gateway.dataplane.relay import DropConnection
from gateway.dataplane.server_protocol import Bounds, protocol_class
from gateway.runtime.runtime import current_runtime


class _DroppedConnectionFilter(logging.Filter):
    """The servers log an app's exception with a traceback; a dropped connection is ours, on
    purpose, and already logged in one line."""

    def filter(self, record: logging.LogRecord) -> bool:
        exc = record.exc_info[1] if record.exc_info else None
        if isinstance(exc, DropConnection):
            return False
        return not any(isinstance(arg, DropConnection) for arg in record.args or ())


def quiet_dropped_connections() -> None:
    for name in ("uvicorn.error", "daphne.server"):
        logger = logging.getLogger(name)
        if not any(isinstance(f, _DroppedConnectionFilter) for f in logger.filters):
            logger.addFilter(_DroppedConnectionFilter())


log = logging.getLogger("aiplane")


def uvicorn_config(
    app: Any,
    host: str = "127.0.0.1",
    port: int = 0,
    *,
    bounds: Bounds | None = None,
    http: Literal["auto", "httptools", "h11"] = "auto",
    **rest: Any,
) -> uvicorn.Config:
    """The gateway's uvicorn configuration (the rest as core/serving.py's takes it).

    With `bounds`, the HTTP protocol bounds how long a client may take to send a request and
    how many connections the process holds (dataplane/server_protocol.py); without, it is
    uvicorn's own.
    """
    if bounds is None:
        return serving.uvicorn_config(app, host, port, http=http, **rest)
    bounded = protocol_class(bounds, serving.http_kind(http))
    return serving.uvicorn_config(app, host, port, http=bounded, keepalive=bounds.keepalive, **rest)


class DrainingServer(uvicorn.Server):
    """uvicorn whose SIGTERM (or Ctrl-C) drains the process (gateway/dataplane/drain.py): the
    first signal begins the drain, the second cuts it short; it exits 0 either way."""

    def __init__(self, config: uvicorn.Config, settings: DrainSettings) -> None:
        config.timeout_graceful_shutdown = round(settings.backstop)
        super().__init__(config)
        self.drain_settings = settings
        self.signals = 0
        self._loop: asyncio.AbstractEventLoop | None = None
        self._drain: Drain | None = None

    async def startup(self, sockets: list[socket.socket] | None = None) -> None:
        self._loop = asyncio.get_running_loop()
        await super().startup(sockets)

    def handle_exit(self, sig: int, frame: FrameType | None) -> None:
        # Not uvicorn's own: it raises the signal again once it has shut down, and SIGTERM's
        # default action would then end a process that drained cleanly with -15 instead of 0.
        loop = self._loop
        if loop is None or loop.is_closed():
            self.should_exit = True  # not serving yet: nothing to drain
            return
        loop.call_soon_threadsafe(self._signalled)

    def _signalled(self) -> None:
        self.signals += 1
        runtime = current_runtime()
        if runtime is None:
            self.should_exit = True
            return
        if self._drain is None or self._drain.runtime is not runtime:
            self._drain = Drain(runtime, self.drain_settings)
        drain = self._drain
        if self.signals == 1:
            drain.begin(stop_accepting=self._stop_accepting)
        else:
            drain.cut_short()
            self.should_exit = True

    def _stop_accepting(self) -> None:
        self.should_exit = True  # uvicorn's shutdown: closes the listener, waits for the rest


class GatewayServer(serving.ThreadedServer):
    """The gateway under uvicorn in a thread, with the connection bounds when given `bounds`."""

    make_config = staticmethod(uvicorn_config)


def open_files_for(bounds: Bounds) -> None:
    """Raise the soft limit of open files so the connection bound, not the limit, comes first.

    Each connection is a file, and each request in flight one more to its engine; at the
    common soft limit of 1,024 the process would fail to accept (or to reach an engine) long
    before the bound. The hard limit is the operator's: warn when it is too low.
    """
    want = 2 * (bounds.max_connections + bounds.refusing) + 256  # + database, logs, children
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft != resource.RLIM_INFINITY and soft < want:
        soft = want if hard == resource.RLIM_INFINITY else min(want, hard)
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))
    if soft != resource.RLIM_INFINITY and soft < want:
        log.warning(
            "open files are limited to %d; AIPLANE_MAX_CONNECTIONS=%d needs about %d",
            soft,
            bounds.max_connections,
            want,
        )


def daphne_server_class(bounds: Bounds) -> type:
    """daphne's server with Twisted's HTTP idle timeout taken from the bounds.

    Twisted has one idle timeout per connection (60 s, which daphne does not expose): for a
    connection waiting for a request, kept alive between two, or pausing while it sends
    headers or body; it closes without an answer. It becomes the longest of the header,
    body-idle and keep-alive bounds, so nothing that uvicorn would allow is cut. daphne has no
    total bound for headers or body and no connection bound.
    """
    # Here, not at the top: daphne is the optional server, and importing twisted's reactor
    # installs one.
    from daphne.server import Server
    from twisted.internet import reactor

    idle = max(bounds.header, bounds.body_idle, bounds.keepalive)

    class BoundedServer(Server):  # type: ignore[misc]  # daphne is untyped
        def run(self) -> None:
            # The factory is made in run() and builds each connection's channel when the
            # reactor accepts it, which is after this start-up call.
            reactor.callWhenRunning(self._bound)  # type: ignore[attr-defined]
            super().run()

        def _bound(self) -> None:
            self.http_factory.timeOut = idle

    return BoundedServer
