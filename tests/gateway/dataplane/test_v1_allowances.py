"""Allowances on the live gateway: 429 before admission on every surface, the rate-limit headers,
token counts from the engine's usage, and every reservation released however a request ends."""

from __future__ import annotations

import json
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import httpx
import pytest

from aiplane.catalog import settings_update
from gateway.core.output_limits import OUTPUT_LIMITS
from tests.support.allowances import Person, call
from tests.support.drive import (
    HTTP,
    chat,
    configure,
    engine_records,
    engine_stats,
    open_raw,
    sample,
    scrape,
    wait_idle,
    wait_until,
)
from tests.support.live import add_backend

RPM = {"measure": "requests", "window": "minute"}

TPM = {"measure": "tokens", "window": "minute"}


@pytest.fixture
def engine(make_sim: Any) -> Any:
    engine = make_sim(tokens=3, token_delay=0, directives=True)
    add_backend("solo", engine.url)
    add_backend("embed", engine.url, pool="embeddings", kind="embedding")
    return engine


SURFACES = {
    "chat": (
        "/chat/completions",
        {"model": "sim-small", "messages": [{"role": "user", "content": "hi"}]},
    ),
    "completions": ("/completions", {"model": "sim-small", "prompt": "hi"}),
    "embeddings": ("/embeddings", {"model": "sim-small", "input": "hi"}),
    "responses": ("/responses", {"model": "sim-small", "input": "hi"}),
}


@pytest.mark.parametrize("surface", sorted(SURFACES))
def test_an_openai_surface_refuses_the_request_over_its_allowance_with_openais_429(
    gateway: Any, engine: Any, surface: str
) -> None:
    alice = Person("alice", {**RPM, "limit": 2})
    path, body = SURFACES[surface]

    first = call(gateway, alice.key, path, body)
    assert first.status_code == 200, first.text
    assert first.headers["x-ratelimit-limit-requests"] == "2"
    assert first.headers["x-ratelimit-remaining-requests"] == "1"
    assert first.headers["x-ratelimit-reset-requests"].endswith("s")
    assert call(gateway, alice.key, path, body).headers["x-ratelimit-remaining-requests"] == "0"
    served = engine_stats(engine)["total"]

    refused = call(gateway, alice.key, path, body)

    assert refused.status_code == 429
    assert 1 <= int(refused.headers["retry-after"]) <= 60
    assert refused.headers["x-ratelimit-limit-requests"] == "2"
    assert refused.headers["x-ratelimit-remaining-requests"] == "0"
    error = refused.json()["error"]
    assert (error["type"], error["code"], error["param"]) == (
        "rate_limit_error",
        "rate_limit_exceeded",
        None,
    )
    assert error["message"].startswith(
        "Rate limit reached: your allowance of requests per minute (limit 2). Try again in "
    )
    assert engine_stats(engine)["total"] == served  # it never reached the engine


def test_messages_refuses_the_request_over_its_allowance_in_anthropics_words(
    gateway: Any, engine: Any
) -> None:
    alice = Person("alice", {**RPM, "limit": 1}, {**TPM, "limit": 100_000})
    body = {"model": "sim-small", "max_tokens": 20, "messages": [{"role": "user", "content": "hi"}]}
    headers = {"x-api-key": alice.key, "anthropic-version": "2023-06-01"}

    first = HTTP.post(gateway.v1 + "/messages", json=body, headers=headers)
    assert first.status_code == 200, first.text
    assert first.headers["anthropic-ratelimit-requests-limit"] == "1"
    assert first.headers["anthropic-ratelimit-requests-remaining"] == "0"
    assert first.headers["anthropic-ratelimit-requests-reset"].endswith(":00Z")
    assert first.headers["anthropic-ratelimit-tokens-limit"] == "100000"
    assert "x-ratelimit-limit-requests" not in first.headers

    refused = HTTP.post(gateway.v1 + "/messages", json=body, headers=headers)

    assert refused.status_code == 429
    assert refused.headers["retry-after"]
    assert refused.headers["anthropic-ratelimit-requests-remaining"] == "0"
    answer = refused.json()
    assert answer["type"] == "error"
    assert answer["error"]["type"] == "rate_limit_error"
    assert "requests per minute" in answer["error"]["message"]


