"""Deadlines for a request's headers and body, the keep-alive bound and the connection bound,
on the whole app under uvicorn with each HTTP protocol (httptools and h11), over loopback."""

from __future__ import annotations

import asyncio
import contextlib
import json
import select
import socket
import time
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from websockets.exceptions import InvalidStatus
from websockets.sync.client import connect

from gateway.dataplane.server_protocol import Bounds, StatusLineHeld
from gateway.dataplane.serving import GatewayServer
from tests.support.drive import HTTP, chat, inflight, key_for, wait_until, waiting
from tests.support.live import LiveGateway, add_backend, live_gateway

# The database only sets the test up (connection bounds are the HTTP protocol's):
# the PostgreSQL pass of `make test` leaves it to the SQLite pass.
pytestmark = pytest.mark.database_neutral

# Generous: every wait below ends far sooner when the server does its part.
WAIT = 10.0
LONG = 60.0  # a bound a test does not exercise
QUICK = Bounds(header=0.3, body=LONG, body_idle=0.3, keepalive=0.3, max_connections=64)


@pytest.fixture(params=["httptools", "h11"])
def serve(request: Any, transactional_db: None) -> Iterator[Callable[[Bounds], LiveGateway]]:
    """Start the whole app with these bounds under the protocol of the test's parameter."""
    with contextlib.ExitStack() as started:
        yield lambda bounds: started.enter_context(live_gateway(bounds=bounds, http=request.param))


def opened(gw: Any) -> socket.socket:
    sock = socket.create_connection(("127.0.0.1", gw.server.port), timeout=WAIT)
    return sock


def answer(sock: socket.socket) -> tuple[int, dict[str, str], bytes]:
    """Read one HTTP answer with a Content-Length body: status, headers, body."""
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = sock.recv(65536)
        assert chunk, f"the connection closed before an answer: {data!r}"
        data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    status_line, *lines = head.decode("latin-1").split("\r\n")
    headers = {}
    for line in lines:
        name, _, value = line.partition(":")
        headers[name.strip().lower()] = value.strip()
    while len(body) < int(headers.get("content-length", 0)):
        chunk = sock.recv(65536)
        assert chunk, "the connection closed mid-body"
        body += chunk
    return int(status_line.split()[1]), headers, body


def is_closed(sock: socket.socket) -> bool:
    """Wait for the server to close the connection (after any answer it sent)."""
    try:
        while chunk := sock.recv(65536):
            assert not chunk.startswith(b"HTTP/"), f"an answer where a close was due: {chunk!r}"
    except ConnectionResetError:
        pass
    return True


def closed_among(socks: list[socket.socket], timeout: float) -> set[socket.socket]:
    """Which of these connections the server closes within the wait (they sent nothing)."""
    closed: set[socket.socket] = set()
    deadline = time.monotonic() + timeout
    while len(closed) < len(socks) and time.monotonic() < deadline:
        ready, _, _ = select.select([s for s in socks if s not in closed], [], [], 0.1)
        for sock in ready:
            try:
                assert sock.recv(1) == b""
            except ConnectionResetError:
                pass
            closed.add(sock)
    return closed


def request(path: str, key: str | None = None, body: bytes | None = None) -> bytes:
    lines = [f"{'POST' if body is not None else 'GET'} {path} HTTP/1.1", "Host: 127.0.0.1"]
    if key is not None:
        lines.append(f"Authorization: Bearer {key}")
    if body is not None:
        lines += ["Content-Type: application/json", f"Content-Length: {len(body)}"]
    return ("\r\n".join(lines) + "\r\n\r\n").encode() + (body or b"")


def assert_timed_out(sock: socket.socket) -> None:
    status, headers, body = answer(sock)
    assert status == 408
    assert headers["connection"] == "close"
    assert json.loads(body) == {
        "error": {
            "message": "The request was not received in time.",
            "type": "invalid_request_error",
            "param": None,
            "code": "request_timeout",
        }
    }
    assert is_closed(sock)


CHAT = json.dumps({"model": "sim-small", "messages": [{"role": "user", "content": "hi"}]}).encode()


def test_a_client_that_stops_halfway_through_its_headers_gets_408_and_others_are_served(
    serve: Any, sim: Any
) -> None:
    gw = serve(QUICK)
    add_backend("sim1", sim.url)
    key = key_for("alice")
    slow = opened(gw)
    slow.sendall(request("/v1/chat/completions", key, CHAT)[:60])
    assert chat(gw, key).status_code == 200
    assert HTTP.get(gw.url + "/login/").status_code == 200
    assert_timed_out(slow)


def test_a_websocket_handshake_that_stops_halfway_gets_408(serve: Any) -> None:
    gw = serve(QUICK)
    with opened(gw) as sock:
        sock.sendall(
            b"GET /ws/queue HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\n"
            b"Connection: Upgrade\r\nSec-WebSocket-Version: 13\r\n"
        )
        assert_timed_out(sock)


