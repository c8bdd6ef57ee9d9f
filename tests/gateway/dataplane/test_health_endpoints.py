"""GET /healthz and /readyz on the live app: alive, ready, starting, draining, database away,
Redis away; unauthenticated, and nothing but GET and HEAD."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from gateway.dataplane.drain import Drain, DrainSettings
from gateway.dataplane.health import Health
from tests.support.drive import wait_until
from tests.support.live import LiveGateway, build_app, live_gateway


def _on_loop(live: LiveGateway, coro: Any) -> Any:
    loop = live.runtime.loop
    return asyncio.run_coroutine_threadsafe(coro, loop).result(10)


def test_healthz_says_alive_to_anyone_without_a_token(gateway: LiveGateway) -> None:
    r = httpx.get(gateway.url + "/healthz")
    assert r.status_code == 200
    assert r.json() == {"status": "alive"}
    assert r.headers["cache-control"] == "no-store"


def test_readyz_says_ready_with_every_check_once_started(gateway: LiveGateway) -> None:
    r = httpx.get(gateway.url + "/readyz")
    assert r.status_code == 200
    assert r.json() == {
        "status": "ready",
        "checks": {
            "started": True,
            "draining": False,
            "topology": "ok",
            "database": "ok",
            "redis": "off",
        },
    }


def test_head_answers_without_a_body_and_other_methods_are_refused(gateway: LiveGateway) -> None:
    head = httpx.head(gateway.url + "/readyz")
    assert head.status_code == 200 and head.content == b""
    post = httpx.post(gateway.url + "/healthz")
    assert post.status_code == 405
    assert post.headers["allow"] == "GET, HEAD"


def test_readyz_says_starting_before_the_runtime_started(transactional_db: None) -> None:
    app = build_app()
    sent: list[dict[str, Any]] = []

    async def receive() -> dict[str, Any]:
        return {"type": "http.request", "body": b""}

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    scope = {"type": "http", "method": "GET", "path": "/readyz", "headers": []}
    asyncio.run(app(scope, receive, send))
    assert sent[0]["status"] == 503
    assert b'"status":"starting"' in sent[1]["body"]
    assert not app.runtime.started  # asking did not start it


def test_readyz_says_draining_at_once_when_the_drain_begins(gateway: LiveGateway) -> None:
    drain = Drain(gateway.runtime, DrainSettings(timeout=600, grace=600))
    stopped: list[bool] = []

    async def begin() -> None:
        drain.begin(stop_accepting=lambda: stopped.append(True))

    _on_loop(gateway, begin())
    r = httpx.get(gateway.url + "/readyz")
    assert r.status_code == 503
    assert r.json()["status"] == "draining"
    assert httpx.get(gateway.url + "/healthz").status_code == 200
    assert stopped == []  # still within the grace


def test_readyz_says_not_ready_while_the_database_does_not_answer(gateway: LiveGateway) -> None:
    async def unreachable() -> None:
        raise ConnectionError("the database is away")

    health = Health(gateway.runtime, database=unreachable)
    status, checks = _on_loop(gateway, health.readiness())
    assert (status, checks["database"]) == ("not_ready", "unreachable")

    async def hangs() -> None:
        await asyncio.sleep(60)

    health = Health(gateway.runtime, database=hangs)
    status, checks = _on_loop(gateway, health.readiness())
    assert (status, checks["database"]) == ("not_ready", "timeout")


def test_a_probe_storm_asks_the_database_once(gateway: LiveGateway) -> None:
    asked: list[int] = []

    async def counted() -> None:
        asked.append(1)
        await asyncio.sleep(0.2)

    health = Health(gateway.runtime, database=counted)

    async def storm() -> list[tuple[str, dict[str, Any]]]:
        return await asyncio.gather(*(health.readiness() for _ in range(50)))

    answers = _on_loop(gateway, storm())
    assert {status for status, _ in answers} == {"ready"}
    assert len(asked) == 1


@pytest.fixture
def shared_gateway(transactional_db: None, private_redis: Any, settings: Any) -> Iterator[Any]:
    from aiplane.wiring import configured_bounds

    settings.AIPLANE_REDIS_URL = private_redis.url
    settings.AIPLANE_REDIS_PREFIX = "h:"
    with live_gateway(bounds=configured_bounds()) as live:
        yield live, private_redis


def test_readyz_says_not_ready_while_redis_is_away_and_ready_once_it_is_back(
    shared_gateway: Any,
) -> None:
    live, redis = shared_gateway

    def status() -> tuple[int, str]:
        r = httpx.get(live.url + "/readyz")
        return r.status_code, r.json()["checks"]["redis"]

    wait_until(lambda: status() == (200, "ok"), "ready on Redis")
    redis.stop()
    wait_until(lambda: status() == (503, "away"), "Redis away", timeout=30)
    redis.start()
    wait_until(lambda: status() == (200, "ok"), "back on Redis", timeout=30)
