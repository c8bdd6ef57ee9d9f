"""A token an administrator revokes or deletes is refused on the very next /v1 request, though the
gateway had its caller cached a moment before."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from accounts.models import ApiToken
from tests.support.drive import chat
from tests.support.factories import make_token_with_secret
from tests.support.live import add_backend

REFUSED = {
    "error": {
        "message": "The API token is invalid, expired or revoked.",
        "type": "authentication_error",
        "param": None,
        "code": "invalid_api_key",
    }
}


def administrator(gateway: Any, client: Any) -> httpx.Client:
    """carol's browser: her session cookie, and the CSRF cookie and header the page sends."""
    browser = httpx.Client(base_url=gateway.url, timeout=30)
    browser.cookies.set("sessionid", client.cookies["sessionid"].value)
    browser.get("/api/v0/session/csrf").raise_for_status()
    browser.headers["X-CSRFToken"] = browser.cookies["csrftoken"]
    return browser


@pytest.mark.parametrize(
    ("method", "suffix", "status"), [("POST", "/revoke", 200), ("DELETE", "", 204)]
)
def test_a_token_stops_on_the_next_request_after_an_administrator_revokes_or_deletes_it(
    gateway: Any,
    sim: Any,
    alice: Any,
    carol: Any,
    login: Any,
    method: str,
    suffix: str,
    status: int,
) -> None:
    add_backend("sim1", sim.url)
    token, key = make_token_with_secret(alice, name="leaked")
    kept, kept_key = make_token_with_secret(alice, name="kept")
    assert chat(gateway, key).status_code == 200  # its caller is cached now
    assert chat(gateway, kept_key).status_code == 200

    browser = administrator(gateway, login(carol))
    try:
        answer = browser.request(method, f"/api/v0/admin/tokens/{token.pk}{suffix}")
    finally:
        browser.close()
    assert answer.status_code == status

    refused = chat(gateway, key)
    assert refused.status_code == 401
    assert refused.json() == REFUSED
    assert chat(gateway, kept_key).status_code == 200  # the owner's other tokens go on
    assert ApiToken.objects.filter(pk=kept.pk).exists()
