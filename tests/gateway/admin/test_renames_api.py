"""Renaming groups, backends and pools: references follow and the running gateway picks it up."""

from __future__ import annotations

from typing import Any

import pytest
from django.test import Client

from gateway.models import Backend, Pool
from tests.support.admin_api import BACKENDS, POOLS, invalid, put
from tests.support.drive import chat, key_for
from tests.support.factories import make_group
from tests.support.live import add_backend

GROUPS = "/api/v0/admin/groups"


def rename(client: Client, url: str, name: str) -> Any:
    return client.post(f"{url}/rename", {"name": name}, content_type="application/json")


def test_a_renamed_backend_keeps_its_pools_and_serves_under_its_new_name(
    gateway: Any, sim: Any, carol: Any, login: Any
) -> None:
    admin = login(carol)
    add_backend("gpu-old", sim.url)
    key = key_for("alice")
    assert chat(gateway, key).status_code == 200

    renamed = rename(admin, f"{BACKENDS}/gpu-old", "gpu-new")
    assert renamed.status_code == 200, renamed.content
    assert (renamed.json()["name"], renamed.json()["pools"]) == ("gpu-new", ["default"])
    assert [b.name for b in Pool.objects.get(name="default").backends.all()] == ["gpu-new"]
    assert chat(gateway, key).status_code == 200
    assert "gpu-new" in gateway.runtime.snapshot.upstreams
    assert "gpu-old" not in gateway.runtime.snapshot.upstreams


def test_a_renamed_pool_stays_the_fallback_of_the_pools_that_name_it(
    carol_client: Client,
) -> None:
    put(carol_client, POOLS, {"name": "spare"})
    put(carol_client, POOLS, {"name": "chat", "fallback": "spare"})
    renamed = rename(carol_client, f"{POOLS}/spare", "reserve")
    assert renamed.status_code == 200, renamed.content
    assert renamed.json()["name"] == "reserve"
    chat_pool = carol_client.get(POOLS).json()["pools"][0]
    assert (chat_pool["name"], chat_pool["fallback"]) == ("chat", "reserve")


def test_a_renamed_group_is_followed_by_the_pools_that_allow_it(
    gateway: Any, sim: Any, carol: Any, login: Any
) -> None:
    from django.contrib.auth.models import User

    admin = login(carol)
    key = key_for("alice")
    make_group("research", members=[User.objects.get(username="alice")])
    add_backend("solo", sim.url, allowed_groups=["research"])
    assert chat(gateway, key).status_code == 200

    renamed = rename(admin, f"{GROUPS}/research", "science")
    assert renamed.status_code == 200, renamed.content
    assert (renamed.json()["name"], renamed.json()["members"]) == ("science", ["alice"])
    assert Pool.objects.get(name="default").allowed_groups == ["science"]
    assert chat(gateway, key).status_code == 200  # still allowed, under the new name


def test_a_deleted_group_leaves_its_pools_so_a_new_group_of_its_name_gets_no_access(
    gateway: Any, sim: Any, carol: Any, login: Any
) -> None:
    from django.contrib.auth.models import User

    from aiplane.models import AuditEntry

    admin = login(carol)
    alice, bob = key_for("alice"), key_for("bob")
    make_group("contractors", members=[User.objects.get(username="alice")])
    add_backend("solo", sim.url, allowed_groups=["contractors", "research"])
    put(admin, POOLS, {"name": "private", "allowed_groups": ["contractors"], "backends": []})
    assert chat(gateway, alice).status_code == 200

    assert admin.delete(f"{GROUPS}/contractors").status_code == 204
    assert Pool.objects.get(name="default").allowed_groups == ["research"]
    # Closed, not opened: a pool left with no group allows nobody.
    private = Pool.objects.get(name="private")
    assert (private.allowed_groups, private.everyone) == ([], False)
    assert set(
        AuditEntry.objects.filter(action="pool.update").values_list("target", flat=True)
    ) == {"default", "private"}

    # Someone else's new group of the same name is a new group: it inherits nothing.
    make_group("contractors", members=[User.objects.get(username="bob")])
    assert chat(gateway, bob).status_code == 403


@pytest.mark.django_db
def test_a_rename_to_a_taken_or_malformed_name_is_refused_and_changes_nothing(
    carol_client: Client,
) -> None:
    put(carol_client, BACKENDS, {"name": "a", "base_url": "http://10.0.0.5:8000/v1"})
    put(carol_client, BACKENDS, {"name": "b", "base_url": "http://10.0.0.6:8000/v1"})
    taken = rename(carol_client, f"{BACKENDS}/a", "b")
    assert (taken.status_code, taken.json()) == (
        400,
        invalid("A backend named 'b' exists.", "name_taken", "name"),
    )
    malformed = rename(carol_client, f"{BACKENDS}/a", "no spaces")
    assert (malformed.status_code, malformed.json()["error"]["code"]) == (400, "invalid_name")
    make_group("research")
    make_group("science")
    group_taken = rename(carol_client, f"{GROUPS}/research", "science")
    assert (group_taken.status_code, group_taken.json()["error"]["code"]) == (400, "name_taken")
    assert sorted(Backend.objects.values_list("name", flat=True)) == ["a", "b"]


@pytest.mark.django_db
def test_renaming_something_that_does_not_exist_is_a_404(carol_client: Client) -> None:
    assert rename(carol_client, f"{BACKENDS}/nope", "x").status_code == 404
    assert rename(carol_client, f"{POOLS}/nope", "x").status_code == 404
    assert rename(carol_client, f"{GROUPS}/nope", "x").status_code == 404


@pytest.mark.django_db
def test_renaming_is_for_administrators_only(alice_client: Client) -> None:
    assert rename(alice_client, f"{BACKENDS}/a", "b").status_code == 403
    assert rename(alice_client, f"{GROUPS}/a", "b").status_code == 403
