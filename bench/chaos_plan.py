"""The chaos run's plan: each request, its fault, how its client behaves, and what may answer it.

The plan is a pure function of the seed: request `i` is drawn from its own RNG seeded with
(seed, i), so the same seed gives the same requests whatever the concurrency or the run's length.
Timing decides which acceptable answer a request gets, never whether an answer is acceptable.

An answer is named by one word (see `Answer.kind` in bench/chaos_client.py):

    ok            200, complete: a JSON body, or an event stream ending with `data: [DONE]`
    error-event   200 event stream whose last event before [DONE] is an error in the envelope
    broken        a non-stream body whose connection ended before the body did
    left          the client went away on purpose (nothing to judge)
    <status>:<code>   an error in the envelope; `*` accepts any code
"""

from __future__ import annotations

import json
import random
from collections.abc import Callable
from dataclasses import dataclass, field

OK, EVENT, BROKEN, LEFT = "ok", "error-event", "broken", "left"
CLASSES = ("low", "medium", "high")
USERS = {cls: (f"chaos-{cls}-1", f"chaos-{cls}-2") for cls in CLASSES}
PATHS = {
    "chat": "/v1/chat/completions",
    "completions": "/v1/completions",
    "embeddings": "/v1/embeddings",
}
SHAPES = ("openai", "sglang", "vllm-flat", "vllm")
MAX_TOKENS = 16  # answers stay short (the engines could give 2000)
BIG_EMBEDDING = 12_000  # inputs whose answer is over the relay's 1 MiB buffer: passed on in chunks
# Inputs whose answer (about 6 MB) is more than the kernel buffers of a connection to a client
# that stopped reading hold (3 to 4 MB here): the gateway's send to it then blocks.
STALL_EMBEDDING = 50_000

# How a client behaves (the fault tables count these under "client:*").
NORMAL = "normal"  # send, read everything
LEAVE = "leave"  # send, read for `pause` seconds, then close (usually while queued)
LEAVE_MID = "leave-mid"  # a stream: read its first event, then close
STALL = "stall"  # a tiny receive buffer, read nothing for `pause` seconds, then close
STALL_FOREVER = "stall-forever"  # read nothing past the stalled-client bound, then read
SLOW_BODY = "slow-body"  # send half the body, wait `pause` seconds, send the rest
HALF_BODY = "half-body"  # send half the body, then close


@dataclass(frozen=True, slots=True)
class Call:
    """One planned request."""

    index: int
    name: str  # its token's name, unique in the run: how its activity record is found
    user: str
    cls: str  # the class it should run at (the owner's, lowered by a hint)
    surface: str
    stream: bool
    fault: str  # the fault's family, a row of the table: "plain", "sim:reset", ...
    detail: str  # what exactly (the directive, the variant), for a replay
    body: bytes
    client: str = NORMAL
    pause: float = 0.0
    expect: frozenset[str] = frozenset({OK})
    headers: tuple[tuple[str, str], ...] = ()
    method: str = "POST"
    path: str = ""
    auth: str = "own"  # its token: "own", "made-up" (one that does not exist) or "none"
    recorded: bool = True  # whether the gateway keeps an activity record of it


@dataclass(frozen=True, slots=True)
class Shape:
    """What a fault builder decides: the directive, the request's shape and the answers."""

    fault: str
    detail: str
    expect: frozenset[str]
    directive: str = ""
    surfaces: tuple[str, ...] = ("chat", "completions", "embeddings")
    stream: bool | None = None  # None: either
    client: str = NORMAL
    pause: float = 0.0
    max_tokens: int | None = None
    inputs: int = 0  # embeddings: this many inputs (0: two)
    raw: bytes | None = None  # a body sent as it is (bad input)
    headers: tuple[tuple[str, str], ...] = ()
    method: str = "POST"
    path: str | None = None
    auth: str = "own"
    recorded: bool = True


Builder = Callable[[random.Random], Shape]


def _s(*answers: str) -> frozenset[str]:
    return frozenset(answers)


