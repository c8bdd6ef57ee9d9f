"""Indexes for the activity filters that match any case: each database spells them its own way."""

from __future__ import annotations

from typing import Any

from django.db import migrations

TABLE = "gateway_activityrecord"
PREFIXED = ("username", "token_name")


def _trigrams_available(cursor: Any) -> bool:
    cursor.execute("SELECT 1 FROM pg_available_extensions WHERE name = 'pg_trgm'")
    return cursor.fetchone() is not None


def create(apps: Any, schema_editor: Any) -> None:
    vendor = schema_editor.connection.vendor
    with schema_editor.connection.cursor() as cursor:
        if vendor == "sqlite":
            # SQLite's LIKE ignores ASCII case; it takes an index only if that does too.
            for column in PREFIXED:
                cursor.execute(
                    f"CREATE INDEX IF NOT EXISTS activity_{column}_nocase"
                    f" ON {TABLE} ({column} COLLATE NOCASE)"
                )
        elif vendor == "postgresql":
            # Django's istartswith is UPPER(col::text) LIKE UPPER('x%'): a pattern index on
            # the same expression serves it in any collation.
            for column in PREFIXED:
                cursor.execute(
                    f"CREATE INDEX IF NOT EXISTS activity_{column}_upper"
                    f" ON {TABLE} (UPPER({column}::text) text_pattern_ops)"
                )
            # icontains ('%x%') needs trigrams; without the contrib module it scans, as before.
            if _trigrams_available(cursor):
                cursor.execute("CREATE EXTENSION IF NOT EXISTS pg_trgm")
                cursor.execute(
                    f"CREATE INDEX IF NOT EXISTS activity_model_upper_trgm"
                    f" ON {TABLE} USING gin (UPPER(model::text) gin_trgm_ops)"
                )


def drop(apps: Any, schema_editor: Any) -> None:
    vendor = schema_editor.connection.vendor
    if vendor not in ("sqlite", "postgresql"):
        return
    names = [f"activity_{c}_nocase" for c in PREFIXED] if vendor == "sqlite" else [
        *(f"activity_{c}_upper" for c in PREFIXED), "activity_model_upper_trgm"
    ]
    with schema_editor.connection.cursor() as cursor:
        for name in names:
            cursor.execute(f"DROP INDEX IF EXISTS {name}")


class Migration(migrations.Migration):
    dependencies = [("gateway", "0004_activity_surface_usage_error")]

    operations = [migrations.RunPython(create, drop, elidable=False)]
