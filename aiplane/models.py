"""The project's tables: stored operator settings (defaults are the catalog's) and the audit log."""

from __future__ import annotations

from django.core.serializers.json import DjangoJSONEncoder
from django.db import models

from accounts.models import actor_field


class OperatorSetting(models.Model):
    key = models.CharField(max_length=100, primary_key=True)
    value = models.JSONField()
    updated_at = models.DateTimeField(auto_now=True)
    updated_by = models.CharField(max_length=150, blank=True, default="")

    def __str__(self) -> str:
        return f"{self.key}={self.value!r}"


class AuditEntry(models.Model):
    """One administrative change: who, what, when, and the object before and after (secrets
    masked). Written by `aiplane.audit.record` in the change's own transaction."""

    at = models.DateTimeField(db_index=True)
    # The person, kept by name too so the row still says who after their account is deleted;
    # no person for a management command, whose name is the actor's name then.
    actor = actor_field()
    actor_name = models.CharField(max_length=150, blank=True, default="", db_index=True)
    action = models.CharField(max_length=50, db_index=True)  # "<kind>.<verb>": "token.revoke"
    kind = models.CharField(max_length=30, db_index=True)  # the action's first word: "token"
    target = models.CharField(max_length=300, db_index=True)
    before = models.JSONField(null=True, blank=True, encoder=DjangoJSONEncoder)
    after = models.JSONField(null=True, blank=True, encoder=DjangoJSONEncoder)

    class Meta:
        ordering = ("-at", "-id")
        indexes = [models.Index(fields=["-at", "-id"], name="audit_newest_first")]

    def __str__(self) -> str:
        return f"{self.at:%Y-%m-%d %H:%M:%S} {self.actor_name} {self.action} {self.target}"
