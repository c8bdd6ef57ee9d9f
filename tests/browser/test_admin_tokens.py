"""Administration → Tokens: every token with its owner; any priority for any token, and the
failed-save behaviour of the personal page."""

from __future__ import annotations

from typing import Any

import pytest
from playwright.sync_api import expect

from accounts.models import ApiToken
from accounts.priority import Priority
from tests.support.factories import make_group, make_token

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def row(page: Any, token: ApiToken) -> Any:
    return page.locator(f"#tokens-body tr[data-token-id='{token.id}']")


def test_an_administrator_overrides_a_priority_and_a_failed_save_restores_it(
    page: Any, alice: Any, bob: Any, carol: Any, sign_in: Any, screenshot: Any
) -> None:
    make_group("interns", priority="low", members=[alice])
    agent = make_token(alice, name="agent")
    make_token(bob, name="nightly", priority="low")
    sign_in(page, "carol")
    page.goto("/admin/tokens/")
    select = row(page, agent).get_by_label("Priority of token agent of alice")
    expect(select).to_have_value("")
    expect(select.locator("option").first).to_have_text("Inherit (Low)")
    expect(row(page, agent)).to_contain_text("Inherits Low from the owner's groups.")
    screenshot(page, "admin-tokens")

    # Above alice's own ceiling: only an administrator may choose it.
    select.select_option("high")
    status = row(page, agent).locator("[role=status]")
    expect(status).to_have_text("Priority saved.")
    expect(row(page, agent)).to_contain_text("Set by carol (administrator).")
    agent.refresh_from_db()
    assert (agent.priority, agent.priority_set_by_admin) == (Priority.HIGH, True)

    # The token disappears behind the page's back: the next save fails.
    ApiToken.objects.filter(pk=agent.pk).delete()
    select.select_option("low")
    alert = row(page, agent).locator("[role=alert]")
    expect(alert).to_have_text("This token does not exist or does not belong to you.")
    expect(alert).to_be_focused()
    expect(select).to_have_value("high")
    expect(status).to_be_hidden()
    screenshot(page, "admin-tokens-error")


def test_the_filter_narrows_the_list_by_owner(
    page: Any, alice: Any, bob: Any, carol: Any, sign_in: Any
) -> None:
    make_token(alice, name="laptop")
    make_token(bob, name="server")
    sign_in(page, "carol")
    page.goto("/admin/tokens/")
    expect(page.locator("#tokens-body tr")).to_have_count(2)
    page.get_by_label("Filter by token or owner").fill("bob")
    expect(page.locator("#tokens-body tr:not([hidden])")).to_have_count(1)
    expect(page.locator("#tokens-count")).to_have_text("Showing 1 of 2 tokens")


def test_an_administrator_revokes_a_leaked_token_and_its_owner_sees_who_did(
    browser: Any,
    aiplane_server: Any,
    page: Any,
    alice: Any,
    carol: Any,
    sign_in: Any,
    screenshot: Any,
) -> None:
    leaked = make_token(alice, name="leaked")
    other = make_token(alice, name="other")
    sign_in(page, "carol")
    page.goto("/admin/tokens/")
    actions = row(page, leaked).get_by_role("group", name="Actions for token leaked of alice")

    # Cancelling the confirmation changes nothing.
    actions.get_by_role("button", name="Revoke").click()
    dialog = page.locator("#confirm-dialog")
    expect(dialog).to_contain_text(
        "Revoke “leaked” of alice? Programs that use it stop working at once, and alice sees that"
        " you revoked it."
    )
    screenshot(page, "admin-tokens-revoke-confirm")
    dialog.get_by_role("button", name="Cancel").click()
    expect(dialog).to_be_hidden()
    leaked.refresh_from_db()
    assert leaked.revoked_at is None

    actions.get_by_role("button", name="Revoke").click()
    dialog.get_by_role("button", name="Revoke").click()
    expect(page.locator("#page-status")).to_have_text("Token “leaked” of alice revoked.")
    expect(row(page, leaked)).to_contain_text("Revoked by carol on")
    expect(actions.get_by_role("button", name="Revoke")).to_have_count(0)
    expect(row(page, other).get_by_role("button", name="Revoke")).to_be_visible()
    leaked.refresh_from_db()
    assert (leaked.is_revoked, leaked.revoked_by) == (True, carol)
    screenshot(page, "admin-tokens-revoked")

    # alice, in her own browser, sees who stopped her token.
    context = browser.new_context(base_url=aiplane_server.url, locale="en-US")
    alices = context.new_page()
    try:
        sign_in(alices, "alice")
        leaked_card = alices.locator(".token-card").filter(
            has=alices.get_by_role("heading", name="leaked")
        )
        expect(leaked_card.locator(".revoked-by")).to_contain_text("Revoked by carol on")
        expect(leaked_card.locator(".badge")).to_have_text("Revoked")
        screenshot(alices, "tokens-revoked-by-admin")
    finally:
        context.close()


def test_an_administrator_deletes_a_token_in_german(
    page: Any, german_carol: Any, bob: Any, sign_in: Any, screenshot: Any
) -> None:
    doomed = make_token(bob, name="alt")
    kept = make_token(bob, name="neu")
    sign_in(page, "carol")
    page.goto("/admin/tokens/")
    actions = row(page, doomed).get_by_role("group", name="Aktionen für Token alt von bob")
    actions.get_by_role("button", name="Löschen").click()
    dialog = page.locator("#confirm-dialog")
    expect(dialog).to_contain_text("„alt“ von bob endgültig löschen?")
    dialog.get_by_role("button", name="Löschen").click()
    expect(page.locator("#page-status")).to_have_text("Token „alt“ von bob gelöscht.")
    expect(row(page, doomed)).to_have_count(0)
    expect(row(page, kept)).to_be_visible()
    assert list(ApiToken.objects.values_list("name", flat=True)) == ["neu"]

    # Revoking in German, too: the state cell names the administrator.
    row(page, kept).get_by_role("button", name="Widerrufen").click()
    dialog.get_by_role("button", name="Widerrufen").click()
    expect(page.locator("#page-status")).to_have_text("Token „neu“ von bob widerrufen.")
    expect(row(page, kept)).to_contain_text("Widerrufen von carol am")
    screenshot(page, "admin-tokens-de")