def test_a_refusal_is_recorded_and_counted_by_reason_and_class(gateway: Any, engine: Any) -> None:
    from gateway.models import ActivityRecord

    alice = Person("alice", {**RPM, "limit": 1})
    assert chat(gateway, alice.key).status_code == 200
    assert chat(gateway, alice.key).status_code == 429

    wait_until(lambda: ActivityRecord.objects.count() == 2, "two records", 30)
    refused = ActivityRecord.objects.order_by("id").last()
    assert (refused.outcome, refused.status, refused.backend) == ("limited", 429, "")
    scraped = scrape(gateway)
    labels = {"reason": "requests_per_minute", "class": "medium", "band": "normal"}
    assert sample(scraped, "aiplane_allowance_refusals_total", **labels) == 1
    assert not any("alice" in str(labels) for _, labels in scraped)


def test_an_answer_without_a_limit_carries_no_rate_limit_headers(gateway: Any, engine: Any) -> None:
    bob = Person("bob")
    answer = chat(gateway, bob.key)
    assert answer.status_code == 200
    assert not any(name.startswith("x-ratelimit") for name in answer.headers)


def test_token_limits_count_what_the_engine_reported(gateway: Any, engine: Any) -> None:
    alice = Person(
        "alice",
        {**TPM, "limit": 100_000},
        {"measure": "output_tokens", "window": "day", "limit": 100},
    )
    # The sim reports one prompt token a word and three completion tokens.
    answer = chat(gateway, alice.key, "one two three four", max_tokens=50)
    assert answer.status_code == 200
    usage = answer.json()["usage"]
    assert (usage["prompt_tokens"], usage["completion_tokens"]) == (4, 3)
    wait_until(lambda: alice.usage(gateway, "tokens")[1] == 0, "the reservation is released")
    assert alice.usage(gateway, "tokens") == (7, 0)
    assert alice.usage(gateway, "output_tokens", "day") == (3, 0)
    # The output limit's headers: 100 - 3 used - this request's 50 reserved.
    again = chat(gateway, alice.key, "x", max_tokens=50)
    assert again.headers["x-ratelimit-limit-tokens"] == "100"
    assert again.headers["x-ratelimit-remaining-tokens"] == "47"


def test_a_tokens_own_lower_allowance_applies_with_its_owners(gateway: Any, engine: Any) -> None:
    alice = Person("alice", {**RPM, "limit": 10}, token={})
    alice.token.allowance = [{**RPM, "limit": 1}]
    alice.token.save()
    assert chat(gateway, alice.key).status_code == 200
    refused = chat(gateway, alice.key)
    assert refused.status_code == 429
    assert "this token's allowance" in refused.json()["error"]["message"]


def reserved(gateway: Any, person: Person) -> int:
    return person.usage(gateway, "tokens")[1]


def assert_released(gateway: Any, person: Person) -> None:
    wait_until(lambda: reserved(gateway, person) == 0, "the reservation is released")
    wait_idle(gateway, "solo")


@pytest.mark.parametrize(
    "fault",
    [
        "[[sim:status code=500]]",  # the engine's error: 502 after the retries
        "[[sim:status code=400]]",  # the engine refused it
        "[[sim:reset]]",  # the connection dropped before any byte
    ],
)
def test_the_reservation_is_released_when_the_engine_fails(
    gateway: Any, engine: Any, fault: str
) -> None:
    alice = Person("alice", {**TPM, "limit": 10_000})
    answer = chat(gateway, alice.key, fault + " hi", max_tokens=500)
    assert answer.status_code >= 400
    # Even a failed answer says how much is left.
    assert answer.headers["x-ratelimit-limit-tokens"] == "10000"
    assert_released(gateway, alice)


def test_the_reservation_is_released_when_a_stream_is_cut_or_the_client_leaves_it(
    gateway: Any, engine: Any
) -> None:
    alice = Person("alice", {**TPM, "limit": 10_000})
    with httpx.stream(
        "POST",
        gateway.v1 + "/chat/completions",
        json={
            "model": "sim-small",
            "stream": True,
            "messages": [{"role": "user", "content": "[[sim:cut after=1]] hi"}],
        },
        headers={"Authorization": f"Bearer {alice.key}"},
        timeout=20,
    ) as r:
        assert r.status_code == 200
        b"".join(r.iter_raw())
    assert_released(gateway, alice)

    sock = open_raw(gateway, alice.key, "[[sim:hang]] hi", stream=True)
    wait_until(lambda: reserved(gateway, alice) > 0, "the hanging request holds its reservation")
    wait_until(lambda: engine_stats(engine)["open"] == 1, "the engine has it")
    sock.close()
    assert_released(gateway, alice)


