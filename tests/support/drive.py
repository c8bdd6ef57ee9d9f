"""Helpers that drive the live gateway and its simulated engines in the integration tests: calls,
gates, what each engine received, and scrapes."""

from __future__ import annotations

import contextlib
import json
import re
import socket
import threading
import time
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any
from urllib.parse import urlsplit

import httpx
from prometheus_client.parser import text_string_to_metric_families

from tests.support.factories import make_group, make_token_with_secret, make_user

# One client for every call: building one per request (its TLS context) costs more than the call.
# No keep-alive, so no connection outlives the servers of the test that opened it.
HTTP = httpx.Client(timeout=30, limits=httpx.Limits(max_keepalive_connections=0))


def chat(
    gateway: Any,
    key: str,
    label: str = "hi",
    *,
    headers: dict[str, str] | None = None,
    **body: Any,
) -> httpx.Response:
    """A chat completion through the gateway; `label` is the user message, `body` extra fields."""
    payload = {"model": "sim-small", "messages": [{"role": "user", "content": label}], **body}
    return HTTP.post(
        gateway.v1 + "/chat/completions",
        json=payload,
        headers={"Authorization": f"Bearer {key}", **(headers or {})},
    )


def wait_until(predicate: Callable[[], bool], what: str, timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting until {what}")
        time.sleep(0.005)


def configure(engine: Any, **changes: Any) -> None:
    """Change a simulated engine at run time; `slots=0` closes its gate, `slots=1` opens it."""
    HTTP.post(engine.url + "/sim/config", json=changes).raise_for_status()


def engine_stats(engine: Any) -> dict[str, int]:
    return HTTP.get(engine.url + "/sim/stats").json()


def engine_records(engine: Any) -> list[dict[str, Any]]:
    """The requests the engine received, in order, its /v1/models probes left out."""
    records = HTTP.get(engine.url + "/sim/requests").json()
    return [r for r in records if r["path"] != "/v1/models"]


def forwarded(engine: Any) -> dict[str, Any]:
    """The body of the last request the engine received."""
    return engine_records(engine)[-1]["body"]


def labels_seen(engine: Any) -> list[str]:
    """The first message of each request the engine received, in order."""
    return [r["body"]["messages"][0]["content"] for r in engine_records(engine)]


def waiting(gateway: Any) -> int:
    return gateway.runtime.queue.waiting


def inflight(gateway: Any, backend: str) -> int:
    return gateway.runtime.slots[backend].inflight


def wait_idle(gateway: Any, *backends: str) -> None:
    """Every slot of these backends freed and nobody waiting (a release may trail the response)."""
    for name in backends:
        wait_until(lambda name=name: inflight(gateway, name) == 0, f"{name} has no inflight")
    wait_until(lambda: waiting(gateway) == 0, "nobody waits")


def hold_the_slot(
    pool: ThreadPoolExecutor, gateway: Any, engine: Any, key: str, *, backend: str = "solo"
) -> Future[httpx.Response]:
    """Start a request that takes the only slot of `backend` and sits in the gated engine."""
    future = pool.submit(chat, gateway, key, "blocker")
    wait_until(lambda: engine_stats(engine)["waiting"] == 1, "the blocker holds the slot")
    assert inflight(gateway, backend) == 1
    return future


def open_raw(gateway: Any, key: str, label: str = "raw", **body: Any) -> socket.socket:
    """Send a chat request on a bare socket and leave it unread; closing it is a disconnect."""
    url = urlsplit(gateway.url)
    payload = json.dumps(
        {"model": "sim-small", "messages": [{"role": "user", "content": label}], **body}
    ).encode()
    sock = socket.create_connection((url.hostname, url.port), timeout=10)
    head = (
        f"POST /v1/chat/completions HTTP/1.1\r\nHost: {url.netloc}\r\n"
        f"Authorization: Bearer {key}\r\nContent-Type: application/json\r\n"
        f"Content-Length: {len(payload)}\r\n\r\n"
    )
    sock.sendall(head.encode() + payload)
    return sock


def key_for(username: str, group_priority: str | None = None, **token: Any) -> str:
    """A user (in a group of the given priority, if any) and a token named '<username>-token'."""
    user = make_user(username)
    if group_priority is not None:
        make_group(f"{username}-{group_priority}", priority=group_priority, members=[user])
    return make_token_with_secret(user, name=f"{username}-token", **token)[1]


def scrape(gateway: Any) -> dict[tuple[str, frozenset[tuple[str, str]]], float]:
    """GET /metrics on the live server, as {(sample name, labels): value}."""
    response = HTTP.get(gateway.url + "/metrics")
    assert response.status_code == 200, response.text
    return {
        (sample.name, frozenset(sample.labels.items())): sample.value
        for family in text_string_to_metric_families(response.text)
        for sample in family.samples
    }


def sample(
    scraped: dict[tuple[str, frozenset[tuple[str, str]]], float], name: str, **labels: str
) -> float:
    """One sample's value; a missing sample fails with the names that do exist."""
    key = (name, frozenset(labels.items()))
    if key not in scraped:
        present = sorted({n for n, _ in scraped if n.startswith(name)})
        raise AssertionError(f"no sample {name}{labels}; present: {present}")
    return scraped[key]


class ScriptedEngine:
    """A raw-socket engine that answers every request by playing a script: byte strings to send,
    numbers of seconds to pause, and None to drop the connection. It can break HTTP as no real
    server library would (framing, status lines), which is what fault tests need.

    The script may depend on the request (a function of its raw bytes). After it the engine waits
    for the next request on the same connection (an answer left unfinished is so a silent
    engine), unless the script dropped it; `close()` closes every connection.
    """

    def __init__(self, script: Any, *, answer_gets: bool = False) -> None:
        self.script = script
        # Detection and health probes (GETs, and empty POSTs to the Messages and Responses
        # paths); unless asked to, the engine knows none of them.
        self.answer_gets = answer_gets
        self.requests: list[bytes] = []  # the bodies of the POSTs it received
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(64)
        self.url = f"http://127.0.0.1:{self.sock.getsockname()[1]}"
        self._conns: list[socket.socket] = []
        threading.Thread(target=self._serve, name="scripted-engine", daemon=True).start()

    def _serve(self) -> None:
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return  # closed
            self._conns.append(conn)
            threading.Thread(target=self._answer, args=(conn,), daemon=True).start()

    def _answer(self, conn: socket.socket) -> None:
        data = b""
        try:
            while True:  # keep-alive: the next request may come on the same connection
                while b"\r\n\r\n" not in data:
                    chunk = conn.recv(65536)
                    if not chunk:
                        return
                    data += chunk
                head, _, data = data.partition(b"\r\n\r\n")
                length = re.search(rb"(?i)content-length:\s*(\d+)", head)
                size = int(length.group(1)) if length else 0
                while len(data) < size:
                    data += conn.recv(65536)
                body, data = data[:size], data[size:]
                probe = head.startswith((b"GET ", b"POST /v1/messages", b"POST /v1/responses"))
                if probe and not self.answer_gets:
                    conn.sendall(NOT_FOUND)
                    continue
                if head.startswith(b"POST "):
                    self.requests.append(body)
                request = head + b"\r\n\r\n" + body
                steps = self.script(request) if callable(self.script) else self.script
                for step in steps:
                    if step is None:
                        conn.close()
                        return
                    if isinstance(step, int | float):
                        time.sleep(step)
                    else:
                        conn.sendall(step)
        except OSError:
            return

    def close(self) -> None:
        self.sock.close()
        for conn in self._conns:
            with contextlib.suppress(OSError):
                conn.close()


NOT_FOUND = (
    b"HTTP/1.1 404 Not Found\r\ncontent-type: application/json\r\ncontent-length: 2\r\n\r\n{}"
)


def http_head(status: int = 200, reason: str = "OK", **headers: str) -> bytes:
    """A status line and headers (underscores in names become dashes)."""
    lines = [f"HTTP/1.1 {status} {reason}"]
    lines += [f"{name.replace('_', '-')}: {value}" for name, value in headers.items()]
    return ("\r\n".join(lines) + "\r\n\r\n").encode()


def chunk(data: bytes) -> bytes:
    """One chunk of a chunked body."""
    return f"{len(data):x}\r\n".encode() + data + b"\r\n"


def json_answer(status: int, payload: Any, reason: str = "Error") -> bytes:
    body = json.dumps(payload).encode()
    return (
        http_head(status, reason, content_type="application/json", content_length=str(len(body)))
        + body
    )


class DiesMidStream:
    """An engine that starts an event stream, sends one event and drops the socket, every time."""

    EVENT = b'data: {"choices":[{"delta":{"content":"tok0 "}}]}\n\n'

    def __init__(self) -> None:
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(8)
        self.url = f"http://127.0.0.1:{self.sock.getsockname()[1]}"
        threading.Thread(target=self._serve, name="dies-mid-stream", daemon=True).start()

    def _serve(self) -> None:
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return  # closed
            conn.recv(65536)
            conn.sendall(
                b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\n"
                b"transfer-encoding: chunked\r\n\r\n"
                + f"{len(self.EVENT):x}\r\n".encode()
                + self.EVENT
                + b"\r\n"
            )
            time.sleep(0.05)
            conn.close()  # no terminating chunk: the stream is cut short

    def close(self) -> None:
        self.sock.close()
