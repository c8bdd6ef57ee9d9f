"""Forwarding end to end: retries on another replica, passed-through errors, what each engine sees.

Backends in a pool are ordered by name and least_inflight breaks ties in that order, so with idle
backends the first try goes to the alphabetically first one ("a-...") and a retry to the next.
The engines' own records show what each one received.
"""

from __future__ import annotations

import asyncio
import re
import socket
import threading
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import httpx
import pytest

from aiplane.catalog import settings_update
from tests.support.drive import (
    HTTP,
    DiesMidStream,
    chat,
    configure,
    engine_records,
    engine_stats,
    forwarded,
    labels_seen,
    wait_until,
)
from tests.support.factories import make_group, make_token_with_secret, make_user
from tests.support.live import add_backend

VLLM_STYLE = {"mode": "custom", "mapping": {"field": "priority", "low": 1, "medium": 0, "high": -1}}


class HeldFailure:
    """A backend that takes requests and answers each with a 503 only when the test says so."""

    def __init__(self) -> None:
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(8)
        self.url = f"http://127.0.0.1:{self.sock.getsockname()[1]}"
        self.received = threading.Event()
        self.fail = threading.Event()
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self) -> None:
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return  # closed
            with conn:
                data = b""
                while b"\r\n\r\n" not in data:
                    data += conn.recv(65536)
                head, _, body = data.partition(b"\r\n\r\n")
                found = re.search(rb"content-length: *(\d+)", head, re.IGNORECASE)
                length = int(found.group(1)) if found else 0
                while len(body) < length:
                    body += conn.recv(65536)
                if not head.startswith(b"POST /v1/chat/completions "):
                    # Detection and health probes: nothing is served there, at once.
                    conn.sendall(
                        b"HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
                    )
                    continue
                self.received.set()
                self.fail.wait(10)
                conn.sendall(
                    b"HTTP/1.1 503 Service Unavailable\r\nContent-Type: application/json\r\n"
                    b"Content-Length: 2\r\nConnection: close\r\n\r\n{}"
                )

    def close(self) -> None:
        self.sock.close()


def closed_port_url() -> str:
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    sock.close()  # nothing listens there now
    return f"http://127.0.0.1:{port}"


def detect(gateway: Any) -> None:
    """Run engine detection on the server's loop and wait for the rebuilt registry."""
    rt = gateway.runtime
    asyncio.run_coroutine_threadsafe(rt.detect_all(), rt.loop).result(10)


@pytest.fixture
def key(transactional_db: None) -> str:
    alice = make_user("alice")
    return make_token_with_secret(alice, name="laptop")[1]


@pytest.fixture
def keys(gateway: Any) -> dict[str, str]:
    """One caller per class, from their groups, with prioritization on."""
    settings_update(values={"gateway.priority_enabled": True})
    out = {}
    for cls in ("low", "medium", "high"):
        user = make_user(f"user-{cls}")
        make_group(f"group-{cls}", priority=cls, members=[user])
        out[cls] = make_token_with_secret(user, name=f"{cls}-token")[1]
    return out


def instant(make_sim: Any, **config: Any) -> Any:
    return make_sim(tokens=2, token_delay=0, **config)


# ----- retries --------------------------------------------------------------------------------


def test_a_503_before_any_byte_is_retried_on_another_replica(gateway, make_sim, key):
    flaky, steady = instant(make_sim), instant(make_sim)
    add_backend("a-flaky", flaky.url)
    add_backend("b-steady", steady.url)
    configure(flaky, fail_next=1, fail_status=503)

    r = chat(gateway, key, "retried")

    assert r.status_code == 200, r.text
    assert r.headers["x-aiplane-backend"] == "b-steady"
    assert r.json()["choices"][0]["message"]["content"] == "tok0 tok1 "
    assert [(x["status"], x["body"]["messages"]) for x in engine_records(flaky)] == [
        (503, [{"role": "user", "content": "retried"}])
    ]
    assert [x["status"] for x in engine_records(steady)] == [200]
    assert gateway.runtime.slots["a-flaky"].inflight == 0