def test_the_reservation_is_released_when_a_queued_request_expires_or_its_client_leaves(
    gateway: Any, make_sim: Any
) -> None:
    gated = make_sim(slots=0, tokens=3, token_delay=0)
    add_backend("solo", gated.url, max_inflight=1)
    alice = Person("alice", {**TPM, "limit": 10_000})
    settings_update(values={"gateway.upstream_wait_secs": 1})
    with ThreadPoolExecutor(max_workers=1) as pool:
        blocker = pool.submit(chat, gateway, alice.key, "blocker")
        wait_until(lambda: engine_stats(gated)["waiting"] == 1, "the blocker holds the slot")

        expired = chat(gateway, alice.key, "too late")
        assert expired.status_code == 503
        assert expired.headers["x-ratelimit-limit-tokens"] == "10000"

        sock = open_raw(gateway, alice.key, "leaves")
        wait_until(lambda: gateway.runtime.queue.waiting == 1, "it waits")
        sock.close()
        wait_until(lambda: gateway.runtime.queue.waiting == 0, "it left")

        configure(gated, slots=1)
        assert blocker.result().status_code == 200
    assert_released(gateway, alice)
    used = alice.usage(gateway, "tokens")[0]
    assert used == 4  # the blocker's 1 prompt and 3 completion tokens; the others generated none


def test_concurrent_requests_never_exceed_a_requests_limit(gateway: Any, engine: Any) -> None:
    alice = Person("alice", {**RPM, "limit": 5})
    if time.time() % 60 > 50:  # all inside one clock minute
        time.sleep(61 - time.time() % 60)
    with ThreadPoolExecutor(max_workers=12) as pool:
        answers = list(pool.map(lambda i: chat(gateway, alice.key, f"c{i}"), range(12)))
    assert sorted(a.status_code for a in answers) == [200] * 5 + [429] * 7


def test_concurrent_requests_never_exceed_a_tokens_limit(gateway: Any, make_sim: Any) -> None:
    slow = make_sim(tokens=3, token_delay=0.05)
    add_backend("solo", slow.url)
    # Each reserves its body's size / 4 plus max_tokens 10 (about 35 tokens): a 100-token limit
    # holds two at once, and what they used counts before the next may start.
    alice = Person("alice", {"measure": "tokens", "window": "day", "limit": 100})
    with ThreadPoolExecutor(max_workers=8) as pool:
        answers = list(pool.map(lambda i: chat(gateway, alice.key, "x", max_tokens=10), range(8)))
    ok = [a for a in answers if a.status_code == 200]
    assert 1 <= len(ok) < 8
    assert {a.status_code for a in answers} == {200, 429}
    assert_released(gateway, alice)
    used = sum(a.json()["usage"]["total_tokens"] for a in ok)
    assert alice.usage(gateway, "tokens", "day") == (used, 0)
    assert used <= 100


# ----- the most a request may generate, and what a request cut short costs ----------------------

TWO_LIMITS = {
    "chat": (
        "/chat/completions",
        {"messages": [{"role": "user", "content": "hi"}], "max_completion_tokens": 1000},
    ),
    "responses": ("/responses", {"input": "hi", "max_output_tokens": 1000}),
    "messages": (
        "/messages",
        {"messages": [{"role": "user", "content": "hi"}], "max_completion_tokens": 1000},
    ),
}


@pytest.mark.parametrize(
    ("surface", "native"),
    [("chat", False), ("responses", False), ("responses", True), ("messages", True)],
    ids=["chat", "translated responses", "native responses", "native messages"],
)
def test_a_request_is_reserved_and_sent_the_largest_output_limit_it_names(
    gateway: Any, make_sim: Any, surface: str, native: bool
) -> None:
    # vLLM and SGLang honour max_completion_tokens over max_tokens; a Responses engine reads
    # max_output_tokens. Reserving by the first field let 8 such requests of about 1,040 tokens
    # each into a limit of 1,500.
    gated = make_sim(slots=0, tokens=3, token_delay=0, responses=native, messages=native)
    add_backend("solo", gated.url)
    alice = Person("alice", {**TPM, "window": "day", "limit": 1500})
    path, fields = TWO_LIMITS[surface]
    body = {"model": "sim-small", "max_tokens": 1, **fields}
    with ThreadPoolExecutor(max_workers=8) as pool:
        answers = [pool.submit(call, gateway, alice.key, path, body) for _ in range(8)]
        wait_until(
            lambda: sum(a.done() for a in answers) + engine_stats(gated)["waiting"] == 8,
            "each is refused or held by the engine",
        )
        assert engine_stats(gated)["waiting"] == 1  # one fits; a second would pass the limit
        assert {a.result().status_code for a in answers if a.done()} == {429}
        configure(gated, slots=4)
        served = [a.result() for a in answers if a.result().status_code == 200]
    assert len(served) == 1
    # One limit at the engine: every field it got says the same, what was reserved.
    sent = engine_records(gated)[-1]["body"]
    limits = {name: sent[name] for name in OUTPUT_LIMITS if name in sent}
    assert set(limits.values()) == {1000}, limits
    assert_released(gateway, alice)


