"""Activity records in the database: pruned by age, stored by the database thread."""

from __future__ import annotations


def prune(retention_days: int) -> int:
    """Delete records older than the retention setting; returns how many went."""
    from datetime import timedelta

    from django.utils import timezone

    from gateway.models import ActivityRecord

    cutoff = timezone.now() - timedelta(days=retention_days)
    deleted, _ = ActivityRecord.objects.filter(at__lt=cutoff).delete()
    return deleted