def test_a_502_or_504_before_any_byte_is_retried_too(gateway, make_sim, key):
    flaky, steady = instant(make_sim), instant(make_sim)
    add_backend("a-flaky", flaky.url)
    add_backend("b-steady", steady.url)

    for status in (502, 504):
        configure(flaky, fail_next=1, fail_status=status)

        r = chat(gateway, key)

        assert r.status_code == 200, r.text
        assert r.headers["x-aiplane-backend"] == "b-steady"
        assert engine_records(flaky)[-1]["status"] == status
    assert len(engine_records(steady)) == 2


def test_a_backend_on_a_closed_port_is_skipped_for_another_replica(gateway, make_sim, key):
    alive = instant(make_sim)
    add_backend("a-dead", closed_port_url())
    add_backend("b-alive", alive.url)

    for _ in range(3):
        r = chat(gateway, key)
        assert r.status_code == 200, r.text
        assert r.headers["x-aiplane-backend"] == "b-alive"
    assert len(engine_records(alive)) == 3
    assert gateway.runtime.slots["a-dead"].inflight == 0


def test_a_streaming_request_is_retried_before_any_byte_was_sent(gateway, make_sim, key):
    flaky, steady = instant(make_sim), instant(make_sim)
    add_backend("a-flaky", flaky.url)
    add_backend("b-steady", steady.url)
    configure(flaky, fail_next=1, fail_status=503)

    r = chat(gateway, key, stream=True)

    assert r.status_code == 200, r.text
    assert r.headers["x-aiplane-backend"] == "b-steady"
    assert r.text.endswith("data: [DONE]\n\n")


def test_a_request_is_retried_at_most_twice(gateway, make_sim, key):
    engines = [instant(make_sim) for _ in range(4)]
    for name, engine in zip("abcd", engines, strict=True):
        add_backend(f"{name}-failing", engine.url)
        configure(engine, fail_next=5, fail_status=503)

    r = chat(gateway, key)

    # The engines' own "overloaded" answer, once every retry is spent.
    assert r.status_code == 503, r.text
    assert r.json()["error"]["code"] == "backend_overloaded"
    assert r.json()["error"]["message"].endswith("(503): Injected failure 503")
    assert r.headers["retry-after"] == "5"
    attempts = [len(engine_records(e)) for e in engines]
    assert sum(attempts) == 3  # the first try and two retries, each on another replica
    assert max(attempts) == 1
    assert all(s.inflight == 0 for s in gateway.runtime.slots.values())


def test_a_pool_where_every_backend_fails_answers_502_in_the_openai_envelope(
    gateway, make_sim, key
):
    broken = instant(make_sim)
    add_backend("a-broken", broken.url)
    add_backend("b-dead", closed_port_url())
    configure(broken, fail_next=5, fail_status=503)

    r = chat(gateway, key)

    assert r.status_code == 502, r.text
    error = r.json()["error"]
    assert set(error) == {"message", "type", "param", "code"}
    assert error["type"] == "api_error"
    assert error["code"] == "upstream_error"
    assert error["param"] is None
    # The last replica's failure is the answer: the dead one, tried second.
    assert error["message"] == "The model server b-dead failed before answering."
    assert len(engine_records(broken)) == 1
    assert all(s.inflight == 0 for s in gateway.runtime.slots.values())


def test_a_non_retryable_error_from_the_engine_reaches_the_client_with_its_message(
    gateway, make_sim, key
):
    strict, other = instant(make_sim), instant(make_sim)
    add_backend("a-strict", strict.url)
    add_backend("b-other", other.url)

    # The engine's own refusal keeps its status; its failure is the backend's fault: 502.
    expected = {
        400: ("invalid_request_error", "sim_injected_failure", "Injected failure 400"),
        500: ("api_error", "upstream_error", "The model server a-strict failed (500): "
              "Injected failure 500"),
    }  # fmt: skip
    for status, (type_, code, message) in expected.items():
        configure(strict, fail_next=1, fail_status=status)

        r = chat(gateway, key)

        assert r.status_code == {500: 502}.get(status, status)
        assert r.headers["content-type"] == "application/json"
        assert r.json() == {
            "error": {"message": message, "type": type_, "param": None, "code": code}
        }
        assert engine_records(strict)[-1]["status"] == status
    assert len(engine_records(strict)) == 2
    assert engine_records(other) == []


