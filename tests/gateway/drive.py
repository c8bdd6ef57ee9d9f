"""Helpers that drive the live gateway for the observability tests: calls, gates and scrapes."""

from __future__ import annotations

import json
import socket
import time
from collections.abc import Callable
from typing import Any
from urllib.parse import urlsplit

import httpx
from prometheus_client.parser import text_string_to_metric_families

from tests.factories import make_group, make_token_with_secret, make_user


def chat(
    gateway: Any,
    key: str,
    label: str = "hi",
    *,
    headers: dict[str, str] | None = None,
    **body: Any,
) -> httpx.Response:
    payload = {"model": "sim-small", "messages": [{"role": "user", "content": label}], **body}
    return httpx.post(
        gateway.v1 + "/chat/completions",
        json=payload,
        headers={"Authorization": f"Bearer {key}", **(headers or {})},
        timeout=30,
    )


def wait_until(predicate: Callable[[], bool], what: str, timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting until {what}")
        time.sleep(0.005)


def configure(engine: Any, **changes: Any) -> None:
    """Change a simulated engine at run time; `slots=0` closes its gate, `slots=1` opens it."""
    httpx.post(engine.url + "/sim/config", json=changes, timeout=10).raise_for_status()


def engine_stats(engine: Any) -> dict[str, int]:
    return httpx.get(engine.url + "/sim/stats", timeout=10).json()


def waiting(gateway: Any) -> int:
    return gateway.runtime.queue.waiting


def inflight(gateway: Any, backend: str) -> int:
    return gateway.runtime.slots[backend].inflight


def open_raw(gateway: Any, key: str, label: str = "raw") -> socket.socket:
    """Send a chat request on a bare socket and leave it unread; closing it is a disconnect."""
    url = urlsplit(gateway.url)
    body = json.dumps(
        {"model": "sim-small", "messages": [{"role": "user", "content": label}]}
    ).encode()
    sock = socket.create_connection((url.hostname, url.port), timeout=10)
    head = (
        f"POST /v1/chat/completions HTTP/1.1\r\nHost: {url.netloc}\r\n"
        f"Authorization: Bearer {key}\r\nContent-Type: application/json\r\n"
        f"Content-Length: {len(body)}\r\n\r\n"
    )
    sock.sendall(head.encode() + body)
    return sock


def key_for(username: str, group_priority: str | None = None, **token: Any) -> str:
    """A user (in a group of the given priority, if any) and a token named '<username>-token'."""
    user = make_user(username)
    if group_priority is not None:
        make_group(f"{username}-{group_priority}", priority=group_priority, members=[user])
    return make_token_with_secret(user, name=f"{username}-token", **token)[1]


def scrape(gateway: Any) -> dict[tuple[str, frozenset[tuple[str, str]]], float]:
    """GET /metrics on the live server, as {(sample name, labels): value}."""
    response = httpx.get(gateway.url + "/metrics", timeout=10)
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
