"""Order keys and arrival numbers as Redis sorts them: byte order is the queue's order."""

from __future__ import annotations

import struct
import time


def _sortable(x: float) -> str:
    """A float as 16 hex digits that sort as bytes like the numbers do (exact, no rounding)."""
    bits = struct.unpack(">Q", struct.pack(">d", float(x) + 0.0))[0]  # + 0.0: -0.0 is 0.0
    bits = bits ^ 0xFFFFFFFFFFFFFFFF if bits >> 63 else bits | (1 << 63)
    return f"{bits:016x}"


def encode_key(key: tuple[float, float, int], ref: str) -> str:
    """A waiter's order key as a member of a backend's line: byte order is the key's order."""
    k0, k1, k2 = key
    return f"{_sortable(k0)}{_sortable(k1)}{k2:016x}|{ref}"


class _Arrivals:
    """Arrival numbers that order waiters of every process: wall-clock microseconds, unique
    in this process (the local order keys' last element, compared across processes)."""

    def __init__(self) -> None:
        self.last = 0

    def __iter__(self) -> _Arrivals:
        return self

    def __next__(self) -> int:
        self.last = max(self.last + 1, time.time_ns() // 1000)
        return self.last
