"""Media URLs end to end: a part that would have an engine fetch a file or an inside address is a
400 in the surface's envelope, naming the part, and the engine never hears of it; data: URLs and
public hosts pass; gateway.media_urls = any lets everything through."""

from __future__ import annotations

from typing import Any

import pytest

from aiplane.catalog import settings_update
from tests.support.drive import HTTP, engine_records
from tests.support.factories import make_token_with_secret, make_user
from tests.support.live import add_backend

INSIDE = "http://169.254.169.254/latest/meta-data/iam/security-credentials/"
LOOPBACK = "http://0x7f.1:8000/metrics"
FILE = "file:///etc/passwd"
INLINE = "data:image/png;base64,iVBORw0KGgo="
PUBLIC = "https://example.com/cat.png"


@pytest.fixture
def key(transactional_db: None) -> str:
    return make_token_with_secret(make_user("alice"), name="laptop")[1]


@pytest.fixture
def engine(make_sim: Any) -> Any:
    server = make_sim(tokens=2, token_delay=0)
    add_backend("solo", server.url)
    return server


def requests_to(engine: Any) -> list[dict[str, Any]]:
    """What the engine received for callers: detection's empty probes of its paths left out."""
    return [r for r in engine_records(engine) if r["body"] != {}]


def post(gateway: Any, key: str, path: str, body: dict[str, Any]) -> Any:
    return HTTP.post(gateway.v1 + path, json=body, headers={"Authorization": f"Bearer {key}"})


def chat_with(*parts: dict[str, Any]) -> dict[str, Any]:
    content = [{"type": "text", "text": "what is in this picture?"}, *parts]
    return {"model": "sim-small", "messages": [{"role": "user", "content": content}]}


def image(url: str) -> dict[str, Any]:
    return {"type": "image_url", "image_url": {"url": url}}


# ----- chat completions and embeddings ---------------------------------------------------------


@pytest.mark.parametrize(
    ("part", "param", "why"),
    [
        (image(INSIDE), "messages[0].content[1].image_url.url", "a cloud metadata address"),
        (image(LOOPBACK), "messages[0].content[1].image_url.url", "(127.0.0.1) is a loopback"),
        (image(FILE), "messages[0].content[1].image_url.url", "file: URLs are not fetched"),
        ({"type": "image_url", "image_url": LOOPBACK}, "messages[0].content[1].image_url", "loop"),
        (
            {"type": "video_url", "video_url": {"url": "http://10.0.0.7/v.mp4"}},
            "messages[0].content[1].video_url.url",
            "a private address",
        ),
        (
            {"type": "audio_url", "audio_url": {"url": "http://metadata.google.internal/"}},
            "messages[0].content[1].audio_url.url",
            "a cloud metadata name",
        ),
    ],
)
def test_a_chat_part_naming_an_inside_address_is_refused_before_any_engine_hears_of_it(
    gateway, engine, key, part, param, why
):
    answer = post(gateway, key, "/chat/completions", chat_with(part))

    assert answer.status_code == 400, answer.text
    error = answer.json()["error"]
    assert (error["type"], error["code"], error["param"]) == (
        "invalid_request_error",
        "media_url_refused",
        param,
    )
    assert error["message"].startswith(param + ": ")
    assert why in error["message"]
    assert requests_to(engine) == []


def test_a_large_body_is_checked_as_well(gateway, engine, key):
    # Over a megabyte, a body is parsed and checked off the event loop: the same rule holds.
    body = chat_with({"type": "text", "text": "x" * (2 << 20)}, image(LOOPBACK))

    answer = post(gateway, key, "/chat/completions", body)

    assert answer.status_code == 400, answer.text[:300]
    assert answer.json()["error"]["param"] == "messages[0].content[2].image_url.url"
    assert requests_to(engine) == []


def test_data_urls_and_public_hosts_reach_the_engine_as_sent(gateway, engine, key):
    body = chat_with(image(INLINE), image(PUBLIC), {"image_url": PUBLIC})

    answer = post(gateway, key, "/chat/completions", body)

    assert answer.status_code == 200, answer.text
    (sent,) = requests_to(engine)
    assert sent["body"]["messages"] == body["messages"]


def test_with_media_urls_any_an_inside_url_is_passed_on(gateway, engine, key):
    settings_update(values={"gateway.media_urls": "any"})

    answer = post(gateway, key, "/chat/completions", chat_with(image(INSIDE), image(FILE)))

    assert answer.status_code == 200, answer.text
    (sent,) = requests_to(engine)
    assert sent["body"]["messages"][0]["content"][1] == image(INSIDE)

    settings_update(values={"gateway.media_urls": "public"})
    assert post(gateway, key, "/chat/completions", chat_with(image(INSIDE))).status_code == 400
    assert len(requests_to(engine)) == 1


