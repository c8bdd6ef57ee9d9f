"""A simulated request: its record, its generation job and that job's chunks."""

from __future__ import annotations

import time
from typing import Any, TypedDict, Unpack

from gateway.sim.turns import Turn
from gateway.sim.wire import HOLE, HOLE_JSON, encode

# -- chat completions with a turn (tools or stop): the slow path, encoded generically --


def turn_of(job: Job) -> Turn:
    if job.turn is None:
        raise RuntimeError("only a job with a turn renders on this surface")
    return job.turn


class Record:
    """One /v1 request as seen by the engine; rendered to JSON only when asked for."""

    __slots__ = (
        "body",
        "cancelled",
        "fault",
        "finished",
        "headers",
        "open",
        "path",
        "started",
        "status",
    )

    def __init__(self, path: str, headers: list[tuple[bytes, bytes]], body: Any) -> None:
        self.path = path
        self.headers = headers
        self.body = body
        self.started = time.time()
        self.finished: float | None = None
        self.status: int | None = None
        self.cancelled = False
        self.open = False
        self.fault: str | None = None

    def as_dict(self) -> dict[str, Any]:
        return {
            "path": self.path,
            "headers": {k.decode("latin-1"): v.decode("latin-1") for k, v in self.headers},
            "body": self.body,
            "started": self.started,
            "finished": self.finished,
            "status": self.status,
            "cancelled": self.cancelled,
            "fault": self.fault,
        }


class PlainJob(TypedDict):
    """What every job is made of (Job's keywords), for the jobs made of more."""

    chat: bool
    model: str
    n: int
    finish: str
    prompt_tokens: int
    priority: int | None
    usage_chunk: bool


class Job:
    """What one plain chat or completion request asks the engine to generate: n tokens.

    The class attributes are what a plain job lacks; a TurnJob has them of its own.
    """

    __slots__ = ("chat", "finish", "model", "n", "priority", "prompt_tokens", "usage_chunk")

    turn: Turn | None = None
    cached: int | None = None
    body: dict[str, Any] | None = None
    ident = ""
    store = False

    def __init__(
        self,
        *,
        chat: bool,
        model: str,
        n: int,
        finish: str,
        prompt_tokens: int,
        priority: int | None,
        usage_chunk: bool,
    ) -> None:
        self.chat = chat
        self.model = model
        self.n = n
        self.finish = finish
        self.prompt_tokens = prompt_tokens
        self.priority = priority
        self.usage_chunk = usage_chunk

    def cached_tokens(self) -> int:
        return 0 if self.cached is None else min(self.cached, self.prompt_tokens)

    def usage(self) -> dict[str, Any]:
        usage: dict[str, Any] = {
            "prompt_tokens": self.prompt_tokens,
            "completion_tokens": self.n,
            "total_tokens": self.prompt_tokens + self.n,
        }
        if self.cached is not None:
            usage["prompt_tokens_details"] = {"cached_tokens": self.cached_tokens()}
        return usage


class TurnJob(Job):
    """A job that asks for more than plain tokens: a turn (tools, stop sequences, another
    surface), cached usage, or the request echoed and kept (`body`, `ident`, `store`).

    Apart from Job so that the instant engine's plain requests never pay for these fields.
    """

    __slots__ = ("body", "cached", "ident", "store", "turn")

    def __init__(
        self,
        *,
        cached: int | None,
        turn: Turn | None,
        body: dict[str, Any] | None = None,
        ident: str = "",
        store: bool = False,
        **plain: Unpack[PlainJob],
    ) -> None:
        super().__init__(**plain)
        self.cached = cached
        self.turn = turn
        self.body = body
        self.ident = ident
        self.store = store


def priority_of(body: dict[str, Any]) -> int | None:
    priority = body.get("priority")
    if isinstance(priority, int) and not isinstance(priority, bool):
        return priority
    return None


def chunk_frames(
    base: dict[str, Any], job: Job
) -> tuple[tuple[bytes, bytes], tuple[bytes, bytes], bytes]:
    """Pre-serialize a stream's chunks once, leaving a hole where each token's JSON goes."""

    def split(choice: dict[str, Any]) -> tuple[bytes, bytes]:
        head, _, tail = encode({**base, "choices": [choice]}).rpartition(HOLE_JSON)
        return b"data: " + head.encode(), tail.encode() + b"\n\n"

    if job.chat:
        first = split(
            {
                "index": 0,
                "delta": {"role": "assistant", "content": HOLE},
                "logprobs": None,
                "finish_reason": None,
            }
        )
        rest = split(
            {"index": 0, "delta": {"content": HOLE}, "logprobs": None, "finish_reason": None}
        )
        last: dict[str, Any] = {
            "index": 0,
            "delta": {},
            "logprobs": None,
            "finish_reason": job.finish,
        }
    else:
        first = rest = split({"index": 0, "text": HOLE, "logprobs": None, "finish_reason": None})
        last = {"index": 0, "text": "", "logprobs": None, "finish_reason": job.finish}
    final = b"data: " + encode({**base, "choices": [last]}).encode() + b"\n\n"
    return first, rest, final


def usage_event(base: dict[str, Any], job: Job) -> bytes:
    return b"data: " + encode({**base, "choices": [], "usage": job.usage()}).encode() + b"\n\n"
