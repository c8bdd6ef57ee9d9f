"""What a client may say about scheduling: the removal before dispatch and the refused fields."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from gateway.core.scheduling_fields import (
    NVEXT_KEPT,
    REFUSED,
    REMOVED,
    refusal,
    refused_field,
    strip_scheduling,
)
from gateway.engines.priority_forwarding import Mapping, apply_mapping

HI = [{"role": "user", "content": "hi"}]


def stripped(body: dict[str, Any]) -> dict[str, Any]:
    strip_scheduling(body)
    return body


@pytest.mark.parametrize(
    ("sent", "forwarded"),
    [
        # Top-level fields engines and routers read as priority, tier or placement.
        ({"priority": -100}, {}),
        ({"service_tier": "priority"}, {}),
        ({"service_tier": "auto"}, {}),
        ({"speed": "fast"}, {}),
        ({"extra_args": {"priority": 10, "ttft_target": 1.0}}, {}),
        ({"routed_dp_rank": 1, "data_parallel_rank": 1, "disagg_prefill_dp_rank": 0}, {}),
        ({"id_slot": 0}, {}),
        ({"request_id": "someone-elses", "rid": "theirs"}, {}),
        ({"keep_alive": -1}, {}),
        # nvext: an allowlist; agent_hints keeps nothing.
        ({"nvext": {"agent_hints": {"latency_sensitivity": 1000.0}}}, {}),
        ({"nvext": {"agent_hints": {"priority": 100, "strict_priority": 5}}}, {}),
        ({"nvext": {"agent_hints": {"osl": 1, "speculative_prefill": True}}}, {}),
        ({"nvext": {"backend_instance_id": 7, "decode_worker_id": 7}}, {}),
        ({"nvext": {"prefill_worker_id": 7, "dp_rank": 1, "prefill_dp_rank": 1}}, {}),
        ({"nvext": {"request_timestamp_ms": 0.0}}, {}),
        ({"nvext": {"session_control": {"session_id": "s", "action": "open"}}}, {}),
        ({"nvext": {"cache_control": {"type": "ephemeral", "ttl": "1h"}}}, {}),
        ({"nvext": {"annotations": ["query_instance_id:x"], "token_data": [1, 2]}}, {}),
        ({"nvext": {"extra_fields": ["worker_id"]}}, {}),
        ({"nvext": {"some_future_key": 1}}, {}),
        ({"nvext": {}}, {}),
        ({"nvext": "fast"}, {}),
        ({"nvext": None}, {}),
        (
            {"nvext": {"greed_sampling": True, "agent_hints": {"latency_sensitivity": 9.0}}},
            {"nvext": {"greed_sampling": True}},
        ),
        (
            {"nvext": {"use_raw_prompt": True, "max_thinking_tokens": 64}},
            {"nvext": {"use_raw_prompt": True, "max_thinking_tokens": 64}},
        ),
        # What says nothing about scheduling passes untouched, nested "priority" keys included.
        (
            {"temperature": 0.2, "metadata": {"priority": "mine"}, "cache_salt": "s"},
            {"temperature": 0.2, "metadata": {"priority": "mine"}, "cache_salt": "s"},
        ),
        ({"prompt_cache_key": "conv-1", "user": "u"}, {"prompt_cache_key": "conv-1", "user": "u"}),
    ],
)
def test_only_what_says_nothing_about_scheduling_reaches_the_engine(
    sent: dict[str, Any], forwarded: dict[str, Any]
) -> None:
    body = {"model": "m", "messages": HI, **sent}
    assert stripped(body) == {"model": "m", "messages": HI, **forwarded}


def test_every_removed_field_goes_at_once() -> None:
    body = {"model": "m", **dict.fromkeys(REMOVED, 1), "nvext": {"agent_hints": {"osl": 1}}}
    assert stripped(body) == {"model": "m"}


def test_the_clients_nested_objects_are_never_changed() -> None:
    # The body is an attempt's shallow copy: what is nested in it is the client's, and a retry on
    # another backend copies the client's body again.
    client = {
        "model": "m",
        "nvext": {"greed_sampling": True, "agent_hints": {"priority": -5, "osl": 3}},
    }
    before = copy.deepcopy(client)
    attempt = dict(client)
    strip_scheduling(attempt)
    assert attempt == {"model": "m", "nvext": {"greed_sampling": True}}
    assert client == before


def test_an_nvext_that_holds_only_what_may_pass_is_not_copied() -> None:
    nvext = {"greed_sampling": True}
    body = {"model": "m", "nvext": nvext}
    strip_scheduling(body)
    assert body["nvext"] is nvext


def test_a_body_without_such_fields_is_left_as_it_is() -> None:
    messages = list(HI)
    body = {"model": "m", "messages": messages, "max_tokens": 5}
    strip_scheduling(body)
    assert body == {"model": "m", "messages": HI, "max_tokens": 5}
    assert body["messages"] is messages


def test_the_nvext_allowlist_holds_no_scheduling_key() -> None:
    assert NVEXT_KEPT.isdisjoint(
        {"agent_hints", "backend_instance_id", "prefill_worker_id", "decode_worker_id",
         "dp_rank", "prefill_dp_rank", "request_timestamp_ms", "session_control",
         "cache_control", "annotations", "token_data", "extra_fields"}
    )  # fmt: skip


@pytest.mark.parametrize(
    ("mapping", "sent", "expected"),
    [
        (Mapping("priority", (1, 0, -1)), {"priority": -100}, {"priority": 1}),
        (Mapping("sched_prio", (10, 20, 30)), {"sched_prio": 99}, {"sched_prio": 10}),
        # A custom mapping field that is one the removal takes is still set, after it.
        (Mapping("id_slot", (3, 2, 1)), {"id_slot": 0}, {"id_slot": 3}),
        (None, {"priority": -100, "service_tier": "priority"}, {}),
    ],
)
def test_the_backends_own_mapping_alone_sets_the_engines_priority(
    mapping: Mapping | None, sent: dict[str, Any], expected: dict[str, Any]
) -> None:
    body = {"model": "m", **sent, "nvext": {"agent_hints": {"latency_sensitivity": 5.0}}}
    apply_mapping(body, mapping, 0)
    assert body == {"model": "m", **expected}


@pytest.mark.parametrize("name", sorted(REFUSED))
def test_a_refused_field_is_named(name: str) -> None:
    assert refused_field({"model": "m", name: {"remote_host": "10.0.0.9"}}) == name
    assert refusal(name).startswith("not accepted by this gateway (")


@pytest.mark.parametrize(
    "body",
    [
        {"model": "m"},
        {"model": "m", "session_id": None, "kv_transfer_params": None},  # null is absent
        {"model": "m", "metadata": {"session_id": "nested ones are the client's own"}},
        {"model": "m", "service_tier": "priority", "nvext": {"backend_instance_id": 1}},
    ],
)
def test_no_field_is_refused_that_is_absent_or_only_removed(body: dict[str, Any]) -> None:
    assert refused_field(body) is None


def test_removed_and_refused_fields_are_apart() -> None:
    assert not set(REMOVED) & set(REFUSED)
