"""Allowance counters with a fake clock: windows, reservations and their release, refusals;
in this process's memory and on Redis alike."""

from __future__ import annotations

import calendar
from collections.abc import AsyncIterator, Callable
from typing import Any

import pytest

from accounts.allowances import Counted, Limit, Measure, Window
from gateway.allowances.counters import (
    DEFAULT_OUTPUT_RESERVE,
    AllowanceExceeded,
    Demand,
    MemoryCounters,
    Ticket,
    estimate,
    rate_limit_headers,
)
from gateway.allowances.shared import SharedCounters, connect
from gateway.core.errors import BadRequest
from gateway.core.output_limits import one_output_limit

REQ, TOK, IN, OUT = Measure.REQUESTS, Measure.TOKENS, Measure.INPUT, Measure.OUTPUT
MIN, DAY, MONTH = Window.MINUTE, Window.DAY, Window.MONTH


class Clock:
    def __init__(self, at: float) -> None:
        self.now = at

    def __call__(self) -> float:
        return self.now


def at(year: int, month: int, day: int, hour: int = 0, minute: int = 0, second: float = 0) -> float:
    return float(calendar.timegm((year, month, day, hour, minute, 0))) + second


class Counters:
    """A store under test, read as a view reads it: once the settles on their way have landed."""

    def __init__(self, store: Any) -> None:
        self.store = store

    async def admit(self, demand: Demand) -> Ticket:
        return await self.store.admit(demand)

    async def usage(self, subject: str, limit: Limit) -> tuple[int, int]:
        if isinstance(self.store, SharedCounters):
            await self.store.drain()
        return (await self.store.read([Counted(subject, limit)]))[0]


@pytest.fixture(params=["memory", "redis"])
async def store_at(request: Any) -> AsyncIterator[Callable[[float], tuple[Counters, Clock]]]:
    """Every test runs against this process's counters and against Redis's."""
    made: list[SharedCounters] = []
    server = request.getfixturevalue("redis_server") if request.param == "redis" else None
    prefix = request.getfixturevalue("redis_prefix") if server else ""

    def make(when: float) -> tuple[Counters, Clock]:
        clock = Clock(when)
        if server is None:
            return Counters(MemoryCounters(clock)), clock
        # These tests are about counting, not outages: a loaded machine (CI runs four workers
        # on two cores) must not make a slow answer look like Redis gone.
        store = SharedCounters(
            connect(server.url, timeout=30), prefix=prefix, clock=clock, timeout=30
        )
        made.append(store)
        return Counters(store), clock

    yield make
    for store in made:
        assert not store.fallback  # every answer above came from Redis
        await store.aclose()


def demand(*limits: Limit, model: str = "m", input: int = 10, output: int = 0) -> Demand:
    return Demand([Counted("u1", limit) for limit in limits], model, input, output)


async def test_a_requests_limit_admits_exactly_its_number_in_a_minute_and_again_in_the_next(
    store_at: Any,
) -> None:
    store, clock = store_at(at(2026, 12, 1, 12, 0, 0.5))
    limit = Limit(REQ, MIN, 3)
    for _ in range(3):
        await store.admit(demand(limit))
    with pytest.raises(AllowanceExceeded) as refused:
        await store.admit(demand(limit))
    assert refused.value.reason == "requests_per_minute"
    assert refused.value.status == 429
    assert refused.value.retry_after == 60  # 59.5 s to the next minute, rounded up
    clock.now = at(2026, 12, 1, 12, 0, 59.99)
    with pytest.raises(AllowanceExceeded):
        await store.admit(demand(limit))
    clock.now = at(2026, 12, 1, 12, 1)  # the next clock minute
    assert (await store.admit(demand(limit))).requests.remaining == 2


async def test_a_refused_request_takes_nothing_from_any_limit(store_at: Any) -> None:
    store, _ = store_at(at(2026, 12, 1))
    loose, tight = Limit(REQ, MIN, 10), Limit(TOK, MIN, 100)
    await store.admit(demand(loose, tight, input=100))
    with pytest.raises(AllowanceExceeded):
        await store.admit(demand(loose, tight, input=1))
    assert await store.usage("u1", loose) == (1, 0)  # the refused one did not count