# ----- engine faults ([[sim:...]], read by the simulated engines) ----------------------------


def _status(rng: random.Random) -> Shape:
    code = rng.choice((500, 502, 503, 504, 400, 404, 422, 429, 401, 403))
    shape = rng.choice(SHAPES)
    if code in (500, 502):
        expect = _s("502:upstream_error")
    elif code == 503:
        expect = _s("503:backend_overloaded")
    elif code == 504:
        expect = _s("504:upstream_timeout")
    elif code in (401, 403):
        expect = _s("502:backend_auth_failed")
    else:
        expect = _s(f"{code}:*")  # the engine's refusal, in our envelope, with its status
    return Shape(
        f"sim:status {code}",
        f"shape={shape}",
        expect,
        f"[[sim:status code={code} shape={shape}]]",
    )


def _html(rng: random.Random) -> Shape:
    code = rng.choice((500, 502, 503))
    expect = _s("503:backend_overloaded") if code == 503 else _s("502:upstream_error")
    return Shape("sim:html", f"code={code}", expect, f"[[sim:html code={code}]]")


def _redirect(rng: random.Random) -> Shape:
    code = rng.choice((301, 302, 307))
    return Shape(
        "sim:redirect", f"code={code}", _s("502:upstream_error"), f"[[sim:redirect code={code}]]"
    )


def _queue_full(rng: random.Random) -> Shape:
    name = rng.choice(("queue-full", "evicted"))
    shape = rng.choice(SHAPES)
    expect = _s("503:backend_overloaded")
    if shape == "openai":
        # In a stream, OpenAI's shape numbers no status ("server_error"): a backend failure.
        expect |= {"502:upstream_error"}
    return Shape(f"sim:{name}", f"shape={shape}", expect, f"[[sim:{name} shape={shape}]]")


def _bad_json(rng: random.Random) -> Shape:
    return Shape("sim:bad-json", "", _s("502:upstream_error"), "[[sim:bad-json]]")


def _reset(rng: random.Random) -> Shape:
    return Shape("sim:reset", "", _s("502:upstream_error"), "[[sim:reset]]")


def _hang(rng: random.Random) -> Shape:
    return Shape("sim:hang", "", _s("504:upstream_timeout"), "[[sim:hang]]")


def _hang_mid(rng: random.Random) -> Shape:
    if rng.random() < 0.6:
        after = rng.randint(1, 4)
        # An event or more, then silence: the idle bound ends it with an error event.
        return Shape(
            "sim:hang-mid stream", f"after={after}", _s(EVENT), f"[[sim:hang-mid after={after}]]",
            surfaces=("chat", "completions"), stream=True,
        )  # fmt: skip
    # No event (or a body that stops halfway): nothing was passed on, the first-byte bound ends it.
    # A stream's head without an event, or a whole answer's head and half its body.
    stream = rng.random() < 0.5
    directive = "[[sim:hang-mid after=0]]" if stream else "[[sim:hang-mid]]"
    return Shape(
        "sim:hang-mid before", "after=0" if stream else "half", _s("504:upstream_timeout"),
        directive, stream=stream,
        surfaces=("chat", "completions") if stream else ("chat", "completions", "embeddings"),
    )  # fmt: skip


def _slow(rng: random.Random) -> Shape:
    delay = round(rng.uniform(0.01, 0.06), 3)
    # At most MAX_TOKENS x 0.06 s: well inside the first-byte and idle bounds.
    return Shape("sim:slow", f"delay={delay}", _s(OK), f"[[sim:slow delay={delay}]]")


def _too_slow(rng: random.Random) -> Shape:
    # A whole answer (or a first token) later than the first-byte bound: 504, whichever engine.
    stream = rng.random() < 0.5
    delay = 30.0
    return Shape(
        "sim:slow too-slow", f"delay={delay}", _s("504:upstream_timeout"),
        f"[[sim:slow delay={delay}]]", stream=stream, max_tokens=MAX_TOKENS,
        surfaces=("chat", "completions") if stream else ("chat", "completions", "embeddings"),
    )  # fmt: skip


