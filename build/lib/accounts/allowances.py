"""Usage allowances: limits on requests and tokens per window, and how they resolve (pure).

An allowance is a set of limits, each "at most `limit` of a measure per window", optionally for
one model only. It resolves like priority (accounts/priority.py):

- A group's allowance is None (it has no say, as a null priority) or a tuple of limits (the
  empty tuple: explicitly unlimited). A limit the group does not name is no limit from it.
- A person's inherited allowance is the most generous of the groups that have a say: for each
  limit key, no limit when one of them sets none, else the largest. Joining another group never
  takes anything away. No group with a say: no limits.
- A token's own allowance may be lower: the owner's choice is checked against their ceiling
  when saved and applies *together with* the inherited one (so it can never raise it, even after
  the owner's groups shrank, and a limit it does not name is the owner's); an administrator's
  choice for another's token stands alone (a limit it does not name is none).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any


class InvalidAllowance(ValueError):
    """An allowance that is not a list of well-formed, distinct limits (param names the place)."""

    def __init__(self, message: str, param: str = "allowance") -> None:
        super().__init__(message)
        self.param = param


class Measure(StrEnum):
    REQUESTS = "requests"
    TOKENS = "tokens"  # input plus output
    INPUT = "input_tokens"
    OUTPUT = "output_tokens"


class Window(StrEnum):
    MINUTE = "minute"  # the clock minute in UTC
    DAY = "day"  # the calendar day in UTC
    MONTH = "month"  # the calendar month in UTC


MAX_LIMIT = 10**15
MAX_LIMITS = 100
MAX_MODEL = 200

Key = tuple[Measure, Window, str | None]  # what a limit counts: measure, window, model or all


@dataclass(frozen=True, slots=True)
class Limit:
    measure: Measure
    window: Window
    limit: int
    model: str | None = None  # None: every model together

    @property
    def key(self) -> Key:
        return (self.measure, self.window, self.model)

    @property
    def reason(self) -> str:
        """The limit's name in refusals and /metrics: `tokens_per_day`, `requests_per_minute`."""
        return f"{self.measure.value}_per_{self.window.value}"

    def to_json(self) -> dict[str, Any]:
        return {
            "measure": self.measure.value,
            "window": self.window.value,
            "limit": self.limit,
            "model": self.model,
        }


Allowance = tuple[Limit, ...]  # in a stable order (measure, window, model); () is unlimited
UNLIMITED: Allowance = ()

_MEASURES: dict[object, Measure] = {m.value: m for m in Measure}
_WINDOWS: dict[object, Window] = {w.value: w for w in Window}
_ORDER: dict[StrEnum, int] = {
    **{m: i for i, m in enumerate(Measure)},
    **{w: i for i, w in enumerate(Window)},
}


def _sorted(limits: Iterable[Limit]) -> Allowance:
    return tuple(sorted(limits, key=lambda x: (_ORDER[x.measure], _ORDER[x.window], x.model or "")))


def parse_allowance(value: object) -> Allowance | None:
    """Read an API or stored value: None, or a list of {measure, window, limit, model?}."""
    if value is None:
        return None
    if not isinstance(value, list | tuple):
        raise InvalidAllowance("An allowance is a list of limits, or null.")
    if len(value) > MAX_LIMITS:
        raise InvalidAllowance(f"An allowance has at most {MAX_LIMITS} limits.")
    seen: set[Key] = set()
    out: list[Limit] = []
    for i, item in enumerate(value):
        limit = _parse_limit(item, f"allowance.{i}")
        if limit.key in seen:
            raise InvalidAllowance(
                f"Two limits of {limit.reason} for the same model.", f"allowance.{i}"
            )
        seen.add(limit.key)
        out.append(limit)
    return _sorted(out)


def _parse_limit(item: object, where: str) -> Limit:
    if isinstance(item, Limit):
        return item
    if not isinstance(item, Mapping):
        raise InvalidAllowance("A limit is an object with measure, window and limit.", where)
    unknown = set(item) - {"measure", "window", "limit", "model"}
    if unknown:
        raise InvalidAllowance(f"Unknown field {sorted(unknown)[0]!r} in a limit.", where)
    raw_measure, raw_window = item.get("measure"), item.get("window")
    measure = _MEASURES.get(raw_measure) if isinstance(raw_measure, str) else None
    if measure is None:
        raise InvalidAllowance(
            "A limit's measure is one of requests, tokens, input_tokens, output_tokens.",
            where + ".measure",
        )
    window = _WINDOWS.get(raw_window) if isinstance(raw_window, str) else None
    if window is None:
        raise InvalidAllowance("A limit's window is one of minute, day, month.", where + ".window")
    amount = item.get("limit")
    if not isinstance(amount, int) or isinstance(amount, bool) or not 0 <= amount <= MAX_LIMIT:
        raise InvalidAllowance(
            f"A limit is a whole number from 0 to {MAX_LIMIT}.", where + ".limit"
        )
    model = item.get("model")
    if model is not None and (not isinstance(model, str) or not 0 < len(model) <= MAX_MODEL):
        raise InvalidAllowance(
            f"A limit's model is a name of 1 to {MAX_MODEL} characters, or null for every model.",
            where + ".model",
        )
    return Limit(measure, window, amount, model)


