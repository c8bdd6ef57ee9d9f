"""Administration of the typed operator settings: read the catalog, save all or nothing."""

from __future__ import annotations

from typing import Any

import pytest
from django.test import Client

from aiplane.catalog import CATALOG, all_settings
from aiplane.models import OperatorSetting
from tests.support.errors import envelope

pytestmark = pytest.mark.django_db


def post(client: Client, payload: Any) -> Any:
    return client.post("/api/v0/admin/settings", payload, "application/json")


def test_every_declared_setting_is_listed_with_its_type_and_value(carol_client: Client) -> None:
    response = carol_client.get("/api/v0/admin/settings")
    assert response.status_code == 200
    settings = response.json()["settings"]
    assert [s["key"] for s in settings] == [spec.key for spec in CATALOG]
    by_key = {s["key"]: s for s in settings}
    assert by_key["gateway.priority_enabled"] == {
        "key": "gateway.priority_enabled",
        "kind": "bool",
        "default": False,
        "choices": [],
        "section": "access.gateway",
        "value": False,
        "min": None,
        "max": None,
    }
    assert by_key["gateway.priority_default"] == {
        "key": "gateway.priority_default",
        "kind": "choice",
        "default": "medium",
        "choices": ["low", "medium", "high"],
        "section": "access.gateway",
        "value": "medium",
        "min": None,
        "max": None,
    }
    assert by_key["gateway.upstream_wait_secs"] == {
        "key": "gateway.upstream_wait_secs",
        "kind": "int",
        "default": 120,
        "choices": [],
        "section": "access.gateway",
        "value": 120,
        "min": 0,
        "max": 3600,
    }


def test_saving_settings_stores_them_and_answers_the_new_catalog(carol_client: Client) -> None:
    response = post(
        carol_client,
        {
            "gateway.priority_enabled": True,
            "gateway.priority_default": "low",
            "gateway.upstream_wait_secs": 30,
        },
    )
    assert response.status_code == 200
    values = {s["key"]: s["value"] for s in response.json()["settings"]}
    assert values["gateway.priority_enabled"] is True
    assert values["gateway.priority_default"] == "low"
    assert values["gateway.upstream_wait_secs"] == 30
    assert all_settings()["gateway.upstream_wait_secs"] == 30
    assert OperatorSetting.objects.get(key="gateway.priority_enabled").updated_by == "carol"


@pytest.mark.parametrize(
    ("payload", "expected"),
    [
        (
            {"gateway.priority_enabled": True, "gateway.nope": 1},
            envelope(
                "Unknown setting gateway.nope.",
                "invalid_request_error",
                "unknown_setting",
                "gateway.nope",
            ),
        ),
        (
            {"gateway.priority_enabled": True, "gateway.priority_default": "urgent"},
            envelope(
                "gateway.priority_default must be one of: low, medium, high.",
                "invalid_request_error",
                "invalid_setting",
                "gateway.priority_default",
            ),
        ),
        (
            {"gateway.priority_enabled": "yes"},
            envelope(
                "gateway.priority_enabled must be true or false.",
                "invalid_request_error",
                "invalid_setting",
                "gateway.priority_enabled",
            ),
        ),
        (
            {"gateway.priority_enabled": True, "gateway.upstream_wait_secs": -1},
            envelope(
                "gateway.upstream_wait_secs must be at least 0.",
                "invalid_request_error",
                "invalid_setting",
                "gateway.upstream_wait_secs",
            ),
        ),
        (
            [["gateway.priority_enabled", True]],
            envelope(
                "Settings must be a JSON object of key: value.",
                "invalid_request_error",
                "invalid_request",
            ),
        ),
    ],
)
def test_one_bad_entry_saves_nothing(
    carol_client: Client, payload: Any, expected: dict[str, Any]
) -> None:
    before = all_settings()
    response = post(carol_client, payload)
    assert response.status_code == 400
    assert response.json() == expected
    assert all_settings() == before
    assert not OperatorSetting.objects.exists()
