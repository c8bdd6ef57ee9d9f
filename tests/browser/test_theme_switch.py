"""The colour switch in the header says what it is in words on a wide screen and a phone: a
visible label, that label as its accessible name, and a tooltip, in the person's language."""

from __future__ import annotations

from typing import Any

import pytest
from playwright.sync_api import expect

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

WORDS = {
    "en": ("Colours", "Colours of the pages: light, dark, or as your system prefers"),
    "de": ("Farben", "Farben der Seiten: hell, dunkel oder wie Ihr System es vorgibt"),
    "fr": ("Couleurs", "Couleurs des pages : claires, sombres ou selon votre système"),
    "ru": ("Цвета", "Цвета страниц: светлые, тёмные или как задано в системе"),
}


@pytest.mark.parametrize("language", ["en", "de", "fr", "ru"])
def test_the_colour_switch_is_named_in_words_on_a_wide_screen(
    page: Any, carol: Any, sign_in: Any, screenshot: Any, language: str
) -> None:
    from accounts.models import UserProfile

    UserProfile.objects.update_or_create(user=carol, defaults={"language": language})
    label, tooltip = WORDS[language]
    sign_in(page, "carol")  # the widest header: every administration link
    page.set_viewport_size({"width": 1280, "height": 800})
    page.goto("/admin/users/")
    switch = page.get_by_role("combobox", name=label, exact=True)
    expect(switch).to_have_attribute("title", tooltip)
    shown = page.locator("label[for=theme-select]")
    expect(shown).to_have_text(label)
    box = shown.bounding_box()
    assert box is not None and box["width"] > 20 and box["height"] > 8  # seen, not clipped away
    # The header still fits, with no sideways scroll.
    tools = page.locator(".header-tools").bounding_box()
    assert tools is not None
    if language in ("en", "de"):
        assert tools["height"] < 60  # these fit one line
    # ... and ends where the page's content ends (the header's grid does not overflow).
    content_right = page.evaluate(
        "(() => { const m = document.querySelector('main'); return "
        "m.getBoundingClientRect().right - parseFloat(getComputedStyle(m).paddingRight); })()"
    )
    assert tools["x"] + tools["width"] <= content_right + 0.5
    assert page.evaluate("document.documentElement.scrollWidth <= innerWidth")
    screenshot(page, f"header-theme-switch-{language}", widths=((1280, 800),))
    switch.select_option("dark")
    assert page.evaluate("document.documentElement.dataset.theme") == "dark"


@pytest.mark.parametrize("language", ["en", "de"])
def test_the_colour_switch_is_named_in_words_in_the_phone_menu(
    page: Any, alice: Any, sign_in: Any, language: str
) -> None:
    from accounts.models import UserProfile

    UserProfile.objects.update_or_create(user=alice, defaults={"language": language})
    label, tooltip = WORDS[language]
    sign_in(page, "alice")
    page.set_viewport_size({"width": 390, "height": 844})
    page.goto("/tokens/")
    page.get_by_role("button", name="Menü" if language == "de" else "Menu").click()
    expect(page.locator("label[for=theme-select]")).to_be_visible()
    switch = page.get_by_role("combobox", name=label, exact=True)
    expect(switch).to_be_visible()
    expect(switch).to_have_attribute("title", tooltip)
