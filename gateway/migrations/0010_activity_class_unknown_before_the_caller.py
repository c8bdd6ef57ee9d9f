"""A record's class may be null: refused or cut short before its caller was known.

SQLite alters a column by rebuilding its table, which loses the case-blind indexes of
0005_activity_search: they are made again after it, either way.
"""

from __future__ import annotations

import importlib
from typing import Any

from django.db import migrations, models

search = importlib.import_module("gateway.migrations.0005_activity_search")


def no_class_to_blank(apps: Any, schema_editor: Any) -> None:
    """Back to a column that cannot be null: a record of no class keeps an empty one."""
    records = apps.get_model("gateway", "ActivityRecord")
    records.objects.filter(priority_class__isnull=True).update(priority_class="")


class Migration(migrations.Migration):
    dependencies = [
        ("gateway", "0009_backend_headroom"),
    ]

    operations = [
        migrations.RunPython(migrations.RunPython.noop, search.create, elidable=False),
        migrations.AlterField(
            model_name="activityrecord",
            name="priority_class",
            field=models.CharField(blank=True, max_length=10, null=True),
        ),
        migrations.RunPython(search.create, no_class_to_blank, elidable=False),
    ]
