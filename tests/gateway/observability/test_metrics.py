"""The Prometheus families follow a scripted scenario through the live gateway exactly.

One backend with max_inflight=1 sits in front of a simulated engine whose gate (its own slot
count) the test opens and closes: with the gate shut the request holding the gateway's only slot
stays in the engine, so the next ones queue in the gateway in a known order, without timing.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest

from aiplane.catalog import settings_update
from tests.support.drive import (
    chat,
    configure,
    engine_stats,
    inflight,
    key_for,
    open_raw,
    sample,
    scrape,
    wait_until,
    waiting,
)
from tests.support.live import add_backend

CLASSES = {"low": "batch", "medium": "normal", "high": "interactive"}
OUTCOMES = ("immediate", "waited", "expired", "cancelled", "rejected")


@pytest.fixture
def engine(make_sim: Any) -> Any:
    return make_sim(slots=1, tokens=2, token_delay=0)


@pytest.fixture
def solo(gateway: Any, engine: Any) -> Any:
    """The live gateway with one backend, 'solo', that runs one request at a time."""
    add_backend("solo", engine.url, max_inflight=1)
    return gateway


def admissions(scraped: Any, cls: str) -> dict[str, float]:
    return {
        outcome: sample(
            scraped,
            "aiplane_admissions_total",
            **{"class": cls, "band": CLASSES[cls]},
            outcome=outcome,
        )
        for outcome in OUTCOMES
    }


def by_class(scraped: Any, name: str, cls: str, **labels: str) -> float:
    return sample(scraped, name, **{"class": cls, "band": CLASSES[cls]}, **labels)


def hold_the_slot(pool: ThreadPoolExecutor, gateway: Any, engine: Any, key: str) -> Any:
    """Shut the engine's gate and send a request that takes the only slot and stays there."""
    configure(engine, slots=0)
    blocker = pool.submit(chat, gateway, key, "blocker")
    wait_until(lambda: engine_stats(engine)["waiting"] == 1, "the blocker holds the slot")
    return blocker


def queue_one(pool: ThreadPoolExecutor, gateway: Any, key: str, label: str, **kw: Any) -> Any:
    before = waiting(gateway)
    future = pool.submit(chat, gateway, key, label, **kw)
    wait_until(lambda: waiting(gateway) == before + 1, f"{label} waits")
    return future


def test_admissions_dispatches_and_waits_follow_a_scripted_scenario_exactly(
    solo: Any, engine: Any
) -> None:
    key = key_for("alice")
    immediate, waited = 3, 2
    for n in range(immediate):
        assert chat(solo, key, f"quick {n}").status_code == 200

    with ThreadPoolExecutor(max_workers=8) as pool:
        blocker = hold_the_slot(pool, solo, engine, key)
        waiters = [queue_one(pool, solo, key, f"waiter {n}") for n in range(waited)]

        leaver = open_raw(solo, key, "leaver")
        wait_until(lambda: waiting(solo) == waited + 1, "the leaver waits")
        leaver.close()
        wait_until(lambda: waiting(solo) == waited, "the leaver is gone")

        settings_update(values={"gateway.upstream_wait_secs": 1})
        late = chat(solo, key, "too late")
        assert late.status_code == 503, late.text
        assert late.json()["error"]["code"] == "capacity_timeout"

        during = scrape(solo)
        assert by_class(during, "aiplane_queue_depth", "medium") == waited
        assert by_class(during, "aiplane_queue_oldest_wait_seconds", "medium") > 0
        assert sample(during, "aiplane_backend_inflight", backend="solo") == 1

        configure(engine, slots=1)
        for future in [blocker, *waiters]:
            assert future.result().status_code == 200
    wait_until(lambda: inflight(solo, "solo") == 0, "the slot is free again")

    after = scrape(solo)
    assert admissions(after, "medium") == {
        "immediate": immediate + 1,  # the blocker found the slot free too
        "waited": waited,
        "expired": 1,
        "cancelled": 1,
        "rejected": 0,
    }
    for cls in ("low", "high"):
        assert admissions(after, cls) == dict.fromkeys(OUTCOMES, 0)
    assert by_class(after, "aiplane_dispatches_total", "medium") == immediate + 1 + waited
    assert by_class(after, "aiplane_reorders_total", "medium") == 0
    assert by_class(after, "aiplane_queue_wait_seconds_count", "medium") == immediate + 1 + waited
    assert by_class(after, "aiplane_queue_wait_seconds_sum", "medium") > 0
    assert by_class(after, "aiplane_queue_wait_seconds_bucket", "medium", le="+Inf") == (
        immediate + 1 + waited
    )
    for cls in CLASSES:
        assert by_class(after, "aiplane_queue_depth", cls) == 0
        assert by_class(after, "aiplane_queue_oldest_wait_seconds", cls) == 0
    assert sample(after, "aiplane_backend_inflight", backend="solo") == 0
    assert sample(after, "aiplane_backend_capacity", backend="solo") == 1
    assert sample(after, "aiplane_backend_healthy", backend="solo") == 1


