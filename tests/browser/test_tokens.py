"""The personal Tokens page: create with a priority, the ceiling, the Priority tile and its
failure behaviour, and revoke, rotate and delete."""

from __future__ import annotations

import re
from typing import Any

import pytest
from playwright.sync_api import expect

from accounts.models import ApiToken, UserProfile
from accounts.priority import Priority
from accounts.tokens import digest_of
from tests.support.factories import make_group, make_token

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def options_of(select: Any) -> list[str]:
    select.wait_for()  # the list is built by the page script after load
    return select.locator("option:not([disabled])").evaluate_all("os => os.map(o => o.value)")


def card(page: Any, name: str) -> Any:
    return page.locator(".token-card").filter(has=page.get_by_role("heading", name=name))


def test_create_a_token_with_a_priority_and_copy_it_once(
    page: Any, alice: Any, sign_in: Any, screenshot: Any
) -> None:
    make_group("research", priority="medium", members=[alice])
    page.context.grant_permissions(["clipboard-read", "clipboard-write"])
    sign_in(page, "alice")
    page.get_by_role("button", name="Create token").click()
    dialog = page.get_by_role("dialog", name="Create a token")
    dialog.get_by_label("Name").fill("nightly batch")
    priority = dialog.get_by_label("Priority")
    # Medium is alice's ceiling: high is not offered.
    assert options_of(priority) == ["", "low", "medium"]
    priority.select_option("low")
    screenshot(page, "tokens-create-dialog")
    dialog.get_by_role("button", name="Create token").click()

    secret_dialog = page.get_by_role("dialog", name="Copy your token now")
    secret = secret_dialog.get_by_label("New token").input_value()
    assert secret.startswith("gwk_") and len(secret) == 68
    screenshot(page, "tokens-secret-dialog")
    secret_dialog.get_by_role("button", name="Copy", exact=True).click()
    expect(secret_dialog.get_by_role("status")).to_have_text("Copied to the clipboard.")
    assert page.evaluate("navigator.clipboard.readText()") == secret
    secret_dialog.get_by_role("button", name="Done").click()
    expect(secret_dialog).to_be_hidden()
    expect(page.locator("#secret-value")).to_have_value("")

    token = ApiToken.objects.get(owner=alice)
    assert (token.name, token.priority, token.digest) == (
        "nightly batch",
        Priority.LOW,
        digest_of(secret),
    )
    expect(card(page, "nightly batch").get_by_label("Priority")).to_have_value("low")
    expect(card(page, "nightly batch").locator(".badge")).to_have_text("Active")


def test_the_ceiling_hides_higher_values_but_an_administrator_sees_all(
    page: Any, alice: Any, carol: Any, sign_in: Any
) -> None:
    make_group("interns", priority="low", members=[alice])
    make_token(alice, name="alice-ci")
    make_token(carol, name="carol-ci")

    sign_in(page, "alice")
    assert options_of(card(page, "alice-ci").get_by_label("Priority")) == ["", "low"]
    expect(page.locator("#fact-max")).to_have_text("Highest priority you can choose: Low")

    page.get_by_role("button", name="Sign out").click()
    sign_in(page, "carol")
    assert options_of(card(page, "carol-ci").get_by_label("Priority")) == [
        "",
        "low",
        "medium",
        "high",
    ]


def test_a_failed_priority_save_restores_the_selection_and_clears_the_success_message(
    page: Any, alice: Any, sign_in: Any, screenshot: Any
) -> None:
    research = make_group("research", priority="high", members=[alice])
    token = make_token(alice, name="agent")
    UserProfile.objects.create(user=alice, language="de")

    sign_in(page, "alice")
    tile = card(page, "agent").locator(".priority-tile")
    select = tile.get_by_label("Priorität")
    expect(select).to_have_value("")
    select.select_option("medium")
    status = tile.locator("[role=status]")
    expect(status).to_have_text("Priorität gespeichert.")
    token.refresh_from_db()
    assert token.priority == Priority.MEDIUM

    # The groups shrink behind the page's back: high is still offered, but no longer allowed.
    research.priority = Priority.LOW
    research.save()
    select.select_option("high")

    alert = tile.locator("[role=alert]")
    expect(alert).to_have_text("Diese Priorität ist höher, als Ihre Gruppen erlauben.")
    expect(alert).to_be_focused()
    expect(select).to_have_value("medium")
    expect(status).to_be_hidden()
    expect(status).to_have_text("")
    token.refresh_from_db()
    assert token.priority == Priority.MEDIUM
    screenshot(page, "tokens-priority-error-de")

    # The next successful save clears the error again.
    select.select_option("low")
    expect(status).to_have_text("Priorität gespeichert.")
    expect(alert).to_be_hidden()


def test_rotate_revoke_and_delete(page: Any, alice: Any, sign_in: Any, screenshot: Any) -> None:
    make_token(alice, name="old-laptop")
    kept = make_token(alice, name="build-server", priority="low")
    sign_in(page, "alice")
    expect(page.locator(".token-card")).to_have_count(2)
    screenshot(page, "tokens")

    old_digest = kept.digest
    card(page, "build-server").get_by_role("button", name="Rotate").click()
    confirm = page.locator("#confirm-dialog")
    expect(confirm).to_contain_text("build-server")
    confirm.get_by_role("button", name="Rotate").click()
    secret_field = page.get_by_role("dialog", name="Copy your token now").get_by_label("New token")
    expect(secret_field).to_have_value(re.compile(r"^gwk_"))
    secret = secret_field.input_value()
    page.get_by_role("button", name="Done").click()
    kept.refresh_from_db()
    assert kept.digest == digest_of(secret) != old_digest

    card(page, "old-laptop").get_by_role("button", name="Revoke").click()
    page.locator("#confirm-dialog").get_by_role("button", name="Cancel").click()
    assert ApiToken.objects.get(name="old-laptop").revoked_at is None
    card(page, "old-laptop").get_by_role("button", name="Revoke").click()
    page.locator("#confirm-dialog").get_by_role("button", name="Revoke").click()
    expect(page.locator("#page-status")).to_have_text("Token “old-laptop” revoked.")
    revoked = card(page, "old-laptop")
    expect(revoked.locator(".badge")).to_have_text("Revoked")
    expect(revoked.get_by_label("Priority")).to_be_disabled()
    expect(revoked.get_by_role("button", name="Rotate")).to_have_count(0)
    assert ApiToken.objects.get(name="old-laptop").revoked_at is not None
    screenshot(page, "tokens-after-revoke")

    revoked.get_by_role("button", name="Delete").click()
    page.locator("#confirm-dialog").get_by_role("button", name="Delete").click()
    expect(page.locator("#page-status")).to_have_text("Token “old-laptop” deleted.")
    expect(card(page, "old-laptop")).to_have_count(0)
    assert not ApiToken.objects.filter(name="old-laptop").exists()


def test_a_create_error_is_shown_in_the_dialog(page: Any, alice: Any, sign_in: Any) -> None:
    sign_in(page, "alice")
    page.get_by_role("button", name="Create token").click()
    dialog = page.get_by_role("dialog", name="Create a token")
    dialog.get_by_role("button", name="Create token").click()
    expect(dialog.get_by_role("alert")).to_have_text("Enter a name.")
    expect(dialog.get_by_role("alert")).to_be_focused()
    page.evaluate("document.getElementById('create-name').removeAttribute('maxlength')")
    dialog.get_by_label("Name").fill("x" * 101)
    dialog.get_by_role("button", name="Create token").click()
    expect(dialog.get_by_role("alert")).to_have_text("A value is too long.")
    assert ApiToken.objects.count() == 0
