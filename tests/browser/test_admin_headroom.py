"""Reserved headroom in the browser: the slots a backend keeps from low and from medium, set in
the backend editor's Capacity part, checked there (low keeps at least as many as medium), saved,
shown on the backend's card and loaded again; and its hold time on the Settings page."""

from __future__ import annotations

from typing import Any

import pytest
from playwright.sync_api import expect

from aiplane.catalog import setting
from gateway.admin import services
from gateway.models import Backend

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

# Nothing listens there: detection finds nothing, and no test waits on it.
DEAD_URL = "http://127.0.0.1:9/v1"


def card(page: Any, name: str) -> Any:
    return page.locator(f"#backend-list [data-backend='{name}']")


def card_value(page: Any, name: str, label: str) -> Any:
    """The value under `label` in the backend card's list of facts."""
    return card(page, name).locator(f"dl.meta dt:text-is('{label}') + dd")


def save(page: Any, form: Any, label: str = "Save backend") -> dict[str, Any]:
    """Save the editor and return the body of the PUT it sent."""
    with page.expect_request(
        lambda r: r.url.endswith("/api/v0/admin/backends") and r.method == "PUT"
    ) as sent:
        form.get_by_role("button", name=label).click()
    body: dict[str, Any] = sent.value.post_data_json
    return body


def test_reserved_headroom_is_set_in_the_editor_saved_shown_on_the_card_and_cleared_again(
    page: Any, carol: Any, sign_in: Any, screenshot: Any
) -> None:
    services.backend_save(data={"name": "gpu-1", "base_url": DEAD_URL, "max_inflight": 4})
    services.pool_save(data={"name": "chat", "backends": ["gpu-1"]}, known_groups=set())
    sign_in(page, "carol")
    page.goto("/admin/backends/")
    expect(card(page, "gpu-1").locator("dl.meta")).not_to_contain_text("Kept for higher classes")
    card(page, "gpu-1").get_by_role("button", name="Edit").click()
    form = page.locator("#backend-editor")
    part = form.get_by_role("group", name="Reserved headroom")
    low = part.get_by_label("Slots kept from low")
    medium = part.get_by_label("Slots kept from medium")
    expect(low).to_have_value("0")
    expect(medium).to_have_value("0")
    expect(low).to_have_accessible_description(
        "While a request of a higher class came for this backend lately (Settings: “Reserved"
        " headroom holds for”), its last slots are kept from the lower classes; otherwise every"
        " class may use them all."
    )
    low.fill("2")
    medium.fill("1")
    screenshot(page, "admin-backends-editor-headroom")

    body = save(page, form)
    assert body["headroom"] == {"low": 2, "medium": 1}
    assert body["max_inflight"] == 4  # the rest of the editor kept its values
    expect(form).to_be_hidden()
    expect(page.locator("#page-status")).to_have_text("Backend “gpu-1” saved and applied.")
    assert Backend.objects.get(name="gpu-1").headroom == {"low": 2, "medium": 1}
    kept = card_value(page, "gpu-1", "Kept for higher classes")
    expect(kept).to_have_text("2 slots from low, 1 slot from medium")
    screenshot(page, "admin-backends-headroom")

    page.reload()
    expect(kept).to_have_text("2 slots from low, 1 slot from medium")
    card(page, "gpu-1").get_by_role("button", name="Edit").click()
    expect(low).to_have_value("2")
    expect(medium).to_have_value("1")

    # Only low: medium's zero is left out of what is sent.
    medium.fill("0")
    assert save(page, form)["headroom"] == {"low": 2}
    expect(kept).to_have_text("2 slots from low")
    assert Backend.objects.get(name="gpu-1").headroom == {"low": 2}

    card(page, "gpu-1").get_by_role("button", name="Edit").click()
    low.fill("")  # empty is none kept, as 0 is
    assert save(page, form)["headroom"] == {}
    expect(card(page, "gpu-1").locator("dl.meta")).not_to_contain_text("Kept for higher classes")
    assert Backend.objects.get(name="gpu-1").headroom == {}