def as_json(allowance: Allowance | None) -> list[dict[str, Any]] | None:
    return None if allowance is None else [limit.to_json() for limit in allowance]


def inherited_allowance(group_allowances: Iterable[Allowance | None]) -> Allowance:
    """The most generous allowance among the groups that have a say (see the module's rules)."""
    having_say = [a for a in group_allowances if a is not None]
    if not having_say:
        return UNLIMITED
    keys = set.intersection(*({limit.key for limit in a} for a in having_say))
    best: dict[Key, Limit] = {}
    for allowance in having_say:
        for limit in allowance:
            if limit.key in keys and (limit.key not in best or limit.limit > best[limit.key].limit):
                best[limit.key] = limit
    return _sorted(best.values())


def ceiling(inherited: Allowance, is_admin: bool) -> Allowance:
    """The most a person may give their own token: their inherited allowance, or no limit for
    an administrator."""
    return UNLIMITED if is_admin else inherited


def above_ceiling(requested: Allowance | None, ceiling_: Allowance) -> list[Limit]:
    """The requested limits higher than the ceiling's limit of the same key.

    An owner's token allowance applies together with the inherited one, so a limit it does not
    name is the owner's, and limits the ceiling does not have are free to set.
    """
    if requested is None:
        return []
    top = {limit.key: limit.limit for limit in ceiling_}
    return [x for x in requested if x.key in top and x.limit > top[x.key]]


def combined(*allowances: Allowance) -> Allowance:
    """Every limit of each, the lowest where two name the same key (both apply)."""
    low: dict[Key, Limit] = {}
    for allowance in allowances:
        for limit in allowance:
            if limit.key not in low or limit.limit < low[limit.key].limit:
                low[limit.key] = limit
    return _sorted(low.values())


@dataclass(frozen=True, slots=True)
class Resolution:
    """Which limits a request is counted against: the person's and the token's own."""

    person: Allowance  # counted over everything the person does (all their tokens)
    token: Allowance  # counted over this token's requests only

    @property
    def effective(self) -> Allowance:
        """The limits that apply, as one allowance (the lower of the two where both name one)."""
        return combined(self.person, self.token)


def resolve_allowance(
    override: Allowance | None,
    override_set_by_admin: bool,
    inherited: Allowance,
    is_admin: bool = False,
) -> Resolution:
    """The limits a token's request is counted against.

    The owner's own override applies together with their inherited allowance, so it can only
    lower it, even after their groups changed; an administrator's, or an administrator owner's
    (whose ceiling is no limit), stands alone, as a priority they set does.
    """
    if override is None:
        return Resolution(person=inherited, token=UNLIMITED)
    if override_set_by_admin or is_admin:
        return Resolution(person=UNLIMITED, token=override)
    return Resolution(person=inherited, token=override)


@dataclass(frozen=True, slots=True)
class Counted:
    """One limit a request is checked against, with the counter it is counted on: the
    person's (`u<id>`, shared by all their tokens) or one token's (`t<id>`)."""

    subject: str
    limit: Limit
    # Made once, for the request path: its counter's key (a str, whose hash Python keeps), what
    # it counts (0 requests, 1 tokens, 2 input, 3 output) and its window (0 minute, 1 day, 2
    # month) as indexes.
    key: str = field(init=False, compare=False, repr=False)
    kind: int = field(init=False, compare=False, repr=False)
    span: int = field(init=False, compare=False, repr=False)

    def __post_init__(self) -> None:
        limit = self.limit
        model = "*" if limit.model is None else "=" + limit.model
        key = f"{self.subject}|{limit.measure.value}|{limit.window.value}|{model}"
        object.__setattr__(self, "key", key)
        object.__setattr__(self, "kind", list(Measure).index(limit.measure))
        object.__setattr__(self, "span", list(Window).index(limit.window))


def counted(resolution: Resolution, *, user_id: int, token_id: int | None) -> tuple[Counted, ...]:
    """The resolution as the gateway checks it (made once per cached caller, not per request)."""
    person = tuple(Counted(f"u{user_id}", limit) for limit in resolution.person)
    if token_id is None:
        return person
    return person + tuple(Counted(f"t{token_id}", limit) for limit in resolution.token)
