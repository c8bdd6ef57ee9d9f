"""Who may use a pool: everyone is an explicit choice, and emptying the groups never opens it."""

from __future__ import annotations

from typing import Any

import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor
from django.test import Client

from gateway.models import Pool
from tests.support.admin_api import POOLS, invalid, pool_row, put
from tests.support.drive import chat, key_for
from tests.support.factories import make_group
from tests.support.live import add_backend


@pytest.mark.django_db
def test_a_new_pool_without_groups_is_for_everyone_and_says_so(carol_client: Client) -> None:
    created = put(carol_client, POOLS, {"name": "open"})
    assert created.status_code == 200, created.content
    assert (created.json()["everyone"], created.json()["allowed_groups"]) == (True, [])
    named = put(carol_client, POOLS, {"name": "team", "allowed_groups": ["administrators"]})
    assert (named.json()["everyone"], named.json()["allowed_groups"]) == (False, ["administrators"])


@pytest.mark.django_db
def test_emptying_a_pools_groups_without_saying_everyone_is_refused_and_changes_nothing(
    carol_client: Client,
) -> None:
    put(carol_client, POOLS, {"name": "team", "allowed_groups": ["administrators"]})
    before = pool_row("team")

    refused = put(carol_client, POOLS, {"name": "team", "allowed_groups": []})
    assert (refused.status_code, refused.json()) == (
        400,
        invalid(
            "Removing every group from the pool 'team' would open it to everyone: send"
            " everyone: true to allow that, or everyone: false to close it.",
            "access_widening",
            "everyone",
        ),
    )
    assert pool_row("team") == before


@pytest.mark.django_db
def test_everyone_true_opens_a_pool_and_false_with_no_groups_closes_it(
    carol_client: Client,
) -> None:
    put(carol_client, POOLS, {"name": "team", "allowed_groups": ["administrators"]})
    opened = put(carol_client, POOLS, {"name": "team", "everyone": True}).json()
    assert (opened["everyone"], opened["allowed_groups"]) == (True, [])
    closed = put(carol_client, POOLS, {"name": "team", "everyone": False}).json()
    assert (closed["everyone"], closed["allowed_groups"]) == (False, [])
    narrowed = put(carol_client, POOLS, {"name": "team", "allowed_groups": ["administrators"]})
    assert narrowed.json()["everyone"] is False  # naming groups narrows an open pool


def test_the_gateway_follows_the_choice_everyone_groups_or_nobody(
    gateway: Any, sim: Any, carol: Any, login: Any
) -> None:
    admin = login(carol)
    add_backend("solo", sim.url)
    alice_key = key_for("alice")
    make_group("research")
    put(admin, POOLS, {"name": "default", "backends": ["solo"], "allowed_groups": ["research"]})
    assert chat(gateway, alice_key).status_code == 403

    put(admin, POOLS, {"name": "default", "everyone": True})
    assert chat(gateway, alice_key).status_code == 200

    put(admin, POOLS, {"name": "default", "everyone": False})
    assert chat(gateway, alice_key).status_code == 403  # nobody may use it


@pytest.mark.django_db(transaction=True)
def test_the_migration_keeps_pools_stored_without_groups_open_to_everyone() -> None:
    before = [("gateway", "0005_activity_search")]
    after = [("gateway", "0006_pool_everyone")]
    try:
        executor = MigrationExecutor(connection)
        executor.migrate(before)
        old_apps = executor.loader.project_state(before).apps
        OldPool = old_apps.get_model("gateway", "Pool")
        OldPool.objects.create(name="open", allowed_groups=[])
        OldPool.objects.create(name="team", allowed_groups=["research"])

        executor = MigrationExecutor(connection)
        executor.loader.build_graph()
        executor.migrate(after)
        stored = {p.name: (p.everyone, p.allowed_groups) for p in Pool.objects.all()}
        assert stored == {"open": (True, []), "team": (False, ["research"])}
    finally:
        # Whatever happened, the schema is the latest again: the live servers of later tests
        # share this database.
        executor = MigrationExecutor(connection)
        executor.migrate(executor.loader.graph.leaf_nodes())
        Pool.objects.all().delete()
