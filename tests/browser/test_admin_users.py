"""Administration → Users: create, edit (active, email, password) and delete local accounts."""

from __future__ import annotations

from typing import Any

import pytest
from django.contrib.auth import get_user_model
from playwright.sync_api import expect

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

User = get_user_model()


def row(page: Any, name: str) -> Any:
    return page.locator(f"#users-body tr[data-user='{name}']")


def test_create_edit_and_delete_a_user(
    page: Any, carol: Any, alice: Any, sign_in: Any, screenshot: Any
) -> None:
    sign_in(page, "carol")
    page.goto("/admin/users/")
    expect(row(page, "carol")).to_contain_text("Administrator")
    expect(row(page, "carol")).to_contain_text("This is you")
    screenshot(page, "admin-users")

    page.get_by_role("button", name="New user").click()
    dialog = page.get_by_role("dialog", name="New user")
    dialog.get_by_label("Username").fill("dave")
    dialog.get_by_label("Email").fill("dave@example.com")
    dialog.get_by_label("Password", exact=True).fill("a long enough passphrase 42")
    screenshot(page, "admin-users-create")
    dialog.get_by_role("button", name="Create user").click()
    expect(page.locator("#page-status")).to_have_text("User “dave” created.")
    dave = User.objects.get(username="dave")
    assert dave.email == "dave@example.com"
    assert dave.check_password("a long enough passphrase 42")

    row(page, "dave").get_by_role("button", name="Edit").click()
    dialog = page.get_by_role("dialog", name="Edit user “dave”")
    expect(dialog.get_by_label("Username")).to_be_hidden()
    expect(dialog.get_by_label("Email")).to_have_value("dave@example.com")
    dialog.get_by_label("Active").uncheck()
    dialog.get_by_label("Email").fill("not an address")
    dialog.get_by_role("button", name="Save").click()
    expect(dialog.get_by_role("alert")).to_have_text("Email: A value is not valid.")
    expect(dialog.get_by_label("Email")).to_have_attribute("aria-invalid", "true")
    dialog.get_by_label("Email").fill("dave@example.org")
    dialog.get_by_role("button", name="Save").click()
    expect(page.locator("#page-status")).to_have_text("User “dave” saved.")
    expect(row(page, "dave")).to_contain_text("Inactive")
    dave.refresh_from_db()
    assert (dave.is_active, dave.email) == (False, "dave@example.org")
    assert dave.check_password("a long enough passphrase 42")  # empty keeps the password

    row(page, "dave").get_by_role("button", name="Delete").click()
    page.locator("#confirm-dialog").get_by_role("button", name="Delete").click()
    expect(page.locator("#page-status")).to_have_text("User “dave” deleted.")
    expect(row(page, "dave")).to_have_count(0)
    assert not User.objects.filter(username="dave").exists()


def test_a_taken_username_is_refused_in_the_dialog(page: Any, carol: Any, sign_in: Any) -> None:
    sign_in(page, "carol")
    page.goto("/admin/users/")
    page.get_by_role("button", name="New user").click()
    dialog = page.get_by_role("dialog", name="New user")
    dialog.get_by_label("Username").fill("carol")
    dialog.get_by_role("button", name="Create user").click()
    expect(dialog.get_by_role("alert")).to_have_text("Username: This username is already taken.")
    expect(dialog.get_by_role("alert")).to_be_focused()
