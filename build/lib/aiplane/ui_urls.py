"""Browser pages: sign-in/out, the personal and administration pages, the JS message dictionary."""

from __future__ import annotations

from django.urls import path

from aiplane import ui

urlpatterns = [
    path("", ui.home, name="home"),
    path("login/", ui.login_view, name="login"),
    path("logout/", ui.logout_view, name="logout"),
    path("i18n/<str:lang>.js", ui.i18n_script, name="i18n-script"),
    path("api-reference/", ui.api_reference, name="api-reference"),
    path("tokens/", ui.shell_view("tokens"), name="tokens"),
    path("playground/", ui.shell_view("playground"), name="playground"),
    path("account/", ui.shell_view("account"), name="account"),
    path("admin/settings/", ui.shell_view("admin-settings"), name="admin-settings"),
    path("admin/groups/", ui.shell_view("admin-groups"), name="admin-groups"),
    path("admin/users/", ui.shell_view("admin-users"), name="admin-users"),
    path("admin/tokens/", ui.shell_view("admin-tokens"), name="admin-tokens"),
    path("admin/backends/", ui.shell_view("admin-backends"), name="admin-backends"),
    path("admin/models/", ui.shell_view("admin-models"), name="admin-models"),
    path("admin/queue/", ui.shell_view("admin-queue"), name="admin-queue"),
    path("admin/activity/", ui.shell_view("admin-activity"), name="admin-activity"),
    path("admin/audit/", ui.shell_view("admin-audit"), name="admin-audit"),
    path("admin/usage/", ui.shell_view("admin-usage"), name="admin-usage"),
]
