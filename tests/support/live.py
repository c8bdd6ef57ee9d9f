"""The whole app served for a test: LiveGateway, build_app, live_gateway, add_backend."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from gateway.admin import services


@dataclass
class LiveGateway:
    """The whole app (gateway, Django, websockets) served by uvicorn in a thread."""

    url: str
    app: Any
    server: Any = None  # the GatewayServer, where a test reads its connections or its port

    @property
    def runtime(self) -> Any:
        return self.app.runtime

    @property
    def v1(self) -> str:
        return self.url + "/v1"


@contextlib.contextmanager
def _activity_writer_in_thread_unless_chosen() -> Iterator[None]:
    """While an app is built: its activity records go through its database thread, unless the
    test (or the environment) chose AIPLANE_ACTIVITY_WRITER.

    The default child process costs each live gateway a Python start and its database
    connection (about half a second of CPU on two shared cores, and its exit is awaited when the
    gateway stops); hundreds of tests that only need records stored paid it. The child process
    keeps its own tests (tests/gateway/observability/test_activity_writer.py, the `live` fixture of
    test_activity.py, both modes) and serves the browser tests' gateway. Only while building:
    subprocesses a test starts later inherit no choice.
    """
    if "AIPLANE_ACTIVITY_WRITER" in os.environ:
        yield
        return
    os.environ["AIPLANE_ACTIVITY_WRITER"] = "thread"
    try:
        yield
    finally:
        os.environ.pop("AIPLANE_ACTIVITY_WRITER", None)


def build_app() -> Any:
    """The whole app as `manage.py serve` assembles it, health and detection loops off (tests
    probe health and detect explicitly)."""
    from django.core.asgi import get_asgi_application

    from aiplane.wiring import build_application

    with _activity_writer_in_thread_unless_chosen():
        app = build_application(get_asgi_application())
    app.runtime.background = False
    return app


@contextlib.contextmanager
def live_gateway(**config: Any) -> Iterator[LiveGateway]:
    """The whole app (build_app) under uvicorn in a thread; `config` as GatewayServer takes it
    (bounds, http)."""
    from gateway.dataplane.serving import GatewayServer

    app = build_app()
    with GatewayServer(app, **config) as server:
        yield LiveGateway(url=server.url, app=app, server=server)


def database_url() -> str:
    """The test database (committed data: transactional tests) as a URL for a child process."""
    from django.db import connection

    s = connection.settings_dict
    if connection.vendor == "sqlite":
        return f"sqlite:///{s['NAME']}"
    host, port = s["HOST"] or "127.0.0.1", s["PORT"] or 5432
    return f"postgres://{s['USER']}:{s['PASSWORD']}@{host}:{port}/{s['NAME']}"


def free_port() -> int:
    """A loopback port nobody listens on now (for a child process to take)."""
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def add_backend(
    name: str,
    url: str,
    *,
    pool: str = "default",
    models: list[str] | None = None,
    allowed_groups: list[str] | None = None,
    kind: str = "chat",
    **fields: Any,
) -> None:
    """Register a backend in a pool through the same services the admin API uses."""

    from gateway.models import Pool

    data = {"name": name, "base_url": url + "/v1", "models": models or ["sim-small"], **fields}
    services.backend_save(data=data)
    existing = Pool.objects.filter(name=pool).first()
    members = [b.name for b in existing.backends.all()] if existing else []
    services.pool_save(
        data={
            "name": pool,
            "kind": kind,
            "backends": [*members, name],
            "allowed_groups": allowed_groups or [],
        },
        known_groups=set(allowed_groups or []),
    )
