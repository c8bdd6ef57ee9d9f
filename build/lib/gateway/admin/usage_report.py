"""Usage over a time range: sums, a time series and queue-wait percentiles per group, and CSV.

The sums and refusal counts are computed by the database (one GROUP BY, the same SQL on SQLite and
PostgreSQL). Queue-wait percentiles are not: SQLite has no percentile function, so they come from
the queue waits themselves, read in one bounded query (at most QUEUE_WAIT_SAMPLE_BOUND rows; a
larger range reads every k-th record by id, and the answer says k as `sample_every`).
"""

from __future__ import annotations

import csv
import io
import math
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any, Final

from django.db.models import Count, F, Q, QuerySet, Sum
from django.db.models.functions import Mod, Trunc

from gateway.core.classes import CLASS_NAMES
from gateway.core.outcomes import QUEUED
from gateway.core.outcomes import REFUSALS as REFUSAL_OUTCOMES

# Group keys: the record's fields that name one group, in the order rows are sorted by.
GROUP_KEYS: Final[dict[str, tuple[str, ...]]] = {
    "user": ("username",),
    "group": ("group",),
    "token": ("token_id", "token_name"),
    "model": ("model",),
    "class": ("priority_class",),
}
BUCKETS: Final[dict[str, timedelta]] = {
    "minute": timedelta(minutes=1),
    "hour": timedelta(hours=1),
    "day": timedelta(days=1),
}
# A day of minutes, two months of hours, four years of days: more points than any chart shows.
MAX_BUCKETS: Final = 1440
# Rows of the series (one per bucket and group that has records); beyond it, ask for less.
MAX_SERIES_ROWS: Final = 50_000
QUEUE_WAIT_SAMPLE_BOUND: Final = 100_000
REFUSALS: Final = tuple(str(outcome) for outcome in REFUSAL_OUTCOMES)
QUEUED_OUTCOMES: Final = tuple(str(outcome) for outcome in QUEUED)
SUMS: Final = ("input_tokens", "output_tokens", "cached_tokens")
PERCENTILES: Final = (50, 95)


class UsageQueryError(Exception):
    """A query the report refuses (400): its message and the parameter to blame."""

    def __init__(self, message: str, param: str) -> None:
        super().__init__(message)
        self.message, self.param = message, param


def bucket_starts(since: datetime, until: datetime, bucket: str) -> list[datetime]:
    """Every bucket's start from the one holding `since` to the last before `until` (UTC)."""
    step = BUCKETS[bucket]
    start = since.replace(second=0, microsecond=0)
    if bucket in ("hour", "day"):
        start = start.replace(minute=0)
    if bucket == "day":
        start = start.replace(hour=0)
    count = math.ceil((until - start) / step)
    if count > MAX_BUCKETS:
        raise UsageQueryError(
            f"{count} {bucket} buckets from since to until; at most {MAX_BUCKETS}: choose a "
            "shorter range or a longer bucket.",
            "bucket",
        )
    return [start + i * step for i in range(count)]


def nearest_rank(ordered: list[float], percentile: int) -> float | None:
    """The nearest-rank percentile of sorted values (a value that occurred; None for none)."""
    if not ordered:
        return None
    return ordered[max(0, math.ceil(percentile / 100 * len(ordered)) - 1)]


@dataclass
class Cell:
    """What one group (in one bucket, or over the whole range) adds up to."""

    requests: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    cached_tokens: int = 0
    refusals: dict[str, int] = field(default_factory=lambda: dict.fromkeys(REFUSALS, 0))
    waits: dict[str, list[float]] = field(default_factory=lambda: {c: [] for c in CLASS_NAMES})

    def add(self, row: dict[str, Any]) -> None:
        self.requests += row["requests"]
        for name in SUMS:
            setattr(self, name, getattr(self, name) + (row[name] or 0))
        for reason in REFUSALS:
            self.refusals[reason] += row[f"refused_{reason}"]

    def out(self) -> dict[str, Any]:
        waits = {}
        for name, values in self.waits.items():
            values.sort()
            waits[name] = {
                "requests": len(values),
                **{f"p{p}": nearest_rank(values, p) for p in PERCENTILES},
            }
        return {
            "requests": self.requests,
            **{name: getattr(self, name) for name in SUMS},
            "refusals": dict(self.refusals),
            "queue_wait_ms": waits,
        }


Key = tuple[Any, ...]


def _memberships() -> tuple[list[str], dict[int, list[str]]]:
    """Default groups (everyone's), and each user's other groups: as they are now, since a record
    does not say which groups its caller had."""
    from accounts.models import GatewayGroup

    defaults = list(GatewayGroup.objects.filter(is_default=True).values_list("name", flat=True))
    members: dict[int, list[str]] = defaultdict(list)
    through = GatewayGroup.members.through.objects.filter(gatewaygroup__is_default=False)
    for user_id, name in through.values_list("user_id", "gatewaygroup__name"):
        members[user_id].append(name)
    return defaults, members


class _Keys:
    """Maps a database row's key fields to the groups it counts in (a user's record counts in
    each of the user's groups; a record without a user, in none of them: group null)."""

    def __init__(self, group_by: str) -> None:
        self.group_by = group_by
        self.db_fields = ("user_id",) if group_by == "group" else GROUP_KEYS[group_by]
        self._groups = _memberships() if group_by == "group" else None

    def of(self, values: Iterable[Any]) -> list[Key]:
        values = tuple(values)
        if self._groups is None:
            return [values]
        user_id = values[0]
        if user_id is None:
            return [(None,)]
        defaults, members = self._groups
        names = sorted({*defaults, *members.get(user_id, ())})
        return [(name,) for name in names] or [(None,)]


