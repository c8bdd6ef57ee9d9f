"""Live fixtures for the data plane: the real ASGI app and simulated engines on loopback ports."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import pytest

from gateway.sim import SimConfig, SimServer


@dataclass
class LiveGateway:
    """The whole app (gateway, Django, websockets) served by uvicorn in a thread."""

    url: str
    app: Any
    server: Any = None  # the ThreadedServer, where a test reads its connections or its port

    @property
    def runtime(self) -> Any:
        return self.app.runtime

    @property
    def v1(self) -> str:
        return self.url + "/v1"


@pytest.fixture
def sim() -> Iterator[SimServer]:
    with SimServer(SimConfig(slots=4, tokens=4, token_delay=0.005)) as server:
        yield server


@pytest.fixture
def make_sim() -> Iterator[Callable[..., SimServer]]:
    """Start extra simulated engines with their own configuration; all stop after the test."""
    started: list[SimServer] = []

    def start(**config: Any) -> SimServer:
        server = SimServer(SimConfig(**config))
        server.start()
        started.append(server)
        return server

    yield start
    for server in started:
        server.stop()


@contextlib.contextmanager
def _activity_writer_in_thread_unless_chosen() -> Iterator[None]:
    """While an app is built: its activity records go through its database thread, unless the
    test (or the environment) chose AIPLANE_ACTIVITY_WRITER.

    The default child process costs each live gateway a Python start and its database
    connection (about half a second of CPU on two shared cores, and its exit is awaited when the
    gateway stops); hundreds of tests that only need records stored paid it. The child process
    keeps its own tests (tests/gateway/test_activity_writer.py, the `live` fixture of
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
    """The whole app (build_app) under uvicorn in a thread; `config` as ThreadedServer takes it
    (bounds, http)."""
    from gateway.serving import ThreadedServer

    app = build_app()
    with ThreadedServer(app, **config) as server:
        yield LiveGateway(url=server.url, app=app, server=server)


@pytest.fixture
def gateway(transactional_db: None) -> Iterator[LiveGateway]:
    from gateway.serving import configured_bounds

    # Served as `manage.py serve` serves it: with the connection bounds of production.
    with live_gateway(bounds=configured_bounds()) as live:
        yield live


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
    from gateway import topology
    from gateway.models import Pool

    data = {"name": name, "base_url": url + "/v1", "models": models or ["sim-small"], **fields}
    topology.backend_save(data=data)
    existing = Pool.objects.filter(name=pool).first()
    members = [b.name for b in existing.backends.all()] if existing else []
    topology.pool_save(
        data={
            "name": pool,
            "kind": kind,
            "backends": [*members, name],
            "allowed_groups": allowed_groups or [],
        },
        known_groups=set(allowed_groups or []),
    )