async def test_a_reservation_holds_the_estimate_until_settled_with_what_the_engine_reported(
    store_at: Any,
) -> None:
    store, _ = store_at(at(2026, 12, 1, 8))
    limit = Limit(TOK, DAY, 1000)
    ticket = await store.admit(demand(limit, input=100, output=500))
    assert await store.usage("u1", limit) == (0, 600)
    assert ticket.tokens is not None and ticket.tokens.remaining == 400
    with pytest.raises(AllowanceExceeded):
        await store.admit(demand(limit, input=100, output=400))  # 500 > 400 left
    ticket.settle(90, 30)
    assert await store.usage("u1", limit) == (120, 0)
    ticket.settle(90, 30)  # a second settle changes nothing
    assert await store.usage("u1", limit) == (120, 0)
    await store.admit(demand(limit, input=100, output=400))


async def test_a_request_larger_than_the_whole_limit_runs_alone_in_an_empty_window(
    store_at: Any,
) -> None:
    store, _ = store_at(at(2026, 12, 1))
    limit = Limit(TOK, MIN, 100)
    ticket = await store.admit(demand(limit, input=10, output=5000))
    assert await store.usage("u1", limit) == (0, 100)  # at most the whole limit
    with pytest.raises(AllowanceExceeded):
        await store.admit(demand(limit, input=1))
    ticket.settle(None, None)  # it failed before the engine said anything
    assert await store.usage("u1", limit) == (0, 0)


async def test_an_exhausted_limit_refuses_even_a_request_that_needs_none_of_it(
    store_at: Any,
) -> None:
    store, _ = store_at(at(2026, 12, 1))
    limit = Limit(OUT, DAY, 10)
    (await store.admit(demand(limit, output=10))).settle(5, 10)
    with pytest.raises(AllowanceExceeded):
        await store.admit(demand(limit, output=0))


async def test_a_zero_limit_refuses_everything(store_at: Any) -> None:
    store, _ = store_at(at(2026, 12, 1))
    with pytest.raises(AllowanceExceeded):
        await store.admit(demand(Limit(TOK, MONTH, 0), input=1))


async def test_input_and_output_limits_count_their_own_side(store_at: Any) -> None:
    store, _ = store_at(at(2026, 12, 1))
    inputs, outputs, both = Limit(IN, DAY, 1000), Limit(OUT, DAY, 1000), Limit(TOK, DAY, 1000)
    (await store.admit(demand(inputs, outputs, both, input=30, output=70))).settle(20, 50)
    assert await store.usage("u1", inputs) == (20, 0)
    assert await store.usage("u1", outputs) == (50, 0)
    assert await store.usage("u1", both) == (70, 0)


async def test_a_model_limit_applies_to_that_model_only(store_at: Any) -> None:
    store, _ = store_at(at(2026, 12, 1))
    big = Limit(REQ, MIN, 1, "big")
    await store.admit(demand(big, model="big"))
    with pytest.raises(AllowanceExceeded) as refused:
        await store.admit(demand(big, model="big"))
    assert "for 'big'" in refused.value.message
    for _ in range(5):
        await store.admit(demand(big, model="small"))


async def test_the_day_ends_at_midnight_utc_with_a_reservation_still_in_flight(
    store_at: Any,
) -> None:
    store, clock = store_at(at(2026, 12, 1, 23, 59, 30))
    limit = Limit(TOK, DAY, 100)
    (await store.admit(demand(limit, input=60))).settle(60, 0)
    in_flight = await store.admit(demand(limit, input=40))
    with pytest.raises(AllowanceExceeded) as refused:
        await store.admit(demand(limit, input=1))
    assert refused.value.retry_after == 30
    clock.now = at(2026, 12, 2)
    assert await store.usage("u1", limit) == (0, 40)  # the new day, the reservation still held
    in_flight.settle(40, 0)  # its usage lands in the day it became known
    assert await store.usage("u1", limit) == (40, 0)


