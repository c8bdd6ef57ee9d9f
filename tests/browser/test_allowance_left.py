"""The Tokens page says what is left of one's allowance (in English and German, at desktop and
phone widths), and the usage charts take their colours from the colour scheme."""

from __future__ import annotations

from typing import Any

import httpx
import pytest
from playwright.sync_api import expect

from accounts.models import ApiToken, GatewayGroup, UserProfile
from tests.support.factories import make_group, make_token_with_secret

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

RPM = {"measure": "requests", "window": "minute"}
TPD = {"measure": "tokens", "window": "day"}


def limit_usage(user: Any) -> str:
    """Give `user` 60 requests a minute and 100,000 tokens a day, and a token `ci` of 5 a
    minute of its own; answers the token's key."""
    group = make_group(f"{user.username}-limits", members=[user])
    GatewayGroup.objects.filter(pk=group.pk).update(
        allowance=[{**RPM, "limit": 60}, {**TPD, "limit": 100_000}]
    )
    token, key = make_token_with_secret(user, name="ci")
    ApiToken.objects.filter(pk=token.pk).update(allowance=[{**RPM, "limit": 5}])
    return key


def fits_the_width(page: Any) -> bool:
    return bool(page.evaluate("document.documentElement.scrollWidth <= window.innerWidth"))


def test_the_tokens_page_shows_what_is_left_of_each_limit(
    page: Any, alice: Any, aiplane_server: Any, make_sim_backend: Any, sign_in: Any,
    screenshot: Any,
) -> None:  # fmt: skip
    make_sim_backend(max_inflight=2)
    key = limit_usage(alice)
    body = {"model": "sim-small", "messages": [{"role": "user", "content": "hi"}]}
    for _ in range(2):
        answer = httpx.post(
            aiplane_server.url + "/v1/chat/completions",
            json=body,
            headers={"Authorization": f"Bearer {key}"},
            timeout=10,
        )
        assert answer.status_code == 200, answer.text

    sign_in(page, "alice")
    left = page.get_by_role("region", name="What is left of your allowance")
    mine = left.get_by_role("table", name="Your limits (all your tokens together)")
    requests = mine.get_by_role("row", name="Requests per minute: 60")
    expect(requests).to_contain_text("2 of 60")
    expect(requests.locator("td[data-label='Remaining']")).to_have_text("58")
    tokens = mine.get_by_role("row", name="Tokens (input + output) per day (UTC): 100,000")
    expect(tokens.locator("td[data-label='Used']")).not_to_contain_text("0 of")  # it counted
    token = left.get_by_role("table", name="Own limits of token “ci”")
    expect(token.get_by_role("row", name="Requests per minute: 5")).to_contain_text("2 of 5")
    expect(token.locator("td[data-label='Remaining']")).to_have_text("3")
    screenshot(page, "tokens-allowance-left")
    page.set_viewport_size({"width": 390, "height": 844})
    expect(requests).to_contain_text("2 of 60")
    assert fits_the_width(page)


def test_the_allowance_left_speaks_german(
    page: Any, alice: Any, sign_in: Any, screenshot: Any
) -> None:
    UserProfile.objects.update_or_create(user=alice, defaults={"language": "de"})
    limit_usage(alice)
    sign_in(page, "alice")
    left = page.get_by_role("region", name="Was von Ihrem Kontingent übrig ist")
    mine = left.get_by_role("table", name="Ihre Grenzen (alle Ihre Tokens zusammen)")
    expect(mine.get_by_role("row", name="Anfragen pro Minute: 60")).to_contain_text("0 von 60")
    expect(left.get_by_role("columnheader", name="Zurückgesetzt um").first).to_be_visible()
    expect(left.get_by_role("table", name="Eigene Grenzen des Tokens „ci“")).to_be_visible()
    page.set_viewport_size({"width": 390, "height": 844})
    assert fits_the_width(page)
    screenshot(page, "tokens-allowance-left-de", widths=((390, 844),))


def test_someone_without_limits_reads_that_they_have_none(
    page: Any, alice: Any, sign_in: Any
) -> None:
    sign_in(page, "alice")
    left = page.get_by_role("region", name="What is left of your allowance")
    expect(left).to_contain_text("No limits: you may use as much as you like.")
    expect(left.get_by_role("table")).to_have_count(0)


# The legend's marker of the chart's first series: drawn in that series' colour.
MARKER = (
    "getComputedStyle(document.querySelector("
    "'#my-usage-chart .u-series:nth-child(2) .u-marker')).borderColor"
)


def test_the_usage_chart_follows_the_colour_scheme_and_its_switch(
    page: Any, alice: Any, sign_in: Any, screenshot: Any
) -> None:
    sign_in(page, "alice")
    expect(page.locator("#my-usage-chart canvas").first).to_be_visible()
    light = page.evaluate(MARKER)
    assert light == "rgb(31, 95, 191)"  # --chart-1 on white

    page.get_by_label("Colours").select_option("dark")
    expect(page.locator("#my-usage-chart canvas").first).to_be_visible()
    assert page.evaluate(MARKER) == "rgb(138, 180, 248)"  # its dark value, after a redraw
    screenshot(page, "tokens-my-usage-dark", widths=((1280, 800),))

    page.get_by_label("Colours").select_option("system")
    assert page.evaluate(MARKER) == light  # the test's browser prefers light
    page.emulate_media(color_scheme="dark")  # the system changes its mind
    page.wait_for_function(f"{MARKER} === 'rgb(138, 180, 248)'")
