"""My account: changing my own password with the current one, and every reason a new password
is refused, in the person's language."""

from __future__ import annotations

from typing import Any

import pytest
from django.contrib.auth import get_user_model
from playwright.sync_api import expect

from tests.support.factories import PASSWORD

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

REASONS = {
    "en": (
        "The password is not accepted:",
        [
            "It is too short: use at least 8 characters.",
            "It is too common: it appears in lists of often-used passwords.",
            "It consists of digits only.",
        ],
        "The current password is wrong.",
        "Your password has been changed.",
    ),
    "de": (
        "Das Passwort wird nicht akzeptiert:",
        [
            "Es ist zu kurz: Verwenden Sie mindestens 8 Zeichen.",
            "Es ist zu verbreitet: Es steht in Listen häufig benutzter Passwörter.",
            "Es besteht nur aus Ziffern.",
        ],
        "Das aktuelle Passwort ist falsch.",
        "Ihr Passwort wurde geändert.",
    ),
}


@pytest.mark.parametrize("language", ["en", "de"])
def test_a_person_changes_their_own_password_and_sees_every_reason_one_is_refused(
    page: Any, alice: Any, sign_in: Any, screenshot: Any, settings: Any, language: str
) -> None:
    from accounts.models import UserProfile

    UserProfile.objects.update_or_create(user=alice, defaults={"language": language})
    heading, reasons, wrong, changed = REASONS[language]
    sign_in(page, "alice")
    page.locator("header a.whoami").click()  # the header's "signed in as" leads here
    page.wait_for_url("**/account/")
    alert = page.locator("#password-alert")

    page.locator("#current-password").fill("not my password")
    page.locator("#new-password").fill("a fine new passphrase")
    page.locator("#confirm-password").fill("a fine new passphrase")
    page.locator("#password-save").click()
    expect(alert).to_have_text(wrong)
    expect(page.locator("#current-password")).to_have_attribute("aria-invalid", "true")

    page.locator("#current-password").fill(PASSWORD)
    page.locator("#new-password").fill("123456")
    page.locator("#confirm-password").fill("123456")
    page.locator("#password-save").click()
    expect(alert.locator("p")).to_have_text(heading)
    expect(alert.locator("li")).to_have_text(reasons)
    expect(alert).to_be_focused()
    screenshot(page, f"account-password-refused-{language}")
    alice.refresh_from_db()
    assert alice.check_password(PASSWORD)

    page.locator("#new-password").fill("a fine new passphrase")
    page.locator("#confirm-password").fill("a fine new passphrase")
    page.locator("#password-save").click()
    expect(page.locator("#page-status")).to_have_text(changed)
    expect(alert).to_be_hidden()
    alice.refresh_from_db()
    assert alice.check_password("a fine new passphrase")
    page.goto("/tokens/")  # still signed in
    expect(page).to_have_url(f"{page.url.split('/tokens/')[0]}/tokens/")
    assert get_user_model().objects.get(username="alice").check_password("a fine new passphrase")


LOCKED = {
    "en": "Too many wrong passwords. Wait a few minutes and try again.",
    "de": "Zu viele falsche Passwörter. Warten Sie einige Minuten und versuchen Sie es erneut.",
}


@pytest.mark.parametrize("language", ["en", "de"])
def test_wrong_current_passwords_lock_the_form_out_and_say_so(
    page: Any, alice: Any, sign_in: Any, screenshot: Any, settings: Any, language: str
) -> None:
    from datetime import timedelta

    from accounts.models import UserProfile

    UserProfile.objects.update_or_create(user=alice, defaults={"language": language})
    settings.AXES_FAILURE_LIMIT = 2
    settings.AXES_COOLOFF_TIME = timedelta(seconds=900)
    sign_in(page, "alice")
    page.goto("/account/")
    alert = page.locator("#password-alert")
    wrong = REASONS[language][2]
    for attempt in range(2):
        page.locator("#current-password").fill(f"guess {attempt}")
        page.locator("#new-password").fill("a fine new passphrase")
        page.locator("#confirm-password").fill("a fine new passphrase")
        page.locator("#password-save").click()
        expect(alert).to_have_text(wrong if attempt == 0 else LOCKED[language])
    expect(alert).to_be_focused()
    screenshot(page, f"account-password-locked-{language}", widths=((1280, 800),))
    page.locator("#current-password").fill(PASSWORD)  # even the right one, while locked
    page.locator("#password-save").click()
    expect(alert).to_have_text(LOCKED[language])
    alice.refresh_from_db()
    assert alice.check_password(PASSWORD)
