"""One chaos replica in one process: a simulated engine with directives on, a FaultProxy before it.

    python -m bench.chaos_engine --server-info sglang --slots 4 --tokens 2000

Prints one JSON line, {"sim": <port>, "proxy": <port>}, once both listen; the gateway is pointed
at the proxy, the chaos run reads and resets the engine's counters on the sim's own port. Both
share one event loop, so the proxy's teardown of a connection the gateway closed reaches the
engine before any request the proxy accepts after it.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import re
import time
from collections import deque
from typing import Any

import uvicorn

from gateway.core import serving
from gateway.core.serving import bound_socket
from gateway.sim import config, faults
from gateway.sim import engine as sim_engine
from gateway.sim.faults import FaultProxy

_NAME = re.compile(r"chaos-\d+-\d+")


class Peaks:
    """Which requests were open each time the engine's most-open count rose: the evidence for
    a run whose engine saw more requests than its max_inflight (GET /chaos/peaks)."""

    def __init__(self, engine: sim_engine.SimEngine) -> None:
        self.open: dict[int, tuple[float, str]] = {}
        self.peaks: deque[dict[str, Any]] = deque(maxlen=500)
        count, leave = engine._count_open, engine._leave

        def counted(record: Any) -> None:
            before = engine._max_open_seen
            count(record)
            text = faults.directive_text(record.body) if isinstance(record.body, dict) else None
            found = _NAME.search(text or "")
            self.open[id(record)] = (time.time(), found.group(0) if found else "?")
            if engine._max_open_seen > before:
                self.peaks.append({"at": time.time(), "open": sorted(self.open.values())})

        def left(record: Any) -> None:
            was = record.open
            leave(record)
            if was:
                self.open.pop(id(record), None)

        engine._count_open = counted  # type: ignore[method-assign]
        engine._leave = left  # type: ignore[method-assign]

    def app(self, engine: sim_engine.SimEngine) -> Any:
        async def app(scope: dict[str, Any], receive: Any, send: Any) -> None:
            if scope["type"] == "http" and scope["path"] == "/chaos/peaks":
                body = json.dumps(list(self.peaks)).encode()
                headers = [(b"content-type", b"application/json")]
                await send({"type": "http.response.start", "status": 200, "headers": headers})
                await send({"type": "http.response.body", "body": body})
                return
            await engine(scope, receive, send)

        return app


async def serve(args: argparse.Namespace) -> None:
    engine = sim_engine.SimEngine(
        config.SimConfig(
            models=["sim-small"],
            slots=args.slots,
            tokens=args.tokens,
            token_delay=args.token_delay_ms / 1000.0,
            server_info=args.server_info,
            priority_scheduling=args.server_info == "sglang",
            directives=True,
            record_limit=0,  # thousands of requests: keep the counters, not the bodies
        )
    )
    sim_sock = bound_socket("127.0.0.1", args.sim_port)
    proxy_sock = bound_socket("127.0.0.1", args.proxy_port)
    sim_port = sim_sock.getsockname()[1]
    peaks = Peaks(engine)
    server = uvicorn.Server(
        serving.uvicorn_config(peaks.app(engine), "127.0.0.1", sim_port, ws="none")
    )
    proxy = FaultProxy(f"http://127.0.0.1:{sim_port}")
    proxying = asyncio.ensure_future(proxy.serve(proxy_sock))
    running = asyncio.ensure_future(server.serve(sockets=[sim_sock]))
    while not server.started:
        if running.done():
            running.result()
        await asyncio.sleep(0.01)
    print(json.dumps({"sim": sim_port, "proxy": proxy.port}), flush=True)
    try:
        await running  # until SIGTERM or SIGINT, which uvicorn handles
    finally:
        engine.abort_all()
        proxying.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await proxying


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--server-info", choices=config.SERVER_INFO_STYLES, default="none")
    parser.add_argument("--slots", type=int, default=4)
    parser.add_argument("--tokens", type=int, default=2000)
    parser.add_argument("--token-delay-ms", type=float, default=5.0)
    parser.add_argument("--sim-port", type=int, default=0)
    parser.add_argument("--proxy-port", type=int, default=0)
    args = parser.parse_args()
    try:
        import uvloop

        uvloop.run(serve(args))
    except ImportError:
        asyncio.run(serve(args))


if __name__ == "__main__":
    main()
