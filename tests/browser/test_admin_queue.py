"""Administration → Queue: the live queue over the websocket (or polling), with each waiter's
class and ticking age, the depth per class, each backend's in-flight count and health, and the
last dispatches, newest first."""

from __future__ import annotations

import re
from typing import Any

import pytest
from playwright.sync_api import expect

from aiplane.catalog import settings_update
from tests.support.browser import StreamingCall, wait_until
from tests.support.factories import make_group, make_token_with_secret, make_user

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

        waiter = page.locator("#waiters-table tr[data-waiter]")
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
        expect(page.locator("#waiters-table tr[data-waiter]")).to_have_count(1, timeout=5000)
        expect(page.locator("#depth-medium")).to_have_text("1")
    finally:
        blocker.close()
        if queued is not None:
            queued.close()
        context.close()


def test_the_queue_page_lists_a_recent_dispatch_after_a_request_completes(
    page: Any,
    aiplane_server: Any,
    make_sim_backend: Any,
    alice: Any,
    bob: Any,
    carol: Any,
    sign_in: Any,
    screenshot: Any,
) -> None:
    import httpx

    make_sim_backend(max_inflight=2, tokens=5)
    settings_update(values={"gateway.priority_enabled": True})
    make_group("research", priority="high", members=[alice])
    _, bob_key = make_token_with_secret(bob, name="bob-batch")
    _, alice_key = make_token_with_secret(alice, name="alice-agent")
    sign_in(page, "carol")
    page.goto("/admin/queue/")
    expect(page.locator("#live-state")).to_have_text("Live")
    expect(page.locator("#recent-empty")).to_have_text(
        "No request has been dispatched since the gateway started."
    )

    def complete(key: str, text: str) -> None:
        body = {"model": "sim-small", "messages": [{"role": "user", "content": text}]}
        response = httpx.post(
            aiplane_server.url + "/v1/chat/completions",
            json=body,
            headers={"Authorization": f"Bearer {key}"},
            timeout=30,
        )
        assert response.status_code == 200, response.text

    complete(bob_key, "first")
    rows = page.locator("#recent-body tr")
    expect(rows).to_have_count(1)  # pushed over the websocket: nothing polls in live mode
    expect(page.locator("#recent-empty")).to_be_hidden()
    complete(alice_key, "second")
    expect(rows).to_have_count(2)

    # Newest first: alice's request at her group's class, then bob's at the default one.
    newest, older = rows.nth(0), rows.nth(1)
    for text in ("High", "sim-small", "alice", "sim-1", "ms"):
        expect(newest).to_contain_text(text)
    for text in ("Medium", "bob", "sim-1"):
        expect(older).to_contain_text(text)
    expect(newest.locator("time")).to_have_attribute("datetime", re.compile(r"^\d{4}-\d\d-\d\dT"))
    # How long ago ticks in the page; the server sends nothing while nothing changes.
    ago = newest.locator(".ago")
    expect(ago).to_have_text(re.compile(r"^\d+ s ago$"))
    first = ago.inner_text()
    expect(ago).not_to_have_text(first, timeout=3000)
    screenshot(page, "admin-queue-recent")