@pytest.mark.parametrize(
    ("start", "same", "next_month"),
    [
        (at(2026, 1, 31, 23, 59), at(2026, 1, 31, 23, 59, 59), at(2026, 2, 1)),
        (at(2028, 2, 29, 12), at(2028, 2, 29, 23, 59, 59), at(2028, 3, 1)),  # a leap year
        (at(2026, 12, 31, 23), at(2026, 12, 31, 23, 59, 59), at(2027, 1, 1)),  # a new year
    ],
)
async def test_the_month_is_the_calendar_month_in_utc(
    start: float, same: float, next_month: float, store_at: Any
) -> None:
    store, clock = store_at(start)
    limit = Limit(REQ, MONTH, 1)
    await store.admit(demand(limit))
    clock.now = same
    with pytest.raises(AllowanceExceeded) as refused:
        await store.admit(demand(limit))
    assert refused.value.retry_after == 1
    clock.now = next_month
    await store.admit(demand(limit))


async def test_of_several_limits_exceeded_the_last_to_free_up_says_when_to_retry(
    store_at: Any,
) -> None:
    store, _ = store_at(at(2026, 12, 1, 12))
    minute, day = Limit(REQ, MIN, 1), Limit(REQ, DAY, 1)
    await store.admit(demand(minute, day))
    with pytest.raises(AllowanceExceeded) as refused:
        await store.admit(demand(minute, day))
    assert refused.value.reason == "requests_per_day"
    assert refused.value.retry_after == 12 * 3600


async def test_the_person_and_the_token_count_on_their_own_counters(store_at: Any) -> None:
    store, _ = store_at(at(2026, 12, 1))
    person, token = Limit(REQ, MIN, 3), Limit(REQ, MIN, 1)
    laptop = Demand([Counted("u1", person), Counted("t1", token)], "m", 1, 0)
    ci = Demand([Counted("u1", person), Counted("t2", token)], "m", 1, 0)
    await store.admit(laptop)
    with pytest.raises(AllowanceExceeded) as refused:
        await store.admit(laptop)
    assert "this token's allowance" in refused.value.message
    await store.admit(ci)
    await store.admit(Demand([Counted("u1", person)], "m", 1, 0))
    with pytest.raises(AllowanceExceeded) as refused:
        await store.admit(Demand([Counted("u1", person)], "m", 1, 0))
    assert "your allowance" in refused.value.message


async def test_headers_name_the_tightest_limit_of_each_kind(store_at: Any) -> None:
    store, _ = store_at(at(2026, 12, 1, 12, 0, 30))
    ticket = await store.admit(
        demand(Limit(REQ, MIN, 10), Limit(REQ, DAY, 3), Limit(TOK, MIN, 500), input=100)
    )
    now = at(2026, 12, 1, 12, 0, 30)
    assert rate_limit_headers(ticket.requests, ticket.tokens, now, anthropic=False) == [
        (b"x-ratelimit-limit-requests", b"3"),
        (b"x-ratelimit-remaining-requests", b"2"),
        (b"x-ratelimit-reset-requests", b"11h59m30s"),
        (b"x-ratelimit-limit-tokens", b"500"),
        (b"x-ratelimit-remaining-tokens", b"400"),
        (b"x-ratelimit-reset-tokens", b"30s"),
    ]
    assert rate_limit_headers(ticket.requests, ticket.tokens, now, anthropic=True) == [
        (b"anthropic-ratelimit-requests-limit", b"3"),
        (b"anthropic-ratelimit-requests-remaining", b"2"),
        (b"anthropic-ratelimit-requests-reset", b"2026-12-02T00:00:00Z"),
        (b"anthropic-ratelimit-tokens-limit", b"500"),
        (b"anthropic-ratelimit-tokens-remaining", b"400"),
        (b"anthropic-ratelimit-tokens-reset", b"2026-12-01T12:01:00Z"),
    ]


@pytest.mark.parametrize(
    ("body", "size", "embedding", "expected"),
    [
        ({"max_tokens": 50}, 400, False, (100, 50)),
        ({"max_completion_tokens": 7}, 40, False, (10, 7)),
        ({"max_output_tokens": 9}, 40, False, (10, 9)),  # Responses
        ({"n_predict": 11}, 40, False, (10, 11)),  # llama.cpp
        ({}, 40, False, (10, DEFAULT_OUTPUT_RESERVE)),
        ({"max_tokens": None}, 40, False, (10, DEFAULT_OUTPUT_RESERVE)),
        ({"max_tokens": 50}, 2, False, (1, 50)),
        ({}, 40, True, (10, 0)),  # embeddings generate nothing
        # The largest limit named in any field, whichever comes first: an engine may honour it.
        ({"max_tokens": 1, "max_completion_tokens": 1000}, 40, False, (10, 1000)),
        ({"max_tokens": 1, "max_output_tokens": 1000}, 40, False, (10, 1000)),
        ({"max_completion_tokens": 5, "max_tokens": None, "n_predict": 900}, 40, False, (10, 900)),
        # Every choice is generated in full.
        ({"max_tokens": 10, "n": 4}, 40, False, (10, 40)),
        ({"max_tokens": 10, "n": 2, "best_of": 3}, 40, False, (10, 30)),
        ({"n": 2}, 40, False, (10, 2 * DEFAULT_OUTPUT_RESERVE)),
    ],
)
def test_a_request_is_estimated_from_its_size_and_the_most_output_it_may_ask_for(
    body: dict, size: int, embedding: bool, expected: tuple[int, int]
) -> None:
    assert estimate(body, size, embedding=embedding) == expected


