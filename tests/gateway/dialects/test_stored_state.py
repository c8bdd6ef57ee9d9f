"""Claims on stored Responses state: what a request refers to, what an answer creates, and the
claims kept in memory and on Redis for every process (gateway/dialects/stored_state.py,
gateway/runtime/state_owners.py)."""

from __future__ import annotations

from typing import Any

import pytest

from gateway.core.errors import BadRequest
from gateway.core.redis_clients import connect_async
from gateway.dialects.stored_state import (
    CONVERSATION,
    ITEM,
    RESPONSE,
    Claim,
    MemoryOwners,
    OwnersAway,
    RequestState,
    StateNotFound,
    admit,
    created_ids,
    owner_of,
    references,
)
from gateway.runtime.state_owners import SharedOwners

ALICE, BOB = owner_of(1, 10), owner_of(2, 20)


@pytest.mark.parametrize(
    ("body", "refs"),
    [
        ({"input": "hi"}, []),
        ({"previous_response_id": "resp_1"}, [(RESPONSE, "resp_1", "previous_response_id")]),
        ({"previous_response_id": ""}, []),
        ({"conversation": "conv_1"}, [(CONVERSATION, "conv_1", "conversation")]),
        ({"conversation": {"id": "conv_1"}}, [(CONVERSATION, "conv_1", "conversation.id")]),
        (
            {"input": [{"role": "user", "content": "x"}, {"type": "item_reference", "id": "m"}]},
            [(ITEM, "m", "input[1].id")],
        ),
        ({"input": [{"id": "msg_1"}]}, [(ITEM, "msg_1", "input[0].id")]),
        # An item that carries itself (Codex sends back reasoning with its id) is no reference.
        ({"input": [{"type": "reasoning", "id": "rs_1", "summary": []}]}, []),
        ({"input": [{"type": "item_reference"}]}, [(ITEM, "", "input[0].id")]),
    ],
)
def test_the_stored_state_a_request_refers_to_is_read_from_every_field(body, refs):
    assert references(body) == refs


def test_an_answer_creates_its_id_its_conversations_and_its_items():
    response = {
        "id": "resp_1",
        "conversation": {"id": "conv_1"},
        "output": [{"id": "msg_1", "type": "message"}, {"type": "message"}, "junk"],
    }
    assert list(created_ids(response)) == [
        (RESPONSE, "resp_1"),
        (CONVERSATION, "conv_1"),
        (ITEM, "msg_1"),
    ]
    assert list(created_ids("not a response")) == []
    assert list(created_ids({"id": 5, "output": "x"})) == []


def test_an_id_claimed_twice_by_different_callers_is_nobodys():
    owners = MemoryOwners()
    owners.claim(RESPONSE, "r", Claim(ALICE, "a"))
    owners.claim(RESPONSE, "r", Claim(ALICE, "a"))  # the same again: still hers
    assert owners.find_now(RESPONSE, "r") == Claim(ALICE, "a")
    owners.claim(RESPONSE, "r", Claim(BOB, "a"))
    assert owners.find_now(RESPONSE, "r") is None
    owners.claim(RESPONSE, "r", Claim(ALICE, "a"))  # and stays nobody's
    assert owners.find_now(RESPONSE, "r") is None


def test_memory_claims_are_bounded_and_expire():
    now = [0.0]
    owners = MemoryOwners(limit=2, clock=lambda: now[0])
    for ident in ("a", "b", "c"):
        owners.claim(RESPONSE, ident, Claim(ALICE, "x"))
    assert owners.find_now(RESPONSE, "a") is None  # the oldest went first
    assert owners.find_now(RESPONSE, "c") == Claim(ALICE, "x")
    now[0] = 31 * 24 * 3600.0
    assert owners.find_now(RESPONSE, "c") is None
    owners.claim(RESPONSE, "c", Claim(BOB, "x"))  # an expired claim disagrees with nothing
    assert owners.find_now(RESPONSE, "c") == Claim(BOB, "x")


async def test_admission_pins_a_continuation_to_the_backend_that_keeps_it():
    owners = MemoryOwners()
    owners.claim(RESPONSE, "r", Claim(ALICE, "b"))
    state = RequestState(owners, ALICE)

    excluded = await admit({"previous_response_id": "r"}, {"a", "b", "c"}, frozenset("ab"), state)

    assert (excluded, state.pinned) == ({"a", "c"}, "b")


async def test_a_request_that_stores_may_run_only_where_state_is_kept():
    state = RequestState(MemoryOwners(), ALICE)
    assert await admit({"store": True}, {"a", "b"}, frozenset("b"), state) == {"a"}
    assert await admit({"background": True}, {"a", "b"}, frozenset("b"), state) == {"a"}
    assert await admit({"store": False}, {"a", "b"}, frozenset("b"), state) == frozenset()


@pytest.mark.parametrize(
    "claim",
    [None, Claim(BOB, "b"), Claim(ALICE, "gone")],
    ids=["unknown", "anothers", "on-a-backend-that-no-longer-keeps-it"],
)
async def test_a_reference_that_is_not_the_callers_is_not_found(claim):
    owners = MemoryOwners()
    if claim is not None:
        owners.claim(CONVERSATION, "c", claim)
    with pytest.raises(StateNotFound) as refused:
        await admit({"conversation": "c"}, {"b"}, frozenset("b"), RequestState(owners, ALICE))
    assert (refused.value.status, refused.value.code) == (404, "conversation_not_found")


async def test_references_to_two_backends_cannot_be_served_together():
    owners = MemoryOwners()
    owners.claim(RESPONSE, "r", Claim(ALICE, "a"))
    owners.claim(ITEM, "i", Claim(ALICE, "b"))
    body = {"previous_response_id": "r", "input": [{"type": "item_reference", "id": "i"}]}
    with pytest.raises(BadRequest) as refused:
        await admit(body, {"a", "b"}, frozenset("ab"), RequestState(owners, ALICE))
    assert refused.value.param == "input[0].id"


async def test_claims_on_redis_are_seen_by_every_process(redis_server, redis_prefix):
    one = SharedOwners(connect_async(redis_server.url), prefix=redis_prefix)
    two = SharedOwners(connect_async(redis_server.url), prefix=redis_prefix)
    try:
        await one.claim(RESPONSE, "r", Claim(ALICE, "a"))
        assert await two.find(RESPONSE, "r") == Claim(ALICE, "a")
        await two.claim(RESPONSE, "r", Claim(BOB, "b"))  # the same id from another engine
        assert await one.find(RESPONSE, "r") is None
        assert await two.find(RESPONSE, "r") is None
        assert await two.find(RESPONSE, "unknown") is None
    finally:
        await one.aclose()
        await two.aclose()


async def test_while_redis_is_away_only_this_processs_own_claims_are_found(
    private_redis: Any, redis_prefix
):
    owners = SharedOwners(connect_async(private_redis.url), prefix=redis_prefix)
    try:
        private_redis.stop()
        await owners.claim(RESPONSE, "mine", Claim(ALICE, "a"))  # kept here alone

        assert await owners.find(RESPONSE, "mine") == Claim(ALICE, "a")
        with pytest.raises(OwnersAway) as away:
            await owners.find(RESPONSE, "someone-elses")
        assert away.value.status == 503

        private_redis.start()  # empty: it lost every claim
        assert await owners.find(RESPONSE, "mine") == Claim(ALICE, "a")
        assert await owners.find(RESPONSE, "someone-elses") is None
    finally:
        await owners.aclose()
