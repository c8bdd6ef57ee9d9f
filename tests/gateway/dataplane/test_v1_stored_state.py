"""Stored Responses state stays its caller's: on a backend that keeps it, one person can never
continue, or read, another's stored response, conversation or item; on one that does not, the
engine is told to keep nothing (gateway/dialects/stored_state.py)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from gateway.admin import services
from tests.support.drive import HTTP, engine_records
from tests.support.factories import make_token_with_secret, make_user
from tests.support.live import add_backend


@pytest.fixture
def people(transactional_db: None) -> dict[str, str]:
    alice, bob = make_user("alice"), make_user("bob")
    return {
        "alice": make_token_with_secret(alice, name="laptop")[1],
        "alice2": make_token_with_secret(alice, name="phone")[1],
        "bob": make_token_with_secret(bob, name="laptop")[1],
    }


def _keeping(make_sim: Any, name: str = "keeper", **fields: Any) -> Any:
    """A backend that serves /v1/responses itself and keeps what it is asked to store."""
    server = make_sim(tokens=3, token_delay=0, responses=True, responses_store=True)
    add_backend(name, server.url, surfaces={"responses": "native"}, store_responses=True, **fields)
    return server


def _respond(gateway: Any, key: str, **body: Any) -> Any:
    return HTTP.post(
        gateway.v1 + "/responses",
        json={"model": "sim-small", "input": "hello", **body},
        headers={"Authorization": f"Bearer {key}"},
    )


def _sent_by(engine: Any, text: str) -> list[dict[str, Any]]:
    """The Responses requests the engine received that carry `text` (detection's probes, which
    carry no body, left out)."""
    return [
        r
        for r in engine_records(engine)
        if r["path"] == "/v1/responses" and r["body"] and text in str(r)
    ]


def test_one_caller_cannot_continue_anothers_stored_response(gateway, make_sim, people):
    engine = _keeping(make_sim)
    first = _respond(gateway, people["alice"], input="alice's secret", store=True)
    assert first.status_code == 200, first.text
    stored = first.json()["id"]

    stolen = _respond(gateway, people["bob"], input="what did I say?", previous_response_id=stored)

    assert stolen.status_code == 404
    assert stolen.json()["error"]["code"] == "previous_response_not_found"
    assert stolen.json()["error"]["param"] == "previous_response_id"
    assert _sent_by(engine, "what did I say?") == []  # refused before it reached the engine
    own = _respond(gateway, people["alice"], input="and then?", previous_response_id=stored)
    assert own.status_code == 200, own.text
    assert _sent_by(engine, "and then?")[0]["body"]["previous_response_id"] == stored


def test_anothers_response_id_is_answered_exactly_as_an_unknown_one(gateway, make_sim, people):
    _keeping(make_sim)
    stored = _respond(gateway, people["alice"], store=True).json()["id"]
    # The same length as the real one, so that only the id differs in the two answers.
    unknown = stored[:-1] + ("0" if stored[-1] != "0" else "1")

    theirs = _respond(gateway, people["bob"], previous_response_id=stored)
    nobodys = _respond(gateway, people["bob"], previous_response_id=unknown)

    assert theirs.status_code == nobodys.status_code == 404
    mine, never = theirs.json()["error"], nobodys.json()["error"]
    assert {**mine, "message": mine["message"].replace(stored, "<id>")} == {
        **never,
        "message": never["message"].replace(unknown, "<id>"),
    }


def test_a_stored_response_is_the_tokens_not_only_the_persons(gateway, make_sim, people):
    _keeping(make_sim)
    stored = _respond(gateway, people["alice"], store=True).json()["id"]

    other_token = _respond(gateway, people["alice2"], previous_response_id=stored)

    assert other_token.status_code == 404


def test_a_conversation_or_item_that_is_not_the_callers_is_unknown(gateway, make_sim, people):
    engine = _keeping(make_sim)
    answer = _respond(gateway, people["alice"], store=True).json()
    item = answer["output"][0]["id"]

    for body, param in (
        ({"conversation": "conv_of_someone"}, "conversation"),
        ({"conversation": {"id": "conv_of_someone"}}, "conversation.id"),
        ({"input": [{"type": "item_reference", "id": item}]}, "input[0].id"),
        ({"input": [{"id": item}]}, "input[0].id"),
    ):
        refused = _respond(gateway, people["bob"], **body)
        assert refused.status_code == 404, body
        assert refused.json()["error"]["param"] == param
    assert [r["body"] for r in _sent_by(engine, "/v1/responses")] == [
        {"model": "sim-small", "input": "hello", "store": True}
    ]  # alice's first request alone
    mine = _respond(gateway, people["alice"], input=[{"type": "item_reference", "id": item}])
    assert mine.status_code == 200, mine.text


def test_a_streamed_stored_response_is_claimed_before_its_id_reaches_the_client(
    gateway, make_sim, people
):
    _keeping(make_sim)
    with HTTP.stream(
        "POST",
        gateway.v1 + "/responses",
        json={"model": "sim-small", "input": "hi", "store": True, "stream": True},
        headers={"Authorization": f"Bearer {people['alice']}"},
    ) as stream:
        text = "".join(stream.iter_text())
    created = next(
        line
        for line in text.splitlines()
        if line.startswith("data:") and "response.created" in line
    )
    stored = json.loads(created[5:])["response"]["id"]

    assert _respond(gateway, people["bob"], previous_response_id=stored).status_code == 404
    assert _respond(gateway, people["alice"], previous_response_id=stored).status_code == 200


def test_a_continued_conversation_runs_on_the_backend_that_keeps_it(gateway, make_sim, people):
    _keeping(make_sim, "keeper-a")
    _keeping(make_sim, "keeper-b")
    first = _respond(gateway, people["alice"], store=True)
    where = first.headers["x-aiplane-backend"]

    for _ in range(6):
        again = _respond(gateway, people["alice"], previous_response_id=first.json()["id"])
        assert again.status_code == 200, again.text
        assert again.headers["x-aiplane-backend"] == where


def test_an_id_two_backends_both_answered_belongs_to_nobody(gateway, make_sim, people):
    # Two engines that count alike hand out the same first id; neither caller may then use it.

    _keeping(make_sim, "keeper-a")
    _keeping(make_sim, "keeper-b")
    services.pool_save(
        data={"name": "default", "strategy": "round_robin", "backends": ["keeper-a", "keeper-b"]},
        known_groups=set(),
    )
    seen: dict[str, list[str]] = {}
    for who in ("alice", "bob"):
        answer = _respond(gateway, people[who], store=True)
        seen.setdefault(answer.json()["id"], []).append(who)
    shared = [ident for ident, whose in seen.items() if len(set(whose)) > 1]
    assert shared, seen  # the simulated engines' ids repeat across the two

    for who in ("alice", "bob"):
        assert _respond(gateway, people[who], previous_response_id=shared[0]).status_code == 404


def test_a_backend_that_does_not_keep_state_is_told_to_keep_nothing(gateway, make_sim, people):
    engine = make_sim(tokens=3, token_delay=0, responses=True, responses_store=True)
    add_backend("plain", engine.url, surfaces={"responses": "native"})

    answer = _respond(gateway, people["alice"], input="stateless")
    assert answer.status_code == 200, answer.text
    assert _sent_by(engine, "stateless")[0]["body"]["store"] is False
    for body, param in (
        ({"store": True}, "store"),
        ({"previous_response_id": answer.json()["id"]}, "previous_response_id"),
        ({"background": True}, "background"),
    ):
        refused = _respond(gateway, people["alice"], **body)
        assert refused.status_code == 400, body
        assert refused.json()["error"]["param"] == param
        assert "keeps Responses state" in refused.json()["error"]["message"]


def test_a_request_that_asks_to_store_goes_to_a_backend_that_keeps_state(gateway, make_sim, people):
    plain = make_sim(tokens=3, token_delay=0, responses=True)
    add_backend("plain", plain.url, surfaces={"responses": "native"})
    keeper = _keeping(make_sim)

    for _ in range(4):
        answer = _respond(gateway, people["alice"], input="keep me", store=True)
        assert answer.status_code == 200, answer.text
        assert answer.headers["x-aiplane-backend"] == "keeper"
    assert _sent_by(plain, "keep me") == []
    assert len(_sent_by(keeper, "keep me")) == 4
