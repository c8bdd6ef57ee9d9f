"""Administration of gateway groups: list, create or update by name, delete."""

from __future__ import annotations

from typing import Any

import pytest
from django.test import Client
from rest_framework.fields import DateTimeField

from accounts.models import GatewayGroup
from tests.support.errors import INVALID_PRIORITY, envelope
from tests.support.factories import make_group

pytestmark = pytest.mark.django_db

LAST_ADMIN = envelope(
    "This change would leave no active administrator.",
    "invalid_request_error",
    "last_administrator",
)


def shown(group: GatewayGroup) -> dict[str, Any]:
    group.refresh_from_db()
    return {
        "name": group.name,
        "description": group.description,
        "is_admin": group.is_admin,
        "is_default": group.is_default,
        "priority": None if group.priority is None else group.priority_class.label,
        "allowance": group.allowance,
        "members": sorted(u.username for u in group.members.all()),
        "created_at": DateTimeField().to_representation(group.created_at),
        "updated_at": DateTimeField().to_representation(group.updated_at),
    }


def put(client: Client, payload: Any) -> Any:
    return client.put("/api/v0/admin/groups", payload, content_type="application/json")


def test_groups_are_listed_by_name_with_members(
    carol_client: Client, administrators: GatewayGroup, alice: Any, bob: Any
) -> None:
    research = make_group("research", priority="high", members=[bob, alice], description="R&D")
    response = carol_client.get("/api/v0/admin/groups")
    assert response.status_code == 200
    assert response.json() == {"groups": [shown(administrators), shown(research)]}
    assert response.json()["groups"][1]["members"] == ["alice", "bob"]


def test_putting_a_new_name_creates_the_group(carol_client: Client, alice: Any) -> None:
    response = put(
        carol_client,
        {
            "name": "research",
            "description": "R&D",
            "priority": "high",
            "members": ["alice"],
            "is_default": False,
            "is_admin": False,
        },
    )
    assert response.status_code == 201
    group = GatewayGroup.objects.get(name="research")
    assert response.json() == shown(group)
    assert response.json()["priority"] == "high"
    assert response.json()["members"] == ["alice"]


def test_putting_an_existing_name_updates_only_the_given_fields(
    carol_client: Client, alice: Any, bob: Any
) -> None:
    group = make_group("research", priority="high", members=[alice], description="R&D")
    response = put(carol_client, {"name": "research", "priority": None, "members": ["bob"]})
    assert response.status_code == 200
    assert response.json() == shown(group)
    assert (group.description, group.priority) == ("R&D", None)
    assert response.json()["members"] == ["bob"]


def test_omitting_members_keeps_them(carol_client: Client, alice: Any) -> None:
    group = make_group("research", members=[alice])
    assert put(carol_client, {"name": "research", "priority": "low"}).status_code == 200
    assert [u.username for u in group.members.all()] == ["alice"]


def test_an_unknown_member_is_refused_and_nothing_changes(carol_client: Client, alice: Any) -> None:
    group = make_group("research", priority="low", members=[alice])
    before = shown(group)
    response = put(
        carol_client, {"name": "research", "priority": "high", "members": ["alice", "zed", "amy"]}
    )
    assert response.status_code == 400
    assert response.json() == envelope(
        "Unknown user: amy, zed.", "invalid_request_error", "unknown_member", "members"
    )
    assert shown(group) == before


def test_an_unknown_member_does_not_create_the_group(carol_client: Client) -> None:
    response = put(carol_client, {"name": "new", "members": ["zed"]})
    assert response.status_code == 400
    assert not GatewayGroup.objects.filter(name="new").exists()


@pytest.mark.parametrize(
    ("payload", "expected"),
    [
        ({"name": "research", "priority": "urgent"}, INVALID_PRIORITY),
        (
            {"name": "has space"},
            envelope(
                "A group name is 1-64 letters, digits, '.', '_' or '-', "
                "starting with a letter or digit.",
                "invalid_request_error",
                "invalid_group_name",
                "name",
            ),
        ),
        (
            {"priority": "low"},
            envelope("This field is required.", "invalid_request_error", "required", "name"),
        ),
        (
            {"name": "research", "is_admin": "maybe"},
            envelope("Must be a valid boolean.", "invalid_request_error", "invalid", "is_admin"),
        ),
        (
            {"name": "research", "members": [["alice"]]},
            envelope("Not a valid string.", "invalid_request_error", "invalid", "members.0"),
        ),
    ],
)
def test_an_invalid_group_is_refused(
    carol_client: Client, payload: dict[str, Any], expected: dict[str, Any]
) -> None:
    response = put(carol_client, payload)
    assert response.status_code == 400
    assert response.json() == expected
    assert not GatewayGroup.objects.exclude(name="administrators").exists()


def test_deleting_a_group_removes_it(carol_client: Client, alice: Any) -> None:
    make_group("research", members=[alice])
    response = carol_client.delete("/api/v0/admin/groups/research")
    assert response.status_code == 204
    assert not GatewayGroup.objects.filter(name="research").exists()


def test_deleting_an_unknown_group_is_404(carol_client: Client) -> None:
    response = carol_client.delete("/api/v0/admin/groups/nope")
    assert response.status_code == 404
    assert response.json() == envelope(
        "Group nope not found.", "not_found_error", "group_not_found"
    )


@pytest.mark.parametrize(
    "change",
    [
        lambda client: client.delete("/api/v0/admin/groups/administrators"),
        lambda client: put(client, {"name": "administrators", "is_admin": False}),
        lambda client: put(client, {"name": "administrators", "members": []}),
    ],
    ids=["delete", "demote", "empty"],
)
def test_the_last_administrator_cannot_be_locked_out(
    carol_client: Client, administrators: GatewayGroup, change: Any
) -> None:
    before = shown(administrators)
    response = change(carol_client)
    assert response.status_code == 409
    assert response.json() == LAST_ADMIN
    assert shown(administrators) == before


def test_another_administrator_may_be_removed_while_one_remains(
    carol_client: Client, administrators: GatewayGroup, alice: Any
) -> None:
    administrators.members.add(alice)
    response = put(carol_client, {"name": "administrators", "members": ["carol"]})
    assert response.status_code == 200
    assert response.json()["members"] == ["carol"]
