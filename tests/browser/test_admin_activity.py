"""Administration → Activity: the activity records, filtered (by user, token, model, class, outcome
and time) and a page at a time."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from playwright.sync_api import expect

from gateway.models import ActivityRecord

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

NOW = datetime.now(tz=UTC).replace(microsecond=0)


def record(minutes_ago: int, **fields: Any) -> ActivityRecord:
    values = {
        "at": NOW - timedelta(minutes=minutes_ago),
        "username": "alice",
        "token_name": "agent",
        "model": "sim-small",
        "path": "/v1/chat/completions",
        "backend": "sim-1",
        "priority_class": "medium",
        "queue_ms": 0.4,
        "outcome": "immediate",
        "status": 200,
        "duration_ms": 812.5,
        **fields,
    }
    return ActivityRecord.objects.create(**values)


def test_filter_and_page_through_the_activity(
    page: Any, carol: Any, sign_in: Any, screenshot: Any
) -> None:
    for minute in range(55):
        record(minute + 10)
    record(
        1,
        username="bob",
        token_name="",
        priority_class="high",
        outcome="waited",
        queue_ms=20_412.0,
        hint="X-AIplane-Priority: high",
    )
    record(
        2,
        username="bob",
        priority_class="low",
        outcome="expired",
        status=503,
        backend="",
        queue_ms=120_000.0,
    )
    record(3, username="bob", priority_class="low", outcome="cancelled", status=499, backend="")

    sign_in(page, "carol")
    page.goto("/admin/activity/")
    rows = page.locator("#activity-body tr")
    expect(rows).to_have_count(50)
    expect(page.locator("#page-info")).to_have_text("Page 1 of 2 · 58 records")
    expect(rows.first).to_contain_text("bob")
    expect(rows.first).to_contain_text("Browser session")
    expect(rows.first).to_contain_text("Waited")
    expect(rows.first).to_contain_text("20.4 s")
    expect(page.get_by_role("button", name="Previous")).to_be_disabled()
    page.get_by_role("button", name="Next").click()
    expect(rows).to_have_count(8)
    expect(page.locator("#page-info")).to_have_text("Page 2 of 2 · 58 records")
    assert "page=2" in page.url

    page.get_by_label("User").fill("bob")
    page.get_by_label("Class").select_option("low")
    page.get_by_role("button", name="Apply filters").click()
    expect(rows).to_have_count(2)
    expect(page.locator("#page-info")).to_have_text("Page 1 of 1 · 2 records")
    expect(rows.nth(0)).to_contain_text("Expired")
    expect(rows.nth(1)).to_contain_text("Cancelled")
    screenshot(page, "admin-activity")

    page.get_by_label("Outcome").select_option("expired")
    page.get_by_role("button", name="Apply filters").click()
    expect(rows).to_have_count(1)
    # The filters live in the address: a reload keeps them.
    page.reload()
    expect(page.get_by_label("Outcome")).to_have_value("expired")
    expect(rows).to_have_count(1)

    page.get_by_role("button", name="Reset").click()
    expect(page.locator("#page-info")).to_have_text("Page 1 of 2 · 58 records")

    # A time window: only the newest three records are younger than five minutes.
    page.get_by_label("From").fill(
        (NOW - timedelta(minutes=5)).astimezone().strftime("%Y-%m-%dT%H:%M:%S")
    )
    page.get_by_role("button", name="Apply filters").click()
    expect(rows).to_have_count(3)


def test_no_records_yet(page: Any, carol: Any, sign_in: Any) -> None:
    sign_in(page, "carol")
    page.goto("/admin/activity/")
    expect(page.locator("#activity-empty")).to_have_text("No requests recorded yet.")
    expect(page.locator("#activity-pager")).to_be_hidden()


def test_the_activity_page_filters_by_token_name(
    page: Any, carol: Any, sign_in: Any, screenshot: Any
) -> None:
    record(1, username="bob", token_name="ci-runner", token_id=41, priority_class="low")
    record(2, username="bob", token_name="ci-runner", token_id=41, priority_class="low")
    record(3, username="bob", token_name="", token_id=None)  # the playground: no token
    record(4, token_name="agent", token_id=7)
    record(5, token_name="agent", token_id=7)
    record(6, token_name="agent", token_id=7)

    sign_in(page, "carol")
    page.goto("/admin/activity/")
    rows = page.locator("#activity-body tr")
    expect(rows).to_have_count(6)

    page.get_by_label("Token").fill("ci-runner")
    page.get_by_role("button", name="Apply filters").click()
    expect(rows).to_have_count(2)
    expect(page.locator("#page-info")).to_have_text("Page 1 of 1 · 2 records")
    for row in rows.all():
        expect(row).to_contain_text("Token ci-runner")
    assert "token=ci-runner" in page.url
    screenshot(page, "admin-activity-token")

    # Kept in the address: a reload, or a link, filters the same way.
    page.reload()
    expect(page.get_by_label("Token")).to_have_value("ci-runner")
    expect(rows).to_have_count(2)
    page.goto("/admin/activity/?token=agent&user=alice")
    expect(page.get_by_label("Token")).to_have_value("agent")
    expect(rows).to_have_count(3)
    # A token id works too.
    page.get_by_label("Token").fill("41")
    page.get_by_label("User").fill("")
    page.get_by_role("button", name="Apply filters").click()
    expect(rows).to_have_count(2)
    expect(rows.first).to_contain_text("Token ci-runner")

    # A name nobody has: nothing matches.
    page.get_by_label("Token").fill("no-such-token")
    page.get_by_role("button", name="Apply filters").click()
    expect(page.locator("#activity-empty")).to_have_text("No records match these filters.")

    page.get_by_role("button", name="Reset").click()
    expect(page.get_by_label("Token")).to_have_value("")
    expect(rows).to_have_count(6)


@pytest.mark.parametrize(
    ("language", "used", "cached", "surface"),
    [
        ("en", "1200 in → 340 out", "800 cached", "Messages (Anthropic)"),
        ("de", "1200 ein → 340 aus", "800 aus dem Cache", "Messages (Anthropic)"),
    ],
)
def test_each_record_shows_its_surface_and_the_tokens_it_used(
    page: Any, carol: Any, sign_in: Any, language: str, used: str, cached: str, surface: str
) -> None:
    from accounts.models import UserProfile

    UserProfile.objects.update_or_create(user=carol, defaults={"language": language})
    record(1, surface="messages", path="/v1/messages", input_tokens=1200, output_tokens=340,
           cached_tokens=800)  # fmt: skip
    record(2, outcome="refused", status=404)

    sign_in(page, "carol")
    page.goto("/admin/activity/")
    rows = page.locator("#activity-body tr")
    expect(rows).to_have_count(2)
    expect(rows.first).to_contain_text(used)
    expect(rows.first).to_contain_text(cached)
    expect(rows.first).to_contain_text(surface)


def test_a_record_refused_before_its_caller_was_known_shows_no_class(
    page: Any, carol: Any, sign_in: Any
) -> None:
    record(1, username="", token_name="", priority_class=None, outcome="refused", status=401,
           backend="")  # fmt: skip
    record(2, priority_class="high")

    sign_in(page, "carol")
    page.goto("/admin/activity/")
    rows = page.locator("#activity-body tr")
    expect(rows).to_have_count(2)
    none, high = (rows.nth(i).locator('td[data-label="Class"]') for i in (0, 1))
    expect(none).to_have_text("—")
    expect(none.locator(".badge")).to_have_count(0)  # no class: nothing to colour
    expect(high).to_have_text("High")
    rows.first.get_by_role("button").first.click()
    shown = page.locator("#record-fields dt", has_text="Class").locator("xpath=following::dd[1]")
    expect(shown).to_have_text("—")


def test_tokens_the_gateway_counted_itself_are_said_to_be_its_estimate(
    page: Any, carol: Any, sign_in: Any
) -> None:
    record(1, input_tokens=40, output_tokens=5, usage_estimated=True)
    record(2, input_tokens=2, output_tokens=5)

    sign_in(page, "carol")
    page.goto("/admin/activity/")
    rows = page.locator("#activity-body tr")
    expect(rows).to_have_count(2)
    counted, reported = (rows.nth(i).locator('td[data-label="Tokens"]') for i in (0, 1))
    expect(counted).to_have_text("40 in → 5 outestimated by the gateway")
    expect(reported).to_have_text("2 in → 5 out")
