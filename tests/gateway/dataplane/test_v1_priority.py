"""Strict priority end to end: classes from groups and tokens, hints that only lower, queue order.

Every ordering test uses a backend with one slot in front of a *gated* engine (SimConfig slots=0):
the first request takes the gateway's slot and then sits in the engine until the test opens the
gate, so the others queue in the gateway in a known arrival order, with no timing involved. The
engine records requests in the order the gateway dispatched them, which is the admission order.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from typing import Any, NamedTuple

import pytest

from aiplane.catalog import settings_update
from tests.support.drive import (
    chat,
    configure,
    engine_records,
    engine_stats,
    key_for,
    labels_seen,
    wait_until,
)
from tests.support.factories import make_group, make_token_with_secret, make_user
from tests.support.live import add_backend

# The database only sets the test up (the order of the admission queue):
# the PostgreSQL pass of `make test` leaves it to the SQLite pass.
pytestmark = pytest.mark.database_neutral

# The engine learns the class through a custom mapping; these values say which class ran.
MAPPING = {"mode": "custom", "mapping": {"field": "priority", "low": 1, "medium": 0, "high": -1}}
CLASS_OF_VALUE = {1: "low", 0: "medium", -1: "high"}


class Call(NamedTuple):
    label: str
    key: str
    headers: dict[str, str] = {}  # never mutated: a NamedTuple default


def open_gate(server: Any) -> None:
    configure(server, slots=1)


def run_in_line(gateway: Any, engine: Any, blocker: str, calls: list[Call]) -> list[str]:
    """Hold the only slot, queue `calls` one by one in this order, then free the slot.

    Answers the labels in the order the engine received them (the blocker left out).
    """
    with ThreadPoolExecutor(max_workers=len(calls) + 1) as pool:
        futures = [pool.submit(chat, gateway, blocker, "blocker")]
        wait_until(lambda: engine_stats(engine)["waiting"] == 1, "the blocker holds the slot")
        for n, call in enumerate(calls, 1):
            futures.append(pool.submit(chat, gateway, call.key, call.label, headers=call.headers))
            wait_until(lambda n=n: gateway.runtime.queue.waiting == n, f"{call.label} waits")
        open_gate(engine)
        for future in futures:
            response = future.result()
            assert response.status_code == 200, response.text
    seen = labels_seen(engine)
    assert seen[0] == "blocker"
    return seen[1:]


def class_of_last_request(server: Any) -> str:
    return CLASS_OF_VALUE[engine_records(server)[-1]["body"]["priority"]]


@pytest.fixture
def prioritized(gateway: Any) -> Any:
    settings_update(values={"gateway.priority_enabled": True})
    return gateway


@pytest.fixture
def gated(make_sim: Any) -> Any:
    """An engine that holds every request until `open_gate`; behind a one-slot backend."""
    engine = make_sim(slots=0, tokens=3, token_delay=0.005)
    add_backend("solo", engine.url, max_inflight=1)
    return engine


@pytest.fixture
def mapped(make_sim: Any) -> Any:
    """An instant engine whose backend forwards the class through MAPPING."""
    engine = make_sim(tokens=1, token_delay=0)
    add_backend("mapped", engine.url, priority=MAPPING)
    return engine


# ----- the order of the queue ------------------------------------------------------------------


def test_queued_requests_run_high_then_medium_then_low_whatever_their_arrival(prioritized, gated):
    blocker = key_for("blocker", "high")
    low = key_for("lena", "low")
    medium = key_for("mo", "medium")
    high = key_for("hana", "high")
    # Token overrides: the owner lowering their own token, and an administrator's grant.
    lowered = key_for("harry", "high", priority="low")
    granted = key_for("gus", "low", priority="high", set_by_admin=True)

    order = run_in_line(
        prioritized,
        gated,
        blocker,
        [
            Call("low-group", low),
            Call("low-override", lowered),
            Call("medium-group", medium),
            Call("high-group", high),
            Call("high-override", granted),
        ],
    )

    assert order == ["high-group", "high-override", "medium-group", "low-group", "low-override"]


def test_requests_of_one_class_run_in_arrival_order(prioritized, gated):
    blocker = key_for("blocker", "high")
    keys = [key_for(f"user{i}", "medium") for i in range(5)]
    calls = [Call(f"medium-{i}", key) for i, key in enumerate(reversed(keys))]

    order = run_in_line(prioritized, gated, blocker, calls)

    assert order == [c.label for c in calls]


def test_with_prioritization_disabled_everyone_runs_in_arrival_order(gateway, gated):
    settings_update(values={"gateway.priority_enabled": False})
    blocker = key_for("blocker", "high")
    calls = [
        Call("low", key_for("lena", "low")),
        Call("high", key_for("hana", "high")),
        Call("medium", key_for("mo", "medium")),
        Call("high-with-a-low-hint", key_for("hugo", "high"), {"X-AIplane-Priority": "low"}),
        Call("low-again", key_for("lars", "low")),
    ]

    order = run_in_line(gateway, gated, blocker, calls)

    assert order == [c.label for c in calls]


def test_a_hint_lowers_a_request_behind_its_peers_but_never_raises_it(prioritized, gated):
    blocker = key_for("blocker", "high")
    high = key_for("hana", "high")
    low = key_for("lena", "low")
    medium = key_for("mo", "medium")

    order = run_in_line(
        prioritized,
        gated,
        blocker,
        [
            Call("high-asking-for-low", high, {"X-AIplane-Priority": "low"}),
            Call("low-asking-for-high", low, {"X-AIplane-Priority": "high"}),
            Call("low-asking-for-interactive", low, {"X-LlamaSwap-Priority": "interactive"}),
            Call("medium", medium),
        ],
    )

    assert order == [
        "medium",
        "high-asking-for-low",
        "low-asking-for-high",
        "low-asking-for-interactive",
    ]


def test_an_in_band_offset_orders_requests_inside_the_band_they_were_lowered_to(prioritized, gated):
    blocker = key_for("blocker", "high")
    medium = key_for("mo", "medium")

    order = run_in_line(
        prioritized,
        gated,
        blocker,
        [
            Call("batch", medium, {"X-LlamaSwap-Priority": "batch"}),  # low band, offset 0
            Call("minus-60", medium, {"X-LlamaSwap-Priority": "-60"}),  # low band, offset +40
            Call("minus-140", medium, {"x-dynamo-request-priority": "-140"}),  # low, offset -40
        ],
    )

    assert order == ["minus-60", "batch", "minus-140"]


def test_a_positive_offset_in_the_callers_own_band_does_not_jump_the_line(prioritized, gated):
    blocker = key_for("blocker", "high")
    first = key_for("mo", "medium")
    second = key_for("max", "medium")

    order = run_in_line(
        prioritized,
        gated,
        blocker,
        [
            Call("minus-40", second, {"X-LlamaSwap-Priority": "-40"}),
            Call("plain", first),
            Call("plus-40", second, {"X-LlamaSwap-Priority": "40"}),
        ],
    )

    # +40 would put it ahead of an earlier peer: that is raising it, so it counts as 0.
    # -40 lowers it inside its own band, which is allowed.
    assert order == ["plain", "plus-40", "minus-40"]


# ----- the class each request runs at ---------------------------------------------------------


def test_hints_lower_the_class_but_never_raise_it(prioritized, mapped):
    keys = {cls: key_for(f"user-{cls}", cls) for cls in ("low", "medium", "high")}
    cases: list[tuple[str, dict[str, str], dict[str, Any], str]] = [
        # (caller's class, headers, body extras, the class the request must run at)
        ("high", {}, {}, "high"),
        ("high", {"X-AIplane-Priority": "low"}, {}, "low"),
        ("high", {"X-AIplane-Priority": "MEDIUM"}, {}, "medium"),
        ("low", {"X-AIplane-Priority": "high"}, {}, "low"),
        ("medium", {"X-AIplane-Priority": "high"}, {}, "medium"),
        ("medium", {"X-LlamaSwap-Priority": "batch"}, {}, "low"),
        ("high", {"X-LlamaSwap-Priority": "-100"}, {}, "low"),
        ("high", {"X-LlamaSwap-Priority": "normal"}, {}, "medium"),
        ("low", {"X-LlamaSwap-Priority": "100"}, {}, "low"),
        ("medium", {"X-LlamaSwap-Priority": "interactive"}, {}, "medium"),
        ("high", {"x-dynamo-request-priority": "-60"}, {}, "low"),
        ("low", {"x-dynamo-request-priority": "100"}, {}, "low"),
        ("high", {"x-dynamo-request-strict-priority": "-1"}, {}, "low"),
        ("high", {}, {"nvext": {"agent_hints": {"priority": -100}}}, "low"),
        ("high", {}, {"nvext": {"agent_hints": {"priority": 0}}}, "medium"),
        ("low", {}, {"nvext": {"agent_hints": {"priority": 100}}}, "low"),
        ("high", {}, {"nvext": {"agent_hints": {"strict_priority": -5}}}, "low"),
        # A header overrides the matching body field.
        ("high", {"x-dynamo-request-priority": "100"},
         {"nvext": {"agent_hints": {"priority": -100}}}, "high"),
        # Several hints: the lowest wins.
        ("high", {"X-AIplane-Priority": "medium", "X-LlamaSwap-Priority": "batch"}, {}, "low"),
    ]  # fmt: skip
    for caller, headers, extra, expected in cases:
        r = chat(prioritized, keys[caller], headers=headers, **extra)
        assert r.status_code == 200, (caller, headers, extra, r.text)
        assert class_of_last_request(mapped) == expected, (caller, headers, extra)
        forwarded = engine_records(mapped)[-1]["body"]
        assert "nvext" not in forwarded, (caller, headers, extra)


def test_a_malformed_hint_is_a_400_in_the_openai_envelope(prioritized, mapped):
    key = key_for("hana", "high")
    cases: list[tuple[dict[str, str], dict[str, Any], str]] = [
        ({"X-AIplane-Priority": "urgent"}, {}, "X-AIplane-Priority"),
        ({"X-AIplane-Priority": ""}, {}, "X-AIplane-Priority"),
        ({"X-LlamaSwap-Priority": "soon"}, {}, "X-LlamaSwap-Priority"),
        ({"X-LlamaSwap-Priority": "1.5"}, {}, "X-LlamaSwap-Priority"),
        ({"x-dynamo-request-priority": "high"}, {}, "x-dynamo-request-priority"),
        ({"x-dynamo-request-strict-priority": "first"}, {}, "x-dynamo-request-strict-priority"),
        ({}, {"nvext": {"agent_hints": {"priority": "high"}}}, "nvext.agent_hints.priority"),
        ({}, {"nvext": {"agent_hints": {"priority": True}}}, "nvext.agent_hints.priority"),
        ({}, {"nvext": {"agent_hints": {"priority": 1.5}}}, "nvext.agent_hints.priority"),
        ({}, {"nvext": {"agent_hints": "low"}}, "nvext.agent_hints"),
        ({}, {"nvext": "fast"}, "nvext"),
    ]
    for headers, extra, param in cases:
        r = chat(prioritized, key, headers=headers, **extra)

        assert r.status_code == 400, (headers, extra, r.text)
        error = r.json()["error"]
        assert set(error) == {"message", "type", "param", "code"}
        assert error["type"] == "invalid_request_error"
        assert error["code"] == "invalid_priority_hint"
        assert error["param"] == param
        assert error["message"]
    assert engine_records(mapped) == []

    r = chat(prioritized, key, headers={"X-AIplane-Priority": "urgent"})
    assert r.json() == {
        "error": {
            "message": "X-AIplane-Priority must be low, medium or high.",
            "type": "invalid_request_error",
            "param": "X-AIplane-Priority",
            "code": "invalid_priority_hint",
        }
    }


def test_an_owners_token_override_is_capped_by_the_owners_current_groups(prioritized, mapped):
    owner = make_user("olga")
    group = make_group("olga-team", priority="high", members=[owner])
    _, key = make_token_with_secret(owner, name="override", priority="high")
    _, granted = make_token_with_secret(owner, name="granted", priority="high", set_by_admin=True)

    assert chat(prioritized, key).status_code == 200
    assert class_of_last_request(mapped) == "high"

    group.members.remove(owner)  # now only the system default, medium

    assert chat(prioritized, key).status_code == 200
    assert class_of_last_request(mapped) == "medium"
    # An administrator's override is a deliberate grant and is not capped.
    assert chat(prioritized, granted).status_code == 200
    assert class_of_last_request(mapped) == "high"

    group.members.add(owner)

    assert chat(prioritized, key).status_code == 200
    assert class_of_last_request(mapped) == "high"


def test_an_override_above_the_owners_groups_runs_at_their_groups_priority(prioritized, mapped):
    owner = make_user("olga")
    make_group("olga-team", priority="low", members=[owner])
    _, key = make_token_with_secret(owner, name="stale", priority="high")

    assert chat(prioritized, key).status_code == 200
    assert class_of_last_request(mapped) == "low"


def test_a_group_priority_change_applies_to_the_very_next_request(prioritized, mapped):
    from accounts.services import group_put

    user = make_user("gina")
    make_group("team", priority="low", members=[user])
    _, key = make_token_with_secret(user, name="laptop")

    assert chat(prioritized, key).status_code == 200
    assert class_of_last_request(mapped) == "low"

    group_put(name="team", fields={"priority": 2})

    assert chat(prioritized, key).status_code == 200
    assert class_of_last_request(mapped) == "high"

    group_put(name="team", fields={"priority": None})  # back to the system default

    assert chat(prioritized, key).status_code == 200
    assert class_of_last_request(mapped) == "medium"


def test_a_request_that_cannot_use_the_free_backend_does_not_block_others(
    prioritized, gated, make_sim
):
    other = make_sim(tokens=1, token_delay=0, models=["sim-large", "sim-small"])
    add_backend("large", other.url, pool="large", models=["sim-large"])
    add_backend("research", other.url, pool="research", allowed_groups=["research"])
    blocker = key_for("blocker", "high")
    high = key_for("hana", "high")
    low_user = make_user("lena")
    make_group("research", priority="low", members=[low_user])
    low = make_token_with_secret(low_user, name="lab")[1]

    with ThreadPoolExecutor(max_workers=2) as pool:
        first = pool.submit(chat, prioritized, blocker, "blocker")
        wait_until(lambda: engine_stats(gated)["waiting"] == 1, "the blocker holds the slot")
        waiting_high = pool.submit(chat, prioritized, high, "high-waits-for-solo")
        wait_until(lambda: prioritized.runtime.queue.waiting == 1, "the high request waits")

        # Another model, and a pool only some may use: both free, so the low caller goes first.
        by_model = chat(prioritized, low, "low-other-model", model="sim-large")
        by_access = chat(prioritized, low, "low-research-pool")

        assert by_model.status_code == 200, by_model.text
        assert by_access.status_code == 200, by_access.text
        assert by_access.headers["x-aiplane-backend"] == "research"
        assert prioritized.runtime.queue.waiting == 1
        assert not waiting_high.done()
        open_gate(gated)
        assert first.result().status_code == 200
        assert waiting_high.result().status_code == 200
    assert labels_seen(other) == ["low-other-model", "low-research-pool"]
    assert labels_seen(gated) == ["blocker", "high-waits-for-solo"]
