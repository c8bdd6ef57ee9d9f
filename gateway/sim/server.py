"""Running the simulated engine: under uvicorn in a thread, or on the running loop."""

from __future__ import annotations

import asyncio
import contextlib

import uvicorn

from gateway.core import serving
from gateway.sim.config import SimConfig
from gateway.sim.engine import SimEngine

# -- running it --


def uvicorn_config(
    engine: SimEngine, host: str = "127.0.0.1", port: int = 0, *, fast: bool = False
) -> uvicorn.Config:
    """The engine's uvicorn configuration: no websockets, lifespan on, uvloop when `fast`."""
    return serving.uvicorn_config(engine.app, host, port, fast=fast, ws="none")


class SimServer(serving.ThreadedServer):
    """Runs a SimEngine under uvicorn in a daemon thread with its own event loop."""

    def __init__(
        self,
        config: SimConfig | None = None,
        *,
        host: str = "127.0.0.1",
        port: int = 0,
        engine: SimEngine | None = None,
    ) -> None:
        self.engine = engine if engine is not None else SimEngine(config)
        super().__init__(self.engine.app, host=host, port=port, ws="none")

    def stop(self, timeout: float = 5.0) -> None:
        loop = self.engine.loop
        if loop is not None:
            # Ends open streams and parked requests at once instead of after uvicorn's grace
            # period; the loop may already be closed when the server died first.
            with contextlib.suppress(RuntimeError):
                loop.call_soon_threadsafe(self.engine.abort_all)
        super().stop(timeout)


async def serve(
    config: SimConfig | None = None,
    host: str = "127.0.0.1",
    port: int = 9100,
    *,
    engine: SimEngine | None = None,
) -> None:
    """Serve the engine on the running event loop until cancelled, then shut down cleanly."""
    engine = engine if engine is not None else SimEngine(config)
    server = uvicorn.Server(uvicorn_config(engine, host, port))
    task = asyncio.ensure_future(server.serve())
    try:
        await asyncio.shield(task)
    except asyncio.CancelledError:
        server.should_exit = True
        await task
        raise
