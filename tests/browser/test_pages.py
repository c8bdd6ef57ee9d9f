"""Every page answers with its title for the right people: a session for all, an administrator
for administration (a 403 page for others); the menu works at phone width."""

from __future__ import annotations

from typing import Any

import pytest
from playwright.sync_api import expect

from accounts.models import UserProfile
from aiplane import i18n
from gateway.admin import services
from tests.support.factories import make_token

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

# The page script has replaced every "Loading…" placeholder with what it fetched.
LOADED = "() => ![...document.querySelectorAll('[id$=-loading]')].some((el) => !el.hidden)"

ADMIN_PAGES = [
    ("/admin/settings/", "Settings", "admin-settings"),
    ("/admin/groups/", "Groups", "admin-groups"),
    ("/admin/users/", "Users", "admin-users"),
    ("/admin/tokens/", "All tokens", "admin-tokens"),
    ("/admin/backends/", "Backends", "admin-backends"),
    ("/admin/queue/", "Queue", "admin-queue"),
    ("/admin/activity/", "Activity", "admin-activity"),
    ("/admin/audit/", "Audit log", "admin-audit"),
]


def test_the_home_page_leads_to_sign_in_then_to_tokens(page: Any, alice: Any, sign_in: Any) -> None:
    page.goto("/")
    page.wait_for_url("**/login/")
    sign_in(page, "alice")
    page.goto("/")
    page.wait_for_url("**/tokens/")


def test_an_administrator_sees_every_page_with_its_title(
    page: Any, carol: Any, sign_in: Any, screenshot: Any
) -> None:
    sign_in(page, "carol")
    admin_nav = page.get_by_role("navigation", name="Administration")
    for path, title, shot in ADMIN_PAGES:
        page.goto(path)
        assert page.locator("h1").inner_text() == title
        assert page.title() == f"{title} · aiplane"
        current = admin_nav.locator("a[aria-current=page]")
        assert current.get_attribute("href") == path
        page.wait_for_function(LOADED)
        screenshot(page, f"{shot}-empty")
    page.goto("/playground/")
    assert page.locator("h1").inner_text() == "Playground"
    page.wait_for_function(LOADED)
    screenshot(page, "playground-empty")


def test_a_person_who_is_no_administrator_gets_the_403_page(
    page: Any, alice: Any, sign_in: Any, screenshot: Any
) -> None:
    sign_in(page, "alice")
    assert page.get_by_role("navigation", name="Administration").count() == 0
    for path, _title, _shot in ADMIN_PAGES:
        response = page.goto(path)
        assert response.status == 403
        assert page.locator("h1").inner_text() == "Access denied"
    screenshot(page, "forbidden")


def test_pages_need_a_session(page: Any) -> None:
    for path in ["/tokens/", "/playground/", "/admin/groups/"]:
        page.goto(path)
        page.wait_for_url(f"**/login/?next={path}")


def test_the_menu_opens_at_phone_width(
    page: Any, carol: Any, sign_in: Any, screenshot: Any
) -> None:
    sign_in(page, "carol")
    page.set_viewport_size({"width": 390, "height": 844})
    toggle = page.get_by_role("button", name="Menu")
    groups = page.get_by_role("link", name="Groups")
    assert toggle.get_attribute("aria-expanded") == "false"
    assert not groups.is_visible()
    toggle.click()
    assert toggle.get_attribute("aria-expanded") == "true"
    assert groups.is_visible()
    assert page.get_by_label("Language").is_visible()
    screenshot(page, "menu-open", widths=((390, 844),))
    page.keyboard.press("Escape")
    assert not groups.is_visible()


def test_an_unknown_address_gets_the_404_page(page: Any, alice: Any, sign_in: Any) -> None:
    sign_in(page, "alice")
    response = page.goto("/no/such/page/")
    assert response.status == 404
    assert page.locator("h1").inner_text() == "Page not found"
    assert page.get_by_role("link", name="Back to your tokens").is_visible()


