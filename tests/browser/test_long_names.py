"""Long names and URLs at 1280 and 390 px: no word is broken in the middle while it could have a
line of its own; where a table cannot fit one it ends in an ellipsis, whole in its title."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import expect

from gateway.admin import services
from gateway.models import ActivityRecord
from tests.support.factories import make_group, make_token, make_user

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

LONG_TOKEN = "nightly-evaluation-of-the-instruct-models-on-the-shared-cluster"
LONG_MODEL = "meta-llama/Llama-3.1-70B-Instruct-GPTQ-INT4-with-a-very-long-suffix"
LONG_USER = "maximiliane.schwarzenberger-oppenheimer"
LONG_GROUP = "research-and-development-department-of-applied-science"
LONG_URL = "http://inference-node-with-a-long-hostname.cluster.internal.example:8000/v1"

# The check itself (its rule is in its first lines): run in the page, it answers each word broken
# in the middle with a "|" where it broke.
MID_WORD_BREAKS = (Path(__file__).parent / "mid_word_breaks.js").read_text(encoding="utf-8")


def mid_word_breaks(page: Any, selector: str = "main") -> list[str]:
    root = page.locator(selector).element_handle()
    wide = page.viewport_size["width"] >= 1000
    return list(page.evaluate(MID_WORD_BREAKS, [root, wide]))


@pytest.fixture
def long_names(carol: Any) -> dict[str, Any]:
    person = make_user(LONG_USER, email=f"{LONG_USER}@example.com")
    group = make_group(LONG_GROUP, priority="low", members=[person, carol])
    token = make_token(person, name=LONG_TOKEN)
    make_token(carol, name=LONG_TOKEN)
    services.backend_save(
        data={"name": "gpu-node-with-a-long-name-07", "base_url": LONG_URL, "max_inflight": 2,
              "models": [LONG_MODEL]}
    )  # fmt: skip
    now = datetime.now(tz=UTC)
    for minute in range(3):
        ActivityRecord.objects.create(
            at=now - timedelta(minutes=minute + 1), username=LONG_USER, token_id=token.pk,
            token_name=LONG_TOKEN, model=LONG_MODEL, path="/v1/chat/completions",
            backend="gpu-node-with-a-long-name-07", priority_class="low", outcome="refused",
            status=404, error=f"The model '{LONG_MODEL}' does not exist or you have no access.",
        )  # fmt: skip
    return {"person": person, "group": group, "token": token}


@pytest.mark.parametrize(
    "path",
    ["/admin/activity/", "/admin/users/", "/admin/tokens/", "/admin/groups/", "/admin/backends/",
     "/tokens/"],
)  # fmt: skip
@pytest.mark.parametrize("width", [1280, 390])
def test_long_names_are_not_broken_in_the_middle_of_a_word(
    page: Any, long_names: dict[str, Any], sign_in: Any, screenshot: Any, path: str, width: int
) -> None:
    sign_in(page, "carol")
    page.set_viewport_size({"width": width, "height": 900})
    page.goto(path)
    shown = {"/tokens/": LONG_TOKEN, "/admin/backends/": LONG_URL, "/admin/groups/": LONG_GROUP}
    expect(page.locator("main")).to_contain_text(shown.get(path, LONG_USER))
    page.wait_for_load_state("networkidle")
    name = path.strip("/").replace("/", "-")
    screenshot(page, f"long-{name}", widths=((width, 900),))
    assert mid_word_breaks(page) == []
    assert mid_word_breaks(page, ".site-header") == []


def test_a_name_cut_short_in_the_activity_table_is_whole_in_its_title(
    page: Any, long_names: dict[str, Any], sign_in: Any
) -> None:
    sign_in(page, "carol")
    page.goto("/admin/activity/")
    model = page.locator("#activity-body tr").first.locator("code", has_text="meta-llama")
    expect(model).to_have_attribute("title", LONG_MODEL)
    assert model.evaluate("el => el.scrollWidth > el.clientWidth")  # cut with an ellipsis
    assert model.evaluate("el => getComputedStyle(el).textOverflow") == "ellipsis"


@pytest.mark.parametrize("width", [1280, 390])
def test_the_activity_table_fits_its_page_with_long_names(
    page: Any, long_names: dict[str, Any], sign_in: Any, width: int
) -> None:
    sign_in(page, "carol")
    page.set_viewport_size({"width": width, "height": 900})
    page.goto("/admin/activity/")
    expect(page.locator("#activity-body tr")).to_have_count(3)
    wrap = page.locator("#activity-wrap")
    assert wrap.evaluate("el => el.scrollWidth <= el.clientWidth")
    # Nothing sticks out of its cell either.
    sticking_out = page.locator("#activity-body td").evaluate_all(
        "cells => cells.flatMap(td => [...td.querySelectorAll('*')].filter(el =>"
        " el.getBoundingClientRect().right > td.getBoundingClientRect().right + 1)"
        ".map(el => el.textContent.slice(0, 30)))"
    )
    assert sticking_out == []
