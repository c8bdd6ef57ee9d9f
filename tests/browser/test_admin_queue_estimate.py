"""Administration → Queue: each waiter's estimated wait, "unknown" until its backend's pace is
known, then the waiters before it at that pace, as a rough duration in the person's language."""

from __future__ import annotations

import math
from typing import Any

import pytest
from playwright.sync_api import expect

from tests.support.browser import StreamingCall, wait_until
from tests.support.drive import configure, engine_stats, wait_idle
from tests.support.factories import make_token_with_secret

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

WORDS = {
    "en": {
        "column": "Estimated wait",
        "unknown": "unknown",
        "under": "under 1 s",
        "about": "about",
    },
    "de": {
        "column": "Geschätzte Wartezeit",
        "unknown": "unbekannt",
        "under": "unter 1 s",
        "about": "etwa",
    },
}

# formatEstimate in the page (static/js/widgets.js), called on the values given.
FORMAT_ESTIMATE = """async (values) => {
    const src = document.querySelector("script[type=module][src*='queue.js']").src;
    const { formatEstimate } = await import(new URL("widgets.js", src));
    return values.map((value) => formatEstimate(value));
}"""


def as_text(secs: float, words: dict[str, str]) -> str:
    """What the page shows for an estimate of under a minute (JavaScript's Math.round)."""
    whole = math.floor(secs + 0.5)
    return words["under"] if whole < 1 else f"{words['about']} {whole} s"


@pytest.mark.parametrize("language", ["en", "de"])
def test_a_waiters_estimated_wait_is_unknown_until_its_backend_has_a_pace_then_it_is_shown(
    page: Any,
    aiplane_server: Any,
    make_sim_backend: Any,
    alice: Any,
    bob: Any,
    carol: Any,
    sign_in: Any,
    screenshot: Any,
    language: str,
) -> None:
    from accounts.models import UserProfile

    words = WORDS[language]
    UserProfile.objects.update_or_create(user=carol, defaults={"language": language})
    # A backend of this test's own: the queue's pace per backend outlives a test's database.
    name = f"paced-{language}"
    sim = make_sim_backend(name, slots=0, tokens=3, token_delay=0.005)  # its gate shut
    runtime = aiplane_server.app.runtime
    _, bob_key = make_token_with_secret(bob, name="bob-batch")
    _, alice_key = make_token_with_secret(alice, name="alice-agent")
    sign_in(page, "carol")
    page.goto("/admin/queue/")
    expect(page.locator(f"#queue-backends-body tr[data-backend='{name}']")).to_be_visible()
    calls = []
    try:
        # The backend has taken one request: no pace yet, so the waiter's estimate is unknown.
        calls.append(StreamingCall(aiplane_server.url, bob_key))
        wait_until(lambda: engine_stats(sim)["waiting"] == 1, "the blocker holds the slot")
        calls.append(StreamingCall(aiplane_server.url, alice_key, "no pace yet"))
        wait_until(lambda: runtime.queue.waiting == 1, "alice's request waits")
        rows = page.locator("#waiters-table tr[data-waiter]")
        expect(rows).to_have_count(1)
        estimate = rows.nth(0).locator(".estimate")
        expect(estimate).to_have_text(words["unknown"])
        expect(rows.nth(0).locator("td:has(.estimate)")).to_have_attribute(
            "data-label", words["column"]
        )

        # Both complete: the backend has a pace. Then the gate shuts again behind a third.
        configure(sim, slots=1)
        wait_idle(aiplane_server.app, name)
        configure(sim, slots=0)
        calls.append(StreamingCall(aiplane_server.url, bob_key, "holds the slot again"))
        wait_until(lambda: engine_stats(sim)["waiting"] == 1, "the third holds the slot")
        calls.append(StreamingCall(aiplane_server.url, alice_key, "first in line"))
        wait_until(lambda: runtime.queue.waiting == 1, "alice's first request waits")
        calls.append(StreamingCall(aiplane_server.url, alice_key, "second in line"))
        wait_until(lambda: runtime.queue.waiting == 2, "alice's second request waits too")

        expect(rows).to_have_count(2)
        # The first has nobody before it; the second has one, at the pace measured.
        expect(rows.nth(0).locator(".estimate")).to_have_text(words["under"])
        second = rows.nth(1).locator(".estimate")
        expect(second).not_to_have_text(words["unknown"])
        secs, text = second.evaluate("(el) => [el.dataset.secs, el.textContent]")
        assert float(secs) > 0
        assert text == as_text(float(secs), words)
        screenshot(page, f"admin-queue-estimate-{language}")
    finally:
        configure(sim, slots=1)
        for call in calls:
            call.close()


@pytest.mark.parametrize(
    ("admin", "expected"),
    [
        ("carol", ["unknown", "under 1 s", "under 1 s", "about 4 s", "about 59 s", "about 1 min",
                   "about 2 min", "about 59 min", "about 1 h", "about 3 h"]),
        ("german_carol", ["unbekannt", "unter 1 s", "unter 1 s", "etwa 4 s", "etwa 59 s",
                          "etwa 1 min", "etwa 2 min", "etwa 59 min", "etwa 1 h", "etwa 3 h"]),
    ],
)  # fmt: skip
def test_an_estimated_wait_reads_as_a_rough_duration_in_the_persons_language(
    page: Any, request: Any, sign_in: Any, admin: str, expected: list[str]
) -> None:
    request.getfixturevalue(admin)
    sign_in(page, "carol")
    page.goto("/admin/queue/")
    values = [None, 0, 0.4, 4.4, 59.4, 59.6, 125, 3569, 3600, 9000]
    assert page.evaluate(FORMAT_ESTIMATE, values) == expected
