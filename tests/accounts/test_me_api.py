"""The signed-in person's profile: who they are, their rights, their UI language."""

from __future__ import annotations

from typing import Any

import pytest
from django.test import Client

from accounts.models import UserProfile
from tests.support.errors import NOT_SIGNED_IN, envelope

pytestmark = pytest.mark.django_db


def test_me_answers_who_i_am(alice_client: Client, alice: Any) -> None:
    response = alice_client.get("/api/v0/me")
    assert response.status_code == 200
    assert response.json() == {
        "id": alice.pk,
        "username": "alice",
        "is_admin": False,
        "language": "en",
    }
    assert not UserProfile.objects.exists()  # reading writes nothing


def test_an_administrator_is_told_so(carol_client: Client) -> None:
    assert carol_client.get("/api/v0/me").json()["is_admin"] is True


@pytest.mark.parametrize("language", ["en", "de", "fr", "es", "ru", "zh"])
def test_each_of_the_six_languages_can_be_chosen(
    alice_client: Client, alice: Any, language: str
) -> None:
    response = alice_client.put("/api/v0/me", {"language": language}, "application/json")
    assert response.status_code == 200
    assert response.json()["language"] == language
    assert alice_client.get("/api/v0/me").json()["language"] == language


@pytest.mark.parametrize("language", ["it", "", "EN", 3])
def test_another_language_is_refused(alice_client: Client, alice: Any, language: Any) -> None:
    response = alice_client.put("/api/v0/me", {"language": language}, "application/json")
    assert response.status_code == 400
    expected = envelope(
        "Language must be one of: en, de, fr, es, ru, zh.",
        "invalid_request_error",
        "invalid_language",
        "language",
    )
    if language == "":
        expected = envelope(
            "This field may not be blank.", "invalid_request_error", "blank", "language"
        )
    assert response.json() == expected
    assert not UserProfile.objects.exists()


@pytest.mark.parametrize("method", ["get", "put"])
def test_nobody_signed_in_gets_401(anonymous: Client, method: str) -> None:
    response = getattr(anonymous, method)("/api/v0/me", {}, content_type="application/json")
    assert response.status_code == 401
    assert response.json() == NOT_SIGNED_IN
