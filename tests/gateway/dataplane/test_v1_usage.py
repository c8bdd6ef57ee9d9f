"""Token usage on the chat surfaces: asked of the engine when the client did not, read from every
answer, and the extra usage chunk kept from a client that did not ask for it."""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest

from tests.support.drive import HTTP, chat, engine_records, sample, scrape, wait_until
from tests.support.factories import make_token_with_secret, make_user
from tests.support.live import add_backend


@pytest.fixture
def key(transactional_db: None) -> str:
    return make_token_with_secret(make_user("alice"), name="laptop")[1]


def stream_chunks(gateway: Any, key: str, **body: Any) -> list[Any]:
    payload = {
        "model": "sim-small",
        "stream": True,
        "messages": [{"role": "user", "content": "hi there"}],
    }
    with httpx.stream(
        "POST",
        gateway.v1 + "/chat/completions",
        json={**payload, **body},
        headers={"Authorization": f"Bearer {key}"},
        timeout=20,
    ) as r:
        assert r.status_code == 200
        data = b"".join(r.iter_raw())
    events = [e.removeprefix(b"data: ") for e in data.split(b"\n\n") if e]
    assert events[-1] == b"[DONE]"
    return [json.loads(e) for e in events[:-1]]


def test_a_stream_asks_the_engine_for_usage_and_hides_the_extra_chunk(gateway, make_sim, key):
    engine = make_sim(tokens=3, token_delay=0)
    add_backend("solo", engine.url)

    chunks = stream_chunks(gateway, key)

    assert engine_records(engine)[-1]["body"]["stream_options"] == {"include_usage": True}
    assert all(chunk["choices"] for chunk in chunks)
    assert not any("usage" in chunk for chunk in chunks)


def test_a_client_that_asked_for_usage_gets_the_usage_chunk(gateway, make_sim, key):
    engine = make_sim(tokens=3, token_delay=0)
    add_backend("solo", engine.url)

    chunks = stream_chunks(gateway, key, stream_options={"include_usage": True})

    assert chunks[-1]["choices"] == []
    assert chunks[-1]["usage"] == {"prompt_tokens": 2, "completion_tokens": 3, "total_tokens": 5}


def records(*, count: int) -> list[Any]:
    from gateway.models import ActivityRecord

    wait_until(lambda: ActivityRecord.objects.count() >= count, f"{count} records", 15)
    return list(ActivityRecord.objects.order_by("id"))


def test_every_answer_leaves_its_usage_and_surface_on_its_record_and_in_the_metrics(
    gateway, make_sim, key
):
    engine = make_sim(tokens=3, token_delay=0)
    add_backend("solo", engine.url)
    add_backend("embed", engine.url, pool="embeddings", kind="embedding")

    stream_chunks(gateway, key)  # usage asked for on the quiet
    assert chat(gateway, key, "one two three").status_code == 200
    r = HTTP.post(
        gateway.v1 + "/embeddings",
        json={"model": "sim-small", "input": "four five"},
        headers={"Authorization": f"Bearer {key}"},
    )
    assert r.status_code == 200, r.text

    rows = records(count=3)
    assert [(r.surface, r.input_tokens, r.output_tokens) for r in rows] == [
        ("chat", 2, 3),
        ("chat", 3, 3),
        ("embeddings", 2, 0),
    ]
    scraped = scrape(gateway)
    labels = {"class": "medium", "band": "normal", "model": "sim-small"}
    assert sample(scraped, "aiplane_input_tokens_total", **labels) == 7
    assert sample(scraped, "aiplane_output_tokens_total", **labels) == 6


def test_a_refused_request_says_why_on_its_record(gateway, make_sim, key):
    add_backend("solo", make_sim(tokens=1, token_delay=0).url)

    assert chat(gateway, key, model="nope").status_code == 404

    (row,) = records(count=1)
    assert (row.outcome, row.status, row.input_tokens) == ("refused", 404, None)
    assert row.error == "The model 'nope' does not exist."


def test_a_client_that_leaves_while_sending_its_body_is_recorded_as_cancelled(
    gateway, make_sim, key
):
    import socket

    add_backend("solo", make_sim(tokens=1, token_delay=0).url)
    host, port = gateway.url.removeprefix("http://").split(":")
    sock = socket.create_connection((host, int(port)))
    sock.sendall(
        b"POST /v1/chat/completions HTTP/1.1\r\nHost: gw\r\nContent-Type: application/json\r\n"
        + f"Authorization: Bearer {key}\r\nContent-Length: 1000\r\n\r\n".encode()
        + b'{"model": "sim-'
    )
    sock.close()

    (row,) = records(count=1)
    assert (row.outcome, row.status) == ("cancelled", 499)
