"""Identity tables: gateway groups, per-person profile, and personal API tokens."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.core.validators import RegexValidator
from django.db import models
from django.utils import timezone

from accounts.allowances import Allowance, parse_allowance
from accounts.priority import Priority

PRIORITY_CHOICES = [(p.value, p.label) for p in Priority]
LANGUAGES = ("en", "de", "fr", "es", "ru", "zh")

group_name_validator = RegexValidator(
    r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$",
    "A group name is 1-64 letters, digits, '.', '_' or '-', starting with a letter or digit.",
    code="invalid_group_name",
)


def actor_field() -> models.ForeignKey[Any, Any]:
    """The person who did something to a row (revoked it, set its priority): null once their
    account is deleted, the row kept; no reverse accessor on the user."""
    return models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.SET_NULL,
        null=True,
        blank=True,
        related_name="+",
    )


def _as_priority(value: int | None) -> Priority | None:
    return None if value is None else Priority(value)


class PriorityAndAllowance(models.Model):
    """What a group and a token both set, each in its own columns: a priority (0/1/2) and an
    allowance (a JSON list of limits), read here as what they mean."""

    priority: int | None
    allowance: Any

    class Meta:
        abstract = True

    @property
    def priority_class(self) -> Priority | None:
        return _as_priority(self.priority)

    @property
    def allowance_limits(self) -> Allowance | None:
        return parse_allowance(self.allowance)


class GatewayGroup(PriorityAndAllowance):
    # The name is the group's identity in the API (PUT by name, DELETE /groups/{name}).
    name = models.CharField(max_length=64, unique=True, validators=[group_name_validator])
    description = models.TextField(blank=True, default="")
    is_admin = models.BooleanField(default=False)
    is_default = models.BooleanField(default=False, help_text="Every user is a member.")
    # Stored as 0/1/2 so "highest priority" is a plain max().
    priority = models.PositiveSmallIntegerField(null=True, blank=True, choices=PRIORITY_CHOICES)
    # None: no say (as a null priority); a list of limits (accounts/allowances.py), [] unlimited.
    allowance = models.JSONField(null=True, blank=True)
    members = models.ManyToManyField(
        settings.AUTH_USER_MODEL, blank=True, related_name="gateway_groups"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["name"]

    def __str__(self) -> str:
        return self.name


class UserProfile(models.Model):
    LANGUAGE_CHOICES = [(code, code) for code in LANGUAGES]

    user = models.OneToOneField(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="profile"
    )
    language = models.CharField(max_length=8, choices=LANGUAGE_CHOICES, default="en")

    def __str__(self) -> str:
        return f"{self.user_id}: {self.language}"


class ApiToken(PriorityAndAllowance):
    owner = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="api_tokens"
    )
    name = models.CharField(max_length=100)
    prefix = models.CharField(max_length=12)
    digest = models.CharField(max_length=64, unique=True)
    created_at = models.DateTimeField(auto_now_add=True)
    last_used_at = models.DateTimeField(null=True, blank=True)
    expires_at = models.DateTimeField(null=True, blank=True)
    revoked_at = models.DateTimeField(null=True, blank=True)
    # The owner, or the administrator who stopped a key that leaked: the owner is told which.
    revoked_by = actor_field()
    # None means every model the owner's groups may use; a list narrows it further.
    model_allowlist = models.JSONField(null=True, blank=True)
    priority = models.PositiveSmallIntegerField(null=True, blank=True, choices=PRIORITY_CHOICES)
    priority_set_by = actor_field()
    # Decides whether the override is capped at the owner's ceiling when a request arrives.
    priority_set_by_admin = models.BooleanField(default=False)
    # None inherits the owner's allowance; a list of limits lowers it (or, set by another
    # administrator, replaces it): accounts/allowances.py.
    allowance = models.JSONField(null=True, blank=True)
    allowance_set_by = actor_field()
    allowance_set_by_admin = models.BooleanField(default=False)

    class Meta:
        ordering = ["-created_at", "-id"]

    def __str__(self) -> str:
        return f"{self.name} ({self.prefix}...)"

    @property
    def is_revoked(self) -> bool:
        return self.revoked_at is not None

    @property
    def is_expired(self) -> bool:
        return self.expires_at is not None and self.expires_at <= timezone.now()
