"""Tokens: an owner whose token an administrator raised above their ceiling is told who set it
and that they cannot raise it again themselves."""

from __future__ import annotations

from typing import Any

import pytest
from playwright.sync_api import expect

from accounts import services
from tests.support.factories import make_group, make_token

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


@pytest.mark.parametrize(
    ("language", "note"),
    [
        ("en", "The administrator carol set this token to High. You can lower it, but not raise"
               " it again: the highest you can choose is Low."),
        ("de", "Der Administrator carol hat dieses Token auf Hoch gesetzt. Sie können es senken,"
               " aber nicht wieder anheben: Sie können höchstens Niedrig wählen."),
    ],
)  # fmt: skip
def test_an_owner_is_told_who_raised_their_token_and_that_they_cannot_raise_it_again(
    page: Any, alice: Any, carol: Any, sign_in: Any, screenshot: Any, language: str, note: str
) -> None:
    from accounts.models import UserProfile
    from accounts.priority import Priority

    UserProfile.objects.update_or_create(user=alice, defaults={"language": language})
    make_group("interns", priority="low", members=[alice])
    raised = make_token(alice, name="alice-agent")
    make_token(alice, name="alice-ci")
    services.token_priority_override(token=raised, admin=carol, priority=Priority.HIGH)

    sign_in(page, "alice")
    card = page.locator(".token-card", has=page.get_by_role("heading", name="alice-agent"))
    expect(card.locator(".raised-by")).to_have_text(note)
    other = page.locator(".token-card", has=page.get_by_role("heading", name="alice-ci"))
    expect(other.locator(".raised-by")).to_have_count(0)  # her own: nothing to explain
    screenshot(page, f"tokens-raised-by-{language}")
