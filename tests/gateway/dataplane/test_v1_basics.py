"""The /v1 surface end to end: real app on a loopback port, simulated engine behind it."""

from __future__ import annotations

import httpx
import pytest

from tests.support.drive import chat, wait_until
from tests.support.factories import make_group, make_token_with_secret, make_user
from tests.support.live import add_backend


@pytest.fixture
def alice_key(transactional_db: None) -> str:
    alice = make_user("alice")
    return make_token_with_secret(alice, name="laptop")[1]


def test_a_chat_completion_comes_back_from_the_engine(gateway, sim, alice_key):
    add_backend("sim1", sim.url)
    r = chat(gateway, alice_key)
    assert r.status_code == 200, r.text
    data = r.json()
    assert data["object"] == "chat.completion"
    assert data["choices"][0]["message"]["content"] == "tok0 tok1 tok2 tok3 "
    assert r.headers["x-aiplane-backend"] == "sim1"


def test_the_callers_token_is_never_forwarded_but_the_backends_key_is(gateway, make_sim, alice_key):
    engine = make_sim(api_key="backend-secret", tokens=2, token_delay=0)
    add_backend("keyed", engine.url, api_key="backend-secret")
    r = chat(gateway, alice_key)
    assert r.status_code == 200, r.text
    seen = engine.engine.records()[-1]
    assert seen["headers"]["authorization"] == "Bearer backend-secret"
    assert alice_key not in str(seen)


def test_a_missing_token_is_a_401_in_the_openai_envelope(gateway, sim):
    add_backend("sim1", sim.url)
    r = httpx.post(gateway.v1 + "/chat/completions", json={"model": "sim-small"})
    assert r.status_code == 401
    assert r.json() == {
        "error": {
            "message": "Missing API token: send 'Authorization: Bearer <token>'.",
            "type": "authentication_error",
            "param": None,
            "code": "invalid_api_key",
        }
    }


def test_an_unknown_token_is_a_401(gateway, sim):
    add_backend("sim1", sim.url)
    r = chat(gateway, "gwk_" + "0" * 64)
    assert r.status_code == 401
    assert r.json()["error"]["code"] == "invalid_api_key"


def test_an_unknown_model_is_a_404_without_waiting(gateway, sim, alice_key):
    add_backend("sim1", sim.url)
    r = chat(gateway, alice_key, model="nope")
    assert r.status_code == 404
    assert r.json() == {
        "error": {
            "message": "The model 'nope' does not exist.",
            "type": "invalid_request_error",
            "param": "model",
            "code": "model_not_found",
        }
    }


def test_a_model_in_a_pool_of_other_groups_is_a_403(gateway, sim, alice_key):
    make_group("research")
    add_backend("sim1", sim.url, pool="research-only", allowed_groups=["research"])
    r = chat(gateway, alice_key)
    assert r.status_code == 403
    assert r.json()["error"]["code"] == "model_not_allowed"


def test_bad_json_is_a_400(gateway, sim, alice_key):
    add_backend("sim1", sim.url)
    r = httpx.post(
        gateway.v1 + "/chat/completions",
        content=b"{not json",
        headers={"Authorization": f"Bearer {alice_key}"},
    )
    assert r.status_code == 400
    assert r.json()["error"]["type"] == "invalid_request_error"


def test_models_lists_what_the_caller_may_use(gateway, make_sim, alice_key):
    open_engine = make_sim(models=["open-model"], token_delay=0)
    closed_engine = make_sim(models=["closed-model"], token_delay=0)
    make_group("research")
    add_backend("open", open_engine.url, models=["open-model"])
    add_backend(
        "closed",
        closed_engine.url,
        models=["closed-model"],
        pool="research-only",
        allowed_groups=["research"],
    )
    r = httpx.get(gateway.v1 + "/models", headers={"Authorization": f"Bearer {alice_key}"})
    assert r.status_code == 200
    assert [m["id"] for m in r.json()["data"]] == ["open-model"]


def test_a_stream_arrives_chunk_by_chunk(gateway, make_sim, alice_key):
    import time

    engine = make_sim(tokens=5, token_delay=0.05)
    add_backend("slow", engine.url)
    arrivals = []
    with httpx.stream(
        "POST",
        gateway.v1 + "/chat/completions",
        json={"model": "sim-small", "stream": True, "messages": [{"role": "user", "content": "x"}]},
        headers={"Authorization": f"Bearer {alice_key}"},
        timeout=10,
    ) as r:
        assert r.status_code == 200
        assert r.headers["content-type"].startswith("text/event-stream")
        body = b""
        for chunk in r.iter_raw():
            arrivals.append(time.monotonic())
            body += chunk
    assert body.endswith(b"data: [DONE]\n\n")
    assert arrivals[-1] - arrivals[0] > 0.15  # spread over the engine's pacing, not buffered
    assert len(arrivals) >= 4


def test_a_large_request_body_is_forwarded_whole(gateway, sim, alice_key):
    add_backend("sim1", sim.url)
    big = "word " * 400_000  # 2 MB: parsed and serialized off the event loop
    r = chat(gateway, alice_key, messages=[{"role": "user", "content": big}])
    assert r.status_code == 200, r.text
    assert r.json()["usage"]["prompt_tokens"] == 400_000
    # The release may trail the answer's last byte by a moment.
    wait_until(lambda: gateway.runtime.slots["sim1"].inflight == 0, "the slot is free")