def test_a_retried_request_keeps_its_place_in_line(gateway, make_sim, key):
    steady = make_sim(slots=0, tokens=1, token_delay=0)  # holds requests until its slots rise
    held = HeldFailure()
    try:
        add_backend("a-held", held.url, max_inflight=1)
        add_backend("b-steady", steady.url, max_inflight=1, models=["sim-small", "sim-large"])
        with ThreadPoolExecutor(max_workers=3) as pool:
            blocker = pool.submit(chat, gateway, key, "blocker", model="sim-large")
            wait_until(lambda: engine_stats(steady)["waiting"] == 1, "b-steady is busy")
            first = pool.submit(chat, gateway, key, "first")  # to a-held, which holds it
            assert held.received.wait(10)
            later = pool.submit(chat, gateway, key, "later", model="sim-large")
            wait_until(lambda: gateway.runtime.queue.waiting == 1, "the later request waits")

            held.fail.set()  # `first` fails before any byte and must wait for b-steady again

            wait_until(lambda: gateway.runtime.queue.waiting == 2, "the retry waits")
            configure(steady, slots=1)
            assert [f.result().status_code for f in (blocker, first, later)] == [200] * 3
    finally:
        held.close()
    # It arrived before `later`, so its retry goes first.
    assert labels_seen(steady) == ["blocker", "first", "later"]


# ----- offline fallback -------------------------------------------------------------------------


def with_fallback(pool: str, fallback: str) -> None:
    from gateway.admin.services import pool_save

    pool_save(data={"name": pool, "fallback": fallback}, known_groups=set())


def test_an_offline_pool_sends_requests_to_its_fallback_with_the_fallbacks_mapping(
    gateway, make_sim, keys
):
    main, spare = instant(make_sim), instant(make_sim)
    add_backend("main-1", main.url, pool="main", enabled=False, priority={"mode": "gateway"})
    add_backend("spare-1", spare.url, pool="spare", priority=VLLM_STYLE)
    with_fallback("main", "spare")

    r = chat(gateway, keys["high"])

    assert r.status_code == 200, r.text
    assert r.headers["x-aiplane-backend"] == "spare-1"
    assert forwarded(spare)["priority"] == -1
    assert engine_records(main) == []


def test_a_pools_fallback_is_not_used_while_its_backends_are_merely_busy(gateway, make_sim, key):
    main = make_sim(slots=0, tokens=1, token_delay=0)  # holds requests until its slots rise
    spare = instant(make_sim)
    add_backend("main-1", main.url, pool="main", max_inflight=1)
    add_backend("spare-1", spare.url, pool="spare")
    with_fallback("main", "spare")

    with ThreadPoolExecutor(max_workers=2) as pool:
        blocker = pool.submit(chat, gateway, key, "blocker")
        wait_until(lambda: engine_stats(main)["waiting"] == 1, "main-1 is busy")
        second = pool.submit(chat, gateway, key, "second")
        wait_until(
            lambda: gateway.runtime.queue.waiting == 1 or second.done(), "the second is placed"
        )
        served_early = second.done()
        configure(main, slots=1)
        assert blocker.result().status_code == 200
        assert second.result().status_code == 200

    assert not served_early, "a busy (not offline) pool sent its request to the fallback"
    assert engine_records(spare) == []
    assert labels_seen(main) == ["blocker", "second"]


# ----- the body each engine sees --------------------------------------------------------------


def test_a_custom_mapping_puts_each_class_value_into_the_named_field(gateway, make_sim, keys):
    engine = instant(make_sim)
    add_backend("vllm", engine.url, priority=VLLM_STYLE)

    seen = {}
    for cls, key in keys.items():
        assert chat(gateway, key).status_code == 200
        seen[cls] = forwarded(engine)["priority"]

    assert seen == {"low": 1, "medium": 0, "high": -1}


def test_a_custom_mapping_may_name_any_unprotected_field(gateway, make_sim, keys):
    engine = instant(make_sim)
    mode = {
        "mode": "custom",
        "mapping": {"field": "sched_rank", "low": 100, "medium": 50, "high": 0},
    }
    add_backend("custom", engine.url, priority=mode)

    assert chat(gateway, keys["medium"], priority=7, sched_rank=-5).status_code == 200

    body = forwarded(engine)
    assert body["sched_rank"] == 50
    assert "priority" not in body


