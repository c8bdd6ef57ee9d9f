"""The colour scheme: the system's dark preference is followed, and the header's switch (light,
dark, as the system) overrides it and is remembered."""

from __future__ import annotations

from typing import Any

import pytest
from playwright.sync_api import expect

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

LIGHT_BG = "rgb(246, 247, 249)"
DARK_BG = "rgb(15, 20, 26)"


def background(page: Any) -> str:
    return str(page.evaluate("getComputedStyle(document.body).backgroundColor"))


def card_text(page: Any) -> str:
    return str(page.evaluate("getComputedStyle(document.querySelector('main')).color"))


@pytest.fixture
def dark_page(browser: Any, aiplane_server: Any) -> Any:
    context = browser.new_context(
        base_url=aiplane_server.url,
        viewport={"width": 1280, "height": 800},
        locale="en-US",
        color_scheme="dark",
    )
    context.set_default_timeout(10_000)
    the_page = context.new_page()
    errors: list[str] = []
    the_page.on("pageerror", lambda exc: errors.append(str(exc)))
    yield the_page
    context.close()
    assert not errors, f"uncaught errors in the page: {errors}"


def test_a_dark_system_preference_gets_dark_pages(
    dark_page: Any, alice: Any, sign_in: Any, screenshot: Any
) -> None:
    sign_in(dark_page, "alice")
    assert background(dark_page) == DARK_BG
    expect(dark_page.get_by_label("Colours")).to_have_value("system")
    screenshot(dark_page, "tokens-dark")
    dark_page.goto("/login/")  # signed-out pages too
    assert background(dark_page) == DARK_BG


def test_the_switch_overrides_the_system_and_is_remembered(
    dark_page: Any, carol: Any, sign_in: Any, screenshot: Any
) -> None:
    from tests.browser.test_admin_activity import record

    record(1, outcome="refused", status=404, error="The model 'x' does not exist.")
    record(2, priority_class="high", input_tokens=12, output_tokens=30)
    sign_in(dark_page, "carol")
    switch = dark_page.get_by_label("Colours")
    switch.select_option("light")
    assert background(dark_page) == LIGHT_BG
    dark_page.goto("/admin/activity/")
    expect(dark_page.get_by_label("Colours")).to_have_value("light")
    assert background(dark_page) == LIGHT_BG

    dark_page.get_by_label("Colours").select_option("system")
    assert background(dark_page) == DARK_BG
    expect(dark_page.locator("#activity-body tr")).to_have_count(2)
    screenshot(dark_page, "admin-activity-dark")
    dark_page.locator("#activity-body tr").first.locator("button.link-button").click()
    screenshot(dark_page, "admin-activity-record-dark", widths=((1280, 800),))
    dark_page.keyboard.press("Escape")
    dark_page.reload()
    assert background(dark_page) == DARK_BG
    expect(dark_page.get_by_label("Colours")).to_have_value("system")


@pytest.mark.parametrize(
    ("language", "label", "dark"), [("en", "Colours", "Dark"), ("de", "Farben", "Dunkel")]
)
def test_a_light_system_can_choose_dark(
    page: Any, alice: Any, sign_in: Any, screenshot: Any, language: str, label: str, dark: str
) -> None:
    from accounts.models import UserProfile

    UserProfile.objects.update_or_create(user=alice, defaults={"language": language})
    sign_in(page, "alice")
    assert background(page) == LIGHT_BG
    switch = page.get_by_label(label)
    expect(switch.locator("option[value=dark]")).to_have_text(f"☾ {dark}")
    switch.select_option("dark")
    assert background(page) == DARK_BG
    # The text stays readable: light on dark.
    assert card_text(page) == "rgb(227, 232, 239)"
    page.goto("/playground/")
    assert background(page) == DARK_BG
    screenshot(page, f"playground-dark-{language}")
