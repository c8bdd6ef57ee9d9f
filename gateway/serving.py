"""Serving an ASGI app: uvicorn's configuration, daphne's, and uvicorn in a background thread."""

from __future__ import annotations

import importlib.util
import logging
import resource
import socket
import threading
import time
from types import TracebackType
from typing import Any, Literal

import uvicorn
from uvicorn.server import ServerState

from gateway.protocol import Bounds, protocol_class

log = logging.getLogger("aiplane")


def have(module: str) -> bool:
    return importlib.util.find_spec(module) is not None


def uvicorn_config(
    app: Any,
    host: str = "127.0.0.1",
    port: int = 0,
    *,
    fast: bool = False,
    lifespan: Literal["auto", "on", "off"] = "on",
    ws: Literal["auto", "none", "websockets", "wsproto"] = "auto",
    bounds: Bounds | None = None,
    http: Literal["auto", "httptools", "h11"] = "auto",
) -> uvicorn.Config:
    """The uvicorn configuration every runner shares; `fast` picks uvloop when installed.

    With `bounds`, the HTTP protocol bounds how long a client may take to send a request and
    how many connections the process holds (gateway.protocol); without, it is uvicorn's own, as
    the engines the simulated one imitates run it.
    """
    kind: Literal["httptools", "h11"] = (
        ("httptools" if have("httptools") else "h11") if http == "auto" else http
    )
    return uvicorn.Config(
        app,
        host=host,
        port=port,
        loop="uvloop" if fast and have("uvloop") else "asyncio",
        http=kind if bounds is None else protocol_class(bounds, kind),
        ws=ws,
        log_level="warning",
        access_log=False,
        proxy_headers=False,
        lifespan=lifespan,
        timeout_graceful_shutdown=1,
        # uvicorn hands it to call_later, so fractions of a second work despite its annotation.
        timeout_keep_alive=5 if bounds is None else bounds.keepalive,  # type: ignore[arg-type]
    )


def configured_bounds() -> Bounds:
    """The bounds of aiplane/settings.py (AIPLANE_HEADER_TIMEOUT and friends)."""
    from django.conf import settings

    return Bounds(
        header=settings.AIPLANE_HEADER_TIMEOUT,
        body=settings.AIPLANE_BODY_TIMEOUT,
        body_idle=settings.AIPLANE_BODY_IDLE_TIMEOUT,
        keepalive=settings.AIPLANE_KEEPALIVE_TIMEOUT,
        max_connections=settings.AIPLANE_MAX_CONNECTIONS,
    )


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


def bound_socket(host: str = "127.0.0.1", port: int = 0) -> socket.socket:
    # proto=IPPROTO_TCP matters: asyncio sets TCP_NODELAY only on sockets that say TCP, and
    # without it Nagle's algorithm holds stream chunks back for the peer's delayed ACK.
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((host, port))
    sock.listen(1024)
    return sock


class ThreadedServer:
    """An ASGI app under uvicorn in a daemon thread with its own event loop."""

    def __init__(self, app: Any, *, host: str = "127.0.0.1", port: int = 0, **config: Any):
        self.app = app
        self.host = host
        self.port = port
        self.config = config
        self._server: uvicorn.Server | None = None
        self._thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        return f"http://{self.host}:{self.port}"

    @property
    def state(self) -> ServerState:
        """uvicorn's view of the running server: its open connections and running tasks."""
        if self._server is None:
            raise RuntimeError("the server is not running")
        return self._server.server_state

    def start(self, timeout: float = 15.0) -> None:
        sock = bound_socket(self.host, self.port)
        self.port = sock.getsockname()[1]
        server = uvicorn.Server(uvicorn_config(self.app, self.host, self.port, **self.config))
        self._server = server
        self._thread = threading.Thread(
            target=server.run, kwargs={"sockets": [sock]}, name=f"asgi:{self.port}", daemon=True
        )
        self._thread.start()
        deadline = time.monotonic() + timeout
        while not server.started:
            if not self._thread.is_alive() or time.monotonic() > deadline:
                sock.close()
                raise RuntimeError(f"the server did not start on {self.url}")
            time.sleep(0.005)

    def stop(self, timeout: float = 5.0) -> None:
        server, thread = self._server, self._thread
        if server is None or thread is None:
            return
        server.should_exit = True
        thread.join(timeout)
        if thread.is_alive():
            server.force_exit = True
            thread.join(timeout)
        self._server = self._thread = None

    def __enter__(self) -> ThreadedServer:
        self.start()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()