def _garbage(rng: random.Random) -> Shape:
    after = rng.randint(0, 3)
    return Shape(
        "sim:garbage", f"after={after}", _s(EVENT), f"[[sim:garbage after={after}]]",
        surfaces=("chat", "completions"), stream=True,
    )  # fmt: skip


def _no_blank(rng: random.Random) -> Shape:
    after = rng.randint(0, 3)
    # One event runs into the next: two data lines that join into no JSON document.
    return Shape(
        "sim:no-blank", f"after={after}", _s(EVENT), f"[[sim:no-blank after={after}]]",
        surfaces=("chat", "completions"), stream=True,
    )  # fmt: skip


def _cut(rng: random.Random) -> Shape:
    roll = rng.random()
    if roll < 0.4:
        after = rng.randint(1, 4)
        return Shape(
            "sim:cut stream", f"after={after}", _s(EVENT), f"[[sim:cut after={after}]]",
            surfaces=("chat", "completions"), stream=True,
        )  # fmt: skip
    if roll < 0.7:
        # The head, then nothing (a stream) or half the body (a small answer): retried, 502.
        stream = rng.random() < 0.5
        directive = "[[sim:cut after=0]]" if stream else "[[sim:cut]]"
        return Shape(
            "sim:cut before", "after=0" if stream else "half", _s("502:upstream_error"),
            directive, stream=stream,
            surfaces=("chat", "completions") if stream else ("chat", "completions", "embeddings"),
        )  # fmt: skip
    # A big answer is passed on as it comes: cut after its first bytes, the client's connection
    # must break (never a clean end of a truncated body).
    return Shape(
        "sim:cut big", f"inputs={BIG_EMBEDDING}", _s(BROKEN, "502:upstream_error"), "[[sim:cut]]",
        surfaces=("embeddings",), inputs=BIG_EMBEDDING,
    )  # fmt: skip


# ----- wire faults ([[wire:...]], read by the fault proxies) ---------------------------------


def _wire_status(rng: random.Random) -> Shape:
    code = rng.choice((999, 600, 503, 401, 302, 0, 204))
    if code == 503:
        expect = _s("503:backend_overloaded")
    elif code == 401:
        expect = _s("502:backend_auth_failed")
    else:
        expect = _s("502:upstream_error")
    return Shape(f"wire:status {code}", "", expect, f"[[wire:status code={code}]]")


def _wire_chunked(rng: random.Random) -> Shape:
    roll = rng.random()
    if roll < 0.25:
        return Shape(
            "wire:chunked before", "after=0", _s("502:upstream_error"), "[[wire:chunked after=0]]"
        )
    if roll < 0.6:
        after = rng.randint(1, 3)
        # A stream breaks after whole events (an error event); a body re-framed as one chunk
        # breaks after it (a broken connection). Both read at once may be a 502.
        return Shape(
            "wire:chunked", f"after={after}", _s(EVENT, BROKEN, "502:upstream_error"),
            f"[[wire:chunked after={after}]]",
        )  # fmt: skip
    # The framing breaks only after the answer's last chunk: [DONE] (or the whole JSON) was sent.
    return Shape(
        "wire:chunked late", "after=1000", _s(OK, EVENT, BROKEN, "502:upstream_error"),
        "[[wire:chunked after=1000]]",
    )  # fmt: skip


def _wire_reset(rng: random.Random) -> Shape:
    after = rng.choice((0, 20, 120, 300, 600, 1500, 100_000))
    if after <= 20:
        return Shape(
            "wire:reset before", f"after={after}", _s("502:upstream_error"),
            f"[[wire:reset after={after}]]",
        )  # fmt: skip
    # Somewhere in the head or the body, or after it: every ending but a half answer is fine.
    return Shape(
        "wire:reset", f"after={after}", _s(OK, EVENT, "502:upstream_error"),
        f"[[wire:reset after={after}]]",
    )  # fmt: skip


