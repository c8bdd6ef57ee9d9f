"""Administration → Queue: the live queue over the websocket (or polling), with each waiter's
class and ticking age, the depth per class, and each backend's in-flight count and health."""

from __future__ import annotations

from typing import Any

import pytest
from playwright.sync_api import expect

from tests.browser.helpers import StreamingCall, wait_until
from tests.factories import make_token_with_secret

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def busy_engine(make_sim_backend: Any) -> Any:
    """One slot and long answers: a single streaming call keeps the backend full."""
    return make_sim_backend(tokens=200, token_delay=0.05)


def test_the_live_queue_shows_a_waiter_and_then_shows_it_gone(
    page: Any,
    aiplane_server: Any,
    busy_engine: Any,
    alice: Any,
    bob: Any,
    carol: Any,
    sign_in: Any,
    screenshot: Any,
) -> None:
    runtime = aiplane_server.app.runtime
    _, bob_key = make_token_with_secret(bob, name="bob-batch")
    _, alice_key = make_token_with_secret(alice, name="alice-agent")
    sign_in(page, "carol")
    page.goto("/admin/queue/")
    expect(page.locator("#live-state")).to_have_text("Live")
    expect(page.locator("#waiters-empty")).to_have_text("No request is waiting.")
    backend_row = page.locator("#queue-backends-body tr[data-backend='sim-1']")
    expect(backend_row).to_contain_text("0 of 1")

    blocker = StreamingCall(aiplane_server.url, bob_key)
    queued = None
    try:
        wait_until(lambda: runtime.slots["sim-1"].inflight == 1, "the blocker holds the slot")
        queued = StreamingCall(aiplane_server.url, alice_key, "in line")
        wait_until(lambda: runtime.queue.waiting == 1, "alice's request waits")

        waiter = page.locator("#waiters-body tr")
        expect(waiter).to_have_count(1)
        for text in ("Medium", "sim-small", "alice", "alice-agent"):
            expect(waiter).to_contain_text(text)
        expect(page.locator("#depth-medium")).to_have_text("1")
        expect(backend_row).to_contain_text("1 of 1")
        expect(backend_row).to_contain_text("Healthy")
        age = waiter.locator(".age")
        first = age.inner_text()
        expect(age).not_to_have_text(first, timeout=3000)  # the age ticks between pushes
        screenshot(page, "admin-queue")

        blocker.close()  # the slot frees; alice's request is admitted and leaves the line
        expect(waiter).to_have_count(0)
        expect(page.locator("#waiters-empty")).to_be_visible()
        expect(page.locator("#depth-medium")).to_have_text("0")
        assert runtime.queue.waiting == 0
    finally:
        blocker.close()
        if queued is not None:
            queued.close()


def test_without_a_websocket_the_page_polls_every_two_seconds(
    browser: Any,
    aiplane_server: Any,
    busy_engine: Any,
    alice: Any,
    bob: Any,
    carol: Any,
    sign_in: Any,
) -> None:
    runtime = aiplane_server.app.runtime
    context = browser.new_context(base_url=aiplane_server.url, locale="en-US")
    context.add_init_script("window.WebSocket = undefined;")
    page = context.new_page()
    _, bob_key = make_token_with_secret(bob, name="bob-batch")
    _, alice_key = make_token_with_secret(alice, name="alice-agent")
    blocker = StreamingCall(aiplane_server.url, bob_key)
    queued = None
    try:
        sign_in(page, "carol")
        page.goto("/admin/queue/")
        expect(page.locator("#live-state")).to_have_text("Updating every 2 seconds")
        wait_until(lambda: runtime.slots["sim-1"].inflight == 1, "the blocker holds the slot")
        queued = StreamingCall(aiplane_server.url, alice_key, "in line")
        wait_until(lambda: runtime.queue.waiting == 1, "alice's request waits")
        expect(page.locator("#waiters-body tr")).to_have_count(1, timeout=5000)
        expect(page.locator("#depth-medium")).to_have_text("1")
    finally:
        blocker.close()
        if queued is not None:
            queued.close()
        context.close()
