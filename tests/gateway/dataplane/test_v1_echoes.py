"""An error quotes a client's value to say which one it means, never at its full size: a 1 MB
model name, block type or tool name comes back cut at ECHO_LIMIT characters
(gateway/core/errors.py)."""

from __future__ import annotations

from typing import Any

import pytest

from tests.support.drive import HTTP
from tests.support.factories import make_token_with_secret, make_user
from tests.support.live import add_backend

HI = [{"role": "user", "content": "hi"}]
HUGE = "m" * 1_000_000


@pytest.fixture
def key(transactional_db: None) -> str:
    return make_token_with_secret(make_user("alice"), name="laptop")[1]


def post(gateway: Any, path: str, body: dict[str, Any], key: str) -> Any:
    return HTTP.post(gateway.url + path, json=body, headers={"Authorization": f"Bearer {key}"})


def test_an_unknown_model_of_a_megabyte_is_not_echoed_back_on_chat(gateway, make_sim, key):
    add_backend("plain", make_sim().url)

    answer = post(gateway, "/v1/chat/completions", {"model": HUGE, "messages": HI}, key)

    assert answer.status_code == 404
    assert answer.json()["error"]["message"] == f"The model '{'m' * 200}...' does not exist."


def test_an_unknown_model_of_a_megabyte_is_not_echoed_back_on_messages(gateway, make_sim, key):
    add_backend("plain", make_sim().url)

    answer = post(gateway, "/v1/messages", {"model": HUGE, "max_tokens": 8, "messages": HI}, key)

    assert answer.status_code == 404
    assert answer.json()["error"]["type"] == "not_found_error"
    assert len(answer.json()["error"]["message"]) < 300


@pytest.mark.parametrize("path", ["/v1/chat/completions", "/v1/messages/count_tokens"])
def test_a_model_a_token_may_not_use_is_not_echoed_back_whole(gateway, make_sim, path):
    add_backend("plain", make_sim().url)
    key = make_token_with_secret(make_user("bob"), name="narrow", model_allowlist=["sim-small"])[1]

    answer = post(gateway, path, {"model": HUGE, "messages": HI}, key)

    assert answer.status_code == 403, answer.text[:300]
    assert len(answer.content) < 500


@pytest.mark.parametrize(
    ("path", "body"),
    [
        ("/v1/responses", {"input": [{"type": HUGE}]}),
        ("/v1/responses", {"input": [{"role": "user", "content": [{"type": HUGE}]}]}),
        ("/v1/responses", {"input": "hi", "tools": [{"type": HUGE}]}),
        ("/v1/messages", {"max_tokens": 8, "messages": [
            {"role": "user", "content": [{"type": HUGE}]}]}),
    ],
)  # fmt: skip
def test_a_kind_that_cannot_be_translated_is_named_short(gateway, make_sim, key, path, body):
    add_backend("plain", make_sim().url)  # chat completions only: everything is translated

    answer = post(gateway, path, {"model": "sim-small", **body}, key)

    assert answer.status_code == 400, answer.text[:300]
    assert len(answer.content) < 1000


@pytest.mark.parametrize(
    ("value", "shown"), [("", ""), ("m" * 200, "m" * 200), ("m" * 201, "m" * 200 + "...")]
)
def test_a_value_is_echoed_whole_up_to_the_limit_and_cut_past_it(value: str, shown: str) -> None:
    from gateway.core.errors import ECHO_LIMIT, echoed

    assert ECHO_LIMIT == 200
    assert echoed(value) == shown