def test_the_header_deadline_holds_on_a_kept_alive_connection_too(serve: Any) -> None:
    gw = serve(QUICK)
    with opened(gw) as sock:
        sock.sendall(request("/login/"))
        assert answer(sock)[0] == 200
        sock.sendall(request("/login/")[:20])
        assert_timed_out(sock)


def test_a_connection_that_never_sends_a_byte_is_closed_without_an_answer(serve: Any) -> None:
    gw = serve(QUICK)
    with opened(gw) as sock:
        assert is_closed(sock)


def test_a_body_that_stalls_gets_408_and_its_v1_request_holds_nothing(serve: Any, sim: Any) -> None:
    gw = serve(QUICK)
    add_backend("solo", sim.url, max_inflight=1)
    key = key_for("alice")
    stalled = opened(gw)
    whole = request("/v1/chat/completions", key, CHAT)
    stalled.sendall(whole[: len(whole) - 10])
    assert chat(gw, key).status_code == 200  # the only slot is free meanwhile
    assert_timed_out(stalled)
    # The request's task has ended: no coroutine, connection or slot is left behind.
    wait_until(lambda: not gw.server.state.tasks, "the stalled request's task ends")
    assert (inflight(gw, "solo"), waiting(gw)) == (0, 0)
    assert chat(gw, key).status_code == 200


def test_a_body_that_trickles_in_is_cut_at_the_total_deadline(serve: Any) -> None:
    gw = serve(Bounds(header=LONG, body=0.5, body_idle=LONG, keepalive=LONG, max_connections=64))
    with opened(gw) as sock:
        sock.sendall(request("/api/v0/session/login", body=b" " * 10_000)[:-10_000])
        deadline = time.monotonic() + WAIT
        while not select.select([sock], [], [], 0.05)[0]:
            assert time.monotonic() < deadline, "the trickle was never cut"
            sock.sendall(b" ")
        assert_timed_out(sock)


async def _reads_late(scope: dict[str, Any], receive: Any, send: Any) -> None:
    """An app that takes its time before it reads the body, then says how much came."""
    import asyncio

    if scope["type"] == "lifespan":
        await receive()
        await send({"type": "lifespan.startup.complete"})
        await receive()
        await send({"type": "lifespan.shutdown.complete"})
        return
    await asyncio.sleep(1.0)  # longer than the body's idle deadline
    size, more = 0, True
    while more:
        message = await receive()
        assert message["type"] == "http.request"
        size, more = size + len(message.get("body", b"")), message.get("more_body", False)
    body = str(size).encode()
    headers = [(b"content-length", b"%d" % len(body))]
    await send({"type": "http.response.start", "status": 200, "headers": headers})
    await send({"type": "http.response.body", "body": body})


@pytest.fixture(params=["httptools", "h11"])
def late_reader(request: Any) -> Iterator[GatewayServer]:
    with GatewayServer(_reads_late, bounds=QUICK, http=request.param) as server:
        yield server


def test_a_large_body_the_app_is_slow_to_read_is_never_late(late_reader: GatewayServer) -> None:
    size = 4 * 1024 * 1024  # far more than the server reads ahead before the app takes it
    with socket.create_connection(("127.0.0.1", late_reader.port), timeout=WAIT) as sock:
        head = f"POST / HTTP/1.1\r\nHost: x\r\nContent-Length: {size}\r\n\r\n"
        sock.sendall(head.encode() + b"x" * size)
        assert answer(sock)[::2] == (200, str(size).encode())


def test_a_body_the_app_has_not_asked_for_yet_is_never_late(late_reader: GatewayServer) -> None:
    with socket.create_connection(("127.0.0.1", late_reader.port), timeout=WAIT) as sock:
        sock.sendall(
            b"POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\nExpect: 100-continue\r\n\r\n"
        )
        assert sock.recv(100).startswith(b"HTTP/1.1 100 ")
        sock.sendall(b"hello")
        assert answer(sock)[::2] == (200, b"5")


def test_an_idle_kept_alive_connection_is_closed_after_the_keepalive_bound(serve: Any) -> None:
    gw = serve(QUICK)
    with opened(gw) as sock:
        sock.sendall(request("/login/"))
        assert answer(sock)[0] == 200
        # Shorter than uvicorn's own 5 s, many times the bound of 0.3 s.
        sock.settimeout(3.0)
        assert is_closed(sock)


def test_a_connection_answered_before_its_body_ended_is_closed_after_the_keepalive_bound(
    serve: Any,
) -> None:
    gw = serve(QUICK)
    with opened(gw) as sock:
        # A wrong token is refused before the body is read.
        whole = request("/v1/chat/completions", "wrong", b" " * 200_000)
        sock.sendall(whole[:-199_000])
        assert answer(sock)[0] == 401
        sock.sendall(whole[-199_000:])
        sock.settimeout(3.0)  # shorter than uvicorn's own 5 s, many times the bound
        assert is_closed(sock)


