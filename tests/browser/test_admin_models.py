"""Administration → Models: each model and alias with the pools and backends behind it, their
health, in-flight requests, engine, priority forwarding and last error, and "Try it"."""

from __future__ import annotations

import asyncio
import re
from typing import Any

import pytest
from playwright.sync_api import expect

from gateway.admin import services
from tests.support.factories import make_group

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def probe_health(aiplane_server: Any, rounds: int = 2) -> None:
    rt = aiplane_server.app.runtime
    for _ in range(rounds):
        asyncio.run_coroutine_threadsafe(rt.probe_all_health(), rt.loop).result(10)


def add_alias(name: str, alias: str, target: str) -> None:

    services.backend_save(data={"name": name, "aliases": {alias: target}})


def no_horizontal_overflow(page: Any) -> bool:
    return bool(page.evaluate("document.documentElement.scrollWidth <= window.innerWidth"))


def test_each_model_and_alias_shows_its_backends_health_capacity_and_forwarding(
    page: Any, carol: Any, sign_in: Any, screenshot: Any, make_sim_backend: Any
) -> None:
    make_sim_backend(max_inflight=3)
    add_alias("sim-1", "small", "sim-small")
    sign_in(page, "carol")
    page.get_by_role("link", name="Models").click()
    page.wait_for_url("**/admin/models/")
    expect(page.get_by_role("heading", name="Models", level=1)).to_be_visible()

    cards = page.locator(".model-card")
    expect(cards).to_have_count(2)
    small = page.locator(".model-card[data-model='sim-small']")
    expect(small.locator(".model-status")).to_have_text("Serving")
    row = small.locator("tbody tr")
    expect(row).to_have_count(1)
    expect(row.locator("th")).to_have_text("sim-1")
    expect(row).to_contain_text("chat")
    expect(row).to_contain_text("Everyone")
    expect(row).to_contain_text("Healthy")
    expect(row).to_contain_text("0 of 3")
    expect(row).to_contain_text("Not forwarded")
    expect(row).to_contain_text("None")  # no error yet
    alias = page.locator(".model-card[data-model='small'] tbody tr th")
    expect(alias).to_have_text("sim-1Alias of sim-small")
    screenshot(page, "admin-models")
    page.set_viewport_size({"width": 390, "height": 844})
    assert no_horizontal_overflow(page)


def test_try_it_sends_one_request_through_the_gateway_and_shows_answer_time_and_class(
    page: Any, carol: Any, sign_in: Any, screenshot: Any, make_sim_backend: Any
) -> None:
    from aiplane.catalog import settings_update

    sim = make_sim_backend(max_inflight=2, tokens=6, token_delay=0)
    make_group("operators", priority="high", members=[carol])
    settings_update(values={"gateway.priority_enabled": True})
    sign_in(page, "carol")
    page.goto("/admin/models/")
    card = page.locator(".model-card[data-model='sim-small']")
    card.get_by_role("button", name="Try sim-small").click()

    meta = card.locator(".try-meta")
    expect(meta).to_have_text(re.compile(r"^Answered by sim-1 in \d+ ms at priority High\.$"))
    expect(meta).to_have_attribute("data-class", "high")
    expect(card.locator(".try-text")).not_to_be_empty()
    screenshot(page, "admin-models-tried")

    [record] = [r for r in sim.records() if r["path"] == "/v1/chat/completions"]
    body = record["body"]
    assert body["messages"] == [{"role": "user", "content": "Say hello in one short sentence."}]
    assert body["max_tokens"] == 24
    assert "stream" not in body


def test_try_it_shows_the_gateways_refusal_in_the_persons_language(
    page: Any, german_carol: Any, sign_in: Any, make_sim_backend: Any
) -> None:

    make_sim_backend()
    make_group("research")
    services.pool_save(
        data={
            "name": "chat",
            "kind": "chat",
            "backends": ["sim-1"],
            "allowed_groups": ["research"],
        },
        known_groups={"research"},
    )
    sign_in(page, "carol")
    page.goto("/admin/models/")
    card = page.locator(".model-card[data-model='sim-small']")
    expect(card.locator("tbody tr")).to_contain_text("Gruppen: research")
    card.get_by_role("button", name="sim-small ausprobieren").click()
    error = card.locator(".try-error")
    expect(error).to_have_text(
        "Die Anfrage ist fehlgeschlagen: Sie dürfen dieses Modell nicht verwenden."
    )
    expect(error).to_be_focused()


def test_a_backend_that_fails_its_health_check_shows_down_and_its_last_error(
    page: Any,
    aiplane_server: Any,
    german_carol: Any,
    sign_in: Any,
    screenshot: Any,
    make_sim_backend: Any,
) -> None:
    sim = make_sim_backend()
    url = sim.url
    sign_in(page, "carol")
    page.goto("/admin/models/")
    card = page.locator(".model-card[data-model='sim-small']")
    expect(card.locator(".model-status")).to_have_text("In Betrieb")
    sim.engine.stop()
    probe_health(aiplane_server)
    page.get_by_role("button", name="Aktualisieren").click()
    expect(card.locator(".model-status")).to_have_text("Ausgefallen")
    row = card.locator("tbody tr")
    expect(row).to_contain_text("Nicht erreichbar")
    expect(row.locator(".last-error-when")).to_contain_text("Zustandsprüfung, ")
    expect(row.locator(".last-error-text")).to_contain_text(f"GET {url}/health: ConnectError")
    screenshot(page, "admin-models-down")
    page.set_viewport_size({"width": 390, "height": 844})
    assert no_horizontal_overflow(page)


def test_the_models_page_is_for_administrators_only(page: Any, alice: Any, sign_in: Any) -> None:
    sign_in(page, "alice")
    expect(page.get_by_role("link", name="Models")).to_have_count(0)
    response = page.goto("/admin/models/")
    assert response is not None
    assert response.status == 403
