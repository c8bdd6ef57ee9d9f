"""Allowance checks before admission: counters per window, and a reservation per request in flight.

Windows are fixed and aligned to UTC: the clock minute, the calendar day and the calendar month
(a minute's burst may so reach twice its limit across a minute boundary, as a day's may across
midnight). A request is checked against every limit that applies to it (the caller's, and its
model's), all or nothing, before it may wait for a slot:

- a requests limit counts the request at once;
- a tokens limit reserves the request's estimate, its prompt (its body's bytes / 4) plus the
  most output it may ask for (the largest of OUTPUT_LIMITS it names, times its choices; else
  DEFAULT_OUTPUT_RESERVE; none for embeddings), at most the whole limit, so that one large
  request still runs alone. When the request ends, however it ends, the reservation is released
  and what the engine reported is counted in the window of that moment; when it reported
  nothing, what the request cost it: what was reserved once the answer started, the prompt
  once the request reached an engine (its prefill was done), nothing before.

A limit is exhausted when nothing of it remains; a request is refused when a limit it falls under
is exhausted or its reservation does not fit. Counters are exact within one process (their
changes never wait, so two requests cannot both take the last unit) and start empty with it.
`CounterStore` is the seam for a shared store (gateway/allowances/shared.py, on Redis): `admit`
may wait (a round trip), `settle` must not (a shared store sends it in the background), and
`read` is asked on the runtime's loop (a view hands it over with `Runtime.allowance_standing`).
"""

from __future__ import annotations

import calendar
import functools
import math
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from accounts.allowances import Counted, Measure, Window
from gateway.core.errors import TooManyRequests
from gateway.core.outcomes import Outcome
from gateway.core.output_limits import CHOICES, output_limit, whole_number
from gateway.core.usage import prompt_estimate

DEFAULT_OUTPUT_RESERVE = 1024  # tokens reserved for a request that does not bound its output

_REQUESTS, _TOKENS = Measure.REQUESTS, Measure.TOKENS

_INPUT, _OUTPUT = Measure.INPUT, Measure.OUTPUT

_MINUTE, _DAY, _MONTH = Window.MINUTE, Window.DAY, Window.MONTH


class AllowanceExceeded(TooManyRequests):
    """429 before admission: a limit of the caller's allowance has nothing left for this."""

    code = "rate_limit_exceeded"
    outcome = Outcome.LIMITED

    def __init__(
        self,
        message: str,
        *,
        reason: str,
        retry_after: float,
        requests: Standing | None = None,
        tokens: Standing | None = None,
    ) -> None:
        super().__init__(message, retry_after=retry_after)
        self.reason = reason
        # The exhausted limit's standing, for the refusal's rate-limit headers.
        self.requests = requests
        self.tokens = tokens


# ----- windows ------------------------------------------------------------------------------


