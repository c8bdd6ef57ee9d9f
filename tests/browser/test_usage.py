"""Administration → Usage (charts by group over a range, CSV export) and the Tokens page's panel of
one's own usage, in English, German and French, at desktop and phone widths."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from playwright.sync_api import expect

from accounts.models import UserProfile
from gateway.models import ActivityRecord
from tests.support.factories import make_group

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def record(user: Any, minutes_ago: int, **fields: Any) -> None:
    values = {
        "at": datetime.now(tz=UTC) - timedelta(minutes=minutes_ago),
        "user_id": user.pk,
        "username": user.username,
        "token_id": 7,
        "token_name": "laptop",
        "model": "sim-small",
        "priority_class": "medium",
        "queue_ms": 12.0,
        "outcome": "immediate",
        "status": 200,
        "input_tokens": 100,
        "output_tokens": 40,
        **fields,
    }
    ActivityRecord.objects.create(**values)


@pytest.fixture
def traffic(alice: Any, bob: Any) -> None:
    make_group("research", members=[alice])
    make_group("ops", members=[alice, bob])
    for hour in range(6):
        record(alice, 60 * hour + 5, queue_ms=10.0 + hour)
        record(bob, 60 * hour + 10, token_id=9, token_name="ci", priority_class="high",
               queue_ms=250.0 * (hour + 1), outcome="waited", model="sim-large")  # fmt: skip
    record(bob, 30, token_id=9, token_name="ci", outcome="rejected", status=429,
           input_tokens=None, output_tokens=None)  # fmt: skip
    record(alice, 40, outcome="refused", status=403, input_tokens=None, output_tokens=None)


def fits_the_width(page: Any) -> bool:
    return bool(page.evaluate("document.documentElement.scrollWidth <= window.innerWidth"))


def test_the_usage_page_charts_usage_by_group_and_exports_it(
    page: Any, carol: Any, traffic: None, sign_in: Any, screenshot: Any
) -> None:
    sign_in(page, "carol")
    page.get_by_role("link", name="Usage").click()
    page.wait_for_url("**/admin/usage/**")
    expect(page.get_by_role("heading", name="Usage", exact=True)).to_be_visible()
    totals = page.get_by_role("list", name="Totals over the range")
    expect(totals).to_contain_text("Requests: 14")
    expect(totals).to_contain_text("Input tokens: 1,200")
    expect(totals).to_contain_text("Refusals: 2")
    for title in ("Requests", "Input tokens", "Output tokens", "Refusals by reason"):
        figure = page.get_by_role("figure", name=title, exact=True)
        expect(figure.locator("canvas").first).to_be_visible()
    queue = page.get_by_role("figure", name="Queue wait by class (p50 solid, p95 dashed)")
    expect(queue.locator(".u-legend")).to_contain_text("High p95")
    # A canvas says nothing to a screen reader: the chart's gist is its label.
    expect(queue.get_by_role("img")).to_have_attribute(
        "aria-label",
        "Queue wait by class (p50 solid, p95 dashed): High p50 up to 1.5 s, High p95 up to 1.5 s,"
        " Medium p50 up to 15 ms, Medium p95 up to 15 ms",
    )
    rows = page.locator("#usage-body tr")
    expect(rows).to_have_count(2)
    expect(rows.first).to_contain_text("alice")
    screenshot(page, "usage-by-user")

    page.get_by_label("Group by").select_option("group")
    page.get_by_label("Range", exact=True).select_option("week")
    page.get_by_role("button", name="Show").click()
    expect(rows).to_have_count(2)
    expect(rows.nth(0)).to_contain_text("ops")
    expect(rows.nth(0)).to_contain_text("14")
    expect(rows.nth(1)).to_contain_text("research")
    assert "group_by=group" in page.url and "range=week" in page.url
    page.reload()
    expect(page.get_by_label("Group by")).to_have_value("group")
    expect(page.get_by_label("Interval")).to_have_value("hour")

    page.get_by_label("Group by").select_option("class")
    page.get_by_role("button", name="Show").click()
    expect(rows.nth(0)).to_contain_text("High")
    expect(rows.nth(0)).to_contain_text("High: 750 ms / 1.5 s")
    href = page.get_by_role("link", name="Export CSV").get_attribute("href")
    assert href.startswith("/api/v0/admin/usage?") and "group_by=class" in href
    exported = page.request.get(href)
    assert exported.headers["content-type"] == "text/csv; charset=utf-8"
    lines = exported.text().splitlines()
    assert lines[0].startswith("start,priority_class,requests,input_tokens,output_tokens")
    assert len(lines) > 1
    screenshot(page, "usage-by-class")
    page.set_viewport_size({"width": 390, "height": 844})
    expect(page.locator("#chart-requests canvas").first).to_be_visible()
    assert fits_the_width(page)


def test_the_usage_page_speaks_german(
    page: Any, german_carol: Any, traffic: None, sign_in: Any, screenshot: Any
) -> None:
    sign_in(page, "carol")
    page.goto("/admin/usage/?group_by=model&range=day&bucket=hour")
    expect(page.get_by_role("heading", name="Nutzung", exact=True)).to_be_visible()
    expect(page.get_by_role("list", name="Summen über den Zeitraum")).to_contain_text(
        "Anfragen: 14"
    )
    refusals = page.get_by_role("figure", name="Ablehnungen nach Grund")
    expect(refusals.locator(".u-legend")).to_contain_text("Warteschlange voll")
    expect(page.locator("#usage-body tr").first).to_contain_text("sim-large")
    expect(page.get_by_role("link", name="Als CSV exportieren")).to_be_visible()
    page.set_viewport_size({"width": 390, "height": 844})
    assert fits_the_width(page)
    screenshot(page, "usage-de")


def test_a_person_sees_only_their_own_usage_on_the_tokens_page(
    page: Any, alice: Any, traffic: None, sign_in: Any, screenshot: Any
) -> None:
    sign_in(page, "alice")
    panel = page.get_by_role("region", name="My usage")
    expect(panel.get_by_role("list", name="Totals over the range")).to_contain_text("Requests: 7")
    expect(panel).to_contain_text("Refusals: 1")
    expect(panel.locator("canvas").first).to_be_visible()
    expect(panel.locator("#my-usage-body tr")).to_have_count(1)
    expect(panel.locator("#my-usage-body tr")).to_contain_text("laptop (#7)")
    expect(panel).not_to_contain_text("ci (#9)")  # bob's token
    href = panel.get_by_role("link", name="Export CSV").get_attribute("href")
    assert href.startswith("/api/v0/usage?")
    lines = page.request.get(href).text().splitlines()
    assert lines[0].startswith("start,token_id,token_name,requests")
    assert all(",9,ci," not in line for line in lines)
    panel.get_by_label("Range", exact=True).select_option("hour")
    expect(panel.get_by_role("list", name="Totals over the range")).to_contain_text("Requests: 2")
    expect(page.locator("#my-usage-allowance")).to_contain_text("No limits")  # none of hers
    screenshot(page, "tokens-my-usage")
    page.set_viewport_size({"width": 390, "height": 844})
    assert fits_the_width(page)


def test_the_personal_usage_panel_speaks_french(
    page: Any, alice: Any, traffic: None, sign_in: Any, screenshot: Any
) -> None:
    UserProfile.objects.update_or_create(user=alice, defaults={"language": "fr"})
    sign_in(page, "alice")
    panel = page.get_by_role("region", name="Mon utilisation")
    expect(panel.get_by_role("list", name="Totaux sur la période")).to_contain_text("Requêtes")
    expect(panel.locator(".u-legend")).to_contain_text("Jetons de sortie")
    expect(panel.get_by_label("Période", exact=True)).to_have_value("day")
    page.set_viewport_size({"width": 390, "height": 844})
    assert fits_the_width(page)
    screenshot(page, "tokens-my-usage-fr")
