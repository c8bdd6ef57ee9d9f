"""Allowances in the browser: the group editor's limits (English and German), a token's own lower
limits on the Tokens page, and an administrator's override on Administration → Tokens."""

from __future__ import annotations

from typing import Any

import pytest
from playwright.sync_api import expect

from accounts.models import ApiToken, GatewayGroup
from tests.support.factories import make_group, make_token

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def group_row(page: Any, name: str) -> Any:
    return page.locator(f"#groups-body tr[data-group='{name}']")


def test_an_administrator_limits_a_group_and_an_invalid_limit_is_named(
    page: Any, carol: Any, sign_in: Any, screenshot: Any
) -> None:
    make_group("students")
    sign_in(page, "carol")
    page.goto("/admin/groups/")
    group_row(page, "students").get_by_role("button", name="Edit").click()
    dialog = page.get_by_role("dialog", name="Edit group “students”")

    dialog.get_by_label("Limit this group's usage").check()
    expect(dialog.get_by_text("No limits: the members of this group")).to_be_visible()
    dialog.get_by_role("button", name="Add a limit").click()
    first = dialog.locator(".allowance-limit").nth(0)
    first.get_by_label("What").select_option("requests")
    first.get_by_label("Per").select_option("minute")
    first.get_by_label("At most").fill("1.5")
    dialog.get_by_role("button", name="Save").click()
    expect(dialog.get_by_role("alert")).to_have_text(
        "Enter a whole number of 0 or more as the limit."
    )
    expect(first.get_by_label("At most")).to_have_attribute("aria-invalid", "true")
    assert GatewayGroup.objects.get(name="students").allowance is None

    first.get_by_label("At most").fill("20")
    dialog.get_by_role("button", name="Add a limit").click()
    second = dialog.locator(".allowance-limit").nth(1)
    second.get_by_label("What").select_option("tokens")
    second.get_by_label("Per").select_option("day")
    second.get_by_label("At most").fill("5000")
    second.get_by_label("Model (optional)").fill("sim-large")
    # Two limits of the same thing: the server's error names the second one.
    dialog.get_by_role("button", name="Add a limit").click()
    third = dialog.locator(".allowance-limit").nth(2)
    third.get_by_label("What").select_option("requests")
    third.get_by_label("Per").select_option("minute")
    third.get_by_label("At most").fill("30")
    screenshot(page, "admin-groups-allowance")
    dialog.get_by_role("button", name="Save").click()
    expect(dialog.get_by_role("alert")).to_contain_text("A limit is not valid")
    expect(third.get_by_label("What")).to_have_attribute("aria-invalid", "true")
    assert GatewayGroup.objects.get(name="students").allowance is None

    dialog.get_by_role("button", name="Remove limit 3").click()
    dialog.get_by_role("button", name="Save").click()
    expect(page.locator("#page-status")).to_have_text("Group “students” saved.")
    assert GatewayGroup.objects.get(name="students").allowance == [
        {"measure": "requests", "window": "minute", "limit": 20, "model": None},
        {"measure": "tokens", "window": "day", "limit": 5000, "model": "sim-large"},
    ]

    # Opened again, the editor shows what is saved.
    group_row(page, "students").get_by_role("button", name="Edit").click()
    expect(dialog.get_by_label("Limit this group's usage")).to_be_checked()
    expect(
        dialog.locator(".allowance-limit").nth(1).get_by_label("Model (optional)")
    ).to_have_value("sim-large")


