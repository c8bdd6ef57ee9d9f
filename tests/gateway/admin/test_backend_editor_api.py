"""The backend editor's API: what "Detect now" found or why it failed, and a backend's pools."""

from __future__ import annotations

import socket
from typing import Any

import pytest
from django.test import Client

from gateway.models import Backend, Pool
from tests.support.admin_api import BACKENDS, POOLS, invalid, put, row


def closed_port() -> int:
    """A loopback port nothing listens on (bound, then released)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def test_detect_now_on_an_unreachable_backend_says_which_url_failed_and_why(
    gateway: Any, carol: Any, login: Any
) -> None:
    admin = login(carol)
    base = f"http://127.0.0.1:{closed_port()}/v1"
    put(admin, BACKENDS, {"name": "gone", "base_url": base})

    response = admin.post(f"{BACKENDS}/gone/detect")
    assert response.status_code == 200, response.content
    detection = response.json()["detection"]
    assert detection["ok"] is False
    assert (detection["url"], detection["reason"]) == (base + "/models", "unreachable")
    assert detection["error"].startswith("ConnectError")
    assert detection["status"] is None


def test_detect_now_on_a_backend_that_answers_an_error_reports_the_status_and_its_words(
    gateway: Any, make_sim: Any, carol: Any, login: Any
) -> None:
    engine = make_sim()
    admin = login(carol)
    # The engine's root answers 404 for /nothing/models: a base URL with a wrong path.
    put(admin, BACKENDS, {"name": "wrong-path", "base_url": engine.url + "/nothing"})

    detection = admin.post(f"{BACKENDS}/wrong-path/detect").json()["detection"]
    assert (detection["ok"], detection["reason"], detection["status"]) == (False, "status", 404)
    assert detection["url"] == engine.url + "/nothing/models"
    assert detection["error"].startswith("HTTP 404")


def test_detect_now_on_a_reachable_backend_is_ok_and_names_the_url_it_read(
    gateway: Any, make_sim: Any, carol: Any, login: Any
) -> None:
    engine = make_sim()
    admin = login(carol)
    put(admin, BACKENDS, {"name": "sim", "base_url": engine.url + "/v1"})

    body = admin.post(f"{BACKENDS}/sim/detect").json()
    assert body["detection"] == {"ok": True, "url": engine.url + "/v1/models", "status": None}
    assert body["discovered_models"] == ["sim-small", "sim-large"]


@pytest.mark.django_db
def test_the_backend_editor_puts_a_backend_into_pools_and_takes_it_out(
    carol_client: Client,
) -> None:
    put(carol_client, POOLS, {"name": "chat"})
    put(carol_client, POOLS, {"name": "batch"})
    saved = put(carol_client, BACKENDS, {"name": "gpu", "base_url": "http://10.0.0.5:8000/v1"})
    assert saved.json()["pools"] == []  # in no pool: the editor warns

    moved = put(carol_client, BACKENDS, {"name": "gpu", "pools": ["chat", "batch"]})
    assert moved.status_code == 200, moved.content
    assert moved.json()["pools"] == ["batch", "chat"]
    assert list(Pool.objects.get(name="chat").backends.values_list("name", flat=True)) == ["gpu"]

    put(carol_client, BACKENDS, {"name": "gpu", "pools": ["batch"]})
    assert sorted(Backend.objects.get(name="gpu").pools.values_list("name", flat=True)) == ["batch"]
    kept = put(carol_client, BACKENDS, {"name": "gpu", "weight": 3})  # left out: unchanged
    assert kept.json()["pools"] == ["batch"]


@pytest.mark.django_db
def test_an_unknown_pool_in_the_backend_editor_is_refused_and_changes_nothing(
    carol_client: Client,
) -> None:
    put(carol_client, POOLS, {"name": "chat"})
    put(carol_client, BACKENDS, {"name": "gpu", "base_url": "http://10.0.0.5:8000/v1"})
    before = row("gpu")

    refused = put(carol_client, BACKENDS, {"name": "gpu", "weight": 5, "pools": ["chat", "nope"]})
    assert (refused.status_code, refused.json()) == (
        400,
        invalid("Unknown pool: nope.", "unknown_pool", "pools"),
    )
    assert row("gpu") == before
    assert not Pool.objects.get(name="chat").backends.exists()
