"""Live fixtures for the data plane: the real ASGI app and simulated engines on loopback ports."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

import pytest

from gateway.sim.config import SimConfig
from gateway.sim.server import SimServer
from tests.support.live import live_gateway

if TYPE_CHECKING:
    from tests.support.live import LiveGateway


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


@pytest.fixture
def gateway(transactional_db: None) -> Iterator[LiveGateway]:
    from aiplane.wiring import configured_bounds

    # Served as `manage.py serve` serves it: with the connection bounds of production.
    with live_gateway(bounds=configured_bounds()) as live:
        yield live
