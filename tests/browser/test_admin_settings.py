"""Administration → Settings: the form generated from the settings catalog, saved all or nothing,
with a localized error that names the setting."""

from __future__ import annotations

from typing import Any

import pytest
from playwright.sync_api import expect

from aiplane.catalog import CATALOG, setting

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_every_catalog_setting_has_a_labelled_control(
    page: Any, carol: Any, sign_in: Any, screenshot: Any
) -> None:
    sign_in(page, "carol")
    page.goto("/admin/settings/")
    heading = "Access › Gateway"  # noqa: RUF001 - the breadcrumb arrow of the section title
    expect(page.get_by_role("heading", name=heading)).to_be_visible()
    expect(page.get_by_role("heading", name="Observability")).to_be_visible()
    for spec in CATALOG:
        control = page.locator(f"[data-key='{spec.key}']")
        expect(control).to_have_count(1)
        label = page.locator(f"label[for='{control.get_attribute('id')}']").inner_text()
        assert label and spec.key not in label
    expect(page.get_by_label("Scheduler")).to_have_value("strict")
    expect(page.get_by_label("Keep activity records (days)")).to_have_value("30")
    screenshot(page, "admin-settings")


def test_an_administrator_enables_prioritization_and_chooses_the_default(
    page: Any, carol: Any, sign_in: Any
) -> None:
    sign_in(page, "carol")
    page.goto("/admin/settings/")
    enabled = page.get_by_label("Enable request prioritization")
    expect(enabled).not_to_be_checked()
    enabled.check()
    page.get_by_label("System default priority").select_option("high")
    page.get_by_label("Wait budget (seconds)").fill("45")
    page.get_by_role("button", name="Save settings").click()
    expect(page.locator("#page-status")).to_have_text("Settings saved.")
    assert setting("gateway.priority_enabled") is True
    assert setting("gateway.priority_default") == "high"
    assert setting("gateway.upstream_wait_secs") == 45

    page.reload()
    expect(page.get_by_label("Enable request prioritization")).to_be_checked()
    expect(page.get_by_label("System default priority")).to_have_value("high")
    expect(page.get_by_label("Wait budget (seconds)")).to_have_value("45")


def test_an_invalid_value_saves_nothing_and_is_named_in_the_persons_language(
    page: Any, german_carol: Any, sign_in: Any, screenshot: Any
) -> None:
    sign_in(page, "carol")
    page.goto("/admin/settings/")
    page.get_by_label("Priorisierung von Anfragen einschalten").check()
    budget = page.get_by_label("Wartebudget (Sekunden)")
    budget.fill("99999")
    page.get_by_role("button", name="Einstellungen speichern").click()

    alert = page.locator("#page-alert")
    expect(alert).to_have_text("Wartebudget (Sekunden) muss eine ganze Zahl von 0 bis 3600 sein.")
    expect(alert).to_be_focused()
    expect(budget).to_have_attribute("aria-invalid", "true")
    expect(page.locator("#page-status")).to_be_hidden()
    # All or nothing: the valid change in the same batch was not stored either.
    assert setting("gateway.priority_enabled") is False
    assert setting("gateway.upstream_wait_secs") == 120
    screenshot(page, "admin-settings-error-de")

    budget.fill("60")
    page.get_by_role("button", name="Einstellungen speichern").click()
    expect(page.locator("#page-status")).to_have_text("Einstellungen gespeichert.")
    expect(alert).to_be_hidden()
    assert setting("gateway.priority_enabled") is True


def test_an_administrator_turns_preemption_on_in_german(
    page: Any, german_carol: Any, sign_in: Any
) -> None:
    sign_in(page, "carol")
    page.goto("/admin/settings/")
    toggle = page.get_by_label("Niedrigere Klassen im Prefill verdrängen")
    expect(toggle).not_to_be_checked()
    toggle.check()
    page.get_by_role("button", name="Einstellungen speichern").click()
    expect(page.locator("#page-status")).to_have_text("Einstellungen gespeichert.")
    assert setting("gateway.preemption") is True
