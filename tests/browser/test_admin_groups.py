"""Administration → Access → Groups: create, edit (priority, roles, members) and delete groups."""

from __future__ import annotations

from typing import Any

import pytest
from playwright.sync_api import expect

from accounts.models import GatewayGroup
from accounts.priority import Priority
from tests.support.factories import make_group

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def row(page: Any, name: str) -> Any:
    return page.locator(f"#groups-body tr[data-group='{name}']")


def test_a_group_priority_edit_is_saved_and_shown_after_a_reload(
    page: Any, carol: Any, alice: Any, bob: Any, sign_in: Any, screenshot: Any
) -> None:
    make_group("research", description="The lab", members=[bob])
    make_group("everyone", is_default=True)
    sign_in(page, "carol")
    page.goto("/admin/groups/")
    expect(row(page, "research").get_by_label("Priority of group research")).to_have_value("")
    screenshot(page, "admin-groups")

    row(page, "research").get_by_role("button", name="Edit").click()
    dialog = page.get_by_role("dialog", name="Edit group “research”")
    expect(dialog.get_by_label("Name")).to_be_editable()  # a group can be renamed
    dialog.get_by_label("Priority").select_option("high")
    dialog.get_by_label("alice").check()
    dialog.get_by_label("Description").fill("The research lab")
    screenshot(page, "admin-groups-edit")
    dialog.get_by_role("button", name="Save").click()
    expect(page.locator("#page-status")).to_have_text("Group “research” saved.")

    group = GatewayGroup.objects.get(name="research")
    assert group.priority == Priority.HIGH
    assert group.description == "The research lab"
    assert sorted(u.username for u in group.members.all()) == ["alice", "bob"]

    page.reload()
    expect(row(page, "research").get_by_label("Priority of group research")).to_have_value("high")
    expect(row(page, "research")).to_contain_text("alice, bob")
    expect(row(page, "everyone")).to_contain_text("Everyone (default group)")

    # The list edits the priority in place too.
    row(page, "research").get_by_label("Priority of group research").select_option("low")
    expect(page.locator("#page-status")).to_have_text("Priority of group “research” saved.")
    group.refresh_from_db()
    assert group.priority == Priority.LOW
    assert group.description == "The research lab"  # a partial update keeps the rest


def test_create_then_delete_a_group(page: Any, carol: Any, sign_in: Any) -> None:
    sign_in(page, "carol")
    page.goto("/admin/groups/")
    page.get_by_role("button", name="New group").click()
    dialog = page.get_by_role("dialog", name="New group")
    dialog.get_by_role("button", name="Save").click()
    expect(dialog.get_by_role("alert")).to_have_text("Enter a name.")
    expect(dialog.get_by_role("alert")).to_be_focused()
    dialog.get_by_label("Name").fill("bad name!")
    dialog.get_by_role("button", name="Save").click()
    expect(dialog.get_by_role("alert")).to_contain_text("A group name is 1 to 64 letters")
    expect(dialog.get_by_label("Name")).to_have_attribute("aria-invalid", "true")

    dialog.get_by_label("Name").fill("batch")
    dialog.get_by_label("Priority").select_option("low")
    dialog.get_by_role("button", name="Save").click()
    expect(page.locator("#page-status")).to_have_text("Group “batch” created.")
    assert GatewayGroup.objects.get(name="batch").priority == Priority.LOW

    row(page, "batch").get_by_role("button", name="Delete").click()
    page.locator("#confirm-dialog").get_by_role("button", name="Delete").click()
    expect(page.locator("#page-status")).to_have_text("Group “batch” deleted.")
    expect(row(page, "batch")).to_have_count(0)
    assert not GatewayGroup.objects.filter(name="batch").exists()


def test_deleting_the_last_administrators_group_is_refused(
    page: Any, carol: Any, sign_in: Any
) -> None:
    sign_in(page, "carol")
    page.goto("/admin/groups/")
    row(page, "administrators").get_by_role("button", name="Delete").click()
    page.locator("#confirm-dialog").get_by_role("button", name="Delete").click()
    alert = page.locator("#page-alert")
    expect(alert).to_have_text("This change would leave no active administrator.")
    expect(alert).to_be_focused()
    assert GatewayGroup.objects.filter(name="administrators").exists()