def test_zero_wait_admissions_land_in_the_zero_bucket_of_the_wait_histogram(
    solo: Any, engine: Any
) -> None:
    key = key_for("alice")
    for n in range(3):
        assert chat(solo, key, f"quick {n}").status_code == 200

    scraped = scrape(solo)
    assert by_class(scraped, "aiplane_admissions_total", "medium", outcome="immediate") == 3
    zero_bucket = by_class(scraped, "aiplane_queue_wait_seconds_bucket", "medium", le="0.0")
    first_bucket = by_class(scraped, "aiplane_queue_wait_seconds_bucket", "medium", le="0.005")
    assert (zero_bucket, first_bucket) == (3, 3)  # cumulative: le=0.005 includes le=0.0


def test_a_zero_budget_with_no_free_slot_counts_as_expired(solo: Any, engine: Any) -> None:
    key = key_for("alice")
    with ThreadPoolExecutor(max_workers=2) as pool:
        blocker = hold_the_slot(pool, solo, engine, key)
        settings_update(values={"gateway.upstream_wait_secs": 0})
        assert chat(solo, key, "no budget").status_code == 503
        configure(engine, slots=1)
        assert blocker.result().status_code == 200

    scraped = scrape(solo)
    assert admissions(scraped, "medium") == {
        "immediate": 1, "waited": 0, "expired": 1, "cancelled": 0, "rejected": 0,
    }  # fmt: skip
    assert by_class(scraped, "aiplane_dispatches_total", "medium") == 1


def test_a_full_queue_counts_as_rejected(solo: Any, engine: Any) -> None:
    key = key_for("alice")
    settings_update(values={"gateway.max_waiters": 1})
    with ThreadPoolExecutor(max_workers=3) as pool:
        blocker = hold_the_slot(pool, solo, engine, key)
        queued = queue_one(pool, solo, key, "in line")
        refused = chat(solo, key, "one too many")
        assert refused.status_code == 429, refused.text
        configure(engine, slots=1)
        assert blocker.result().status_code == 200
        assert queued.result().status_code == 200

    assert admissions(scrape(solo), "medium") == {
        "immediate": 1, "waited": 1, "expired": 0, "cancelled": 0, "rejected": 1,
    }  # fmt: skip


def test_with_prioritization_on_the_labels_follow_each_requests_class_and_band(
    solo: Any, engine: Any
) -> None:
    settings_update(values={"gateway.priority_enabled": True})
    high, medium, low = key_for("hana", "high"), key_for("mia"), key_for("lou", "low")
    with ThreadPoolExecutor(max_workers=5) as pool:
        blocker = hold_the_slot(pool, solo, engine, high)
        queued = [
            queue_one(pool, solo, low, "low"),
            queue_one(pool, solo, medium, "medium"),
            # A hint lowers hana's own request to the batch band.
            queue_one(pool, solo, high, "lowered", headers={"X-LlamaSwap-Priority": "batch"}),
        ]
        during = scrape(solo)
        assert {cls: by_class(during, "aiplane_queue_depth", cls) for cls in CLASSES} == {
            "low": 2, "medium": 1, "high": 0,
        }  # fmt: skip
        assert by_class(during, "aiplane_queue_oldest_wait_seconds", "low") > 0
        assert by_class(during, "aiplane_queue_oldest_wait_seconds", "high") == 0
        configure(engine, slots=1)
        for future in [blocker, *queued]:
            assert future.result().status_code == 200
    wait_until(lambda: inflight(solo, "solo") == 0, "the slot is free again")

    after = scrape(solo)
    assert admissions(after, "high") == {
        "immediate": 1, "waited": 0, "expired": 0, "cancelled": 0, "rejected": 0,
    }  # fmt: skip
    assert admissions(after, "medium") == {
        "immediate": 0, "waited": 1, "expired": 0, "cancelled": 0, "rejected": 0,
    }  # fmt: skip
    assert admissions(after, "low") == {
        "immediate": 0, "waited": 2, "expired": 0, "cancelled": 0, "rejected": 0,
    }  # fmt: skip
    dispatches = {cls: by_class(after, "aiplane_dispatches_total", cls) for cls in CLASSES}
    assert dispatches == {"low": 2, "medium": 1, "high": 1}
    counts = {cls: by_class(after, "aiplane_queue_wait_seconds_count", cls) for cls in CLASSES}
    assert counts == {"low": 2, "medium": 1, "high": 1}
    for cls in CLASSES:
        assert by_class(after, "aiplane_queue_depth", cls) == 0


def test_the_metrics_endpoint_serves_the_django_families_beside_the_gateways(solo: Any) -> None:
    scraped = scrape(solo)
    names = {name for name, _ in scraped}
    assert "aiplane_queue_depth" in names
    assert any(name.startswith("django_http_requests") for name in names)


def test_a_metrics_token_keeps_anonymous_scrapers_out(settings: Any) -> None:
    from django.test import Client

    settings.AIPLANE_METRICS_TOKEN = "scrape-me"
    refused = Client().get("/metrics")
    assert refused.status_code == 401
    assert refused.json() == {
        "error": {
            "message": "Send the metrics token as 'Authorization: Bearer <token>'.",
            "type": "authentication_error",
            "param": None,
            "code": "invalid_metrics_token",
        }
    }
    assert Client().get("/metrics", HTTP_AUTHORIZATION="Bearer wrong").status_code == 401
    scraped = Client().get("/metrics", HTTP_AUTHORIZATION="Bearer scrape-me")
    assert scraped.status_code == 200
    assert b"django_http_requests" in scraped.content
