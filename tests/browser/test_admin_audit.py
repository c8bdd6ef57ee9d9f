"""Administration → Audit: who changed what and when, filtered and a page at a time, with secrets
never shown, in English and German."""

from __future__ import annotations

from typing import Any

import pytest
from playwright.sync_api import expect

from accounts import services
from accounts.models import UserProfile
from accounts.priority import Priority
from aiplane.catalog import settings_update
from gateway.admin import services as admin_services
from tests.support.factories import make_token

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

KEY = "sk-backend-7f3a9c-do-not-leak"
OTHER_KEY = "sk-backend-1b2c3d-also-secret"


def changes_by(carol: Any, alice: Any) -> None:
    """Real changes through the services, as the API and the browser make them."""
    services.group_put(
        name="research", fields={"priority": Priority.HIGH}, members=["alice"], actor=carol
    )
    admin_services.backend_save(
        data={"name": "gpu1", "base_url": "http://127.0.0.1:9/v1", "api_key": KEY}, actor=carol
    )
    admin_services.backend_save(
        data={"name": "gpu1", "base_url": "http://127.0.0.1:9/v1", "api_key": OTHER_KEY},
        actor=carol,
    )
    services.token_revoke(token=make_token(alice, name="laptop"), actor=carol)


def test_an_administrator_reads_filters_and_pages_the_audit_log(
    page: Any, alice: Any, carol: Any, sign_in: Any, screenshot: Any
) -> None:
    changes_by(carol, alice)
    for waiters in range(1, 51):
        settings_update(values={"gateway.max_waiters": waiters}, actor="manage.py config import")

    sign_in(page, "carol")
    page.get_by_role("link", name="Audit").click()
    expect(page.locator("h1")).to_have_text("Audit log")
    rows = page.locator("#audit-body tr")
    expect(rows).to_have_count(50)
    expect(page.locator("#audit-page-info")).to_have_text("Page 1 of 2 · 55 in all")
    expect(rows.first).to_contain_text("manage.py config import")
    expect(rows.first).to_contain_text("Setting changed")
    expect(rows.first).to_contain_text("gateway.max_waiters")
    expect(rows.first.locator(".audit-changes")).to_have_text("value 49 → 50")
    page.get_by_role("button", name="Next").click()
    expect(rows).to_have_count(5)
    assert "page=2" in page.url
    expect(rows.nth(1)).to_contain_text("Backend changed")
    expect(rows.nth(1).locator(".audit-changes")).to_have_text("api_key_replaced — → replaced")
    created = rows.nth(2)
    expect(created).to_contain_text("Backend created")
    created.get_by_text("Created: show the values (15)").click()
    expect(created.locator(".audit-values")).to_contain_text("hidden")
    # Joining a group changes her priority: her own row says so.
    expect(rows.nth(3)).to_contain_text("Account changed")
    expect(rows.nth(3).locator(".audit-changes")).to_have_text("groups — → research")
    screenshot(page, "admin-audit-page-2")

    page.get_by_label("What").select_option("token")
    expect(page.get_by_label("Action").locator("option")).to_have_count(9)  # any + eight
    page.get_by_label("Target").fill("LAPTOP")
    page.get_by_role("button", name="Apply filters").click()
    expect(rows).to_have_count(1)
    expect(rows.first).to_contain_text("Token revoked")
    expect(rows.first).to_contain_text("alice/laptop")
    expect(rows.first).to_contain_text("carol")
    expect(page.locator("#audit-page-info")).to_have_text("Page 1 of 1 · 1 in all")
    assert "kind=token" in page.url and "target=LAPTOP" in page.url

    page.reload()  # the filters come back from the address
    expect(page.get_by_label("What")).to_have_value("token")
    expect(page.get_by_label("Target")).to_have_value("LAPTOP")
    expect(rows).to_have_count(1)

    page.get_by_label("Target").fill("")
    page.get_by_label("What").select_option("")
    page.get_by_label("From").fill("2026-05-05T10:00:00")
    page.get_by_label("Until").fill("2026-05-04T10:00:00")
    page.get_by_role("button", name="Apply filters").click()
    alert = page.locator("#page-alert")
    expect(alert).to_have_text("“Until” must be later than “From”.")
    expect(page.get_by_label("Until")).to_have_attribute("aria-invalid", "true")

    page.get_by_role("button", name="Reset").click()
    expect(rows).to_have_count(50)
    for secret in (KEY, OTHER_KEY):
        assert secret not in page.content()
    screenshot(page, "admin-audit")


def test_the_audit_log_speaks_german(
    page: Any, alice: Any, carol: Any, sign_in: Any, screenshot: Any
) -> None:
    UserProfile.objects.create(user=carol, language="de")
    changes_by(carol, alice)
    sign_in(page, "carol")
    page.goto("/admin/audit/")
    expect(page.locator("h1")).to_have_text("Audit-Protokoll")
    rows = page.locator("#audit-body tr")
    expect(rows).to_have_count(5)
    expect(page.locator("#audit-page-info")).to_have_text("Seite 1 von 1 · insgesamt 5")
    expect(rows.first).to_contain_text("Token widerrufen")
    expect(rows.nth(1)).to_contain_text("Backend geändert")
    expect(rows.nth(1)).to_contain_text("ersetzt")
    expect(rows.nth(3)).to_contain_text("Konto geändert")
    expect(rows.nth(4)).to_contain_text("Gruppe angelegt")
    expect(rows.nth(4)).to_contain_text("Angelegt: Werte anzeigen (7)")
    page.get_by_label("Was").select_option("group")
    page.get_by_role("button", name="Filter anwenden").click()
    expect(rows).to_have_count(1)
    expect(page.locator("#audit-page-info")).to_have_text("Seite 1 von 1 · insgesamt 1")
    page.get_by_role("button", name="Zurücksetzen").click()
    expect(rows).to_have_count(5)
    screenshot(page, "admin-audit-de")
