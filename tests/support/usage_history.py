"""Activity records for the usage API tests: two people in overlapping groups, five requests."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from gateway.models import ActivityRecord
from tests.support.factories import make_group, make_user

NOW = datetime(2026, 12, 1, 12, 0, tzinfo=UTC)


def record(
    user: Any,
    model: str,
    *,
    hours_ago: float,
    tokens: tuple[int, int] | None,
    token: tuple[int, str] | None = (1, "laptop"),
    cached: int | None = None,
    priority_class: str = "medium",
    outcome: str = "immediate",
    queue_ms: float = 0.0,
) -> None:
    ActivityRecord.objects.create(
        at=NOW - timedelta(hours=hours_ago),
        user_id=user.pk if user else None,
        username=user.username if user else "",
        token_id=token[0] if token else None,
        token_name=token[1] if token else "",
        model=model,
        priority_class=priority_class,
        outcome=outcome,
        status=200 if outcome in ("immediate", "waited") else 429,
        queue_ms=queue_ms,
        input_tokens=tokens[0] if tokens else None,
        output_tokens=tokens[1] if tokens else None,
        cached_tokens=cached,
    )


@pytest.fixture(name="people")
def people_fixture(db: None) -> dict[str, Any]:
    everyone = make_group("everyone", is_default=True)
    research = make_group("research")
    ops = make_group("ops")
    alice = make_user("alice", groups=[research, ops])
    bob = make_user("bob", groups=[ops])
    return {"alice": alice, "bob": bob, "groups": (everyone, research, ops)}


@pytest.fixture(name="history")
def history_fixture(people: dict[str, Any]) -> None:
    alice, bob = people["alice"], people["bob"]
    record(alice, "small", hours_ago=1, tokens=(10, 5), cached=4, queue_ms=10)
    record(alice, "large", hours_ago=2, tokens=(100, 50), priority_class="high", queue_ms=30,
           outcome="waited")  # fmt: skip
    record(bob, "small", hours_ago=3, tokens=(7, 3), token=(2, "ci"), queue_ms=50,
           outcome="waited")  # fmt: skip
    record(bob, "small", hours_ago=4, tokens=None, token=(2, "ci"), outcome="rejected")
    record(alice, "small", hours_ago=30, tokens=(1000, 1000))  # outside the default day


def sums(row: dict[str, Any]) -> tuple[int, int, int, int]:
    return row["requests"], row["input_tokens"], row["output_tokens"], row["cached_tokens"]
