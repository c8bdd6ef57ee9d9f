"""How fast each backend takes requests, and the classes that came for it lately: what the
queue's estimated wait and reserved headroom are reckoned from. Plain bookkeeping over a clock
the queue passes in, so a test drives it with the queue's fake clock."""

from __future__ import annotations

import math
from collections import deque

TAKEN = 32  # admissions a backend's pace is measured over


class Pace:
    """Per backend: when it took its last requests, and when each class last came for it."""

    def __init__(self) -> None:
        self._taken: dict[str, deque[float]] = {}
        self._came: dict[str, list[float]] = {}

    def took(self, backend: str, at: float) -> None:
        """The backend was given a request at `at`."""
        taken = self._taken.get(backend)
        if taken is None:
            taken = self._taken[backend] = deque(maxlen=TAKEN)
        taken.append(at)

    def rate(self, backend: str, now: float) -> float:
        """Requests a second the backend has taken lately; 0 while unknown (fewer than two)."""
        taken = self._taken.get(backend)
        if taken is None or len(taken) < 2:
            return 0.0
        span = now - taken[0]
        return (len(taken) - 1) / span if span > 0 else 0.0

    def came(self, backend: str, cls: int, at: float) -> None:
        """A request of class `cls` came for the backend at `at`."""
        came = self._came.get(backend)
        if came is None:
            came = self._came[backend] = [-math.inf, -math.inf, -math.inf]
        came[cls] = at

    def higher_came_since(self, backend: str, cls: int, since: float) -> bool:
        """Did a request of a class above `cls` come for the backend at `since` or later?"""
        came = self._came.get(backend)
        return came is not None and max(came[cls + 1 :], default=-math.inf) >= since
