"""Whether a record's tokens are the gateway's own count: the engine streamed without usage.

SQLite adds a column that cannot be null by rebuilding its table, which loses the case-blind
indexes of 0005_activity_search: they are made again after it, either way.
"""

from __future__ import annotations

import importlib

from django.db import migrations, models

search = importlib.import_module("gateway.migrations.0005_activity_search")


class Migration(migrations.Migration):
    dependencies = [
        ("gateway", "0010_activity_class_unknown_before_the_caller"),
    ]

    operations = [
        migrations.RunPython(migrations.RunPython.noop, search.create, elidable=False),
        migrations.AddField(
            model_name="activityrecord",
            name="usage_estimated",
            field=models.BooleanField(default=False),
        ),
        migrations.RunPython(search.create, migrations.RunPython.noop, elidable=False),
    ]
