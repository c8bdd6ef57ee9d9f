"""HEAD answers wherever GET does: agent CLIs and uptime checks probe the root with it."""

from __future__ import annotations

import pytest
from django.test import Client


@pytest.mark.django_db
@pytest.mark.parametrize("path", ["/", "/login/", "/tokens/", "/api-reference/", "/i18n/en.js"])
def test_head_answers_as_get_does_without_a_body(path: str) -> None:
    get, head = Client().get(path), Client().head(path)
    assert head.status_code == get.status_code != 405
    assert head.content == b""


def test_head_of_the_root_is_not_refused_when_signed_in(alice_client: Client) -> None:
    assert alice_client.head("/").status_code in (200, 302)