def test_an_output_limit_that_is_not_a_whole_number_is_a_400_before_it_waits(
    gateway: Any, engine: Any
) -> None:
    alice = Person("alice", {**TPM, "limit": 10_000})
    served = engine_stats(engine)["total"]
    # vLLM's parser reads "1000" as 1000: passed on, the limit run would not be the one reserved.
    for path, body in (
        (
            "/chat/completions",
            {**SURFACES["chat"][1], "max_tokens": 1, "max_completion_tokens": "1000"},
        ),
        ("/responses", {**SURFACES["responses"][1], "max_tokens": 1.5}),
    ):
        refused = call(gateway, alice.key, path, body)
        assert refused.status_code == 400, refused.text
        assert refused.json()["error"]["param"] in ("max_completion_tokens", "max_tokens")
    assert engine_stats(engine)["total"] == served
    assert alice.standing(gateway, "tokens") == (0, 0)


def _raw_chat(label: str) -> bytes:
    return json.dumps(
        {"model": "sim-small", "messages": [{"role": "user", "content": label}]}
    ).encode()  # the body open_raw sends


def charged_its_prompt_only_once_it_reached_an_engine(gateway: Any, gated: Any) -> None:
    """One request reaches the (gated) engine and its client leaves before the first byte;
    another leaves while it waits for the slot: the first is charged its prompt, the second
    nothing. (Also run on Redis's counters: test_shared_allowances.py.)"""
    alice = Person(
        "alice",
        {**TPM, "window": "day", "limit": 100_000},
        {"measure": "input_tokens", "window": "day", "limit": 100_000},
        {"measure": "output_tokens", "window": "day", "limit": 100_000},
    )
    dispatched = open_raw(gateway, alice.key, "the engine has it")
    wait_until(lambda: engine_stats(gated)["waiting"] == 1, "the engine has it")
    queued = open_raw(gateway, alice.key, "still waiting")
    wait_until(lambda: gateway.runtime.queue.waiting == 1, "it waits for the slot")
    queued.close()
    wait_until(lambda: gateway.runtime.queue.waiting == 0, "it left")
    dispatched.close()
    wait_until(lambda: engine_stats(gated)["waiting"] == 0, "the engine saw it leave")
    wait_until(lambda: alice.standing(gateway, "tokens", "day")[1] == 0, "both are released")

    prompt = len(_raw_chat("the engine has it")) // 4  # the estimate: the engine reported none
    assert alice.standing(gateway, "tokens", "day") == (prompt, 0)
    assert alice.standing(gateway, "input_tokens", "day") == (prompt, 0)
    assert alice.standing(gateway, "output_tokens", "day") == (0, 0)


def test_a_client_that_leaves_after_dispatch_is_charged_its_prompt_and_one_waiting_nothing(
    gateway: Any, make_sim: Any
) -> None:
    gated = make_sim(slots=0, tokens=3, token_delay=0)
    add_backend("solo", gated.url, max_inflight=1)
    charged_its_prompt_only_once_it_reached_an_engine(gateway, gated)


def test_a_request_the_engine_refuses_is_charged_nothing(gateway: Any, engine: Any) -> None:
    alice = Person("alice", {**TPM, "window": "day", "limit": 100_000})
    refused = chat(gateway, alice.key, "[[sim:status code=400]] hi", max_tokens=500)
    assert refused.status_code == 400
    wait_until(lambda: alice.standing(gateway, "tokens", "day")[1] == 0, "it is released")
    assert alice.standing(gateway, "tokens", "day") == (0, 0)