class Windows:
    """The current window of each kind as (number, end in unix time); the month is calendar
    arithmetic, so it is kept until it ends rather than worked out per request."""

    __slots__ = ("_month", "_spans")

    def __init__(self) -> None:
        self._month = (0, -math.inf, -math.inf)  # number, start, end
        self._spans: tuple[tuple[tuple[int, float], ...], float, float] = ((), 0.0, -1.0)

    def all(self, now: float) -> tuple[tuple[int, float], ...]:
        """(number, end) of the current minute, day and month, in that order; worked out once
        per minute."""
        spans, start, end = self._spans
        if start <= now < end:
            return spans
        minute = int(now // 60)
        day = int(now // 86400)
        spans = (
            (minute, (minute + 1) * 60.0),
            (day, (day + 1) * 86400.0),
            self.current(_MONTH, now),
        )
        self._spans = (spans, minute * 60.0, (minute + 1) * 60.0)
        return spans

    def current(self, window: Window, now: float) -> tuple[int, float]:
        if window is _MINUTE:
            n = int(now // 60)
            return n, (n + 1) * 60.0
        if window is _DAY:
            n = int(now // 86400)
            return n, (n + 1) * 86400.0
        number, start, end = self._month
        if not start <= now < end:
            t = time.gmtime(now)
            year, month = t.tm_year, t.tm_mon
            start = float(calendar.timegm((year, month, 1, 0, 0, 0)))
            end = float(calendar.timegm((year + month // 12, month % 12 + 1, 1, 0, 0, 0)))
            number = year * 12 + month - 1
            self._month = (number, start, end)
        return number, end


# ----- what a request asks for --------------------------------------------------------------


def estimate(body: dict[str, Any], body_size: int, *, embedding: bool) -> tuple[int, int]:
    """A request's (input, output) tokens before it runs: its prompt about 4 bytes a token, its
    output the most it may generate."""
    prompt = prompt_estimate(body_size)
    if embedding:
        return prompt, 0
    limit = output_limit(body)
    output = DEFAULT_OUTPUT_RESERVE if limit is None else limit
    # Each choice is generated in full; best_of counts the n returned among its candidates.
    choices = max((whole_number(body, name, 1) or 1 for name in CHOICES), default=1)
    return prompt, output * choices


# ----- the answer's headers -----------------------------------------------------------------


@dataclass(slots=True)  # not frozen: a frozen dataclass's __init__ costs several times more
class Standing:
    """The tightest limit of one kind (requests, or tokens) after this request: for headers."""

    limit: int
    remaining: int
    reset_at: float  # unix time its window ends


def _duration(seconds: float) -> str:
    """OpenAI's reset form: `20ms`, `1s`, `6m0s`, `3h2m5s`."""
    if seconds < 1:
        return f"{max(0, int(seconds * 1000))}ms"
    return _whole_duration(math.ceil(seconds))


@functools.lru_cache(maxsize=4096)
def _whole_duration(whole: int) -> str:
    hours, rest = divmod(whole, 3600)
    minutes, secs = divmod(rest, 60)
    if hours:
        return f"{hours}h{minutes}m{secs}s"
    if minutes:
        return f"{minutes}m{secs}s"
    return f"{secs}s"


@functools.lru_cache(maxsize=64)
def _rfc3339(at: int) -> bytes:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(at)).encode()


_NAMES = {
    (kind, anthropic): tuple(
        (
            f"anthropic-ratelimit-{kind}-{part}" if anthropic else f"x-ratelimit-{part}-{kind}"
        ).encode()
        for part in ("limit", "remaining", "reset")
    )
    for kind in ("requests", "tokens")
    for anthropic in (False, True)
}


def rate_limit_headers(
    requests: Standing | None, tokens: Standing | None, now: float, *, anthropic: bool
) -> list[tuple[bytes, bytes]]:
    """OpenAI's `x-ratelimit-*` headers, or Anthropic's `anthropic-ratelimit-*` ones."""
    out: list[tuple[bytes, bytes]] = []
    for kind, standing in (("requests", requests), ("tokens", tokens)):
        if standing is None:
            continue
        limit, remaining, reset = _NAMES[kind, anthropic]
        if anthropic:
            when = _rfc3339(math.ceil(standing.reset_at))
        else:
            when = _duration(standing.reset_at - now).encode()
        out += (
            (limit, b"%d" % standing.limit),
            (remaining, b"%d" % max(0, standing.remaining)),
            (reset, when),
        )
    return out


# ----- the counters -------------------------------------------------------------------------


class _Counter:
    """One limit key of one subject: what its current window used, and what is in flight."""

    __slots__ = ("reserved", "used", "window")

    def __init__(self) -> None:
        self.window = -1
        self.used = 0
        self.reserved = 0


_Check = tuple[_Counter, Counted, int]  # a limit that applies, and what the request needs of it
_Refusal = tuple[Counted, int, int, float]  # the limit, the need, what is left, its window's end
_Tightest = tuple[int, int, float]  # left, cap, window end


@dataclass(slots=True)
class Demand:
    """What one request asks of the counters: its limits, model and estimated tokens."""

    limits: Sequence[Counted]
    model: str
    input: int
    output: int


class Ticket:
    """A request's hold on its counters: its reservations until `settle` (idempotent) counts
    what the engine reported, and its standing for the answer's headers."""

    __slots__ = ("_held", "_store", "prompt", "reached", "requests", "settled", "tokens")

    def __init__(
        self,
        store: Settles,
        held: Any,  # the store's own record of what it reserved
        requests: Standing | None,
        tokens: Standing | None,
        prompt: int = 0,  # the estimate's input tokens
    ) -> None:
        self._store = store
        self._held = held
        self.requests = requests
        self.tokens = tokens
        self.prompt = prompt
        # Attempts that reached an engine and were not refused by it (the relay counts them).
        self.reached = 0
        self.settled = False

    def settle(
        self, input_tokens: int | None, output_tokens: int | None, *, answered: bool = False
    ) -> None:
        """Release the reservations and count the usage. A request whose engine reported none
        counts what it cost: what it reserved once answered (a silent engine must not make
        tokens free), its prompt once it reached an engine (the prefill was done for a client
        that left before the first byte), nothing before."""
        if self.settled:
            return
        self.settled = True
        if input_tokens is None and output_tokens is None:
            if answered:
                self._store.settle(self._held, None, None)
            else:
                self._store.settle(self._held, self.prompt if self.reached else 0, 0)
            return
        self._store.settle(self._held, input_tokens or 0, output_tokens or 0)


class Settles(Protocol):
    def settle(self, held: Any, input_: int | None, output: int | None) -> None: ...


class CounterStore(Protocol):
    """Where counters live: this process's memory, or Redis for every process."""

    clock: Callable[[], float]  # unix time

    async def admit(self, demand: Demand) -> Ticket: ...  # raises AllowanceExceeded

    async def read(self, limits: Sequence[Counted]) -> list[tuple[int, int]]:
        """(used in the current window, reserved by requests in flight) of each limit."""
        ...

    async def aclose(self) -> None: ...  # settles still on their way are sent first


class MemoryCounters:
    """Counters in this process's memory: exact, since nothing between a check and its update
    waits."""

    def __init__(self, clock: Callable[[], float] = time.time) -> None:
        self.clock = clock  # unix time: windows are calendar ones
        self.windows = Windows()
        self._counters: dict[str, _Counter] = {}

    def __len__(self) -> int:
        return len(self._counters)

    async def admit(self, demand: Demand) -> Ticket:
        return self.admit_now(demand)

    def admit_now(self, demand: Demand) -> Ticket:
        """Check every limit that applies, then take from all of them, or from none."""
        now = self.clock()
        spans = self.windows.all(now)
        checks, refusal = self._checks(demand, spans)
        if refusal is not None:
            counted, need, left, end = refusal
            raise exceeded(counted, demand.model, need, left, now, end - now)
        held, requests, tokens = _take(checks, spans)
        return Ticket(
            self,
            held,
            None if requests is None else Standing(requests[1], requests[0], requests[2]),
            None if tokens is None else Standing(tokens[1], tokens[0], tokens[2]),
            demand.input,
        )

    def _checks(
        self, demand: Demand, spans: tuple[tuple[int, float], ...]
    ) -> tuple[list[_Check], _Refusal | None]:
        """Each limit that applies with what the request needs of it; or the refusal."""
        counters = self._counters
        model = demand.model
        input_, output = demand.input, demand.output
        needs = (1, input_ + output, input_, output)  # by kind: requests, tokens, input, output
        checks: list[_Check] = []
        refusal: _Refusal | None = None
        for counted in demand.limits:
            limit = counted.limit
            if limit.model is not None and limit.model != model:
                continue
            counter = counters.get(counted.key)
            if counter is None:
                counter = counters[counted.key] = _Counter()
            number, end = spans[counted.span]
            if counter.window != number:
                counter.window, counter.used = number, 0
            cap = limit.limit
            need = needs[counted.kind]
            if need > cap:
                need = cap
            left = cap - counter.used - counter.reserved
            if left <= 0 or need > left:
                # Of several limits exceeded, the one that frees up last says when to retry.
                if refusal is None or end > refusal[3]:
                    refusal = (counted, need, left, end)
                continue
            checks.append((counter, counted, need))
        return checks, refusal

    def settle(
        self, held: list[tuple[_Counter, int, int, int]], input_: int | None, output: int | None
    ) -> None:
        """Release each reservation and count the usage (None, None: what was reserved)."""
        if not held:
            return
        spans = self.windows.all(self.clock())
        unknown = input_ is None and output is None
        input_, output = input_ or 0, output or 0
        used = (1, input_ + output, input_, output)
        for counter, kind, span, reserved in held:
            counter.reserved -= reserved
            number = spans[span][0]
            if counter.window != number:
                counter.window, counter.used = number, 0
            counter.used += reserved if unknown else used[kind]

    async def read(self, limits: Sequence[Counted]) -> list[tuple[int, int]]:
        return [self.usage(c.subject, c.limit) for c in limits]

    async def aclose(self) -> None:
        pass

    def usage(self, subject: str, limit: Any) -> tuple[int, int]:
        """(used in the current window, reserved by requests in flight) of one limit; only
        reads, so another thread may ask too."""
        counter = self._counters.get(Counted(subject, limit).key)
        if counter is None:
            return 0, 0
        current = Windows().current(limit.window, self.clock())[0]
        return (counter.used if counter.window == current else 0), counter.reserved


def _take(
    checks: list[_Check], spans: tuple[tuple[int, float], ...]
) -> tuple[list[tuple[_Counter, int, int, int]], _Tightest | None, _Tightest | None]:
    """Take what each limit was checked for: a request counts at once, tokens are reserved.
    Also the tightest limit of each kind after it, for the headers."""
    held: list[tuple[_Counter, int, int, int]] = []
    requests = tokens = None  # (left, cap, end) of the tightest limit of each kind
    for counter, counted, need in checks:
        cap = counted.limit.limit
        kind = counted.kind
        if kind == 0:
            counter.used += 1
            left = cap - counter.used - counter.reserved
            if requests is None or left < requests[0]:
                requests = (left, cap, spans[counted.span][1])
        else:
            counter.reserved += need
            held.append((counter, kind, counted.span, need))
            left = cap - counter.used - counter.reserved
            if tokens is None or left < tokens[0]:
                tokens = (left, cap, spans[counted.span][1])
    return held, requests, tokens


def exceeded(
    counted: Counted, model: str, need: int, left: int, now: float, wait: float
) -> AllowanceExceeded:
    """The refusal by `counted`, which had `left` for a request needing `need`; its window
    ends in `wait` seconds (every store refuses in the same words)."""
    limit = counted.limit
    what = limit.reason.replace("_", " ")
    scope = f" for '{model}'" if limit.model is not None else ""
    if limit.measure is _REQUESTS:
        detail = f"limit {limit.limit}"
    else:
        detail = f"limit {limit.limit}, remaining {max(0, left)}, this request needs up to {need}"
    owner = "this token's" if counted.subject.startswith("t") else "your"
    standing = Standing(limit.limit, max(0, left), now + wait)
    requests = limit.measure is _REQUESTS
    return AllowanceExceeded(
        f"Rate limit reached: {owner} allowance of {what}{scope} ({detail}). "
        f"Try again in {_duration(wait)}.",
        reason=limit.reason,
        retry_after=max(1.0, math.ceil(wait)),
        requests=standing if requests else None,
        tokens=None if requests else standing,
    )


def demand(allowance: Sequence[Counted], model: str) -> Demand:
    """What a count asks of an allowance: one request of each requests limit, no tokens."""
    return Demand([c for c in allowance if c.limit.measure is Measure.REQUESTS], model, 0, 0)
