"""Usage where an engine streams without reporting it (llama-cpp-python's server ignores
stream_options.include_usage; the sim's stream_usage=False does the same): the gateway counts
what it relayed, a token a piece, and the prompt by its estimate (4 bytes a token of the body the
engine was sent), tells each client that in its dialect's final usage, and marks the record as
its own estimate. Driven with the official `anthropic` and `openai` SDKs."""

from __future__ import annotations

from typing import Any

import anthropic
import openai
import pytest
from django.test import Client

from gateway.core import wire_json
from gateway.models import ActivityRecord
from tests.support.allowances import Person
from tests.support.drive import engine_records, open_raw, wait_until
from tests.support.factories import make_token_with_secret, make_user
from tests.support.live import add_backend

TOKENS = 5  # what the engine generates for every request
HI = [{"role": "user", "content": "hi there"}]


@pytest.fixture
def key(transactional_db: None) -> str:
    return make_token_with_secret(make_user("alice"), name="laptop")[1]


@pytest.fixture
def silent(make_sim: Any) -> Any:
    """An engine that serves only chat completions and streams without usage."""
    server = make_sim(tokens=TOKENS, token_delay=0, stream_usage=False, directives=True)
    add_backend("solo", server.url)
    return server


def prompt_estimate(engine: Any) -> int:
    """The gateway's estimate of the last request's prompt: the body it sent, 4 bytes a token
    (the engine's record of it is the same JSON, encoded again the way the gateway does)."""
    return len(wire_json.dumps(engine_records(engine)[-1]["body"])) // 4


def the_record() -> ActivityRecord:
    wait_until(ActivityRecord.objects.exists, "the record is written", 15)
    [record] = ActivityRecord.objects.all()
    return record


def openai_client(gateway: Any, key: str) -> openai.OpenAI:
    return openai.OpenAI(base_url=gateway.v1, api_key=key, max_retries=0)


def test_a_streamed_message_ends_with_the_gateways_count_not_zeros(gateway, silent, key):
    messages = anthropic.Anthropic(base_url=gateway.url, api_key=key, max_retries=0).messages
    with messages.stream(model="sim-small", max_tokens=64, messages=HI) as stream:
        final = stream.get_final_message()

    prompt = prompt_estimate(silent)
    assert final.content[0].text == "tok0 tok1 tok2 tok3 tok4 "
    assert (final.usage.input_tokens, final.usage.output_tokens) == (prompt, TOKENS)
    record = the_record()
    assert (record.input_tokens, record.output_tokens, record.usage_estimated) == (
        prompt,
        TOKENS,
        True,
    )


def test_a_streamed_response_ends_with_the_gateways_count_not_null(gateway, silent, key):
    with openai_client(gateway, key).responses.stream(model="sim-small", input="hi") as stream:
        final = stream.get_final_response()

    prompt = prompt_estimate(silent)
    assert final.output_text == "tok0 tok1 tok2 tok3 tok4 "
    assert final.usage is not None
    assert (final.usage.input_tokens, final.usage.output_tokens, final.usage.total_tokens) == (
        prompt,
        TOKENS,
        prompt + TOKENS,
    )
    record = the_record()
    assert (record.input_tokens, record.output_tokens, record.usage_estimated) == (
        prompt,
        TOKENS,
        True,
    )


def test_a_chat_stream_that_asked_for_usage_gets_its_usage_chunk_before_done(
    gateway, silent, key
):
    chunks = list(
        openai_client(gateway, key).chat.completions.create(
            model="sim-small",
            messages=HI,
            stream=True,
            stream_options={"include_usage": True},
        )
    )

    prompt = prompt_estimate(silent)
    *answer, last = chunks
    assert "".join(c.choices[0].delta.content or "" for c in answer) == "tok0 tok1 tok2 tok3 tok4 "
    assert last.choices == []
    assert (last.id, last.model, last.object) == (answer[0].id, "sim-small", answer[0].object)
    assert last.usage is not None
    assert (last.usage.prompt_tokens, last.usage.completion_tokens) == (prompt, TOKENS)
    assert last.usage.total_tokens == prompt + TOKENS
    assert the_record().usage_estimated is True


def test_a_chat_stream_that_did_not_ask_gets_no_usage_chunk_and_its_record_the_count(
    gateway, silent, key
):
    chunks = list(
        openai_client(gateway, key).chat.completions.create(
            model="sim-small", messages=HI, stream=True
        )
    )

    assert all(chunk.choices and chunk.usage is None for chunk in chunks)
    record = the_record()
    assert (record.input_tokens, record.output_tokens, record.usage_estimated) == (
        prompt_estimate(silent),
        TOKENS,
        True,
    )


def test_a_text_completion_stream_is_counted_too(gateway, silent, key):
    chunks = list(
        openai_client(gateway, key).completions.create(
            model="sim-small", prompt="once upon", stream=True,
            stream_options={"include_usage": True},
        )
    )  # fmt: skip

    assert chunks[-1].usage is not None
    assert chunks[-1].usage.completion_tokens == TOKENS
    assert chunks[-1].object == "text_completion"
    assert the_record().output_tokens == TOKENS


def test_an_engine_that_reports_usage_is_believed_and_not_marked(gateway, make_sim, key):
    add_backend("solo", make_sim(tokens=TOKENS, token_delay=0).url)
    messages = anthropic.Anthropic(base_url=gateway.url, api_key=key, max_retries=0).messages
    with messages.stream(model="sim-small", max_tokens=64, messages=HI) as stream:
        final = stream.get_final_message()

    assert (final.usage.input_tokens, final.usage.output_tokens) == (2, TOKENS)  # a token a word
    record = the_record()
    assert (record.input_tokens, record.output_tokens, record.usage_estimated) == (2, TOKENS, False)


def test_a_stream_cut_short_by_its_client_is_counted_up_to_what_it_was_sent(gateway, silent, key):
    sock = open_raw(gateway, key, "[[sim:hang-mid after=2]] hi", stream=True)
    seen = b""
    while seen.count(b'"content":"tok') < 2:
        seen += sock.recv(65536)
    sock.close()

    record = the_record()
    assert (record.outcome, record.output_tokens, record.usage_estimated) == (
        "client_closed",
        2,
        True,
    )
    assert record.input_tokens == prompt_estimate(silent)


def test_an_allowance_is_charged_the_estimate_not_its_reservation(gateway, silent):
    alice = Person("alice", {"measure": "tokens", "window": "minute", "limit": 100_000})
    messages = anthropic.Anthropic(base_url=gateway.url, api_key=alice.key, max_retries=0).messages
    with messages.stream(model="sim-small", max_tokens=500, messages=HI) as stream:
        stream.get_final_message()

    wait_until(lambda: alice.usage(gateway, "tokens")[1] == 0, "the reservation is released")
    assert alice.usage(gateway, "tokens") == (prompt_estimate(silent) + TOKENS, 0)


def test_the_activity_api_says_which_usage_is_the_gateways_estimate(
    gateway, silent, key, carol_client: Client
):
    list(
        openai_client(gateway, key).chat.completions.create(
            model="sim-small", messages=HI, stream=True
        )
    )
    the_record()

    activity = carol_client.get("/api/v0/admin/activity")
    assert activity.status_code == 200, activity.content
    [shown] = activity.json()["results"]
    assert (shown["output_tokens"], shown["usage_estimated"]) == (TOKENS, True)