def _sort_key(key: Key) -> tuple[Any, ...]:
    # None sorts first (no group; a browser session's record has no token).
    return tuple((v is not None, v if v is not None else "") for v in key)


def report(
    records: QuerySet[Any],
    *,
    group_by: str,
    since: datetime,
    until: datetime,
    bucket: str | None,
) -> dict[str, Any]:
    """The usage of `records` from `since` (inclusive) to `until` (exclusive) by `group_by`, and
    per `bucket` when one is asked for. Raises UsageQueryError for a query that is too large."""
    if since >= until:
        raise UsageQueryError("since must be before until.", "since")
    starts = bucket_starts(since, until, bucket) if bucket else []
    keys = _Keys(group_by)
    chosen = records.filter(at__gte=since, at__lt=until)
    if bucket:
        chosen = chosen.annotate(bucket_start=Trunc("at", bucket, tzinfo=UTC))
    by = (*(["bucket_start"] if bucket else []), *keys.db_fields)

    refusals = {f"refused_{r}": Count("id", filter=Q(outcome=r)) for r in REFUSALS}
    sums = {name: Sum(name) for name in SUMS}
    rows = chosen.values(*by).annotate(requests=Count("id"), **sums, **refusals).order_by(*by)
    if bucket:
        rows = rows[: MAX_SERIES_ROWS + 1]
    range_cells: dict[Key, Cell] = defaultdict(Cell)
    series_cells: dict[tuple[datetime, Key], Cell] = defaultdict(Cell)
    # Every bucket in total: percentiles do not add up, so a chart by class cannot sum groups.
    bucket_cells: dict[datetime, Cell] = {start: Cell() for start in starts}
    total = Cell()
    series_count = 0
    for row in rows:
        series_count += 1
        if series_count > MAX_SERIES_ROWS:
            raise UsageQueryError(
                f"More than {MAX_SERIES_ROWS} buckets and groups with usage: choose a shorter "
                "range or a longer bucket.",
                "bucket",
            )
        total.add(row)
        for key in keys.of(row[f] for f in keys.db_fields):
            range_cells[key].add(row)
            if bucket:
                series_cells[(row["bucket_start"], key)].add(row)
        if bucket:
            bucket_cells[row["bucket_start"]].add(row)

    queued = chosen.filter(outcome__in=QUEUED_OUTCOMES)
    every = max(1, math.ceil(queued.count() / QUEUE_WAIT_SAMPLE_BOUND))
    if every > 1:
        queued = queued.annotate(sample=Mod(F("id"), every)).filter(sample=0)
    # Unordered: the records' default order (-at) would only cost a sort here.
    waits = queued.order_by().values_list(*by, "priority_class", "queue_ms")
    for *values, priority_class, queue_ms in waits[:QUEUE_WAIT_SAMPLE_BOUND]:
        if priority_class not in CLASS_NAMES:
            continue
        total.waits[priority_class].append(queue_ms)
        start = values.pop(0) if bucket else None
        if start is not None:
            bucket_cells[start].waits[priority_class].append(queue_ms)
        for key in keys.of(values):
            range_cells[key].waits[priority_class].append(queue_ms)
            if bucket and start is not None:
                series_cells[(start, key)].waits[priority_class].append(queue_ms)

    names = GROUP_KEYS[group_by]
    results = [
        {**dict(zip(names, key, strict=True)), **range_cells[key].out()}
        for key in sorted(range_cells, key=_sort_key)
    ]
    series = [
        {"start": start.isoformat(), **dict(zip(names, key, strict=True)), **cell.out()}
        for (start, key), cell in sorted(
            series_cells.items(), key=lambda item: (item[0][0], _sort_key(item[0][1]))
        )
    ]
    return {
        "group_by": group_by,
        "bucket": bucket,
        "since": since.isoformat(),
        "until": until.isoformat(),
        "buckets": [start.isoformat() for start in starts],
        "results": results,
        "series": series,
        "bucket_totals": [{"start": s.isoformat(), **c.out()} for s, c in bucket_cells.items()],
        "totals": total.out(),
        "sample_every": every,
    }


def _cell(value: Any) -> Any:
    # A name a spreadsheet would run as a formula (=, +, -, @) is quoted, as OWASP advises.
    if isinstance(value, str) and value[:1] in ("=", "+", "-", "@", "\t", "\r"):
        return "'" + value
    return "" if value is None else value


def as_csv(body: dict[str, Any]) -> str:
    """One CSV row per bucket and group (with a bucket), else per group; a header row first."""
    names = GROUP_KEYS[body["group_by"]]
    header = [
        *(["start"] if body["bucket"] else []),
        *names,
        "requests",
        *SUMS,
        *(f"refused_{reason}" for reason in REFUSALS),
        *(f"queue_wait_{c}_p{p}_ms" for c in CLASS_NAMES for p in PERCENTILES),
    ]
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\r\n")
    writer.writerow(header)
    for row in body["series"] if body["bucket"] else body["results"]:
        writer.writerow(
            [
                *([row["start"]] if body["bucket"] else []),
                *(_cell(row[name]) for name in names),
                row["requests"],
                *(row[name] for name in SUMS),
                *(row["refusals"][reason] for reason in REFUSALS),
                *(
                    _cell(row["queue_wait_ms"][c][f"p{p}"])
                    for c in CLASS_NAMES
                    for p in PERCENTILES
                ),
            ]
        )
    return out.getvalue()
