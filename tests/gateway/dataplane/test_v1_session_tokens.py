"""The playground's choice of token: a signed-in person may run a /v1 request as one of their own
tokens (X-AIplane-Token with the session), with that token's class and model allowlist."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from aiplane.catalog import settings_update
from tests.support.drive import engine_records
from tests.support.factories import make_group, make_token_with_secret
from tests.support.live import add_backend


@pytest.fixture
def solo(gateway: Any, make_sim: Any) -> Any:
    engine = make_sim(tokens=2, token_delay=0)
    add_backend("solo", engine.url, models=["sim-small", "sim-large"])
    settings_update(values={"gateway.priority_enabled": True})
    gateway.engine = engine
    return gateway


def as_session(gateway: Any, client: Any, token: str | None = None, **body: Any) -> httpx.Response:
    headers = {"X-AIplane-Session": "1", "Cookie": f"sessionid={client.cookies['sessionid'].value}"}
    if token is not None:
        headers["X-AIplane-Token"] = token
    payload = {"model": "sim-small", "messages": [{"role": "user", "content": "hi"}], **body}
    return httpx.post(gateway.v1 + "/chat/completions", json=payload, headers=headers, timeout=10)


def test_a_person_runs_as_one_of_their_tokens_with_its_class(
    solo: Any, alice: Any, login: Any
) -> None:
    make_group("research", priority="high", members=[alice])
    batch, _ = make_token_with_secret(alice, name="batch", priority="low")
    client = login(alice)

    as_herself = as_session(solo, client)
    as_batch = as_session(solo, client, str(batch.pk))

    assert as_herself.headers["x-aiplane-class"] == "high"
    assert as_batch.status_code == 200, as_batch.text
    assert as_batch.headers["x-aiplane-class"] == "low"


def test_running_as_a_token_keeps_its_model_allowlist(solo: Any, alice: Any, login: Any) -> None:
    narrow, _ = make_token_with_secret(alice, name="narrow", model_allowlist=["sim-large"])
    refused = as_session(solo, login(alice), str(narrow.pk))
    assert refused.status_code == 403
    assert refused.json()["error"]["code"] == "model_not_allowed"


@pytest.mark.parametrize("whose", ["bob's", "revoked"])
def test_someone_elses_or_a_revoked_token_is_refused_and_nothing_is_sent(
    whose: str, solo: Any, alice: Any, bob: Any, login: Any
) -> None:
    if whose == "bob's":
        token, _ = make_token_with_secret(bob, name="bobs")
    else:
        token, _ = make_token_with_secret(alice, name="old", revoked=True)
    refused = as_session(solo, login(alice), str(token.pk))
    assert refused.status_code == 401
    assert refused.json() == {
        "error": {
            "message": "That token is not one of yours, or it is revoked or expired.",
            "type": "authentication_error",
            "param": None,
            "code": "invalid_token_choice",
        }
    }
    assert engine_records(solo.engine) == []


@pytest.mark.parametrize("value", ["abc", "-1", "1.5", "9" * 19, ""])
def test_a_token_choice_that_is_no_id_is_a_clear_400(
    value: str, solo: Any, alice: Any, login: Any
) -> None:
    refused = as_session(solo, login(alice), value)
    assert refused.status_code == 400
    assert refused.json()["error"]["message"] == (
        "X-AIplane-Token must be the id of one of your tokens."
    )
    assert engine_records(solo.engine) == []


def test_the_token_header_without_a_session_grants_nothing(solo: Any, alice: Any) -> None:
    token, _ = make_token_with_secret(alice, name="laptop")
    answer = httpx.post(
        solo.v1 + "/chat/completions",
        json={"model": "sim-small", "messages": [{"role": "user", "content": "hi"}]},
        headers={"X-AIplane-Session": "1", "X-AIplane-Token": str(token.pk)},
        timeout=10,
    )
    assert answer.status_code == 401
    assert answer.json()["error"]["code"] == "invalid_api_key"