def test_gateway_mode_forwards_no_priority(gateway, make_sim, keys):
    engine = instant(make_sim)
    add_backend("plain", engine.url, priority={"mode": "gateway"})

    for key in keys.values():
        assert chat(gateway, key).status_code == 200
        assert "priority" not in forwarded(engine)


def test_auto_mode_forwards_sglangs_direction_from_the_first_request_once_detection_proved_it(
    gateway, make_sim, keys
):
    larger_first = make_sim(server_info="sglang", priority_scheduling=True, token_delay=0)
    smaller_first = make_sim(
        server_info="sglang",
        priority_scheduling=True,
        sglang_low_first=True,
        token_delay=0,
        models=["sim-large"],
    )
    add_backend("sglang", larger_first.url)
    add_backend("sglang-low-first", smaller_first.url, pool="large", models=["sim-large"])

    # Identified when saved: the very first request already carries the engine's priority.
    assert chat(gateway, keys["high"]).status_code == 200
    assert forwarded(larger_first)["priority"] == 2

    detect(gateway)  # detecting again changes nothing

    for cls, expected in (("low", 0), ("medium", 1), ("high", 2)):
        assert chat(gateway, keys[cls]).status_code == 200
        assert forwarded(larger_first)["priority"] == expected, cls
    for cls, expected in (("low", 2), ("medium", 1), ("high", 0)):
        assert chat(gateway, keys[cls], model="sim-large").status_code == 200
        assert forwarded(smaller_first)["priority"] == expected, cls


def test_auto_mode_forwards_nothing_when_sglang_runs_without_priority_scheduling(
    gateway, make_sim, keys
):
    engine = make_sim(server_info="sglang", priority_scheduling=False, token_delay=0)
    add_backend("sglang", engine.url)

    detect(gateway)

    for key in keys.values():
        assert chat(gateway, key).status_code == 200
        assert "priority" not in forwarded(engine)


def test_client_supplied_priority_fields_are_never_forwarded(gateway, make_sim, keys):
    plain, mapped = instant(make_sim), instant(make_sim, models=["sim-large"])
    add_backend("plain", plain.url, priority={"mode": "gateway"})
    add_backend("mapped", mapped.url, pool="large", models=["sim-large"], priority=VLLM_STYLE)
    smuggled = {
        "priority": -100,
        "nvext": {"agent_hints": {"priority": 100, "strict_priority": 5}},
    }

    assert chat(gateway, keys["low"], **smuggled).status_code == 200
    body = forwarded(plain)
    assert "priority" not in body
    assert "nvext" not in body

    # A mapped backend gets the caller's class, not the value the client sent.
    assert chat(gateway, keys["low"], model="sim-large", **smuggled).status_code == 200
    body = forwarded(mapped)
    assert body["priority"] == 1
    assert "nvext" not in body


def test_hint_headers_and_the_callers_token_stay_at_the_gateway(gateway, make_sim, keys):
    engine = instant(make_sim)
    add_backend("plain", engine.url, priority={"mode": "gateway"})
    hint_headers = {
        "X-AIplane-Priority": "low",
        "X-LlamaSwap-Priority": "batch",
        "x-dynamo-request-priority": "-100",
        "x-dynamo-request-strict-priority": "-1",
    }

    r = HTTP.post(
        gateway.v1 + "/chat/completions",
        json={"model": "sim-small", "messages": [{"role": "user", "content": "hi"}]},
        headers={"Authorization": f"Bearer {keys['high']}", **hint_headers},
    )

    assert r.status_code == 200, r.text
    seen = {name.lower() for name in engine_records(engine)[-1]["headers"]}
    assert seen.isdisjoint(name.lower() for name in hint_headers)
    assert "authorization" not in seen  # the backend has no key, and the caller's never goes


def test_client_agent_hints_are_read_and_never_forwarded(gateway, make_sim, keys):
    engine = instant(make_sim)
    add_backend("plain", engine.url, priority={"mode": "gateway"})

    # latency_sensitivity moves a request earlier in Dynamo's queue: no hint of it may pass.
    hints = {"priority": -100, "strict_priority": -1, "latency_sensitivity": 1.0}
    assert chat(gateway, keys["high"], nvext={"agent_hints": hints}).status_code == 200

    assert "nvext" not in forwarded(engine)


