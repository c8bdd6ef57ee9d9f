"""Signing in and out, the localized sign-in error, and the language choice that sticks."""

from __future__ import annotations

from typing import Any

import pytest
from playwright.sync_api import expect

from accounts.models import UserProfile

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_sign_in_then_sign_out(page: Any, alice: Any, sign_in: Any, screenshot: Any) -> None:
    page.goto("/tokens/")
    page.wait_for_url("**/login/?next=/tokens/")
    screenshot(page, "login")

    sign_in(page, "alice")
    assert page.locator("h1").inner_text() == "API tokens"
    assert page.locator(".whoami").inner_text() == "Signed in as alice"

    page.get_by_role("button", name="Sign out").click()
    page.wait_for_url("**/login/?signed_out=1")
    assert page.get_by_role("status").inner_text() == "You have been signed out."
    page.goto("/tokens/")
    page.wait_for_url("**/login/?next=/tokens/")


def test_a_wrong_password_shows_a_localized_alert_that_takes_focus(
    browser: Any, aiplane_server: Any, alice: Any, screenshot: Any
) -> None:
    context = browser.new_context(base_url=aiplane_server.url, locale="de-DE")
    page = context.new_page()
    try:
        page.goto("/login/")
        assert page.locator("h1").inner_text() == "Anmelden"
        page.get_by_label("Benutzername").fill("alice")
        page.get_by_label("Passwort").fill("not the password")
        page.get_by_role("button", name="Anmelden").click()
        alert = page.get_by_role("alert")
        expect(alert).to_have_text(
            "Benutzername oder Passwort ist falsch, oder das Konto ist deaktiviert."
        )
        expect(alert).to_be_focused()
        assert page.get_by_label("Benutzername").input_value() == "alice"
        screenshot(page, "login-error-de")
    finally:
        context.close()


def test_a_language_switch_changes_the_page_and_sticks(
    page: Any, alice: Any, sign_in: Any, screenshot: Any
) -> None:
    sign_in(page, "alice")
    assert page.locator("h1").inner_text() == "API tokens"

    with page.expect_navigation():
        page.get_by_label("Language").select_option("de")
    assert page.locator("h1").inner_text() == "API-Tokens"
    assert page.locator("html").get_attribute("lang") == "de"
    assert UserProfile.objects.get(user=alice).language == "de"

    page.reload()
    assert page.locator("h1").inner_text() == "API-Tokens"
    assert page.get_by_role("link", name="Spielwiese").is_visible()
    screenshot(page, "tokens-de")

    # Signed out, the cookie keeps the choice for the sign-in page.
    page.get_by_role("button", name="Abmelden").click()
    page.wait_for_url("**/login/?signed_out=1")
    assert page.locator("h1").inner_text() == "Anmelden"


def test_the_language_can_be_chosen_before_signing_in(page: Any, alice: Any) -> None:
    page.goto("/login/")
    with page.expect_navigation():
        page.get_by_label("Language").select_option("zh")
    assert page.locator("h1").inner_text() == "登录"
    page.get_by_label("用户名").fill("alice")
    page.get_by_label("密码").fill("wrong")
    page.get_by_role("button", name="登录").click()
    expect(page.get_by_role("alert")).to_have_text("用户名或密码错误，或账户已被停用。")  # noqa: RUF001 - Chinese punctuation


@pytest.mark.parametrize(
    ("locale", "labels", "message"),
    [
        (
            "de-DE",
            ("Benutzername", "Passwort", "Anmelden"),
            "Zu viele fehlgeschlagene Anmeldeversuche. Versuchen Sie es in 15 Minuten erneut.",
        ),
        (
            "ru-RU",
            ("Имя пользователя", "Пароль", "Войти"),
            "Слишком много неудачных попыток входа. Повторите попытку через 15 минут.",
        ),
    ],
)
def test_repeated_failures_lock_the_sign_in_with_a_localized_alert(
    browser: Any,
    aiplane_server: Any,
    alice: Any,
    settings: Any,
    screenshot: Any,
    locale: str,
    labels: tuple[str, str, str],
    message: str,
) -> None:
    settings.AXES_FAILURE_LIMIT = 3
    username, password, submit = labels
    context = browser.new_context(base_url=aiplane_server.url, locale=locale)
    page = context.new_page()
    try:
        page.goto("/login/")
        for attempt in range(3):
            page.get_by_label(username).fill("alice")
            page.get_by_label(password).fill(f"guess {attempt}")
            with page.expect_navigation() as navigation:
                page.get_by_role("button", name=submit).click()
        response = navigation.value
        assert response is not None and response.status == 429
        assert 890 <= int(response.headers["retry-after"]) <= 900
        alert = page.get_by_role("alert")
        expect(alert).to_have_text(message)
        expect(alert).to_be_focused()
        screenshot(page, f"login-locked-{locale[:2]}")

        # The right password does not help while the lockout lasts.
        page.get_by_label(password).fill("correct horse battery staple")
        page.get_by_role("button", name=submit).click()
        expect(page.get_by_role("alert")).to_have_text(message)
        assert page.url.endswith("/login/")
    finally:
        context.close()
