"""The capacity board: learned limits (max_inflight "auto") posted on Redis, one per backend.

Each process learns a backend's limit the same way (gateway/runtime/capacity.py), but a group
of processes sharing one line must admit against one limit, or their sum drifts from what the
engine runs. So each backend's limit has one owner: the first process to post it, for as long
as it keeps posting (every capacity interval) and stays alive; it alone reads the engine and
moves the limit, from what the whole group holds and waits there. The others read it back and
take it as theirs. While a limit is posted the admission scripts use it rather than whatever the
calling process passes (common.lua's `cap_of`), so a fall binds every process at the next grant,
not a capacity interval later. An owner that dies or stalls stops posting: within a lease its
post lapses and the next process to post takes over from the limit it last read.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True, slots=True)
class Post:
    """One backend's learned limit as this process would post it. limit 0: no longer learned."""

    backend: str
    limit: int
    reason: str = ""
    mode: str = ""
    engine_running: float | None = None
    engine_waiting: float | None = None
    engine_kv_usage: float | None = None
    metrics_error: str | None = None


@dataclass(frozen=True, slots=True)
class Posted:
    """A backend's limit as the board holds it, and what the group holds and waits there."""

    backend: str
    leads: bool  # this process owns it (its post is the one on the board)
    held: int  # slots held there by every process
    waiting: int  # waiters of every process that backend may serve
    limit: int
    reason: str
    mode: str
    engine_running: float | None
    engine_waiting: float | None
    engine_kv_usage: float | None
    metrics_error: str | None


def board_args(posts: list[Post], owner_ms: int) -> list[object]:
    """The CAPACITY script's ARGV after P ME TTL."""
    args: list[object] = [owner_ms, len(posts)]
    for p in posts:
        args += [p.backend, p.limit, p.reason, p.mode]
        args += [_number(p.engine_running), _number(p.engine_waiting), _number(p.engine_kv_usage)]
        args.append(p.metrics_error or "")
    return args


def read_board(answer: Any) -> dict[str, Posted]:
    """The CAPACITY script's answer by backend; a row that does not read as one is left out
    (that backend's process keeps its own figure)."""
    board: dict[str, Posted] = {}
    for row in answer if isinstance(answer, list) else ():
        try:
            name, leads, held, waiting, limit, reason, mode, running, queued, kv, error = (
                v.decode() if isinstance(v, bytes) else v for v in row
            )
            posted = Posted(
                backend=str(name),
                leads=int(leads) == 1,
                held=int(held),
                waiting=int(waiting),
                limit=int(limit),
                reason=str(reason),
                mode=str(mode),
                engine_running=_float(running),
                engine_waiting=_float(queued),
                engine_kv_usage=_float(kv),
                metrics_error=str(error) or None,
            )
        except (TypeError, ValueError):
            continue
        if posted.limit >= 1:
            board[posted.backend] = posted
    return board


def _number(value: float | None) -> str:
    return "" if value is None else repr(float(value))


def _float(value: Any) -> float | None:
    return None if value in ("", None) else float(value)
