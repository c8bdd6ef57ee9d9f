"""Renaming groups, backends and pools in their editors: references follow, and the Groups page
says that model access is set on pools."""

from __future__ import annotations

from typing import Any

import pytest
from playwright.sync_api import expect

from gateway.admin import services
from gateway.models import Backend, Pool
from tests.support.factories import make_group

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

DEAD_URL = "http://127.0.0.1:9/v1"


@pytest.mark.parametrize(
    ("language", "edit", "save", "intro"),
    [
        ("en", "Edit", "Save", "which models they may use is set on each pool"),
        ("de", "Bearbeiten", "Speichern", "welche Modelle sie nutzen dürfen, wird an jedem Pool"),
    ],
)
def test_a_renamed_group_is_followed_by_the_pools_that_allow_it(
    page: Any, carol: Any, sign_in: Any, screenshot: Any,
    language: str, edit: str, save: str, intro: str,
) -> None:  # fmt: skip
    from accounts.models import UserProfile

    UserProfile.objects.update_or_create(user=carol, defaults={"language": language})
    make_group("research")
    services.pool_save(
        data={"name": "team", "allowed_groups": ["research"]}, known_groups={"research"}
    )
    sign_in(page, "carol")
    page.goto("/admin/groups/")
    expect(page.locator(".intro")).to_contain_text(intro)
    page.locator("tr[data-group='research']").get_by_role("button", name=edit).click()
    dialog = page.locator("#group-dialog")
    dialog.locator("#group-name").fill("science")
    screenshot(page, f"admin-groups-rename-{language}", widths=((1280, 800), (390, 844)))
    dialog.get_by_role("button", name=save, exact=True).click()
    expect(dialog).to_be_hidden()
    expect(page.locator("tr[data-group='science']")).to_have_count(1)
    expect(page.locator("tr[data-group='research']")).to_have_count(0)
    assert Pool.objects.get(name="team").allowed_groups == ["science"]


def test_a_backend_and_a_pool_are_renamed_in_their_editors(
    page: Any, carol: Any, sign_in: Any, screenshot: Any
) -> None:
    services.backend_save(data={"name": "gpu-1", "base_url": DEAD_URL})
    services.pool_save(data={"name": "spare"}, known_groups=set())
    services.pool_save(
        data={"name": "chat", "backends": ["gpu-1"], "fallback": "spare"}, known_groups=set()
    )
    sign_in(page, "carol")
    page.goto("/admin/backends/")
    page.locator("#backend-list [data-backend='gpu-1']").get_by_role("button", name="Edit").click()
    page.locator("#backend-name").fill("gpu-a100")
    page.locator("#backend-save").click()
    expect(page.locator("#page-status")).to_have_text("Backend “gpu-a100” saved and applied.")
    expect(page.locator("#backend-list [data-backend='gpu-a100']")).to_contain_text("chat")
    expect(page.locator("#pools-body tr[data-pool='chat']")).to_contain_text("gpu-a100")
    assert list(Backend.objects.values_list("name", flat=True)) == ["gpu-a100"]

    page.locator("#pools-body tr[data-pool='spare'] .row-actions button").nth(0).click()
    page.locator("#pool-name").fill("reserve")
    page.locator("#pool-save").click()
    expect(page.locator("#page-status")).to_have_text("Pool “reserve” saved and applied.")
    expect(page.locator("#pools-body tr[data-pool='chat']")).to_contain_text("reserve")
    assert Pool.objects.get(name="chat").fallback.name == "reserve"  # type: ignore[union-attr]
    screenshot(page, "admin-backends-renamed", widths=((1280, 800),))
