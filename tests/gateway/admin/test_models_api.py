"""GET /api/v0/admin/models: every name a caller can use, the pools and backends behind it, live
state, the detected engine, whether priority is forwarded, and each backend's last failure."""

from __future__ import annotations

import asyncio
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest

from aiplane.catalog import settings_update
from gateway.admin import services
from tests.support.drive import (
    DiesMidStream,
    ScriptedEngine,
    chat,
    configure,
    hold_the_slot,
    json_answer,
    key_for,
    wait_idle,
)
from tests.support.errors import NOT_ADMIN, NOT_SIGNED_IN
from tests.support.factories import make_group
from tests.support.live import add_backend

MODELS = "/api/v0/admin/models"


def overview(client: Any) -> dict[str, Any]:
    response = client.get(MODELS)
    assert response.status_code == 200, response.content
    return dict(response.json())


def model(body: dict[str, Any], name: str) -> dict[str, Any]:
    [found] = [m for m in body["models"] if m["name"] == name]
    return found


def probe_health(gateway: Any, rounds: int = 2) -> None:
    rt = gateway.runtime
    for _ in range(rounds):
        asyncio.run_coroutine_threadsafe(rt.probe_all_health(), rt.loop).result(10)


def detect(gateway: Any) -> None:
    rt = gateway.runtime
    asyncio.run_coroutine_threadsafe(rt.detect_all(), rt.loop).result(15)


def test_every_model_and_alias_is_listed_with_the_pools_and_backends_behind_it(
    gateway: Any, make_sim: Any, carol_client: Any
) -> None:
    one = make_sim(models=["sim-small"])
    two = make_sim(models=["sim-small", "sim-large"])
    add_backend(
        "one", one.url, models=["sim-small"], aliases={"small": "sim-small"}, max_inflight=3
    )
    make_group("research")
    add_backend(
        "two", two.url, pool="research", models=["sim-small", "sim-large"],
        allowed_groups=["research"], max_inflight=5,
    )  # fmt: skip

    body = overview(carol_client)

    assert body["running"] is True
    assert body["priority_enabled"] is False
    assert [(m["name"], m["kind"], m["status"]) for m in body["models"]] == [
        ("sim-large", "chat", "ok"),
        ("sim-small", "chat", "ok"),
        ("small", "chat", "ok"),
    ]
    routes = model(body, "sim-small")["routes"]
    assert [(r["pool"], r["allowed_groups"], r["backend"], r["backend_model"]) for r in routes] == [
        ("default", [], "one", "sim-small"),
        ("research", ["research"], "two", "sim-small"),
    ]
    [alias] = model(body, "small")["routes"]
    assert (alias["backend"], alias["backend_model"]) == ("one", "sim-small")
    assert (alias["healthy"], alias["enabled"], alias["inflight"], alias["max_inflight"]) == (
        True, True, 0, 3,
    )  # fmt: skip
    assert alias["last_error"] is None
    assert alias["priority"] == {"mode": "auto"}


def test_a_request_holding_a_slot_counts_as_in_flight(
    gateway: Any, make_sim: Any, carol_client: Any
) -> None:
    engine = make_sim(slots=0, tokens=2, token_delay=0)
    add_backend("solo", engine.url, max_inflight=2)
    key = key_for("alice")
    with ThreadPoolExecutor(1) as pool:
        held = hold_the_slot(pool, gateway, engine, key)
        [route] = model(overview(carol_client), "sim-small")["routes"]
        assert (route["inflight"], route["max_inflight"]) == (1, 2)
        configure(engine, slots=1)
        assert held.result(timeout=10).status_code == 200
    wait_idle(gateway, "solo")
    [route] = model(overview(carol_client), "sim-small")["routes"]
    assert route["inflight"] == 0


def test_a_failed_health_probe_is_the_last_error_naming_the_url_probed_and_when(
    gateway: Any, carol_client: Any
) -> None:
    sick = ScriptedEngine([json_answer(500, {"error": "down"})], answer_gets=True)
    try:
        add_backend("sick", sick.url, health_path="/health")
        probe_health(gateway)
        body = overview(carol_client)
    finally:
        sick.close()
    [route] = model(body, "sim-small")["routes"]
    assert route["healthy"] is False
    assert model(body, "sim-small")["status"] == "down"
    error = route["last_error"]
    assert error["source"] == "health"
    assert error["message"] == f"GET {sick.url}/health answered 500"
    assert error["at"].endswith("+00:00")


