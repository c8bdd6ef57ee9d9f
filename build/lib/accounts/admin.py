"""Django admin registrations (a fallback console; the product UI uses /api/v0)."""

from __future__ import annotations

from django.contrib import admin

from accounts.models import ApiToken, GatewayGroup, UserProfile


@admin.register(GatewayGroup)
class GatewayGroupAdmin(admin.ModelAdmin):
    list_display = ("name", "is_admin", "is_default", "priority")
    filter_horizontal = ("members",)


@admin.register(ApiToken)
class ApiTokenAdmin(admin.ModelAdmin):
    list_display = ("name", "prefix", "owner", "priority", "revoked_at", "expires_at")
    # The digest is the credential's only trace; nobody should edit it by hand.
    readonly_fields = ("prefix", "digest", "created_at", "last_used_at")


@admin.register(UserProfile)
class UserProfileAdmin(admin.ModelAdmin):
    list_display = ("user", "language")
