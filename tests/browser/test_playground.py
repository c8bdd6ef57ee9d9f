"""The playground: a chat streamed token by token from the simulated engine, the class it runs
at, and Stop, which cancels a request still waiting for capacity at once."""

from __future__ import annotations

import time
from typing import Any

import pytest
from playwright.sync_api import expect

from aiplane.catalog import settings_update
from gateway.admin import services
from tests.support.browser import StreamingCall, wait_until
from tests.support.factories import make_group, make_token_with_secret

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

COUNT_UPDATES = """() => {
    window.__updates = 0;
    new MutationObserver(() => { window.__updates += 1; })
        .observe(document.getElementById('transcript'),
                 {childList: true, characterData: true, subtree: true});
}"""


def test_the_playground_streams_a_reply_from_the_simulated_engine(
    page: Any, alice: Any, sign_in: Any, screenshot: Any, make_sim_backend: Any
) -> None:
    sim = make_sim_backend(max_inflight=4, tokens=40, token_delay=0.03)
    sign_in(page, "alice")
    page.goto("/playground/")
    expect(page.locator("#playground-class")).to_have_text(
        "Request prioritization is off: every request shares one class."
    )
    model = page.get_by_label("Model")
    expect(model).to_be_enabled()
    expect(model).to_have_value("sim-small")
    page.get_by_label("Message").fill("Tell me a story")
    page.evaluate(COUNT_UPDATES)
    page.get_by_role("button", name="Send").click()

    answer = page.locator(".turn.assistant .turn-text")
    expect(page.locator("#chat-state")).to_have_text("Answering…")
    expect(page.locator("#chat-state")).to_have_text("Answer complete.", timeout=15_000)
    text = answer.inner_text()
    assert len(text.split()) >= 20
    # Token by token: the answer grew in many steps, not in one piece at the end.
    assert page.evaluate("window.__updates") >= 20
    expect(page.locator(".turn.assistant .turn-note")).to_contain_text("Answered by sim-1")
    # With prioritization off every request shares the one class, medium.
    expect(page.locator(".turn.assistant .turn-class")).to_have_text(
        "This answer ran at priority Medium."
    )
    expect(page.locator(".turn.user")).to_contain_text("Tell me a story")
    expect(page.get_by_role("button", name="Stop")).to_be_disabled()
    screenshot(page, "playground")

    [record] = [r for r in sim.records() if r["path"] == "/v1/chat/completions"]
    assert record["body"]["stream"] is True
    assert record["body"]["messages"] == [{"role": "user", "content": "Tell me a story"}]


def test_the_playground_shows_the_class_the_answer_ran_at(
    page: Any, alice: Any, sign_in: Any, screenshot: Any, make_sim_backend: Any
) -> None:
    make_sim_backend(max_inflight=4, tokens=60, token_delay=0.03)
    make_group("research", priority="high", members=[alice])
    settings_update(values={"gateway.priority_enabled": True})
    sign_in(page, "alice")
    page.goto("/playground/")
    expect(page.get_by_label("Model")).to_have_value("sim-small")
    page.get_by_label("Message").fill("Which class?")
    page.get_by_role("button", name="Send").click()

    ran_at = page.locator(".turn.assistant .turn-class")
    # Shown as soon as the reply starts, from the x-aiplane-class header of the response.
    expect(page.locator("#chat-state")).to_have_text("Answering…")
    expect(ran_at).to_have_text("This answer ran at priority High.")
    expect(page.locator("#chat-state")).to_have_text("Answer complete.", timeout=15_000)
    expect(ran_at).to_have_text("This answer ran at priority High.")
    expect(ran_at).to_have_attribute("data-class", "high")
    expect(page.locator(".turn.user .turn-class")).to_be_hidden()
    screenshot(page, "playground-class")