@pytest.mark.parametrize(
    ("language", "heading", "place"),
    [("en", "sim-1: 2 requests wait", "Place"), ("de", "sim-1: 2 Anfragen warten", "Platz")],
)
def test_the_queue_lists_waiters_in_the_order_they_will_be_dispatched(
    page: Any,
    aiplane_server: Any,
    busy_engine: Any,
    alice: Any,
    bob: Any,
    carol: Any,
    sign_in: Any,
    screenshot: Any,
    language: str,
    heading: str,
    place: str,
) -> None:
    from accounts.models import UserProfile

    UserProfile.objects.update_or_create(user=carol, defaults={"language": language})
    dave = make_user("dave")
    runtime = aiplane_server.app.runtime
    settings_update(values={"gateway.priority_enabled": True})
    make_group("batch", priority="low", members=[bob])
    make_group("research", priority="high", members=[dave])
    _, alice_key = make_token_with_secret(alice, name="alice-agent")
    _, bob_key = make_token_with_secret(bob, name="bob-batch")
    _, dave_key = make_token_with_secret(dave, name="dave-agent")
    sign_in(page, "carol")
    page.goto("/admin/queue/")
    blocker = StreamingCall(aiplane_server.url, alice_key)
    calls = [blocker]
    try:
        wait_until(lambda: runtime.slots["sim-1"].inflight == 1, "the blocker holds the slot")
        calls.append(StreamingCall(aiplane_server.url, bob_key, "low, first"))
        wait_until(lambda: runtime.queue.waiting == 1, "bob's request waits")
        calls.append(StreamingCall(aiplane_server.url, dave_key, "high, later"))
        wait_until(lambda: runtime.queue.waiting == 2, "dave's request waits too")

        line = page.locator("#waiters-table tbody[data-line='sim-1']")
        expect(line.locator(".line-head")).to_have_text(heading)
        rows = line.locator("tr[data-waiter]")
        expect(rows).to_have_count(2)
        # dave came second but goes first: his class is higher.
        expect(rows.nth(0)).to_contain_text("dave")
        expect(rows.nth(0).locator("th")).to_have_text("1.")
        expect(rows.nth(1)).to_contain_text("bob")
        expect(rows.nth(1).locator("th")).to_have_text("2.")
        expect(rows.nth(0).locator("[data-label]").nth(0)).to_have_attribute("data-label", place)
        for row in (rows.nth(0), rows.nth(1)):
            expect(row.locator(".waits-for")).to_have_text("sim-1")
        expect(page.locator("#waiters-score-col")).to_be_hidden()  # strict has no score
        screenshot(page, f"admin-queue-order-{language}")
    finally:
        for call in calls:
            call.close()


def test_under_the_serial_scheduler_the_queue_shows_each_waiters_score(
    page: Any,
    aiplane_server: Any,
    busy_engine: Any,
    alice: Any,
    bob: Any,
    carol: Any,
    sign_in: Any,
) -> None:
    runtime = aiplane_server.app.runtime
    settings_update(values={"gateway.priority_enabled": True, "gateway.scheduler": "serial"})
    make_group("research", priority="high", members=[bob])
    _, alice_key = make_token_with_secret(alice, name="alice-agent")
    _, bob_key = make_token_with_secret(bob, name="bob-agent")
    sign_in(page, "carol")
    page.goto("/admin/queue/")
    calls = [StreamingCall(aiplane_server.url, alice_key)]
    try:
        wait_until(lambda: runtime.slots["sim-1"].inflight == 1, "the blocker holds the slot")
        calls.append(StreamingCall(aiplane_server.url, bob_key, "high"))
        wait_until(lambda: runtime.queue.waiting == 1, "bob's request waits")
        expect(page.locator("#waiters-score-col")).to_be_visible()
        score = page.locator("#waiters-table tr[data-waiter] .score")
        # The high band's anchor is 100; aging adds a little while it waits.
        expect(score).to_have_text(re.compile(r"^100\.\d\d$"))
    finally:
        for call in calls:
            call.close()


def test_an_administrator_demoted_while_watching_sees_why_the_queue_stopped(
    page: Any, aiplane_server: Any, make_sim_backend: Any, carol: Any, sign_in: Any
) -> None:
    from accounts.models import GatewayGroup

    make_sim_backend()
    sign_in(page, "carol")
    page.goto("/admin/queue/")
    expect(page.locator("#live-state")).to_have_text("Live")
    expect(page.locator("#queue-backends-body tr[data-backend='sim-1']")).to_be_visible()
    GatewayGroup.objects.get(name="administrators").members.remove(carol)
    expect(page.locator("#page-alert")).to_have_text(
        "You are no longer an administrator, so the live queue has stopped. "
        "Reload the page once your rights are restored."
    )
    expect(page.locator("#live-state")).to_have_text("Stopped")
    # What it showed is no longer carol's to see.
    expect(page.locator("#queue-backends-body tr[data-backend='sim-1']")).to_be_hidden()


def test_a_session_signed_out_elsewhere_ends_the_live_queue_with_a_sign_in_message(
    page: Any, aiplane_server: Any, make_sim_backend: Any, carol: Any, sign_in: Any
) -> None:
    from django.contrib.sessions.models import Session

    make_sim_backend()
    sign_in(page, "carol")
    page.goto("/admin/queue/")
    expect(page.locator("#live-state")).to_have_text("Live")
    Session.objects.all().delete()  # every session ends, as "sign out everywhere" would
    expect(page.locator("#page-alert")).to_have_text(
        "You have been signed out, so the live queue has stopped. Sign in again to watch it."
    )
    expect(page.locator("#live-state")).to_have_text("Stopped")