@pytest.mark.parametrize("lang", i18n.LANGUAGES)
def test_every_language_renders_without_raw_message_ids(
    page: Any, carol: Any, sign_in: Any, screenshot: Any, lang: str
) -> None:
    UserProfile.objects.create(user=carol, language=lang)
    make_token(carol, name="ci", priority="low")
    sign_in(page, "carol")
    expect(page.locator(".token-card")).to_have_count(1)
    assert page.locator("html").get_attribute("lang") == lang
    ids = [msg_id for msg_id in i18n.catalog_messages("en") if "-" in msg_id]
    for path in ["/tokens/", "/admin/settings/"]:
        if path != "/tokens/":
            page.goto(path)
        text = page.locator("body").inner_text()
        options = " ".join(page.locator("option").all_inner_texts())
        leaked = [msg_id for msg_id in ids if msg_id in text or msg_id in options]
        assert not leaked, f"{lang} {path} shows ids {leaked}"
    page.goto("/tokens/")
    expect(page.locator(".token-card")).to_have_count(1)
    screenshot(page, f"tokens-{lang}", widths=((1280, 800),))


UNLABELLED = """() => [...document.querySelectorAll('input, select, textarea, button')]
    .filter((el) => el.type !== 'hidden' && !el.closest('dialog:not([open])'))
    .filter((el) => !((el.labels && el.labels.length) || el.getAttribute('aria-label')
        || el.getAttribute('aria-labelledby')
        || (el.tagName === 'BUTTON' && el.textContent.trim())))
    .map((el) => el.id || el.outerHTML.slice(0, 80))"""

LABELLED_IN_DIALOGS = """() => [
    ...document.querySelectorAll('dialog input, dialog select, dialog textarea')]
    .filter((el) => !((el.labels && el.labels.length) || el.getAttribute('aria-label')))
    .map((el) => el.id || el.outerHTML.slice(0, 80))"""


def test_every_control_on_every_page_has_an_accessible_name(
    page: Any, alice: Any, carol: Any, sign_in: Any
) -> None:

    from gateway.models import ActivityRecord
    from tests.support.factories import make_group

    make_group("research", priority="high", members=[alice])
    make_token(alice, name="agent")
    services.backend_save(data={"name": "gpu-1", "base_url": "http://127.0.0.1:9/v1"})
    services.pool_save(data={"name": "chat", "backends": ["gpu-1"]}, known_groups=set())
    ActivityRecord.objects.create(
        at="2026-01-02T03:04:05Z",
        username="alice",
        model="m",
        priority_class="high",
        outcome="immediate",
        status=200,
    )
    sign_in(page, "carol")
    for path in ["/tokens/", "/playground/", *[p for p, _t, _s in ADMIN_PAGES]]:
        page.goto(path)
        page.wait_for_function(LOADED)
        assert page.evaluate(UNLABELLED) == [], path
        assert page.evaluate(LABELLED_IN_DIALOGS) == [], path
    # The editors that open in place of the backend overview.
    page.goto("/admin/backends/")
    page.locator("[data-backend='gpu-1']").get_by_role("button", name="Edit").click()
    page.get_by_label("Manual mapping", exact=True).check()
    assert page.evaluate(UNLABELLED) == []
    page.get_by_role("button", name="Cancel").click()
    page.get_by_role("button", name="Add pool").click()
    assert page.evaluate(UNLABELLED) == []


def test_the_suite_catches_a_content_security_policy_violation(
    browser: Any, page: Any, alice: Any, sign_in: Any
) -> None:
    # The policy refuses a style attribute; the watch every browser test runs must notice.
    sign_in(page, "alice")
    with page.expect_console_message(lambda message: "CSP violation" in message.text):
        page.evaluate("document.querySelector('main').setAttribute('style', 'color: red')")
    page.title()  # one more round trip: every listener has seen the message by now
    assert any("style-src" in violation for violation in browser.violations)
    browser.violations.clear()  # caught: this test itself must not fail for it
