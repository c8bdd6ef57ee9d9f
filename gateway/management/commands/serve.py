"""Serve the gateway, the UI and websockets; optionally with the simulated engine as a demo."""

from __future__ import annotations

import socket
from typing import Any

from django.core.management.base import BaseCommand, CommandError

from aiplane.wiring import configured_bounds, configured_drain
from gateway.admin import services
from gateway.dataplane.drain import DrainSettings
from gateway.dataplane.serving import (
    DrainingServer,
    daphne_server_class,
    open_files_for,
    uvicorn_config,
)
from gateway.sim.config import SimConfig
from gateway.sim.server import SimServer

# How the audit log names the demo's own registrations (no person made them).
ACTOR = "manage.py serve"


def _port_free(host: str, port: int) -> bool:
    with socket.socket() as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # TIME_WAIT is not "taken"
        try:
            sock.bind((host, port))
        except OSError:
            return False
    return True


def serve_workers(host: str, port: int, workers: int, bounds: Any, drain: DrainSettings) -> int:
    """Several uvicorn processes accepting on one socket, sharing admission on Redis.

    The socket is bound here and the workers forked before any of them builds its runtime, so
    each has its own process name, event loop and connections. A signal here goes to every
    worker, and each drains (the second one cuts them short); this one's copy of the socket is
    closed at the first, so once the workers close theirs new connections are refused rather
    than queued where nobody accepts them. The exit status is 0 when every worker's was.
    """
    import multiprocessing
    import os
    import signal

    import uvicorn
    from django.db import connections

    # Each worker's share of a backend should it start while Redis is down (see
    # gateway/admission/shared/queue.py); set it on every host for a group spread over several.
    os.environ.setdefault("AIPLANE_SHARED_PROCESSES", str(workers))
    sock = uvicorn.Config("aiplane.asgi:application", host=host, port=port).bind_socket()
    connections.close_all()  # a forked child must not share the parent's database connection
    ctx = multiprocessing.get_context("fork")
    children = [
        ctx.Process(
            target=_worker, args=(sock, host, port, bounds, drain), name=f"aiplane-worker-{i}"
        )
        for i in range(workers)
    ]
    for child in children:
        child.start()

    def stop(signum: int, _frame: Any) -> None:
        sock.close()
        for child in children:
            if child.is_alive() and child.pid is not None:
                # Ctrl-C reached the whole process group already; pass on only what came here.
                if signum != signal.SIGINT or os.getpgid(child.pid) != os.getpgrp():
                    os.kill(child.pid, signal.SIGTERM)

    signal.signal(signal.SIGINT, stop)
    signal.signal(signal.SIGTERM, stop)
    for child in children:
        child.join()
    sock.close()
    return max((abs(child.exitcode or 0) for child in children), default=0)


def _worker(
    sock: socket.socket, host: str, port: int, bounds: Any, drain: DrainSettings
) -> None:
    _server(host, port, bounds, drain).run(sockets=[sock])


def _server(host: str, port: int, bounds: Any, drain: DrainSettings) -> DrainingServer:
    from aiplane.asgi import application

    config = uvicorn_config(application, host, port, fast=True, bounds=bounds)
    config.log_level = "info"
    return DrainingServer(config, drain)


