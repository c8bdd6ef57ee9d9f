"""The playground's layout at 1280x800, its settings (system prompt, temperature, max tokens), the
choice of which of my tokens to run as, and "Show code" for what was just run (each snippet is
run for real against the gateway)."""

from __future__ import annotations

import os
import subprocess
import sys
from typing import Any

import pytest
from playwright.sync_api import expect

from aiplane.catalog import settings_update
from tests.support.factories import make_group, make_token_with_secret

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def chat_bodies(sim: Any) -> list[dict[str, Any]]:
    return [r["body"] for r in sim.records() if r["path"] == "/v1/chat/completions"]


def send(page: Any, text: str, *, send_label: str = "Send", done: str = "Answer complete.") -> None:
    page.locator("#chat-message").fill(text)
    page.get_by_role("button", name=send_label).click()
    expect(page.locator("#chat-state")).to_have_text(done, timeout=15_000)


def test_send_stop_and_the_status_stay_in_view_at_1280x800_in_a_long_conversation(
    page: Any, alice: Any, sign_in: Any, screenshot: Any, make_sim_backend: Any
) -> None:
    sim = make_sim_backend(max_inflight=4, tokens=80, token_delay=0)
    sign_in(page, "alice")
    page.goto("/playground/")
    expect(page.get_by_label("Model")).to_have_value("sim-small")
    for n in range(3):
        send(page, f"Tell me story number {n}")
    expect(page.locator(".turn")).to_have_count(6)

    from tests.support.drive import configure

    configure(sim.engine, token_delay=0.05)  # slow enough to look at while it streams
    page.locator("#chat-message").fill("One more")
    page.get_by_role("button", name="Send").click()
    expect(page.locator("#chat-state")).to_have_text("Answering…")
    for control in (page.get_by_role("button", name="Stop"), page.locator("#chat-state")):
        expect(control).to_be_in_viewport(ratio=1)
    expect(page.get_by_role("button", name="Stop")).to_be_enabled()
    # The newest turn is in view too: the conversation scrolls within its card.
    expect(page.locator(".turn.assistant").last).to_be_in_viewport()
    # All in one screen: the page did not scroll to bring the controls into view.
    assert page.evaluate("window.scrollY") == 0
    expect(page.get_by_role("heading", name="Conversation")).to_be_in_viewport(ratio=1)
    screenshot(page, "playground-long", widths=((1280, 800),))
    page.get_by_role("button", name="Stop").click()
    expect(page.locator("#chat-state")).to_have_text("Stopped.")
    expect(page.get_by_role("button", name="Send")).to_be_in_viewport(ratio=1)


def test_the_system_prompt_temperature_and_max_tokens_reach_the_engine(
    page: Any, alice: Any, sign_in: Any, screenshot: Any, make_sim_backend: Any
) -> None:
    sim = make_sim_backend(max_inflight=4, tokens=40, token_delay=0)
    sign_in(page, "alice")
    page.goto("/playground/")
    expect(page.get_by_label("Model")).to_have_value("sim-small")
    page.get_by_label("System prompt").fill("You answer tersely.")
    page.get_by_label("Temperature").fill("0.3")
    page.get_by_label("Max tokens").fill("5")
    send(page, "First question")
    expect(page.locator(".turn.assistant .turn-text")).to_have_text("tok0 tok1 tok2 tok3 tok4 ")
    page.get_by_label("Max tokens").fill("")
    send(page, "Second question")
    screenshot(page, "playground-settings")

    first, second = chat_bodies(sim)
    assert first["messages"] == [
        {"role": "system", "content": "You answer tersely."},
        {"role": "user", "content": "First question"},
    ]
    assert (first["temperature"], first["max_tokens"]) == (0.3, 5)
    # The system prompt leads every request once; the history follows it.
    assert [m["role"] for m in second["messages"]] == ["system", "user", "assistant", "user"]
    assert second["messages"][2]["content"] == "tok0 tok1 tok2 tok3 tok4 "
    assert second["temperature"] == 0.3
    assert "max_tokens" not in second


