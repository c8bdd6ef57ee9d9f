"""Token usage on the chat surfaces: asked of the engine when the client did not, read from every
answer, and the extra usage chunk kept from a client that did not ask for it."""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest

from tests.factories import make_token_with_secret, make_user
from tests.gateway.conftest import add_backend
from tests.gateway.drive import engine_records


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
