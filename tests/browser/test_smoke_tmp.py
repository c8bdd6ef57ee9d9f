import pytest

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_smoke(page, alice, sign_in, screenshot):
    page.goto("/login/")
    screenshot(page, "login")
    sign_in(page, "alice")
    page.wait_for_selector("#tokens-empty:not([hidden])")
    screenshot(page, "tokens-empty")