def test_a_temperature_out_of_range_is_refused_before_anything_is_sent(
    page: Any, alice: Any, sign_in: Any, make_sim_backend: Any
) -> None:
    sim = make_sim_backend()
    sign_in(page, "alice")
    page.goto("/playground/")
    expect(page.get_by_label("Model")).to_have_value("sim-small")
    page.get_by_label("Temperature").fill("3")
    page.locator("#chat-message").fill("hello")
    page.get_by_role("button", name="Send").click()
    alert = page.locator("#chat-alert")
    expect(alert).to_have_text("The temperature must be a number from 0 to 2.")
    expect(alert).to_be_focused()
    expect(page.get_by_label("Temperature")).to_have_attribute("aria-invalid", "true")
    expect(page.locator(".turn")).to_have_count(0)
    expect(page.locator("#chat-message")).to_have_value("hello")
    assert chat_bodies(sim) == []


def test_max_tokens_that_are_no_whole_number_are_refused_in_the_persons_language(
    page: Any, alice: Any, sign_in: Any, make_sim_backend: Any
) -> None:
    from accounts.models import UserProfile

    sim = make_sim_backend()
    UserProfile.objects.create(user=alice, language="de")
    sign_in(page, "alice")
    page.goto("/playground/")
    expect(page.get_by_label("Modell")).to_have_value("sim-small")
    expect(page.get_by_role("heading", name="Einstellungen")).to_be_visible()
    page.get_by_label("Systemprompt").fill("Kurz antworten.")
    page.get_by_label("Höchstzahl Tokens").fill("2.5")
    page.locator("#chat-message").fill("Hallo")
    page.get_by_role("button", name="Senden").click()
    alert = page.locator("#chat-alert")
    expect(alert).to_have_text(
        "Die Höchstzahl Tokens muss eine ganze Zahl von 1 bis 1.000.000 sein."
    )
    expect(alert).to_be_focused()
    assert chat_bodies(sim) == []


def test_running_as_one_of_my_tokens_shows_its_class_and_the_answer_runs_at_it(
    page: Any, alice: Any, sign_in: Any, screenshot: Any, make_sim_backend: Any
) -> None:
    make_sim_backend(max_inflight=4, tokens=4, token_delay=0)
    make_group("research", priority="high", members=[alice])
    settings_update(values={"gateway.priority_enabled": True})
    make_token_with_secret(alice, name="batch", priority="low")
    make_token_with_secret(alice, name="old", revoked=True)
    sign_in(page, "alice")
    page.goto("/playground/")
    fact = page.locator("#playground-class")
    expect(fact).to_have_text("Your requests run at priority High.")
    run_as = page.get_by_label("Run as")
    expect(run_as.locator("option")).to_have_text(
        ["Myself (priority High)", "Token “batch” (priority Low)"]
    )
    run_as.select_option(label="Token “batch” (priority Low)")
    expect(fact).to_have_text("Requests as the token “batch” run at priority Low.")
    expect(fact).to_have_attribute("data-priority", "low")
    send(page, "As the batch token")
    expect(page.locator(".turn.assistant .turn-class")).to_have_text(
        "This answer ran at priority Low."
    )
    screenshot(page, "playground-run-as")
    run_as.select_option(label="Myself (priority High)")
    expect(fact).to_have_text("Your requests run at priority High.")
    send(page, "As myself")
    expect(page.locator(".turn.assistant .turn-class").last).to_have_text(
        "This answer ran at priority High."
    )

    from gateway.models import ActivityRecord
    from tests.support.drive import wait_until

    # The records are written a moment after each answer.
    wait_until(lambda: ActivityRecord.objects.count() == 2, "both requests are recorded")
    records = ActivityRecord.objects.order_by("at").values_list("token_name", "priority_class")
    assert list(records) == [("batch", "low"), ("", "high")]