def test_an_unreachable_backend_names_the_connection_failure(
    gateway: Any, make_sim: Any, carol_client: Any
) -> None:
    engine = make_sim()
    url = engine.url
    add_backend("gone", url)
    engine.stop()
    probe_health(gateway)
    [route] = model(overview(carol_client), "sim-small")["routes"]
    assert route["last_error"]["message"].startswith(f"GET {url}/health: ConnectError")


def test_a_request_the_backend_fails_is_its_last_error(gateway: Any, carol_client: Any) -> None:
    failing = ScriptedEngine([json_answer(500, {"error": {"message": "CUDA out of memory"}})])
    try:
        add_backend("failing", failing.url)
        settings_update(values={"gateway.upstream_wait_secs": 1})
        answer = chat(gateway, key_for("alice"))
        body = overview(carol_client)
    finally:
        failing.close()
    assert answer.status_code == 502
    [route] = model(body, "sim-small")["routes"]
    assert route["last_error"]["source"] == "request"
    assert "CUDA out of memory" in route["last_error"]["message"]
    assert route["healthy"] is True  # one failed request is not an outage


def test_an_answer_broken_mid_stream_is_the_backends_last_error(
    gateway: Any, carol_client: Any
) -> None:
    dies = DiesMidStream()
    try:
        add_backend("flaky", dies.url)
        answer = chat(gateway, key_for("alice"), stream=True)
        body = overview(carol_client)
    finally:
        dies.close()
    assert answer.status_code == 200  # the stream had started; it ends with an error event
    [route] = model(body, "sim-small")["routes"]
    assert route["last_error"]["source"] == "request"
    assert "failed mid-answer" in route["last_error"]["message"]


def test_the_detected_engine_and_whether_priority_is_forwarded(
    gateway: Any, make_sim: Any, carol_client: Any
) -> None:
    sglang = make_sim(server_info="sglang", priority_scheduling=True, sglang_low_first=True)
    plain = make_sim(models=["sim-large"])
    add_backend("sglang", sglang.url)
    add_backend("plain", plain.url, models=["sim-large"])
    detect(gateway)
    body = overview(carol_client)
    [fast] = model(body, "sim-small")["routes"]
    assert fast["profile"]["kind"] == "sglang"
    assert fast["priority_forwarded"] is True
    assert fast["forwarding"].startswith("forwarding")
    [slow] = model(body, "sim-large")["routes"]
    assert slow["profile"]["kind"] == "generic"
    assert slow["priority_forwarded"] is False


def test_the_last_error_is_forgotten_when_the_backend_points_at_another_server(
    gateway: Any, make_sim: Any, carol_client: Any
) -> None:
    sick = ScriptedEngine([json_answer(500, {"error": "down"})], answer_gets=True)
    try:
        add_backend("moving", sick.url)
        probe_health(gateway, rounds=1)
        [route] = model(overview(carol_client), "sim-small")["routes"]
        assert route["last_error"] is not None
        healthy = make_sim()
        add_backend("moving", healthy.url)
    finally:
        sick.close()
    [route] = model(overview(carol_client), "sim-small")["routes"]
    assert route["last_error"] is None


def test_without_a_running_gateway_the_stored_topology_is_shown_without_live_state(
    db: None, carol_client: Any
) -> None:
    services.backend_save(data={"name": "cold", "base_url": "http://127.0.0.1:9/v1",
                                "models": ["sim-small"]})  # fmt: skip
    services.pool_save(data={"name": "chat", "backends": ["cold"]}, known_groups=set())
    body = overview(carol_client)
    assert body["running"] is False
    [route] = model(body, "sim-small")["routes"]
    assert (route["healthy"], route["inflight"]) == (None, None)


def test_only_administrators_may_see_the_models(
    db: None, client: Any, alice_client: Any, carol: Any
) -> None:
    assert client.get(MODELS).json() == NOT_SIGNED_IN
    refused = alice_client.get(MODELS)
    assert refused.status_code == 403
    assert refused.json() == NOT_ADMIN


@pytest.mark.parametrize("method", ["post", "put", "delete"])
def test_the_models_overview_only_reads(method: str, carol_client: Any) -> None:
    assert getattr(carol_client, method)(MODELS).status_code == 405
