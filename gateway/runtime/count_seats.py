"""How many token counts each backend is asked at once by this process."""

from __future__ import annotations

# A small share of a backend: counting must not crowd out generation nor pile up at an engine.
COUNTS_PER_BACKEND = 2


class CountSeats:
    """The counts in flight at each backend from this process (its slot's name)."""

    __slots__ = ("busy",)

    def __init__(self) -> None:
        self.busy: dict[str, int] = {}

    def take(self, backend: str, max_inflight: int) -> bool:
        """A seat at `backend`, or False when it counts as many as it may already."""
        taken = self.busy.get(backend, 0)
        if taken >= min(COUNTS_PER_BACKEND, max_inflight):
            return False
        self.busy[backend] = taken + 1
        return True

    def give_back(self, backend: str) -> None:
        left = self.busy[backend] - 1
        if left:
            self.busy[backend] = left
        else:
            del self.busy[backend]
