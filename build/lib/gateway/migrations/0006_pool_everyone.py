"""A pool's "everyone" is explicit: pools stored with no allowed groups were open to everyone."""

from __future__ import annotations

from typing import Any

from django.db import migrations, models


def open_pools_stay_open(apps: Any, schema_editor: Any) -> None:
    Pool = apps.get_model("gateway", "Pool")
    for pool in Pool.objects.all():
        if not pool.allowed_groups:
            pool.everyone = True
            pool.save(update_fields=["everyone"])


def back_to_an_empty_list(apps: Any, schema_editor: Any) -> None:
    # Before this migration an empty list meant everyone: a pool for nobody cannot be said.
    Pool = apps.get_model("gateway", "Pool")
    for pool in Pool.objects.all():
        if pool.everyone:
            pool.allowed_groups = []
            pool.save(update_fields=["allowed_groups"])


class Migration(migrations.Migration):
    dependencies = [("gateway", "0005_activity_search")]

    operations = [
        migrations.AddField(
            model_name="pool",
            name="everyone",
            field=models.BooleanField(default=False),
        ),
        migrations.RunPython(open_pools_stay_open, back_to_an_empty_list),
    ]