FEW = Bounds(header=LONG, body=LONG, body_idle=LONG, keepalive=LONG, max_connections=2)


def assert_refused(sock: socket.socket) -> None:
    status, headers, body = answer(sock)
    assert status == 503
    assert headers["retry-after"] == "1"
    assert json.loads(body)["error"]["code"] == "too_many_connections"
    assert is_closed(sock)


def test_connections_beyond_the_bound_get_503_and_the_open_ones_keep_working(
    serve: Any,
) -> None:
    gw = serve(FEW)
    holders = [opened(gw), opened(gw)]
    for sock in holders:
        sock.sendall(request("/login/"))
        assert answer(sock)[0] == 200
    extra = opened(gw)
    extra.sendall(request("/login/"))
    assert_refused(extra)
    for sock in holders:  # unlike uvicorn's limit_concurrency, which refuses these too
        sock.sendall(request("/login/"))
        assert answer(sock)[0] == 200
    holders.pop().close()

    def served() -> bool:
        with opened(gw) as sock:
            sock.sendall(request("/login/"))
            return answer(sock)[0] == 200

    wait_until(served, "a freed place serves a new connection")
    holders[0].close()


def test_refused_connections_do_not_pile_up(serve: Any) -> None:
    gw = serve(FEW)
    holders = [opened(gw) for _ in range(FEW.max_connections)]
    waiting_for_503 = [opened(gw) for _ in range(FEW.refusing)]
    beyond = [opened(gw) for _ in range(20)]
    assert closed_among(beyond, WAIT) == set(beyond)
    assert not closed_among(waiting_for_503 + holders, 0.2)
    assert len(gw.server.state.connections) == FEW.max_connections
    for sock in waiting_for_503:
        sock.sendall(request("/login/"))
        assert_refused(sock)
    for sock in holders:
        sock.sendall(request("/login/"))
        assert answer(sock)[0] == 200
        sock.close()


def test_a_websocket_is_one_of_the_connections_and_a_refused_one_never_becomes_one(
    serve: Any, carol: Any, login: Any
) -> None:
    gw = serve(Bounds(header=LONG, body=LONG, body_idle=LONG, keepalive=LONG, max_connections=1))
    session = f"sessionid={login(carol).cookies['sessionid'].value}"
    url = gw.url.replace("http://", "ws://") + "/ws/queue"

    def websocket() -> Any:
        return connect(url, additional_headers={"Cookie": session}, origin=gw.url, open_timeout=5)

    with websocket() as ws:
        json.loads(ws.recv(timeout=WAIT))
        with opened(gw) as sock:
            sock.sendall(request("/login/"))
            assert_refused(sock)
    wait_until(lambda: not gw.server.state.connections, "the websocket's place is free")
    with opened(gw) as holder:
        holder.sendall(request("/login/"))
        assert answer(holder)[0] == 200
        with pytest.raises(InvalidStatus) as refused:
            websocket()
        assert refused.value.response.status_code == 503


# ----- the head of an answer leaves with its first piece of body ------------------------------


class _Recording:
    """A transport that records what is written, as the loop would send it."""

    def __init__(self) -> None:
        self.writes: list[bytes] = []
        self.closed = False

    def write(self, data: bytes) -> None:
        self.writes.append(data)

    def is_closing(self) -> bool:
        return self.closed

    def close(self) -> None:
        self.closed = True


async def test_an_answers_head_and_first_piece_of_body_leave_in_one_write() -> None:
    transport = _Recording()
    held = StatusLineHeld(transport, asyncio.get_running_loop())  # type: ignore[arg-type]
    held.write(b"HTTP/1.1 200 OK\r\n\r\n")
    held.write(b"body")
    held.write(b"more")
    await asyncio.sleep(0)
    assert transport.writes == [b"HTTP/1.1 200 OK\r\n\r\nbody", b"more"]


async def test_a_head_with_no_body_after_it_leaves_at_the_next_turn_of_the_loop() -> None:
    transport = _Recording()
    held = StatusLineHeld(transport, asyncio.get_running_loop())  # type: ignore[arg-type]
    held.write(b"HTTP/1.1 204 No Content\r\n\r\n")
    assert transport.writes == []
    await asyncio.sleep(0)
    assert transport.writes == [b"HTTP/1.1 204 No Content\r\n\r\n"]
    held.write(b"next")
    assert transport.writes[-1] == b"next"


async def test_closing_writes_a_held_head_first() -> None:
    transport = _Recording()
    held = StatusLineHeld(transport, asyncio.get_running_loop())  # type: ignore[arg-type]
    held.write(b"HTTP/1.1 200 OK\r\nconnection: close\r\n\r\n")
    held.close()
    assert transport.writes == [b"HTTP/1.1 200 OK\r\nconnection: close\r\n\r\n"]
    assert transport.closed and held.is_closing()
    await asyncio.sleep(0)
    assert len(transport.writes) == 1
