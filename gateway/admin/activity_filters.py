"""The activity filters of the admin API: what a typed user, token or model matches."""

from __future__ import annotations

from typing import Any

from django.db.models import Q, QuerySet

from gateway.admin.serializers.filters import filtered

# Prefixes (user, token name) are served by an index on each database (migration
# 0005_activity_search): people type names from their start. A model is matched anywhere in its
# name, because its interesting part follows an organisation ("meta-llama/Llama-3.1-8B").


# The filters that are one field lookup each (user and token are more).
ACTIVITY_LOOKUPS = {
    "model": "model__icontains",
    "class": "priority_class",
    "outcome": "outcome",
    "since": "at__gte",
    "until": "at__lt",
}


def activity_filtered(records: QuerySet[Any], q: dict[str, Any]) -> QuerySet[Any]:
    """The records that match the validated query `q` of `ActivityQueryIn`."""
    if "user" in q:
        records = records.filter(username__istartswith=q["user"])
    if "token" in q:
        token = q["token"]
        by_name = Q(token_name__istartswith=token)
        # A token id names exactly one token; digits may still begin a token's name.
        if token.isascii() and token.isdigit() and len(token) <= 18:
            by_name |= Q(token_id=int(token))
        records = records.filter(by_name)
    return filtered(records, q, ACTIVITY_LOOKUPS)