def run_snippet(kind: str, code: str, key: str) -> str:
    env = {**os.environ, "AIPLANE_API_KEY": key}
    command = ["bash", "-c", code] if kind == "curl" else [sys.executable, "-c", code]
    done = subprocess.run(  # noqa: S603 - the snippet the page wrote, run against our test server
        command, env=env, capture_output=True, text=True, timeout=60, check=False
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_show_code_writes_what_was_just_run_and_every_snippet_runs_against_the_gateway(
    page: Any, aiplane_server: Any, alice: Any, sign_in: Any, screenshot: Any, make_sim_backend: Any
) -> None:
    sim = make_sim_backend(max_inflight=4, tokens=3, token_delay=0)
    token, key = make_token_with_secret(alice, name="laptop")
    sign_in(page, "alice")
    page.goto("/playground/")
    show = page.get_by_role("button", name="Show code")
    expect(show).to_be_disabled()  # nothing run yet
    page.get_by_label("Run as").select_option(label="Token “laptop”")
    page.get_by_label("System prompt").fill("Be brief.")
    page.get_by_label("Temperature").fill("0.5")
    send(page, "It's a test")
    show.click()
    expect(page.get_by_role("button", name="Hide code")).to_have_attribute("aria-expanded", "true")
    card = page.locator("#code-card")
    expect(card.locator("#code-intro")).to_have_text(
        f"The request you just ran, sent to {aiplane_server.url}/v1. Put the token “laptop” "
        f"({token.prefix}…) in the environment variable AIPLANE_API_KEY."
    )
    code = card.locator("#code-text")
    expect(page.get_by_role("tab", name="curl")).to_have_attribute("aria-selected", "true")
    expect(code).to_contain_text(f"curl -N {aiplane_server.url}/v1/chat/completions")
    expect(code).to_contain_text('-H "Authorization: Bearer $AIPLANE_API_KEY"')
    screenshot(page, "playground-code")

    outputs = {"curl": run_snippet("curl", code.inner_text(), key)}
    page.get_by_role("tab", name="OpenAI Python").click()
    expect(code).to_contain_text(f'OpenAI(base_url="{aiplane_server.url}/v1"')
    outputs["openai"] = run_snippet("openai", code.inner_text(), key)
    page.get_by_role("tab", name="Anthropic Python").click()
    expect(code).to_contain_text(f'Anthropic(base_url="{aiplane_server.url}"')
    outputs["anthropic"] = run_snippet("anthropic", code.inner_text(), key)

    assert "data: [DONE]" in outputs["curl"]
    assert outputs["openai"].strip() == "tok0 tok1 tok2"
    assert outputs["anthropic"].strip() == "tok0 tok1 tok2"
    bodies = chat_bodies(sim)
    assert len(bodies) == 4  # the playground's, then curl's and the OpenAI SDK's the same
    expected = [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": "It's a test"},
    ]
    for body in bodies[:3]:
        assert body["messages"] == expected
        assert body["temperature"] == 0.5
    # Anthropic's Messages API, translated to chat by the gateway: the same conversation.
    assert bodies[3]["messages"] == expected
    assert bodies[3]["temperature"] == 0.5


def test_the_playground_fits_a_phone_with_its_settings_first(
    page: Any, alice: Any, sign_in: Any, screenshot: Any, make_sim_backend: Any
) -> None:
    make_sim_backend(max_inflight=4, tokens=4, token_delay=0)
    page.set_viewport_size({"width": 390, "height": 844})
    sign_in(page, "alice")
    page.goto("/playground/")
    expect(page.get_by_label("Model")).to_have_value("sim-small")
    send(page, "Hello from a phone")
    settings_box = page.locator(".chat-settings").bounding_box()
    transcript_box = page.locator(".transcript-card").bounding_box()
    assert settings_box is not None and transcript_box is not None
    assert settings_box["y"] < transcript_box["y"]
    assert page.evaluate("document.documentElement.scrollWidth <= window.innerWidth")
    screenshot(page, "playground-phone", widths=((390, 844),))