def test_stop_while_waiting_for_capacity_cancels_at_once_and_the_queue_shows_it_gone(
    browser: Any,
    page: Any,
    aiplane_server: Any,
    alice: Any,
    bob: Any,
    carol: Any,
    sign_in: Any,
    screenshot: Any,
    make_sim_backend: Any,
) -> None:
    runtime = aiplane_server.app.runtime
    sim = make_sim_backend(tokens=200, token_delay=0.05)
    make_group("research", priority="high", members=[alice])
    settings_update(values={"gateway.priority_enabled": True})
    _, bob_key = make_token_with_secret(bob, name="bob-batch")

    # carol watches the live queue in her own browser.
    watcher = browser.new_context(base_url=aiplane_server.url, locale="en-US")
    queue_page = watcher.new_page()
    blocker = StreamingCall(aiplane_server.url, bob_key)
    try:
        sign_in(queue_page, "carol")
        queue_page.goto("/admin/queue/")
        expect(queue_page.locator("#live-state")).to_have_text("Live")
        wait_until(lambda: runtime.slots["sim-1"].inflight == 1, "the blocker holds the slot")

        sign_in(page, "alice")
        page.goto("/playground/")
        expect(page.locator("#playground-class")).to_have_text(
            "Your requests run at priority High."
        )
        expect(page.get_by_label("Model")).to_have_value("sim-small")
        page.get_by_label("Message").fill("from the playground")
        page.get_by_role("button", name="Send").click()

        wait_until(lambda: runtime.queue.waiting == 1, "the playground request waits")
        assert runtime.queue.waiting == 1
        expect(page.locator("#chat-state")).to_have_text("Waiting for a free model server…")
        waiter = queue_page.locator("#waiters-table tr[data-waiter]")
        expect(waiter).to_have_count(1)
        expect(waiter).to_contain_text("High")
        expect(waiter).to_contain_text("alice")
        expect(waiter).to_contain_text("Browser (playground)")
        screenshot(page, "playground-waiting")

        stop = page.get_by_role("button", name="Stop")
        pressed = time.monotonic()
        stop.click()
        wait_until(lambda: runtime.queue.waiting == 0, "the waiter is gone", timeout=2.0)
        assert time.monotonic() - pressed < 2.0
        expect(page.locator("#chat-state")).to_have_text("Stopped.")
        expect(page.locator(".turn.assistant .turn-note")).to_have_text(
            "Stopped before the answer began."
        )
        expect(waiter).to_have_count(0)
        expect(queue_page.locator("#waiters-empty")).to_be_visible()
        expect(page.get_by_role("button", name="Send")).to_be_enabled()
        screenshot(page, "playground-stopped")

        # The engine never saw the playground request: only the blocker reached it.
        bodies = [r["body"] for r in sim.records() if r["path"] == "/v1/chat/completions"]
        assert [b["messages"][0]["content"] for b in bodies] == ["blocker"]
        assert runtime.slots["sim-1"].inflight == 1  # the blocker still runs undisturbed
    finally:
        blocker.close()
        watcher.close()


def test_a_capacity_timeout_is_shown_in_the_persons_language(
    page: Any, aiplane_server: Any, alice: Any, bob: Any, sign_in: Any, make_sim_backend: Any
) -> None:
    from accounts.models import UserProfile

    runtime = aiplane_server.app.runtime
    make_sim_backend(tokens=200, token_delay=0.05)
    settings_update(values={"gateway.upstream_wait_secs": 1})
    UserProfile.objects.create(user=alice, language="fr")
    _, bob_key = make_token_with_secret(bob, name="bob-batch")
    blocker = StreamingCall(aiplane_server.url, bob_key)
    try:
        wait_until(lambda: runtime.slots["sim-1"].inflight == 1, "the blocker holds the slot")
        sign_in(page, "alice")
        page.goto("/playground/")
        expect(page.get_by_label("Modèle")).to_have_value("sim-small")
        page.get_by_label("Message").fill("trop tard")
        page.get_by_role("button", name="Envoyer").click()
        alert = page.locator("#chat-alert")
        timed_out = "Aucun serveur ne s’est libéré à temps. Réessayez plus tard."  # noqa: RUF001 - French
        expect(alert).to_have_text(timed_out, timeout=8000)
        expect(alert).to_be_focused()
        # Nothing was answered: the message is back in the box for another try.
        expect(page.get_by_label("Message")).to_have_value("trop tard")
        expect(page.locator(".turn")).to_have_count(0)
    finally:
        blocker.close()


def test_an_answer_cut_short_upstream_keeps_what_arrived_and_says_so(
    page: Any, alice: Any, sign_in: Any
) -> None:

    from tests.support.browser import DiesMidStream

    engine = DiesMidStream()
    try:
        services.backend_save(
            data={"name": "flaky", "base_url": engine.url + "/v1", "models": ["sim-small"]}
        )
        services.pool_save(
            data={"name": "chat", "kind": "chat", "backends": ["flaky"]}, known_groups=set()
        )
        sign_in(page, "alice")
        page.goto("/playground/")
        expect(page.get_by_label("Model")).to_have_value("sim-small")
        page.get_by_label("Message").fill("hello")
        page.get_by_role("button", name="Send").click()
        alert = page.locator("#chat-alert")
        expect(alert).to_have_text("The model server answered with an error.")
        expect(alert).to_be_focused()
        expect(page.locator(".turn.assistant .turn-text")).to_have_text("tok0 ")
        expect(page.locator(".turn.assistant .turn-note")).to_have_text("The answer was cut short.")
    finally:
        engine.close()
