"""Stored values of the operator settings catalog (defaults live in the catalog, not here)."""

from __future__ import annotations

from django.db import models


class OperatorSetting(models.Model):
    key = models.CharField(max_length=100, primary_key=True)
    value = models.JSONField()
    updated_at = models.DateTimeField(auto_now=True)
    updated_by = models.CharField(max_length=150, blank=True, default="")

    def __str__(self) -> str:
        return f"{self.key}={self.value!r}"
