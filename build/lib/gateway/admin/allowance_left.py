"""What is left of a person's allowance: each limit's use in its current window, from the
gateway's counters (read on the runtime's loop, never on the request path's database)."""

from __future__ import annotations

import time
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any

from accounts.allowances import Counted, resolve_allowance
from accounts.models import ApiToken
from accounts.rbac import Resolved
from gateway.allowances.counters import Windows

READ_WAIT = 1.0  # a view waits at most this for the gateway's loop to answer


def allowance_left(user: Any, resolved: Resolved) -> dict[str, Any]:
    """The person's limits (counted over all their tokens) and those of each live token that
    carries its own, with used, reserved and remaining in the current window and its end.

    Used and remaining are null where no counters can be read: no gateway runs in this
    process yet, or its loop did not answer in time.
    """
    from gateway.runtime.runtime import current_runtime

    person = [Counted(f"u{user.pk}", limit) for limit in resolved.allowance]
    tokens: list[tuple[ApiToken, list[Counted]]] = []
    for token in ApiToken.objects.filter(
        owner=user, revoked_at__isnull=True, allowance__isnull=False
    ).order_by("name", "id"):
        if token.is_expired:
            continue
        own = resolve_allowance(
            token.allowance_limits, token.allowance_set_by_admin, resolved.allowance,
            resolved.is_admin,
        ).token  # fmt: skip
        if own:
            tokens.append((token, [Counted(f"t{token.pk}", limit) for limit in own]))
    every = person + [c for _, counted in tokens for c in counted]
    rt = current_runtime()
    clock = rt.allowances.clock if rt is not None else time.time
    read = rt.allowance_standing(every, READ_WAIT) if rt is not None and every else None
    standing = dict(zip(every, read, strict=True)) if read is not None else {}
    now = clock()
    return {
        "person": _limits(person, standing, now),
        "tokens": [
            {"token_id": token.pk, "token_name": token.name, "limits": _limits(c, standing, now)}
            for token, c in tokens
        ],
    }


def _limits(
    counted: Sequence[Counted], standing: dict[Counted, tuple[int, int]], now: float
) -> list[dict[str, Any]]:
    windows = Windows()
    out = []
    for c in counted:
        limit = c.limit
        end = windows.current(limit.window, now)[1]
        row: dict[str, Any] = {
            **limit.to_json(),
            "used": None,
            "reserved": None,
            "remaining": None,
            "resets_at": datetime.fromtimestamp(end, UTC).isoformat().replace("+00:00", "Z"),
        }
        if c in standing:
            used, reserved = standing[c]
            row.update(
                used=used, reserved=reserved, remaining=max(0, limit.limit - used - reserved)
            )
        out.append(row)
    return out
