"""An owner sees who set their token's priority, and whether an administrator did."""

from __future__ import annotations

from typing import Any

import pytest
from django.test import Client

from tests.support.factories import make_token

pytestmark = pytest.mark.django_db


def test_an_owner_sees_that_an_administrator_raised_their_token_and_who(
    alice_client: Client, carol_client: Client, alice: Any
) -> None:
    token = make_token(alice, name="agent")
    raised = carol_client.put(
        f"/api/v0/admin/tokens/{token.pk}/priority", {"priority": "high"}, "application/json"
    )
    assert raised.status_code == 200, raised.content
    [mine] = alice_client.get("/api/v0/tokens").json()["tokens"]
    assert (mine["priority"], mine["priority_set_by"], mine["priority_set_by_admin"]) == (
        "high",
        "carol",
        True,
    )
    assert alice_client.get("/api/v0/tokens/details").json()["max_priority"] == "medium"

    lowered = alice_client.put(
        f"/api/v0/tokens/{token.pk}/priority", {"priority": "low"}, "application/json"
    ).json()
    assert (lowered["priority_set_by"], lowered["priority_set_by_admin"]) == ("alice", False)
    again = alice_client.put(
        f"/api/v0/tokens/{token.pk}/priority", {"priority": "high"}, "application/json"
    )
    assert (again.status_code, again.json()["error"]["code"]) == (403, "priority_above_ceiling")
