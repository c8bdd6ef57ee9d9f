"""The API reference: Swagger UI over /api/v0's OpenAPI document, linked from every page's footer,
within the Content-Security-Policy (the browser fixture fails a test on any violation)."""

from __future__ import annotations

from typing import Any

import pytest
from playwright.sync_api import expect

from accounts.models import UserProfile
from tests.browser.conftest import SCREENSHOTS

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

RENDER = 20_000  # ms: a 1.5 MB viewer parsed on a busy two-core machine


def test_the_reference_renders_every_operation_of_the_document(
    page: Any, aiplane_server: Any, screenshot: Any
) -> None:
    import httpx

    document = httpx.get(aiplane_server.url + "/api/v0/openapi.json", timeout=10).json()
    operations = sum(
        1 for item in document["paths"].values() for method in item if method != "parameters"
    )

    page.goto("/api-reference/")

    expect(page.locator(".swagger-ui .info .title")).to_contain_text(
        document["info"]["title"], timeout=RENDER
    )
    blocks = page.locator(".swagger-ui .opblock")
    expect(blocks).to_have_count(operations)
    expect(page.locator(".opblock-summary-path[data-path='/api/v0/admin/backends']")).to_have_count(
        2
    )
    screenshot(page, "api-reference")
    page.set_viewport_size({"width": 390, "height": 844})
    page.screenshot(path=str(SCREENSHOTS / "api-reference-top-390.png"))  # the long page's head


def test_signed_in_try_it_out_calls_the_api_with_the_session(
    page: Any, carol: Any, sign_in: Any
) -> None:
    sign_in(page, "carol")
    page.goto("/api-reference/")
    me = page.locator(".opblock-get").filter(
        has=page.locator(".opblock-summary-path[data-path='/api/v0/me']")
    )
    me.locator(".opblock-summary").click(timeout=RENDER)
    me.get_by_role("button", name="Try it out").click()
    me.get_by_role("button", name="Execute").click()

    answer = me.locator(".live-responses-table tbody tr.response")
    expect(answer.locator(".response-col_status")).to_have_text("200", timeout=RENDER)
    expect(answer.locator(".response-col_description")).to_contain_text('"username": "carol"')


@pytest.mark.parametrize(("language", "label"), [("en", "API reference"), ("de", "API-Referenz")])
def test_every_page_links_to_the_reference_from_its_footer(
    page: Any, carol: Any, sign_in: Any, screenshot: Any, language: str, label: str
) -> None:
    UserProfile.objects.update_or_create(user=carol, defaults={"language": language})
    page.goto("/login/")
    expect(page.locator("footer").get_by_role("link")).to_have_count(1)
    sign_in(page, "carol")
    for path in ("/tokens/", "/playground/", "/admin/backends/"):
        page.goto(path)
        expect(page.locator("footer").get_by_role("link", name=label)).to_be_visible()
    screenshot(page, f"footer-{language}")
    page.locator("footer").get_by_role("link", name=label).click()
    page.wait_for_url("**/api-reference/")
    expect(page.locator(".page-head h1")).to_have_text(label)
    expect(page.locator(".swagger-ui .opblock").first).to_be_visible(timeout=RENDER)