def test_an_embedding_input_image_naming_a_private_address_is_refused(gateway, make_sim, key):
    engine = make_sim(models=["sim-embed"])
    add_backend("embedder", engine.url, pool="embeddings", kind="embedding", models=["sim-embed"])
    body = {"model": "sim-embed", "input": [{"text": "a cat", "image": "http://192.168.0.10/c"}]}

    answer = post(gateway, key, "/embeddings", body)

    assert answer.status_code == 400, answer.text
    assert answer.json()["error"]["param"] == "input[0].image"
    assert requests_to(engine) == []


# ----- Anthropic Messages -----------------------------------------------------------------------


def anthropic_image(url: str) -> dict[str, Any]:
    return {"type": "image", "source": {"type": "url", "url": url}}


def message_with(*blocks: dict[str, Any]) -> dict[str, Any]:
    content = [{"type": "text", "text": "what is this?"}, *blocks]
    return {
        "model": "sim-small",
        "max_tokens": 16,
        "messages": [{"role": "user", "content": content}],
    }


@pytest.mark.parametrize("native", [False, True], ids=["translated", "native"])
def test_a_message_image_naming_an_inside_address_is_refused_in_anthropics_envelope(
    gateway, make_sim, key, native
):
    engine = make_sim(tokens=2, token_delay=0, messages=native)
    add_backend("solo", engine.url)
    result = {"type": "tool_result", "tool_use_id": "t1", "content": [anthropic_image(LOOPBACK)]}
    for blocks, where in (
        ([anthropic_image(INSIDE)], "messages.0.content.1.source.url"),
        ([result], "messages.0.content.1.content.0.source.url"),
    ):
        answer = HTTP.post(
            gateway.url + "/v1/messages", json=message_with(*blocks), headers={"x-api-key": key}
        )

        assert answer.status_code == 400, answer.text
        assert answer.json()["type"] == "error"
        error = answer.json()["error"]
        assert error["type"] == "invalid_request_error"
        assert error["message"].startswith(where + ": its host ")
    assert requests_to(engine) == []


def test_a_message_with_an_inline_image_is_answered(gateway, engine, key):
    inline = {"type": "base64", "media_type": "image/png", "data": "iVBORw0KGgo="}
    body = message_with({"type": "image", "source": inline}, anthropic_image(PUBLIC))

    answer = HTTP.post(gateway.url + "/v1/messages", json=body, headers={"x-api-key": key})

    assert answer.status_code == 200, answer.text
    (sent,) = requests_to(engine)
    urls = [p["image_url"]["url"] for p in sent["body"]["messages"][0]["content"][1:]]
    assert urls == ["data:image/png;base64,iVBORw0KGgo=", PUBLIC]


def test_count_tokens_does_not_hand_a_counting_engine_an_inside_url(gateway, make_sim, key):
    native = make_sim(tokens=2, token_delay=0, messages=True)
    add_backend("native", native.url)
    body = message_with(anthropic_image(FILE))
    del body["max_tokens"]

    answer = HTTP.post(
        gateway.url + "/v1/messages/count_tokens", json=body, headers={"x-api-key": key}
    )

    assert answer.status_code == 400, answer.text
    assert answer.json()["error"]["message"].startswith("messages.0.content.1.source.url: file:")
    assert requests_to(native) == []


# ----- OpenAI Responses -------------------------------------------------------------------------


@pytest.mark.parametrize("native", [False, True], ids=["translated", "native"])
def test_a_responses_input_image_naming_an_inside_address_is_refused(
    gateway, make_sim, key, native
):
    engine = make_sim(tokens=2, token_delay=0, responses=native)
    add_backend("solo", engine.url)
    content = [
        {"type": "input_text", "text": "what is this?"},
        {"type": "input_image", "image_url": "http://[::ffff:127.0.0.1]:9090/"},
    ]
    body = {"model": "sim-small", "input": [{"role": "user", "content": content}]}

    answer = post(gateway, key, "/responses", body)

    assert answer.status_code == 400, answer.text
    error = answer.json()["error"]
    assert (error["code"], error["param"]) == ("media_url_refused", "input[0].content[1].image_url")
    assert "(127.0.0.1) is a loopback address" in error["message"]
    assert requests_to(engine) == []


def test_a_responses_input_image_inline_is_answered(gateway, engine, key):
    content = [{"type": "input_image", "image_url": INLINE}, {"type": "input_text", "text": "?"}]
    body = {"model": "sim-small", "input": [{"role": "user", "content": content}]}

    answer = post(gateway, key, "/responses", body)

    assert answer.status_code == 200, answer.text
    (sent,) = requests_to(engine)
    assert sent["body"]["messages"][0]["content"][0] == {
        "type": "image_url",
        "image_url": {"url": INLINE},
    }
