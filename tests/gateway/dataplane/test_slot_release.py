"""A cancelled request's slot goes to the next request only once its engine connection is closed."""

from __future__ import annotations

import json
import socket
import threading
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest

from aiplane.catalog import settings_update
from tests.support.drive import HTTP, key_for, wait_until
from tests.support.live import LiveGateway, add_backend

ANSWER = json.dumps(
    {
        "id": "c",
        "object": "chat.completion",
        "created": 0,
        "model": "m",
        "choices": [
            {"index": 0, "message": {"role": "assistant", "content": "hi"}, "finish_reason": "stop"}
        ],
        "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
    }
).encode()


class SlowReader:
    """An engine that reads the head of its first request and then nothing more (its body
    piles up in the socket buffers), and answers the next ones. When one arrives it looks,
    without waiting, whether the first connection is closed yet: a request the gateway sent
    while the first was still open at the engine is one more than max_inflight 1."""

    def __init__(self) -> None:
        self.sock = socket.socket()
        # Small buffers, so that a few MB of body cannot all leave the gateway.
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 32 * 1024)
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen()
        self.url = f"http://127.0.0.1:{self.sock.getsockname()[1]}"
        self.first: socket.socket | None = None
        self.heads: list[bytes] = []
        self.first_open_when_next_came: list[bool] = []
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()

    def _serve(self) -> None:
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            threading.Thread(target=self._one, args=(conn,), daemon=True).start()

    def _one(self, conn: socket.socket) -> None:
        data = b""
        while b"\r\n\r\n" not in data:
            chunk = conn.recv(65536)
            if not chunk:
                conn.close()
                return
            data += chunk
        head, _, body = data.partition(b"\r\n\r\n")
        if not head.startswith(b"POST /v1/chat/completions "):  # the gateway's probes
            conn.sendall(
                b"HTTP/1.1 404 Not Found\r\ncontent-length: 0\r\nconnection: close\r\n\r\n"
            )
            conn.close()
            return
        self.heads.append(head)
        if self.first is None:
            self.first = conn  # never read again: the rest of its body stays unsent
            return
        self.first_open_when_next_came.append(_open(self.first))
        length = int(
            next(h for h in head.split(b"\r\n") if h.lower().startswith(b"content-length")).split(
                b":"
            )[1]
        )
        while len(body) < length:
            body += conn.recv(65536)
        conn.sendall(
            b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\n"
            b"content-length: %d\r\nconnection: close\r\n\r\n%s" % (len(ANSWER), ANSWER)
        )
        conn.close()

    def stop(self) -> None:
        self.sock.close()
        if self.first is not None:
            self.first.close()


def _open(conn: socket.socket) -> bool:
    """Whether the peer has not closed the connection: its unread bytes are read past, not
    waited for."""
    conn.setblocking(False)
    try:
        while conn.recv(1 << 20):
            pass
    except BlockingIOError:
        return True
    except OSError:
        return False  # reset
    return False  # end of stream


@pytest.fixture
def slow_reader() -> Iterator[SlowReader]:
    engine = SlowReader()
    yield engine
    engine.stop()


@pytest.fixture(params=["local", "shared"])
def any_gateway(request: Any, transactional_db: None, settings: Any) -> Iterator[LiveGateway]:
    """The whole app served in a thread, with its own queue or sharing admission on Redis."""
    from django.core.asgi import get_asgi_application

    from aiplane.wiring import build_application, configured_bounds
    from gateway.dataplane.serving import GatewayServer

    if request.param == "shared":
        server = request.getfixturevalue("redis_server")
        settings.AIPLANE_REDIS_URL = server.url
        settings.AIPLANE_REDIS_PREFIX = request.getfixturevalue("redis_prefix")
    app = build_application(get_asgi_application())
    app.runtime.background = False
    with GatewayServer(app, bounds=configured_bounds()) as served:
        yield LiveGateway(url=served.url, app=app)


def test_a_cut_short_requests_slot_goes_on_only_once_its_engine_connection_is_closed(
    any_gateway: LiveGateway, slow_reader: SlowReader
) -> None:
    """The first request's body cannot all leave (the engine reads no more of it), so closing
    its connection waits on unsent bytes when the gateway gives up on it (no first byte in
    time). The request waiting for its slot must reach the engine after that connection
    closed, not while it is still open there."""
    settings_update(values={"gateway.first_byte_timeout_secs": 1})
    add_backend("solo", slow_reader.url, max_inflight=1)
    key = key_for("ann")
    queue = any_gateway.runtime.queue

    def chat(text: str) -> int:
        return HTTP.post(
            any_gateway.v1 + "/chat/completions",
            json={"model": "sim-small", "messages": [{"role": "user", "content": text}]},
            headers={"Authorization": f"Bearer {key}"},
        ).status_code

    with ThreadPoolExecutor(max_workers=2) as pool:
        first = pool.submit(chat, "x" * (8 << 20))
        wait_until(lambda: len(slow_reader.heads) == 1, "the first request reaches the engine")
        second = pool.submit(chat, "next")
        wait_until(lambda: queue.waiting == 1, "the second request waits for the slot")
        assert (first.result(timeout=30), second.result(timeout=30)) == (504, 200)
    assert slow_reader.first_open_when_next_came == [False]