def test_in_german_the_group_editor_speaks_german(
    page: Any, german_carol: Any, sign_in: Any
) -> None:
    make_group("studierende")
    sign_in(page, "carol")
    page.goto("/admin/groups/")
    group_row(page, "studierende").get_by_role("button", name="Bearbeiten").click()
    dialog = page.locator("#group-dialog")
    dialog.get_by_label("Nutzung dieser Gruppe begrenzen").check()
    dialog.get_by_role("button", name="Grenze hinzufügen").click()
    row = dialog.locator(".allowance-limit").nth(0)
    expect(row.get_by_label("Was")).to_contain_text("Tokens (Eingabe + Ausgabe)")
    row.get_by_label("Höchstens").fill("-1")
    dialog.get_by_role("button", name="Speichern").click()
    expect(dialog.get_by_role("alert")).to_have_text(
        "Geben Sie als Grenze eine ganze Zahl ab 0 ein."
    )
    row.get_by_label("Höchstens").fill("100")
    dialog.get_by_role("button", name="Speichern").click()
    expect(dialog).to_be_hidden()
    assert GatewayGroup.objects.get(name="studierende").allowance == [
        {"measure": "tokens", "window": "day", "limit": 100, "model": None}
    ]


def limited(person: Any, *limits: dict[str, Any]) -> None:
    group = make_group(f"{person.username}-limits", members=[person])
    GatewayGroup.objects.filter(pk=group.pk).update(allowance=list(limits))


def test_an_owner_lowers_a_tokens_allowance_but_may_not_raise_it(
    page: Any, alice: Any, sign_in: Any, screenshot: Any
) -> None:
    limited(alice, {"measure": "tokens", "window": "day", "limit": 1000, "model": None})
    token = make_token(alice, name="laptop")
    sign_in(page, "alice")
    page.goto("/tokens/")
    card = page.locator(f"li[data-token-id='{token.pk}']")
    expect(card.locator(".allowance-summary")).to_have_text(
        "Tokens (input + output) per day (UTC): 1,000"
    )
    card.get_by_role("button", name="Allowance of token laptop").click()
    dialog = page.get_by_role("dialog", name="Allowance of token “laptop”")
    expect(dialog).to_contain_text("Your allowance: Tokens (input + output) per day (UTC): 1,000")
    dialog.get_by_label("Give this token its own limits").check()
    dialog.get_by_role("button", name="Add a limit").click()
    dialog.get_by_label("At most").fill("5000")
    dialog.get_by_role("button", name="Save").click()
    expect(dialog.get_by_role("alert")).to_have_text(
        "A limit is higher than your own allowance allows."
    )
    assert ApiToken.objects.get(pk=token.pk).allowance is None

    dialog.get_by_label("At most").fill("200")
    screenshot(page, "token-allowance")
    dialog.get_by_role("button", name="Save").click()
    expect(dialog).to_be_hidden()
    expect(card.locator(".allowance-summary")).to_have_text(
        "Tokens (input + output) per day (UTC): 200"
    )
    expect(card.get_by_role("status")).to_have_text("Allowance of token “laptop” saved.")
    assert ApiToken.objects.get(pk=token.pk).allowance == [
        {"measure": "tokens", "window": "day", "limit": 200, "model": None}
    ]


def test_an_administrator_raises_a_tokens_allowance_above_its_owners(
    page: Any, carol: Any, alice: Any, sign_in: Any
) -> None:
    limited(alice, {"measure": "requests", "window": "minute", "limit": 5, "model": None})
    token = make_token(alice, name="ci")
    sign_in(page, "carol")
    page.goto("/admin/tokens/")
    row = page.locator(f"#tokens-body tr[data-token-id='{token.pk}']")
    row.get_by_role("button", name="Allowance of token ci").click()
    dialog = page.get_by_role("dialog", name="Allowance of token “ci”")
    expect(dialog).to_contain_text("The owner's allowance: Requests per minute: 5")
    dialog.get_by_label("Give this token its own limits").check()
    dialog.get_by_role("button", name="Add a limit").click()
    dialog.get_by_label("What").select_option("requests")
    dialog.get_by_label("Per").select_option("minute")
    dialog.get_by_label("At most").fill("500")
    dialog.get_by_role("button", name="Save").click()
    expect(dialog).to_be_hidden()
    expect(row.locator(".allowance-summary")).to_have_text("Requests per minute: 500")
    saved = ApiToken.objects.get(pk=token.pk)
    assert (saved.allowance_set_by_id, saved.allowance_set_by_admin) == (carol.pk, True)
