"""Serving an ASGI app: uvicorn's configuration, and uvicorn in a background thread."""

from __future__ import annotations

import asyncio
import importlib.util
import socket
import threading
import time
from abc import ABC, abstractmethod
from collections.abc import Callable
from types import TracebackType
from typing import Any, Literal, Self

import uvicorn
from uvicorn.server import ServerState

HttpKind = Literal["httptools", "h11"]


def have(module: str) -> bool:
    return importlib.util.find_spec(module) is not None


def http_kind(http: Literal["auto", "httptools", "h11"]) -> HttpKind:
    """uvicorn's HTTP implementation by name; `auto` is httptools when it is installed."""
    if http == "auto":
        return "httptools" if have("httptools") else "h11"
    return http


def uvicorn_config(
    app: Any,
    host: str = "127.0.0.1",
    port: int = 0,
    *,
    fast: bool = False,
    lifespan: Literal["auto", "on", "off"] = "on",
    ws: Literal["auto", "none", "websockets", "wsproto"] = "auto",
    http: Literal["auto", "httptools", "h11"] | type[asyncio.Protocol] = "auto",
    keepalive: float = 5,
) -> uvicorn.Config:
    """The uvicorn configuration every runner shares; `fast` picks uvloop when installed.

    `http` is uvicorn's own protocol by name (as the engines the simulated one imitates run
    it), or a protocol class of the caller's (the gateway's bounded ones, dataplane/serving.py).
    """
    return uvicorn.Config(
        app,
        host=host,
        port=port,
        loop="uvloop" if fast and have("uvloop") else "asyncio",
        http=http_kind(http) if isinstance(http, str) else http,
        ws=ws,
        log_level="warning",
        access_log=False,
        proxy_headers=False,
        lifespan=lifespan,
        timeout_graceful_shutdown=1,
        # uvicorn hands it to call_later, so fractions of a second work despite its annotation.
        timeout_keep_alive=keepalive,  # type: ignore[arg-type]
    )


def bound_socket(host: str = "127.0.0.1", port: int = 0) -> socket.socket:
    # proto=IPPROTO_TCP matters: asyncio sets TCP_NODELAY only on sockets that say TCP, and
    # without it Nagle's algorithm holds stream chunks back for the peer's delayed ACK.
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((host, port))
    sock.listen(1024)
    return sock


class Background(ABC):
    """Runs in a daemon thread of its own from `start` to `stop`; `with` does both."""

    @abstractmethod
    def start(self, timeout: float = 15.0) -> None:
        """Returns once it serves; RuntimeError when it did not within `timeout` seconds."""

    @abstractmethod
    def stop(self, timeout: float = 5.0) -> None:
        """Returns once its thread ended (or `timeout` passed); a second call does nothing."""

    def __enter__(self) -> Self:
        self.start()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()


class ThreadedServer(Background):
    """An ASGI app under uvicorn in a daemon thread with its own event loop."""

    # What `config` (all but the app and the address) goes to; the gateway's takes its bounds.
    make_config: Callable[..., uvicorn.Config] = staticmethod(uvicorn_config)

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
        server = uvicorn.Server(self.make_config(self.app, self.host, self.port, **self.config))
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