def _wire_stall(rng: random.Random) -> Shape:
    after = rng.choice((0, 20, 120, 300, 600, 100_000))
    return Shape(
        "wire:stall", f"after={after}", _s(OK, EVENT, "504:upstream_timeout"),
        f"[[wire:stall after={after}]]",
    )  # fmt: skip


# ----- clients that misbehave ------------------------------------------------------------


def _leave(rng: random.Random) -> Shape:
    pause = round(rng.uniform(0.0, 1.5), 3)
    slow = rng.random() < 0.5
    return Shape(
        "client:leave", f"pause={pause}", _s(OK, LEFT),
        "[[sim:slow delay=0.05]]" if slow else "", client=LEAVE, pause=pause,
    )  # fmt: skip


def _leave_mid(rng: random.Random) -> Shape:
    return Shape(
        "client:leave-mid", "", _s(OK, LEFT), "[[sim:slow delay=0.05]]",
        surfaces=("chat", "completions"), stream=True, client=LEAVE_MID,
    )  # fmt: skip


def _stall(rng: random.Random) -> Shape:
    pause = round(rng.uniform(0.5, 4.0), 3)
    return Shape(
        "client:stall", f"pause={pause}", _s(LEFT), surfaces=("embeddings",), client=STALL,
        pause=pause, inputs=STALL_EMBEDDING,
    )  # fmt: skip


def _slow_body(rng: random.Random) -> Shape:
    pause = round(rng.uniform(0.1, 1.0), 3)
    return Shape("client:slow-body", f"pause={pause}", _s(OK), client=SLOW_BODY, pause=pause)


def _half_body(rng: random.Random) -> Shape:
    return Shape("client:half-body", "", _s(LEFT), client=HALF_BODY, pause=0.1)


def stall_forever(rng: random.Random) -> Shape:
    """A client that stops reading a huge answer for longer than the stalled-client bound."""
    return Shape(
        "client:stall-forever", f"inputs={STALL_EMBEDDING}", _s(BROKEN),
        surfaces=("embeddings",), client=STALL_FOREVER, inputs=STALL_EMBEDDING,
    )  # fmt: skip


# ----- bad input from the caller ---------------------------------------------------------


def _bad_input(rng: random.Random) -> Shape:
    kind = rng.choice(
        (
            "bad-json", "not-object", "nested", "nan", "no-model", "unknown-model", "bad-hint",
            "made-up-token", "no-token", "not-utf8", "bad-directive", "wrong-method",
            "unknown-path",
        )
    )  # fmt: skip
    bad = _s("400:invalid_request")
    if kind == "bad-json":
        return Shape("input:bad-json", "", bad, raw=b'{"model": "sim-small", "messages": [')
    if kind == "not-object":
        return Shape("input:not-object", "", bad, raw=b'["sim-small"]')
    if kind == "nested":
        depth = 20_000
        raw = b'{"model":"sim-small","messages":' + b"[" * depth + b"]" * depth + b"}"
        return Shape("input:nested", f"depth={depth}", bad, raw=raw)
    if kind == "nan":
        raw = b'{"model":"sim-small","temperature":NaN,"messages":[]}'
        return Shape("input:nan", "", bad, raw=raw)
    if kind == "no-model":
        return Shape("input:no-model", "", bad, raw=b'{"messages": []}')
    if kind == "unknown-model":
        raw = b'{"model":"no-such-model","messages":[{"role":"user","content":"hi"}]}'
        return Shape("input:unknown-model", "", _s("404:model_not_found"), raw=raw)
    if kind == "bad-hint":
        return Shape(
            "input:bad-hint", "", _s("400:invalid_priority_hint"),
            headers=(("X-AIplane-Priority", "urgent"),),
        )  # fmt: skip
    if kind == "made-up-token":
        return Shape("input:made-up-token", "", _s("401:invalid_api_key"), auth="made-up")
    if kind == "no-token":
        return Shape("input:no-token", "", _s("401:invalid_api_key"), auth="none")
    if kind == "not-utf8":
        return Shape("input:not-utf8", "", bad, raw=b'{"model":"sim-small","x":"\xff\xfe"}')
    if kind == "bad-directive":
        # The engine refuses a directive it cannot read: its 400, in our envelope.
        return Shape("input:bad-directive", "", _s("400:*"), "[[sim:status code=abc]]")
    if kind == "wrong-method":
        # Not a surface request: answered before any caller is known, so no activity record.
        return Shape(
            "input:wrong-method", "", _s("405:method_not_allowed"), method="GET", recorded=False
        )
    return Shape("input:unknown-path", "", _s("404:not_found"), path="/v1/nothing", recorded=False)