@pytest.mark.parametrize(
    "body",
    [
        {"max_tokens": "lots"},
        {"max_tokens": True},
        {"max_completion_tokens": "1000"},  # engines' parsers read it as 1000
        {"max_output_tokens": 1000.0},
        {"n_predict": -1},
        {"n": 0},
        {"best_of": "3"},
    ],
)
def test_an_output_limit_that_is_not_a_whole_number_is_refused(body: dict) -> None:
    name = next(iter(body))
    with pytest.raises(BadRequest) as refused:
        one_output_limit({"max_tokens": 10, **body})
    assert refused.value.param == name


def test_every_output_limit_a_body_names_carries_the_largest() -> None:
    body = {"max_tokens": 1, "max_completion_tokens": 1000, "n_predict": None, "n": 2}
    one_output_limit(body)
    assert body == {"max_tokens": 1000, "max_completion_tokens": 1000, "n_predict": 1000, "n": 2}
    untouched = {"temperature": 0.5}
    one_output_limit(untouched)
    assert untouched == {"temperature": 0.5}


async def test_an_answer_whose_engine_reported_no_usage_counts_what_it_reserved(
    store_at: Any,
) -> None:
    store, _ = store_at(at(2026, 12, 1))
    limit = Limit(TOK, DAY, 1000)
    (await store.admit(demand(limit, input=100, output=50))).settle(None, None, answered=True)
    assert await store.usage("u1", limit) == (150, 0)
    # Not answered (it failed, or left, before a byte): nothing was generated, nothing counts.
    (await store.admit(demand(limit, input=100, output=50))).settle(None, None)
    assert await store.usage("u1", limit) == (150, 0)


async def test_a_request_that_reached_an_engine_but_got_no_answer_counts_its_prompt(
    store_at: Any,
) -> None:
    store, _ = store_at(at(2026, 12, 1))
    tokens, inputs, outputs = Limit(TOK, DAY, 1000), Limit(IN, DAY, 1000), Limit(OUT, DAY, 1000)
    # Its client left before the first byte: the engine had it, and did the prefill.
    reached = await store.admit(demand(tokens, inputs, outputs, input=100, output=50))
    reached.reached += 1
    reached.settle(None, None)
    assert await store.usage("u1", tokens) == (100, 0)
    assert await store.usage("u1", inputs) == (100, 0)
    assert await store.usage("u1", outputs) == (0, 0)
    # What the engine reported, when it did, counts instead.
    reported = await store.admit(demand(tokens, input=100, output=50))
    reported.reached += 1
    reported.settle(7, 0)
    assert await store.usage("u1", tokens) == (107, 0)
    # Sent, then refused by the engine, or never sent: nothing.
    refused = await store.admit(demand(tokens, input=100, output=50))
    refused.reached += 1
    refused.reached -= 1
    refused.settle(None, None)
    assert await store.usage("u1", tokens) == (107, 0)


async def test_reading_the_usage_of_a_past_window_changes_nothing(store_at: Any) -> None:
    store, clock = store_at(at(2026, 12, 1, 10, 0, 30))
    limit = Limit(REQ, MIN, 5)
    await store.admit(demand(limit))
    clock.now = at(2026, 12, 1, 10, 1)
    assert await store.usage("u1", limit) == (0, 0)
    clock.now = at(2026, 12, 1, 10, 0, 40)  # back in the first minute (a view read in between)
    assert await store.usage("u1", limit) == (1, 0)
