"""Routes of the identity API, mounted under /api/v0/."""

from __future__ import annotations

from django.urls import path

from accounts import api
from aiplane import converters  # noqa: F401  (registers the <name:...> converter)
from aiplane.audit_api import AdminAuditApi

app_name = "accounts"

urlpatterns = [
    path("session/csrf", api.SessionCsrfApi.as_view(), name="session-csrf"),
    path("session/login", api.SessionLoginApi.as_view(), name="session-login"),
    path("session/logout", api.SessionLogoutApi.as_view(), name="session-logout"),
    path("me", api.MeApi.as_view(), name="me"),
    path("me/password", api.MePasswordApi.as_view(), name="me-password"),
    path("tokens", api.TokenListApi.as_view(), name="tokens"),
    path("tokens/details", api.TokenDetailsApi.as_view(), name="token-details"),
    path("tokens/<int:token_id>", api.TokenItemApi.as_view(), name="token"),
    path("tokens/<int:token_id>/priority", api.TokenPriorityApi.as_view(), name="token-priority"),
    path("tokens/<int:token_id>/revoke", api.TokenRevokeApi.as_view(), name="token-revoke"),
    path(
        "tokens/<int:token_id>/allowance", api.TokenAllowanceApi.as_view(), name="token-allowance"
    ),
    path("tokens/<int:token_id>/rotate", api.TokenRotateApi.as_view(), name="token-rotate"),
    path("admin/groups", api.AdminGroupsApi.as_view(), name="admin-groups"),
    path("admin/groups/<name:name>", api.AdminGroupItemApi.as_view(), name="admin-group"),
    path(
        "admin/groups/<name:name>/rename",
        api.AdminGroupRenameApi.as_view(),
        name="admin-group-rename",
    ),
    path("admin/users", api.AdminUsersApi.as_view(), name="admin-users"),
    path("admin/users/<int:user_id>", api.AdminUserItemApi.as_view(), name="admin-user"),
    path("admin/tokens", api.AdminTokensApi.as_view(), name="admin-tokens"),
    path("admin/tokens/<int:token_id>", api.AdminTokenItemApi.as_view(), name="admin-token"),
    path(
        "admin/tokens/<int:token_id>/revoke",
        api.AdminTokenRevokeApi.as_view(),
        name="admin-token-revoke",
    ),
    path(
        "admin/tokens/<int:token_id>/priority",
        api.AdminTokenPriorityApi.as_view(),
        name="admin-token-priority",
    ),
    path(
        "admin/tokens/<int:token_id>/allowance",
        api.AdminTokenAllowanceApi.as_view(),
        name="admin-token-allowance",
    ),
    path("admin/settings", api.AdminSettingsApi.as_view(), name="admin-settings"),
    path("admin/audit", AdminAuditApi.as_view(), name="admin-audit"),
]