# (weight, builder): the plain requests are the most common, as in life.
FAULTS: tuple[tuple[float, Builder], ...] = (
    (30, lambda rng: Shape("plain", "", _s(OK))),
    (5, _status), (1.5, _html), (1, _redirect), (2, _queue_full), (1.5, _bad_json),
    (2, _reset), (1.5, _hang), (2, _hang_mid), (4, _slow), (1, _too_slow), (2, _garbage),
    (1.5, _no_blank), (3, _cut),
    (2.5, _wire_status), (3, _wire_chunked), (3, _wire_reset), (2.5, _wire_stall),
    (4, _leave), (3, _leave_mid), (1, _stall), (2, _slow_body), (1, _half_body),
    (5, _bad_input),
)  # fmt: skip


@dataclass(frozen=True, slots=True)
class Plan:
    seed: int
    calls: list[Call] = field(default_factory=list)


def call(seed: int, index: int, builder: Builder | None = None) -> Call:
    """Request `index` of the plan for `seed` (a builder forces its fault)."""
    rng = random.Random(f"{seed}:{index}")
    if builder is None:
        builders = [b for _, b in FAULTS]
        builder = rng.choices(builders, weights=[w for w, _ in FAULTS])[0]
    shape = builder(rng)
    owner_cls = rng.choice(CLASSES)
    user = rng.choice(USERS[owner_cls])
    cls = owner_cls
    headers = list(shape.headers)
    if not headers and rng.random() < 0.2:
        hint = rng.choice(CLASSES)
        headers.append(("X-AIplane-Priority", hint))
        cls = CLASSES[min(CLASSES.index(owner_cls), CLASSES.index(hint))]  # hints only lower
    surface = rng.choice(shape.surfaces)
    stream = surface != "embeddings" and (
        shape.stream if shape.stream is not None else rng.random() < 0.5
    )
    name = f"chaos-{seed}-{index:06d}"
    text = f"{shape.directive}{name} says hello"
    max_tokens = shape.max_tokens or rng.randint(1, MAX_TOKENS)
    body: dict[str, object] = {"model": "sim-small"}
    if surface == "chat":
        body["messages"] = [{"role": "user", "content": text}]
    elif surface == "completions":
        body["prompt"] = text
    else:
        n = shape.inputs or 2
        body["input"] = [text, *(f"w{i}" for i in range(n - 1))]
    if surface != "embeddings":
        body["max_tokens"] = max_tokens
        if stream:
            body["stream"] = True
            if rng.random() < 0.3:
                body["stream_options"] = {"include_usage": True}
    raw = shape.raw if shape.raw is not None else json.dumps(body).encode()
    return Call(
        index=index,
        name=name,
        user=user,
        cls=cls,
        surface=surface,
        stream=stream and shape.raw is None,
        fault=shape.fault,
        detail=shape.detail,
        body=raw,
        client=shape.client,
        pause=shape.pause,
        expect=shape.expect,
        headers=tuple(headers),
        method=shape.method,
        path=shape.path or PATHS[surface],
        auth=shape.auth,
        recorded=shape.recorded,
    )


def make_plan(seed: int, size: int, *, stall_forever_at: tuple[int, ...] = ()) -> Plan:
    """The first `size` requests for `seed`; `stall_forever_at` are made clients that stop
    reading for good (only a run longer than the stalled-client bound can have them)."""
    calls = [call(seed, i, stall_forever if i in stall_forever_at else None) for i in range(size)]
    return Plan(seed, calls)
