"""Health and the request path: a backend that is down is said so at once, a missing health path
is not an outage, and a waiter whose backends go down keeps its place but learns why it expired."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest

from aiplane.catalog import settings_update
from gateway.admin import services
from tests.support.drive import (
    ScriptedEngine,
    chat,
    configure,
    engine_stats,
    json_answer,
    wait_until,
)
from tests.support.factories import make_token_with_secret, make_user
from tests.support.live import add_backend

ANSWER = json_answer(200, {"id": "x", "object": "chat.completion", "choices": []}, "OK")


@pytest.fixture
def key(transactional_db: None) -> str:
    return make_token_with_secret(make_user("alice"), name="laptop")[1]


@pytest.fixture
def llama_cpp_python() -> Iterator[ScriptedEngine]:
    """An engine like llama-cpp-python's OpenAI server: no /health (404), /v1/models works."""

    def answer(request: bytes) -> list[bytes]:
        if request.startswith(b"GET /v1/models "):
            return [json_answer(200, {"object": "list", "data": [{"id": "sim-small"}]}, "OK")]
        if request.startswith(b"GET "):
            return [json_answer(404, {"detail": "Not Found"})]
        return [ANSWER]

    engine = ScriptedEngine(answer, answer_gets=True)
    yield engine
    engine.close()


def probe_health(gateway: Any, rounds: int = 3) -> None:
    rt = gateway.runtime
    for _ in range(rounds):
        asyncio.run_coroutine_threadsafe(rt.probe_all_health(), rt.loop).result(10)


def set_health(gateway: Any, name: str, healthy: bool) -> None:
    rt = gateway.runtime
    rt._call_threadsafe(lambda: rt.set_health(name, healthy), 5)


def test_an_engine_without_a_health_path_stays_up_and_serves(gateway, llama_cpp_python, key):
    # It used to be marked down two probes (ten seconds) after it was registered.
    add_backend("llama", llama_cpp_python.url)
    settings_update(values={"gateway.upstream_wait_secs": 1})

    probe_health(gateway)

    assert gateway.runtime.slots["llama"].healthy
    r = chat(gateway, key)
    assert r.status_code == 200, r.text


def test_a_request_whose_only_backend_fails_its_probe_is_refused_at_once(gateway, make_sim, key):
    engine = make_sim(tokens=1, token_delay=0)
    add_backend("solo", engine.url, health_path="/sim/nothing-here-either")
    dead = ScriptedEngine([json_answer(500, {"error": "down"})], answer_gets=True)
    try:
        add_backend("sick", dead.url, pool="sick", models=["sim-large"])
        settings_update(values={"gateway.upstream_wait_secs": 60})
        probe_health(gateway)
        assert not gateway.runtime.slots["sick"].healthy

        r = chat(gateway, key, model="sim-large")

        assert r.status_code == 503, r.text
        assert r.headers["retry-after"] == "5"
        assert r.json()["error"] == {
            "message": "No healthy backend serves 'sim-large' right now (all are down or "
            "disabled); try again later.",
            "type": "api_error",
            "param": None,
            "code": "no_healthy_backend",
        }
        assert gateway.runtime.queue.waiting == 0
        # The healthy one's missing health path fell back to its models list.
        assert gateway.runtime.slots["solo"].healthy
    finally:
        dead.close()


def test_a_waiter_whose_backend_goes_down_keeps_waiting_and_its_expiry_says_why(
    gateway, make_sim, key
):
    gated = make_sim(slots=0, tokens=1, token_delay=0)
    add_backend("solo", gated.url, max_inflight=1)
    with ThreadPoolExecutor(max_workers=2) as pool:
        blocker = pool.submit(chat, gateway, key, "blocker")
        wait_until(lambda: engine_stats(gated)["waiting"] == 1, "the blocker holds the slot")
        settings_update(values={"gateway.upstream_wait_secs": 2})
        waiter = pool.submit(chat, gateway, key, "waiter")
        wait_until(lambda: gateway.runtime.queue.waiting == 1, "the request waits")

        set_health(gateway, "solo", False)
        configure(gated, slots=1)
        assert blocker.result().status_code == 200
        # A blip is no reason to give up a place in line.
        assert gateway.runtime.queue.waiting == 1

        r = waiter.result()
    assert r.status_code == 503, r.text
    assert r.json()["error"]["code"] == "no_healthy_backend"
    assert r.json()["error"]["message"] == (
        "No healthy backend for 'sim-small' came back within 2 seconds; try again later."
    )


def test_a_base_url_saved_before_urls_were_checked_serves_nothing_instead_of_failing(
    gateway, make_sim, key
):

    from gateway.models import Backend

    add_backend("old", make_sim(tokens=1, token_delay=0).url)
    # A row from before the check (the API refuses this port now).
    Backend.objects.filter(name="old").update(base_url="http://127.0.0.1:99999/v1")
    services.apply_topology()

    r = chat(gateway, key)

    assert r.status_code == 503, r.text
    assert r.json()["error"]["code"] == "no_healthy_backend"
