"""Administration → Users: groups in the new-user dialog, each person's effective priority and
groups in the list, and every reason an administrator's password for someone is refused."""

from __future__ import annotations

from typing import Any

import pytest
from django.contrib.auth import get_user_model
from playwright.sync_api import expect

from tests.support.factories import make_group

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def row(page: Any, name: str) -> Any:
    return page.locator(f"#users-body tr[data-user='{name}']")


@pytest.mark.parametrize(
    ("language", "new_user", "create", "high", "ceiling"),
    [
        ("en", "New user", "Create user", "High", "tokens up to High"),
        ("de", "Neuer Benutzer", "Benutzer anlegen", "Hoch", "Tokens bis Hoch"),
    ],
)
def test_a_new_user_is_put_into_groups_and_the_list_shows_their_priority(
    page: Any, carol: Any, sign_in: Any, screenshot: Any,
    language: str, new_user: str, create: str, high: str, ceiling: str,
) -> None:  # fmt: skip
    from accounts.models import UserProfile

    UserProfile.objects.update_or_create(user=carol, defaults={"language": language})
    make_group("research", priority="high")
    make_group("batch", priority="low")
    make_group("everyone", is_default=True)
    sign_in(page, "carol")
    page.goto("/admin/users/")
    page.get_by_role("button", name=new_user).click()
    dialog = page.locator("#user-dialog")
    # Default groups include everyone: they are not offered.
    offered = dialog.locator("#user-groups label")
    expect(offered).to_have_text(["administrators", "batch", "research"])
    page.locator("#user-username").fill("dave")
    dialog.locator("#user-groups").get_by_label("research").check()
    screenshot(page, f"admin-users-create-groups-{language}", widths=((1280, 800), (390, 844)))
    dialog.get_by_role("button", name=create).click()
    expect(dialog).to_be_hidden()

    dave = get_user_model().objects.get(username="dave")
    assert sorted(g.name for g in dave.gateway_groups.all()) == ["research"]
    expect(row(page, "dave").locator(".user-groups")).to_have_text("everyone, research")
    expect(row(page, "dave").locator(".user-priority .badge")).to_have_text(high)
    expect(row(page, "dave").locator(".user-priority .row-sub")).to_have_text(ceiling)
    screenshot(page, f"admin-users-priority-{language}")


def test_an_administrators_refused_password_lists_every_reason(
    page: Any, carol: Any, sign_in: Any, settings: Any
) -> None:
    sign_in(page, "carol")
    page.goto("/admin/users/")
    page.get_by_role("button", name="New user").click()
    dialog = page.locator("#user-dialog")
    page.locator("#user-username").fill("dave")
    page.locator("#user-password").fill("1234")
    dialog.get_by_role("button", name="Create user").click()
    alert = dialog.locator("#user-alert")
    expect(alert.locator("li")).to_have_text(
        [
            "It is too short: use at least 8 characters.",
            "It is too common: it appears in lists of often-used passwords.",
            "It consists of digits only.",
        ]
    )
    assert not get_user_model().objects.filter(username="dave").exists()
