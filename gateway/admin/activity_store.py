"""Activity records in the database: pruned by age, stored by the database thread."""

from __future__ import annotations

from datetime import timedelta

from django.db import connection
from django.utils import timezone

from gateway.models import ActivityRecord
from gateway.observability.activity_rows import store
from gateway.observability.records import Rejected, Row


def write_batch(rows: list[Row]) -> list[Rejected]:
    """Store a batch from the gateway's recorder on this thread's connection; returns the rows
    the database refused (see `gateway.observability.activity_rows.store`)."""
    return store(connection, ActivityRecord._meta.db_table, rows)


def prune(retention_days: int) -> int:
    """Delete records older than the retention setting; returns how many went."""
    cutoff = timezone.now() - timedelta(days=retention_days)
    deleted, _ = ActivityRecord.objects.filter(at__lt=cutoff).delete()
    return deleted