def test_a_retry_is_mapped_for_the_backend_that_actually_serves_it(gateway, make_sim, keys):
    flaky, steady = instant(make_sim), instant(make_sim)
    add_backend("a-flaky", flaky.url, priority=VLLM_STYLE)
    add_backend("b-steady", steady.url, priority={"mode": "gateway"})
    configure(flaky, fail_next=1, fail_status=503)

    r = chat(gateway, keys["high"])

    assert r.status_code == 200, r.text
    assert forwarded(flaky)["priority"] == -1
    assert "priority" not in forwarded(steady)

    # And the other way round: the retry gets the mapping its own backend asks for.
    add_backend("a-flaky", flaky.url, priority={"mode": "gateway"})
    add_backend("b-steady", steady.url, priority=VLLM_STYLE)
    configure(flaky, fail_next=1, fail_status=503)

    r = chat(gateway, keys["high"])

    assert r.status_code == 200, r.text
    assert "priority" not in forwarded(flaky)
    assert forwarded(steady)["priority"] == -1


def test_an_alias_is_rewritten_to_the_backends_model_id(gateway, make_sim, key):
    engine = instant(make_sim)
    add_backend("aliased", engine.url, aliases={"friendly": "sim-small"})

    r = chat(gateway, key, model="friendly")

    assert r.status_code == 200, r.text
    assert forwarded(engine)["model"] == "sim-small"
    assert "friendly" in [
        m["id"]
        for m in HTTP.get(
            gateway.v1 + "/models", headers={"Authorization": f"Bearer {key}"}
        ).json()["data"]
    ]


def test_the_official_openai_client_works_for_every_endpoint(gateway, make_sim, key):
    from openai import NotFoundError, OpenAI

    engine = make_sim(models=["sim-small", "sim-embed"], tokens=3, token_delay=0)
    add_backend("chat", engine.url)
    add_backend("embedder", engine.url, pool="embeddings", kind="embedding", models=["sim-embed"])
    client = OpenAI(base_url=gateway.v1, api_key=key, max_retries=0, timeout=30)
    messages = [{"role": "user", "content": "hello"}]

    answer = client.chat.completions.create(model="sim-small", messages=messages)
    assert answer.choices[0].message.content == "tok0 tok1 tok2 "
    assert answer.usage is not None and answer.usage.completion_tokens == 3

    stream = client.chat.completions.create(
        model="sim-small",
        messages=messages,
        stream=True,
        stream_options={"include_usage": True},
    )
    chunks = list(stream)
    text = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
    assert text == "tok0 tok1 tok2 "
    assert chunks[-1].usage is not None and chunks[-1].usage.completion_tokens == 3

    completion = client.completions.create(model="sim-small", prompt="once upon", max_tokens=2)
    assert completion.choices[0].text == "tok0 tok1 "
    assert completion.choices[0].finish_reason == "length"

    embeddings = client.embeddings.create(model="sim-embed", input=["one", "two"])
    assert [e.index for e in embeddings.data] == [0, 1]
    assert all(len(e.embedding) == 8 for e in embeddings.data)

    assert sorted(m.id for m in client.models.list()) == ["sim-embed", "sim-small"]

    with pytest.raises(NotFoundError) as caught:
        client.chat.completions.create(model="nope", messages=messages)
    assert caught.value.code == "model_not_found"


def test_a_stream_cut_short_upstream_ends_with_an_error_event_and_frees_the_slot(gateway, key):
    engine = DiesMidStream()
    try:
        add_backend("flaky", engine.url)
        with httpx.stream(
            "POST",
            gateway.v1 + "/chat/completions",
            json={
                "model": "sim-small",
                "stream": True,
                "messages": [{"role": "user", "content": "x"}],
            },
            headers={"Authorization": f"Bearer {key}"},
            timeout=10,
        ) as r:
            assert r.status_code == 200
            body = b"".join(r.iter_raw())
    finally:
        engine.close()
    events = [line for line in body.split(b"\n\n") if line]
    assert events[0] == b'data: {"choices":[{"delta":{"content":"tok0 "}}]}'
    # An error event, then [DONE], as vLLM and SGLang end a failed stream.
    assert b'"code": "upstream_error"' in events[-2]
    assert events[-1] == b"data: [DONE]"
    wait_until(lambda: gateway.runtime.slots["flaky"].inflight == 0, "the slot is released")
