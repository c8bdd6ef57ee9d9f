"""Administration → Tokens: every token with its owner; any priority for any token, and the
failed-save behaviour of the personal page."""

from __future__ import annotations

from typing import Any

import pytest
from playwright.sync_api import expect

from accounts.models import ApiToken
from accounts.priority import Priority
from tests.factories import make_group, make_token

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