def test_fewer_slots_kept_from_low_than_from_medium_is_refused_in_the_editor_in_german(
    page: Any, german_carol: Any, sign_in: Any, screenshot: Any
) -> None:
    services.backend_save(data={"name": "gpu-1", "base_url": DEAD_URL, "max_inflight": 4})
    sent: list[Any] = []
    page.on("request", lambda r: sent.append(r) if r.method == "PUT" else None)
    sign_in(page, "carol")
    page.goto("/admin/backends/")
    card(page, "gpu-1").get_by_role("button", name="Bearbeiten").click()
    form = page.locator("#backend-editor")
    part = form.get_by_role("group", name="Reservierte Reserve")
    low = part.get_by_label("Plätze freigehalten vor Niedrig")
    medium = part.get_by_label("Plätze freigehalten vor Mittel")
    low.fill("1")
    medium.fill("2")
    form.get_by_role("button", name="Backend speichern").click()

    alert = page.locator("#backend-alert")
    expect(alert).to_have_text(
        "Vor Niedrig müssen mindestens so viele Plätze freigehalten werden (1) wie vor Mittel (2):"
        " Eine niedrigere Klasse weicht zuerst."
    )
    expect(alert).to_be_focused()
    expect(low).to_have_attribute("aria-invalid", "true")
    expect(medium).not_to_have_attribute("aria-invalid", "true")
    screenshot(page, "admin-backends-headroom-refused-de", widths=((1280, 800),))
    assert sent == []  # refused here: nothing was sent
    assert Backend.objects.get(name="gpu-1").headroom == {}

    # What is no whole number is the server's to refuse; its error lands on that count.
    low.fill("2")
    medium.fill("1.5")
    form.get_by_role("button", name="Backend speichern").click()
    expect(alert).to_have_text("Reservierte Reserve: Ein Wert ist ungültig.")
    expect(medium).to_have_attribute("aria-invalid", "true")
    expect(low).not_to_have_attribute("aria-invalid", "true")
    assert len(sent) == 1
    assert sent[0].post_data_json["headroom"] == {"low": 2, "medium": "1.5"}
    assert Backend.objects.get(name="gpu-1").headroom == {}

    medium.fill("1")
    form.get_by_role("button", name="Backend speichern").click()
    expect(form).to_be_hidden()
    assert Backend.objects.get(name="gpu-1").headroom == {"low": 2, "medium": 1}
    expect(card_value(page, "gpu-1", "Für höhere Klassen freigehalten")).to_have_text(
        "2 Plätze vor Niedrig, 1 Platz vor Mittel"
    )


def test_the_settings_page_offers_the_headroom_hold_time_and_the_edf_scheduler(
    page: Any, carol: Any, sign_in: Any
) -> None:
    sign_in(page, "carol")
    page.goto("/admin/settings/")
    hold = page.get_by_label("Reserved headroom holds for (seconds)")
    expect(hold).to_have_value("30")
    expect(hold).to_have_accessible_description(
        "A backend’s reserved headroom keeps its last slots from a class while a request of a"  # noqa: RUF001 - the catalog's apostrophe
        " higher class came for it within this time; with none lately, every class may use them"
        " all. Default: 30."
    )
    scheduler = page.get_by_label("Scheduler")
    expect(scheduler.locator("option[value='edf']")).to_have_text("Earliest deadline first")
    hold.fill("10")
    scheduler.select_option(label="Earliest deadline first")
    page.get_by_role("button", name="Save settings").click()
    expect(page.locator("#page-status")).to_have_text("Settings saved.")
    assert setting("gateway.headroom_secs") == 10
    assert setting("gateway.scheduler") == "edf"

    page.reload()
    expect(page.get_by_label("Reserved headroom holds for (seconds)")).to_have_value("10")
    expect(page.get_by_label("Scheduler")).to_have_value("edf")
