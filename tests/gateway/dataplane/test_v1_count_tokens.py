"""/v1/messages/count_tokens under load and allowances: a few counts at a time per backend, the
gateway's own estimate beyond them, the caller's requests limits, the counts in flight seen."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from typing import Any

import httpx
import pytest

from aiplane.catalog import settings_update
from gateway.dialects.anthropic.count_tokens import count_tokens_estimate
from gateway.runtime.count_seats import COUNTS_PER_BACKEND
from tests.support.allowances import Person
from tests.support.drive import HTTP, engine_records, engine_stats, sample, scrape, wait_until
from tests.support.live import add_backend

RPD = {"measure": "requests", "window": "day"}


def body(text: str) -> dict[str, Any]:
    return {"model": "sim-small", "messages": [{"role": "user", "content": text}]}


def count(gateway: Any, key: str, text: str) -> httpx.Response:
    return HTTP.post(
        gateway.url + "/v1/messages/count_tokens",
        json=body(text),
        headers={"x-api-key": key, "anthropic-version": "2023-06-01"},
    )


def counted(answer: httpx.Response) -> int:
    assert answer.status_code == 200, answer.text
    tokens = answer.json()["input_tokens"]
    assert isinstance(tokens, int) and not isinstance(tokens, bool)
    return tokens


def counts_at(engine: Any) -> list[dict[str, Any]]:
    return [r for r in engine_records(engine) if r["path"] == "/v1/messages/count_tokens"]


@pytest.fixture
def counter(make_sim: Any) -> Any:
    """An engine that serves Messages natively, and counts."""
    return make_sim(tokens=3, token_delay=0, messages=True, directives=True)


def test_a_flood_of_counts_never_has_more_than_the_bound_at_the_engine(
    gateway: Any, counter: Any
) -> None:
    add_backend("native", counter.url)
    alice = Person("alice")
    with ThreadPoolExecutor(max_workers=50) as pool:
        answers = list(
            pool.map(lambda i: count(gateway, alice.key, f"[[sim:slow delay=0.2]] c{i}"), range(50))
        )

    assert all(counted(a) >= 0 for a in answers)
    stats = engine_stats(counter)
    assert 1 <= stats["max_open_seen"] <= COUNTS_PER_BACKEND
    assert sample(scrape(gateway), "aiplane_backend_counting", backend="native") == 0


@pytest.mark.parametrize("max_inflight", [1, 16])
def test_a_count_past_a_backends_bound_is_the_gateways_estimate_at_once(
    gateway: Any, counter: Any, max_inflight: int
) -> None:
    add_backend("native", counter.url, max_inflight=max_inflight)
    # The held counts end when the gateway gives up on the engine (connect + idle timeouts).
    settings_update(values={"gateway.connect_timeout_secs": 1, "gateway.idle_timeout_secs": 1})
    bound = min(COUNTS_PER_BACKEND, max_inflight)
    alice = Person("alice")
    with ThreadPoolExecutor(max_workers=bound) as pool:
        held = [pool.submit(count, gateway, alice.key, "[[sim:hang]] held") for _ in range(bound)]
        wait_until(lambda: engine_stats(counter)["open"] == bound, "the engine counts them")
        assert sample(scrape(gateway), "aiplane_backend_counting", backend="native") == bound

        extra = count(gateway, alice.key, "one more please")

        assert counted(extra) == count_tokens_estimate(body("one more please"))
        assert len(counts_at(counter)) == bound  # it never reached the engine
        assert all(counted(h.result()) >= 0 for h in held)  # estimated: the engine never said
    assert engine_stats(counter)["max_open_seen"] == bound


def test_counting_is_a_request_of_the_callers_allowance_and_charges_no_tokens(
    gateway: Any, counter: Any
) -> None:
    add_backend("native", counter.url)
    bob = Person("bob", {**RPD, "limit": 10}, {"measure": "tokens", "window": "day", "limit": 1})
    carol = Person("carol")  # no limits
    with ThreadPoolExecutor(max_workers=50) as pool:
        bobs = [pool.submit(count, gateway, bob.key, f"b{i}") for i in range(25)]
        carols = [pool.submit(count, gateway, carol.key, f"c{i}") for i in range(25)]
        answers = [a.result() for a in bobs]
        assert all(counted(a.result()) >= 0 for a in carols)

    assert sorted(a.status_code for a in answers) == [200] * 10 + [429] * 15
    ok = next(a for a in answers if a.status_code == 200)
    assert ok.headers["anthropic-ratelimit-requests-limit"] == "10"
    # The same refusal as a /v1/messages request over its allowance, in Anthropic's words.
    refused = next(a for a in answers if a.status_code == 429)
    assert refused.json()["type"] == "error"
    assert refused.json()["error"]["type"] == "rate_limit_error"
    assert "requests per day" in refused.json()["error"]["message"]
    assert refused.headers["retry-after"]
    assert refused.headers["anthropic-ratelimit-requests-remaining"] == "0"
    assert bob.standing(gateway, "requests", "day") == (10, 0)
    assert bob.standing(gateway, "tokens", "day") == (0, 0)
