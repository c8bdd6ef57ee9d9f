"""What the scripts take and give: order keys and arrival numbers as Redis sorts them (byte
order is the queue's order), backends with their limits, the target of a granted backend, and
what the live page reads (a waiter's info, the STATS answer)."""

from __future__ import annotations

import json
import struct
import time
from collections.abc import Iterable
from typing import Any

from gateway.admission.types import Slot, Target, Waiter


def _sortable(x: float) -> str:
    """A float as 16 hex digits that sort as bytes like the numbers do (exact, no rounding)."""
    bits = struct.unpack(">Q", struct.pack(">d", float(x) + 0.0))[0]  # + 0.0: -0.0 is 0.0
    bits = bits ^ 0xFFFFFFFFFFFFFFFF if bits >> 63 else bits | (1 << 63)
    return f"{bits:016x}"


def encode_key(key: tuple[float, float, int], ref: str) -> str:
    """A waiter's order key as a member of a backend's line: byte order is the key's order."""
    k0, k1, k2 = key
    return f"{_sortable(k0)}{_sortable(k1)}{k2:016x}|{ref}"


class Arrivals:
    """Arrival numbers that order waiters of every process: wall-clock microseconds, unique
    in this process (the local order keys' last element, compared across processes)."""

    def __init__(self) -> None:
        self.last = 0

    def __iter__(self) -> Arrivals:
        return self

    def __next__(self) -> int:
        self.last = max(self.last + 1, time.time_ns() // 1000)
        return self.last


def capacities(slots: Iterable[Slot]) -> list[object]:
    """Backends as the scripts take them: how many, then each one's name and max_inflight."""
    listed = list(slots)
    args: list[object] = [len(listed)]
    for s in listed:
        args += [s.name, s.max_inflight]
    return args


def target_named(targets: tuple[Target, ...], name: str) -> Target:
    return next(t for t in targets if t.slot.name == name)


def target_on_backend(w: Waiter, backend: str) -> Target | None:
    """The waiter's target on a backend Redis granted, if its route still goes there."""
    for t in w.route.usable_targets(w.excluded):
        if t.slot.name == backend:
            return t
    for t in (*w.route.primary, *w.route.fallback):
        if t.slot.name == backend and backend not in w.excluded and not t.slot.removed:
            return t
    return None


def waiter_info(w: Waiter, waits_for: list[str]) -> str:
    """What the live page shows of a waiter: its line (the backends of its route, as the
    local queue's dispatch order names them) and its place in it."""
    tag = w.tag
    return json.dumps(
        {
            "class": w.cls,
            "offset": w.offset,
            "arrival": w.seq / 1e6,
            "line": ",".join(dict.fromkeys(s.name for s in w.route.slots())),
            "order": encode_key(w.key, w.ref),
            "waits_for": waits_for,
            "model": getattr(tag, "model", "") or "",
            "user": getattr(tag, "username", "") or "",
            "token": getattr(tag, "token_name", None),
        }
    )


def read_stats(raw: list[Any], backends: list[str]) -> dict[str, Any]:
    """The STATS answer: depth per class, in-flight per backend, the first waiters."""
    depth = [int(x) for x in raw[:3]]
    inflight = {b: int(x) for b, x in zip(backends, raw[3 : 3 + len(backends)], strict=True)}
    rest = raw[3 + len(backends) :]
    waiters = []
    for i in range(0, len(rest) - 2, 3):
        info = json.loads(rest[i + 2] or b"{}")
        info["ref"] = rest[i].decode()
        info["process"] = rest[i + 1].decode()
        waiters.append(info)
    return {"depth": depth, "inflight": inflight, "waiters": waiters}
