"""URL map of the Django side: the /api/v0 REST API, its OpenAPI document, and the browser UI."""

from django.urls import include, path
from drf_spectacular.views import SpectacularJSONAPIView

from aiplane.metrics_view import metrics

urlpatterns = [
    path("api/v0/openapi.json", SpectacularJSONAPIView.as_view(), name="openapi"),
    path("api/v0/", include("accounts.urls")),
    path("api/v0/", include("gateway.admin.urls")),
    path("metrics", metrics, name="prometheus-django-metrics"),
    path("", include("aiplane.ui_urls")),
]

# Under /api/ these answer in the error envelope; elsewhere they render the usual pages.
handler400 = "accounts.api_errors.bad_request"
handler404 = "accounts.api_errors.not_found"
handler500 = "accounts.api_errors.server_error"
