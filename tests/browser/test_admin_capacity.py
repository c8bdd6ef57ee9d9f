"""Learned capacity (max_inflight "auto") in the browser: chosen in the backend editor with its
floor and ceiling, and the learned limit, its reason and the engine's gauges on the Backends,
Models and live Queue pages."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import pytest
from playwright.sync_api import expect

from gateway.admin import services
from gateway.models import Backend
from tests.support.browser import StreamingCall, wait_until
from tests.support.factories import make_token_with_secret

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

# Nothing listens there: its engine's metrics cannot be read, and no test waits on it.
DEAD_URL = "http://127.0.0.1:9/v1"


def card(page: Any, name: str) -> Any:
    return page.locator(f"#backend-list [data-backend='{name}']")


def test_an_auto_backend_is_made_in_the_editor_opens_again_with_its_bounds_and_goes_back_to_fixed(
    page: Any, carol: Any, sign_in: Any, screenshot: Any
) -> None:
    sign_in(page, "carol")
    page.goto("/admin/backends/")
    page.get_by_role("button", name="Add backend").click()
    form = page.locator("#backend-editor")
    form.get_by_label("Name", exact=True).fill("gpu-1")
    form.get_by_label("Base URL").fill(DEAD_URL)
    expect(form.get_by_label("Fixed", exact=True)).to_be_checked()
    expect(form.get_by_label("Maximum requests in flight")).to_have_value("16")
    expect(form.get_by_label("Floor", exact=True)).to_be_hidden()

    form.get_by_label("Learned from the engine (auto)").check()
    expect(form.get_by_label("Maximum requests in flight")).to_be_hidden()
    expect(form.get_by_label("Floor", exact=True)).to_have_value("1")
    expect(form.get_by_label("Ceiling", exact=True)).to_have_value("256")
    expect(form.locator("#concurrency-auto-hint")).to_have_text(
        "The limit follows the engine's own waiting queue, KV cache and latency, always between"
        " the floor and the ceiling."
    )
    form.get_by_label("Floor", exact=True).fill("2")
    form.get_by_label("Ceiling", exact=True).fill("12")
    screenshot(page, "admin-backends-editor-auto")
    with page.expect_request(
        lambda r: r.url.endswith("/api/v0/admin/backends") and r.method == "PUT"
    ) as sent:
        form.get_by_role("button", name="Save backend").click()
    body = sent.value.post_data_json
    assert body["max_inflight"] == "auto"
    assert (body["capacity_floor"], body["capacity_ceiling"]) == (2, 12)
    expect(form).to_be_hidden()
    backend = Backend.objects.get(name="gpu-1")
    assert backend.capacity_auto is True
    assert (backend.capacity_floor, backend.capacity_ceiling) == (2, 12)

    # The gateway here starts it at its floor; its engine's metrics cannot be read.
    capacity = card(page, "gpu-1").locator(".live-capacity")
    expect(capacity.locator(".capacity-range")).to_have_text("auto (2–12)")  # noqa: RUF001 - the range's en dash
    expect(capacity.locator(".capacity-learned")).to_have_text("Learned limit 2, at floor")
    expect(capacity.locator(".capacity-engine")).to_have_text(
        "The engine's metrics have not been read yet."
    )
    expect(capacity.locator(".capacity-error")).to_have_text(
        "Metrics unusable: no answer (ConnectError)"
    )
    expect(card(page, "gpu-1").locator(".live-inflight")).to_have_text("0 of 2")
    screenshot(page, "admin-backends-auto")

    card(page, "gpu-1").get_by_role("button", name="Edit").click()
    expect(form.get_by_label("Learned from the engine (auto)")).to_be_checked()
    expect(form.get_by_label("Floor", exact=True)).to_have_value("2")
    expect(form.get_by_label("Ceiling", exact=True)).to_have_value("12")
    expect(form.get_by_label("Maximum requests in flight")).to_be_hidden()

    form.get_by_label("Fixed", exact=True).check()
    expect(form.get_by_label("Floor", exact=True)).to_be_hidden()
    # Made fixed again, it starts from what was learned for it.
    expect(form.get_by_label("Maximum requests in flight")).to_have_value("2")
    form.get_by_label("Maximum requests in flight").fill("5")
    with page.expect_request(
        lambda r: r.url.endswith("/api/v0/admin/backends") and r.method == "PUT"
    ) as sent:
        form.get_by_role("button", name="Save backend").click()
    assert sent.value.post_data_json["max_inflight"] == 5
    assert "capacity_floor" not in sent.value.post_data_json
    expect(form).to_be_hidden()
    backend.refresh_from_db()
    assert (backend.capacity_auto, backend.max_inflight) == (False, 5)
    expect(card(page, "gpu-1").locator(".live-inflight")).to_have_text("0 of 5")
    expect(card(page, "gpu-1").locator(".live-capacity")).to_have_count(0)


def test_a_floor_above_the_ceiling_is_refused_in_the_editor_and_the_servers_refusal_marks_its_field(
    page: Any, carol: Any, sign_in: Any, screenshot: Any
) -> None:
    services.backend_save(data={"name": "gpu-1", "base_url": DEAD_URL, "max_inflight": 4})
    sent: list[Any] = []
    page.on("request", lambda r: sent.append(r) if r.method == "PUT" else None)
    sign_in(page, "carol")
    page.goto("/admin/backends/")
    card(page, "gpu-1").get_by_role("button", name="Edit").click()
    form = page.locator("#backend-editor")
    form.get_by_label("Learned from the engine (auto)").check()
    form.get_by_label("Floor", exact=True).fill("300")
    form.get_by_label("Ceiling", exact=True).fill("256")
    form.get_by_role("button", name="Save backend").click()

    alert = page.locator("#backend-alert")
    expect(alert).to_have_text("The floor (300) must not be above the ceiling (256).")
    expect(alert).to_be_focused()
    expect(form.get_by_label("Floor", exact=True)).to_have_attribute("aria-invalid", "true")
    screenshot(page, "admin-backends-auto-bounds-refused", widths=((1280, 800),))
    assert sent == []  # refused here: nothing was sent
    assert Backend.objects.get(name="gpu-1").capacity_auto is False

    # Out of range is the server's to refuse; its error lands on the ceiling.
    form.get_by_label("Floor", exact=True).fill("1")
    form.get_by_label("Ceiling", exact=True).fill("200000")
    form.get_by_role("button", name="Save backend").click()
    expect(alert).to_have_text("Ceiling: A value is not valid.")
    expect(form.get_by_label("Ceiling", exact=True)).to_have_attribute("aria-invalid", "true")
    expect(form.get_by_label("Floor", exact=True)).not_to_have_attribute("aria-invalid", "true")
    assert Backend.objects.get(name="gpu-1").capacity_auto is False


@pytest.fixture
def learning_engine(make_sim_backend: Any, alice: Any, aiplane_server: Any) -> Iterator[Any]:
    """An auto backend (floor 1, ceiling 8) on the simulated GPU with vLLM's metrics, and two
    long streams at it: from its floor it grows while the two fill it (1, 2, then 3) and stays
    there, the engine running both and queueing none."""
    sim = make_sim_backend(
        tokens=4000, server_info="vllm", metrics="vllm", gpu_batch=6, gpu_step_ms=10
    )
    services.backend_save(
        data={"name": sim.name, "max_inflight": "auto", "capacity_floor": 1, "capacity_ceiling": 8}
    )
    runtime = aiplane_server.app.runtime
    _, key = make_token_with_secret(alice, name="alice-agent")
    calls = [StreamingCall(aiplane_server.url, key, f"stream {n}") for n in range(2)]
    try:

        def learned() -> bool:
            slot = runtime.slots.get(sim.name)  # the first request may start the gateway
            described = runtime.capacity.describe(sim.name, slot) if slot else None
            return (
                described is not None
                and described["limit"] == 3  # 1, 2, 3: two streams never fill more
                and described["engine_running"] == 2
            )

        wait_until(learned, "the limit grows to 3 with both streams running", timeout=30)
        yield sim
    finally:
        for call in calls:
            call.close()


@pytest.mark.parametrize(
    ("admin", "learned", "engine"),
    [
        ("carol", "Learned limit 3, from the engine's metrics",
         r"^Engine: running 2, waiting 0, KV cache \d+%$"),
        ("german_carol", "Gelerntes Limit 3, aus den Metriken der Engine",
         r"^Engine: laufend 2, wartend 0, KV-Cache \d+\s%$"),
    ],
)  # fmt: skip
def test_the_models_backends_and_queue_pages_show_a_learned_limit_and_the_engines_gauges(
    page: Any, request: Any, sign_in: Any, screenshot: Any, learning_engine: Any,
    admin: str, learned: str, engine: str,
) -> None:  # fmt: skip
    request.getfixturevalue(admin)
    sign_in(page, "carol")

    page.goto("/admin/models/")
    row = page.locator(".model-card[data-model='sim-small'] tbody tr[data-backend='sim-1']")
    capacity = row.locator(".capacity")
    expect(capacity.locator(".inflight")).to_contain_text(re.compile(r"^2 \S+ 3$"))
    expect(capacity.locator(".capacity-learned")).to_have_text(learned)
    expect(capacity.locator(".capacity-engine")).to_have_text(re.compile(engine))
    expect(capacity.locator(".capacity-error")).to_have_count(0)
    screenshot(page, f"admin-models-auto-{admin}")

    page.goto("/admin/queue/")
    row = page.locator("#queue-backends-body tr[data-backend='sim-1']")
    expect(row.locator(".capacity-learned")).to_have_text(learned)
    expect(row.locator(".capacity-engine")).to_have_text(re.compile(engine))
    expect(row.locator(".inflight")).to_contain_text(re.compile(r"^2 \S+ 3$"))
    screenshot(page, f"admin-queue-auto-{admin}")

    page.goto("/admin/backends/")
    capacity = card(page, "sim-1").locator(".live-capacity")
    expect(capacity.locator(".capacity-learned")).to_have_text(learned)
    expect(capacity.locator(".capacity-engine")).to_have_text(re.compile(engine))
    range_text = re.compile(r"^auto\S* \(1–8\)$")  # noqa: RUF001 - the range's en dash
    expect(capacity.locator(".capacity-range")).to_have_text(range_text)
