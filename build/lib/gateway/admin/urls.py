"""Admin API routes of the data plane (backends, pools, queue, activity, usage)."""

from __future__ import annotations

from django.urls import path

from aiplane import converters  # noqa: F401  (registers the <name:...> converter)
from gateway.admin import usage_views as usage_api
from gateway.admin import views as api

app_name = "gateway"

urlpatterns = [
    path("admin/backends", api.AdminBackendsApi.as_view(), name="admin-backends"),
    path("admin/backends/<name:name>", api.AdminBackendItemApi.as_view(), name="admin-backend"),
    path(
        "admin/backends/<name:name>/detect",
        api.AdminBackendDetectApi.as_view(),
        name="admin-backend-detect",
    ),
    path("admin/pools", api.AdminPoolsApi.as_view(), name="admin-pools"),
    path("admin/pools/<name:name>", api.AdminPoolItemApi.as_view(), name="admin-pool"),
    path("admin/models", api.AdminModelsApi.as_view(), name="admin-models"),
    path(
        "admin/backends/<name:name>/rename",
        api.AdminBackendRenameApi.as_view(),
        name="admin-backend-rename",
    ),
    path(
        "admin/pools/<name:name>/rename", api.AdminPoolRenameApi.as_view(), name="admin-pool-rename"
    ),
    path("admin/queue", api.AdminQueueApi.as_view(), name="admin-queue"),
    path("admin/activity", api.AdminActivityApi.as_view(), name="admin-activity"),
    path("admin/usage", usage_api.AdminUsageApi.as_view(), name="admin-usage"),
    path("usage", usage_api.OwnUsageApi.as_view(), name="usage"),
]
