"""Activity rows stored with a bare database connection (no app registry): a batch, its refused
rows."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

from gateway.core.classes import CLASS_NAMES
from gateway.observability.records import COLUMNS, Rejected, Row

ROWS_PER_INSERT = 500

REASON_LENGTH = 300  # characters of a refused row's error kept for its log line


def row_faults() -> tuple[type[Exception], ...]:
    """What a row (not the database) is to blame for: a value its column refuses (DataError,
    IntegrityError, as Django names the driver's) or one the driver cannot even send (a lone
    surrogate is a UnicodeEncodeError, an int too wide an OverflowError). Anything else, from
    an unreachable server (OperationalError, InterfaceError) to a missing table
    (ProgrammingError on PostgreSQL), is the database's: the batch is kept and sent again."""
    # On use: the activity writer's child loads this module before it configures Django
    # (activity_writer.serve), and imports nothing of Django until then.
    from django.db import DataError, IntegrityError

    return (DataError, IntegrityError, ValueError, TypeError, OverflowError, LookupError)


def store(connection: Any, table: str, rows: list[Row]) -> list[Rejected]:
    """Store a batch of `Entry.row()` tuples in one transaction, leaving out the rows the
    database refuses; returns those as (index in `rows`, reason).

    A refused row fails the statement it is in. The batch is then split in halves, each tried
    in a savepoint, down to the single rows to blame: about 2 log2(n) tries for one such row,
    and the common case (nothing refused) is one try. A database fault anywhere raises and
    rolls back the lot, so the caller can send the whole batch again without storing any row
    twice.
    """
    from django.db import transaction  # here: see row_faults

    faults = row_faults()
    rejected: list[Rejected] = []
    insert_rows = _inserter(connection, table)

    def part(start: int, end: int) -> None:
        try:
            with transaction.atomic(using=connection.alias):  # a savepoint
                insert_rows(rows[start:end])
        except faults as err:
            if end - start == 1:
                reason = f"{type(err).__name__}: {' '.join(str(err).split())}"
                rejected.append((start, reason[:REASON_LENGTH]))
                return
            middle = (start + end) // 2
            part(start, middle)
            part(middle, end)

    with transaction.atomic(using=connection.alias):
        if rows:
            part(0, len(rows))
    return rejected


def _inserter(connection: Any, table: str) -> Callable[[list[Row]], None]:
    """Multi-row INSERTs of `Entry.row()` tuples on the driver's own cursor, inside the
    caller's transaction.

    This runs at the gateway's full request rate on a shared two-core budget, so it skips the
    ORM (model instances, per-value field preparation and placeholder rewriting cost several
    times the insert itself). It needs only a Django connection, not the app registry, which
    lets the activity writer's child process start in a fraction of a second.
    """
    names = CLASS_NAMES
    at, cls = COLUMNS.index("at"), COLUMNS.index("priority_class")
    if connection.vendor == "sqlite":
        # Django keeps SQLite times as naive UTC text ("YYYY-MM-DD HH:MM:SS[.ffffff]"). A batch
        # spans a second or two, so the date and time are formatted once per second.
        seconds: dict[int, str] = {}

        def when(t: float) -> object:
            whole = int(t)
            stamp = seconds.get(whole)
            if stamp is None:
                moment = datetime.fromtimestamp(whole, tz=UTC)
                stamp = seconds[whole] = moment.strftime("%Y-%m-%d %H:%M:%S")
            micro = int((t - whole) * 1e6)
            return f"{stamp}.{micro:06d}" if micro else stamp

        mark = "?"
    else:

        def when(t: float) -> object:
            return datetime.fromtimestamp(t, tz=UTC)

        mark = "%s"
    marks = "(" + ", ".join([mark] * len(COLUMNS)) + ")"
    head = f"INSERT INTO {connection.ops.quote_name(table)} ({', '.join(COLUMNS)}) VALUES "  # noqa: S608
    per_insert = min(ROWS_PER_INSERT, _max_params(connection) // len(COLUMNS))

    def insert_rows(rows: list[Row]) -> None:
        # The two columns stored in another form than they are held: the time and the class
        # (none before the caller was known).
        values = []
        for r in rows:
            v = list(r)
            v[at], v[cls] = when(r[at]), None if r[cls] is None else names[r[cls]]
            values.append(v)
        # One multi-row statement per chunk, not executemany: the driver gives the GIL back and
        # takes it again around every statement, and each of those handoffs stalls the event
        # loop thread (up to the 5 ms switch interval) when this runs in the gateway's own
        # process. The driver's errors are raised as Django's (DataError, OperationalError...).
        connection.ensure_connection()
        with connection.wrap_database_errors:
            cursor = connection.connection.cursor()
            try:
                for start in range(0, len(values), per_insert):
                    chunk = values[start : start + per_insert]
                    params = [value for row in chunk for value in row]
                    cursor.execute(head + ", ".join([marks] * len(chunk)), params)
            finally:
                cursor.close()

    return insert_rows


def _max_params(connection: Any) -> int:
    """How many parameters one statement may bind (SQLite's limit depends on its build)."""
    if connection.vendor == "sqlite":
        connection.ensure_connection()
        return int(connection.connection.getlimit(sqlite3.SQLITE_LIMIT_VARIABLE_NUMBER))
    return 65_535  # PostgreSQL's wire protocol bound
