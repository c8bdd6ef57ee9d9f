"""Administration → Activity, continued: partial filters, searches in the browser's history, the
detail view of a record, the first byte column and counts in each language's plural forms."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from playwright.sync_api import expect

from tests.browser.test_admin_activity import record

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

NOW = datetime.now(tz=UTC).replace(microsecond=0)


def use_language(user: Any, language: str) -> None:
    from accounts.models import UserProfile

    UserProfile.objects.update_or_create(user=user, defaults={"language": language})


def test_filters_match_part_of_a_name_and_back_and_forward_retrace_the_searches(
    page: Any, carol: Any, sign_in: Any
) -> None:
    record(1, username="Bobby", model="meta-llama/Llama-3.1-8B-Instruct", token_name="CI-runner")
    record(2, username="bob", model="Qwen/Qwen2.5-7B", token_name="ci-nightly")
    record(3, username="alice", model="sim-small", token_name="laptop")

    sign_in(page, "carol")
    page.goto("/admin/activity/")
    rows = page.locator("#activity-body tr")
    expect(rows).to_have_count(3)

    page.get_by_label("User").fill("BO")
    page.get_by_role("button", name="Apply filters").click()
    expect(rows).to_have_count(2)
    assert "user=BO" in page.url

    page.get_by_label("Model").fill("llama")
    page.get_by_role("button", name="Apply filters").click()
    expect(rows).to_have_count(1)
    expect(rows.first).to_contain_text("Bobby")

    page.get_by_label("User").fill("")
    page.get_by_label("Model").fill("")
    page.get_by_label("Token").fill("ci-")
    page.get_by_role("button", name="Apply filters").click()
    expect(rows).to_have_count(2)

    # Back: the user and model search again, in the form and in the table.
    page.go_back()
    expect(page.get_by_label("Model")).to_have_value("llama")
    expect(page.get_by_label("User")).to_have_value("BO")
    expect(page.get_by_label("Token")).to_have_value("")
    expect(rows).to_have_count(1)
    page.go_back()
    expect(page.get_by_label("Model")).to_have_value("")
    expect(rows).to_have_count(2)
    page.go_back()
    expect(page.get_by_label("User")).to_have_value("")
    expect(rows).to_have_count(3)
    page.go_forward()
    expect(page.get_by_label("User")).to_have_value("BO")
    expect(rows).to_have_count(2)


@pytest.mark.parametrize(
    ("language", "labels"),
    [
        ("en", {"first": "First byte", "error": "Error", "surface": "Surface", "close": "Close",
                "score": "12.5"}),
        ("de", {"first": "Erstes Byte", "error": "Fehler", "surface": "Schnittstelle",
                "close": "Schließen", "score": "12,5"}),
    ],
)  # fmt: skip
def test_a_row_opens_every_field_of_its_record_with_the_error_text(
    page: Any, carol: Any, sign_in: Any, screenshot: Any, language: str, labels: dict[str, str]
) -> None:
    use_language(carol, language)
    record(
        1,
        outcome="refused",
        status=404,
        backend="",
        surface="responses",
        path="/v1/responses",
        model="no-such-model",
        error="The model 'no-such-model' does not exist or you do not have access to it.",
        duration_ms=1.5,
    )
    record(
        2,
        surface="messages",
        path="/v1/messages",
        first_byte_ms=231.0,
        input_tokens=1200,
        output_tokens=340,
        cached_tokens=800,
        token_id=41,
        hint="x-llamaswap-priority=batch",
        score=12.5,
    )

    sign_in(page, "carol")
    page.goto("/admin/activity/")
    rows = page.locator("#activity-body tr")
    expect(rows).to_have_count(2)
    header = page.locator("#activity-table thead")
    expect(header).to_contain_text(labels["first"])
    expect(rows.nth(1)).to_contain_text("231 ms")
    # The refused request says why, in the list too.
    expect(rows.first).to_contain_text("does not exist")

    rows.first.locator("button.link-button").click()
    dialog = page.locator("#record-dialog")
    expect(dialog).to_be_visible()
    fields = dialog.locator("#record-fields")
    expect(fields).to_contain_text("The model 'no-such-model' does not exist")
    expect(fields).to_contain_text("/v1/responses")
    expect(fields).to_contain_text("Responses")
    expect(fields).to_contain_text("404")
    expect(fields).to_contain_text(labels["surface"])
    expect(fields).to_contain_text(labels["error"])
    screenshot(page, f"admin-activity-record-{language}")
    dialog.get_by_role("button", name=labels["close"]).click()
    expect(dialog).to_be_hidden()

    # A click anywhere on a row opens it too.
    rows.nth(1).locator("td").nth(3).click()
    expect(dialog).to_be_visible()
    expect(fields).to_contain_text("#41")
    expect(fields).to_contain_text("x-llamaswap-priority=batch")
    expect(fields).to_contain_text(labels["score"])
    expect(fields).to_contain_text("231 ms")
    expect(fields).to_contain_text("1200")
    expect(fields).to_contain_text("800")
    page.keyboard.press("Escape")
    expect(dialog).to_be_hidden()


@pytest.mark.parametrize(
    ("language", "counts"),
    [
        ("en", {1: "1 record", 2: "2 records", 5: "5 records"}),
        ("ru", {1: "1 запись", 2: "2 записи", 5: "5 записей", 21: "21 запись", 22: "22 записи"}),
        ("fr", {1: "1 enregistrement", 2: "2 enregistrements"}),
    ],
)
def test_the_record_count_takes_the_plural_form_of_each_language(
    page: Any, carol: Any, sign_in: Any, language: str, counts: dict[int, str]
) -> None:
    use_language(carol, language)
    for minute in range(max(counts)):
        record(minute + 1, username=f"user{minute:02d}")

    sign_in(page, "carol")
    for count, words in counts.items():
        # The newest `count` records are younger than count + 0.5 minutes.
        since = (NOW - timedelta(minutes=count, seconds=30)).strftime("%Y-%m-%dT%H:%M:%SZ")
        page.goto(f"/admin/activity/?since={since}")
        expect(page.locator("#activity-body tr")).to_have_count(count)
        expect(page.locator("#page-info")).to_have_text(re.compile(rf"· {words}$"))
