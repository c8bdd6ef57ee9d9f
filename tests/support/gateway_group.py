"""Gateway processes for the shared admission tests, forked from one that imported Django once.

    python -m tests.support.gateway_group N

Each of the N children serves the whole application on a loopback port of its own, as
`manage.py serve --workers` does on a shared one (the same worker function); one JSON line per
child on stdout gives its port and pid. SIGTERM stops them all. Importing the stack takes a few
seconds of CPU, so forking saves that for every process after the first.
"""

from __future__ import annotations

import json
import multiprocessing
import os
import signal
import sys
from typing import Any


def _serve(sock: Any, others: list[Any], bounds: Any) -> None:
    from aiplane.wiring import configured_drain
    from gateway.management.commands.serve import _worker

    for other in others:
        other.close()  # a killed sibling's port must refuse, not queue connections nobody takes
    _worker(sock, "127.0.0.1", sock.getsockname()[1], bounds, configured_drain())


def main() -> int:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "aiplane.settings")
    import django

    django.setup()
    import uvicorn
    from django.db import connections

    # What every child imports anyway; the application itself is built in each child, so
    # that each has its own process name, queue and connections.
    import aiplane.urls
    import aiplane.wiring  # noqa: F401
    import gateway.admission.shared.link  # noqa: F401
    from aiplane.wiring import configured_bounds

    bounds = configured_bounds()
    sockets = [
        uvicorn.Config("aiplane.asgi:application", host="127.0.0.1", port=0).bind_socket()
        for _ in range(int(sys.argv[1]))
    ]
    connections.close_all()
    ctx = multiprocessing.get_context("fork")
    children = []
    for sock in sockets:
        port = sock.getsockname()[1]
        others = [other for other in sockets if other is not sock]
        child = ctx.Process(target=_serve, args=(sock, others, bounds))
        child.start()
        children.append(child)
        print(json.dumps({"port": port, "pid": child.pid}), flush=True)
    for sock in sockets:
        sock.close()  # the children accept; this one only waits for them

    def stop(signum: int, _frame: Any) -> None:
        for child in children:
            if child.is_alive():
                child.terminate()

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    for child in children:
        child.join()
    return 0


if __name__ == "__main__":
    sys.exit(main())
