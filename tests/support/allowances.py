"""People with allowances and a call for the allowance tests."""

from __future__ import annotations

from typing import Any

import httpx

from accounts.allowances import Counted, Limit, Measure, Window
from accounts.models import GatewayGroup
from tests.support.drive import (
    HTTP,
)
from tests.support.factories import make_group, make_token_with_secret, make_user


class Person:
    def __init__(self, username: str, *limits: dict[str, Any], token: Any = None) -> None:
        self.user = make_user(username)
        group = make_group(f"{username}-limits", members=[self.user])
        GatewayGroup.objects.filter(pk=group.pk).update(allowance=list(limits))
        self.token, self.key = make_token_with_secret(
            self.user, name=f"{username}-token", **(token or {})
        )

    def usage(self, gateway: Any, measure: str, window: str = "minute") -> tuple[int, int]:
        limit = Limit(Measure(measure), Window(window), 0)
        return gateway.runtime.allowances.usage(f"u{self.user.pk}", limit)

    def standing(self, gateway: Any, measure: str, window: str = "minute") -> tuple[int, int]:
        """(used, reserved) as a view reads it: from this process's counters or Redis's."""
        limit = Limit(Measure(measure), Window(window), 0)
        read = gateway.runtime.allowance_standing([Counted(f"u{self.user.pk}", limit)])
        assert read is not None, "the gateway's loop did not answer"
        return read[0]


def call(gateway: Any, key: str, path: str, body: dict[str, Any], **headers: str) -> httpx.Response:
    return HTTP.post(
        gateway.v1 + path, json=body, headers={"Authorization": f"Bearer {key}", **headers}
    )
