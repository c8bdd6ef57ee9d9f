"""Users and their groups: chosen when the account is made, changed later, and each person's
effective priority and groups in the list."""

from __future__ import annotations

from typing import Any

import pytest
from django.contrib.auth.models import User
from django.test import Client

from tests.support.errors import envelope
from tests.support.factories import make_group

pytestmark = pytest.mark.django_db

USERS = "/api/v0/admin/users"


def test_a_new_account_joins_the_groups_chosen_and_the_list_shows_its_priority(
    carol_client: Client,
) -> None:
    make_group("research", priority="high")
    make_group("batch", priority="low")
    make_group("everyone", is_default=True)
    created = carol_client.post(
        USERS, {"username": "dave", "groups": ["research", "batch"]}, "application/json"
    )
    assert created.status_code == 201, created.content
    dave = created.json()
    assert dave["groups"] == ["batch", "everyone", "research"]  # the default group counts too
    assert (dave["priority"], dave["max_priority"]) == ("high", "high")

    listed = {u["username"]: u for u in carol_client.get(USERS).json()["users"]}
    assert (listed["carol"]["priority"], listed["carol"]["groups"]) == (
        "medium",
        ["administrators", "everyone"],
    )
    assert listed["carol"]["max_priority"] == "high"  # administrators may choose any class


def test_changing_an_accounts_groups_replaces_them_and_keeps_the_default_ones(
    carol_client: Client, alice: Any
) -> None:
    make_group("research", priority="high", members=[alice])
    make_group("batch", priority="low")
    make_group("everyone", is_default=True, members=[alice])
    changed = carol_client.put(f"{USERS}/{alice.pk}", {"groups": ["batch"]}, "application/json")
    assert changed.status_code == 200, changed.content
    assert (changed.json()["groups"], changed.json()["priority"]) == (["batch", "everyone"], "low")
    kept = carol_client.put(f"{USERS}/{alice.pk}", {"email": "a@example.com"}, "application/json")
    assert kept.json()["groups"] == ["batch", "everyone"]  # left out: unchanged


def test_an_unknown_group_for_a_new_account_is_refused_and_creates_nothing(
    carol_client: Client,
) -> None:
    make_group("research")
    refused = carol_client.post(
        USERS, {"username": "dave", "groups": ["research", "nope"]}, "application/json"
    )
    assert (refused.status_code, refused.json()) == (
        400,
        envelope("No group named 'nope'.", "invalid_request_error", "unknown_group", "groups"),
    )
    assert not User.objects.filter(username="dave").exists()


def test_taking_the_last_administrator_out_of_the_administrators_group_is_refused(
    carol_client: Client, carol: Any
) -> None:
    refused = carol_client.put(f"{USERS}/{carol.pk}", {"groups": []}, "application/json")
    assert refused.status_code == 409, refused.content
    assert sorted(carol.gateway_groups.values_list("name", flat=True)) == ["administrators"]