class Command(BaseCommand):
    help = "Serve aiplane (uvicorn by default, or daphne), with an optional demo engine."

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument("--host", default="127.0.0.1")
        parser.add_argument("--port", type=int, default=8000)
        parser.add_argument("--server", choices=("uvicorn", "daphne"), default="uvicorn")
        parser.add_argument(
            "--demo",
            action="store_true",
            help="start the simulated engine and register it as backend 'sim' on first run",
        )
        parser.add_argument("--sim-port", type=int, default=8100)
        parser.add_argument(
            "--workers",
            type=int,
            default=1,
            help="gateway processes on one port (uvicorn); above 1 needs AIPLANE_REDIS_URL",
        )

    def handle(self, *args: Any, **opts: Any) -> None:
        host, port = opts["host"], opts["port"]
        workers = opts["workers"]
        if workers < 1:
            raise CommandError("--workers must be at least 1")
        if workers > 1:
            from django.conf import settings

            if not settings.AIPLANE_REDIS_URL:
                raise CommandError(
                    "--workers above 1 needs AIPLANE_REDIS_URL: without a shared queue each "
                    "process would admit up to every backend's max_inflight"
                )
            if opts["server"] != "uvicorn":
                raise CommandError("--workers runs uvicorn processes; use --server uvicorn")
        bounds = configured_bounds()
        try:
            drain = configured_drain()
        except ValueError as err:
            raise CommandError(str(err)) from None
        open_files_for(bounds)
        sim = None
        if opts["demo"]:
            sim = self._start_demo(host, port, opts["sim_port"])
        self.stdout.write(
            f"aiplane on http://{host}:{port}/  (OpenAI base URL http://{host}:{port}/v1, "
            f"server {opts['server']}" + (f", {workers} workers)" if workers > 1 else ")")
        )
        self.stdout.write(f"change your password at http://{host}:{port}/account/")
        try:
            if workers > 1:
                status = serve_workers(host, port, workers, bounds, drain)
                if status:
                    raise CommandError(f"a worker exited with status {status}", returncode=status)
            elif opts["server"] == "daphne":
                from daphne.cli import CommandLineInterface

                cli = CommandLineInterface()
                cli.server_class = daphne_server_class(bounds)
                cli.run(["-b", host, "-p", str(port), "aiplane.asgi:application"])
            else:
                _server(host, port, bounds, drain).run()
        finally:
            if sim is not None:
                sim.stop()

    def _demo_token(self, host: str, port: int) -> None:
        """On the first demo run, give the first administrator a token and show a request."""
        from django.contrib.auth import get_user_model

        from accounts.services import token_create

        admin = get_user_model().objects.filter(is_active=True).order_by("pk").first()
        if admin is None:
            return
        _, plaintext = token_create(owner=admin, name="demo", actor=ACTOR)
        self.stdout.write(
            f"a demo token for '{admin.get_username()}' (shown once): {plaintext}\n"
            f"try: curl -s http://{host}:{port}/v1/chat/completions -H 'Authorization: Bearer "
            f"{plaintext}' -H 'Content-Type: application/json' "
            '-d \'{"model":"sim-small","messages":[{"role":"user","content":"hi"}]}\''
        )

    def _start_demo(self, host: str, port: int, sim_port: int) -> SimServer:

        from gateway.models import Backend

        if not _port_free(host, sim_port):
            raise CommandError(
                f"port {sim_port} is taken; pass --sim-port (make serve ENGINE_PORT=...)"
            )
        sim = SimServer(
            SimConfig(
                slots=2,
                tokens=48,
                token_delay=0.04,
                server_info="sglang",
                priority_scheduling=True,
            ),
            host=host,
            port=sim_port,
        )
        sim.start()
        url = f"http://{host}:{sim_port}/v1"
        if not Backend.objects.exists():
            services.backend_save(
                data={
                    "name": "sim",
                    "base_url": url,
                    "max_inflight": 2,
                    "priority": {"mode": "auto"},
                },
                actor=ACTOR,
            )
            services.pool_save(
                data={"name": "chat", "kind": "chat", "backends": ["sim"]},
                known_groups=set(),
                actor=ACTOR,
            )
            services.pool_save(
                data={"name": "embeddings", "kind": "embedding", "backends": ["sim"]},
                known_groups=set(),
                actor=ACTOR,
            )
            self.stdout.write(f"registered the simulated engine at {url} as backend 'sim'")
            self._demo_token(host, port)
        elif Backend.objects.filter(name="sim").exclude(base_url=url).exists():
            # The engine moved (another --sim-port): an audited change like any other.
            services.backend_put(fields={"name": "sim", "base_url": url}, actor=ACTOR)
        self.stdout.write(f"simulated engine on {url} (models sim-small, sim-large)")
        return sim
