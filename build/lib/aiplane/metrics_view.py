"""GET /metrics: Prometheus text, optionally behind a bearer token (AIPLANE_METRICS_TOKEN)."""

from __future__ import annotations

import hmac

from django.conf import settings
from django.http import HttpRequest, HttpResponse, JsonResponse
from django_prometheus.exports import ExportToDjangoView

from aiplane.envelope import error_body


def metrics(request: HttpRequest) -> HttpResponse:
    expected = settings.AIPLANE_METRICS_TOKEN
    if expected:
        given = request.headers.get("Authorization", "")
        if not hmac.compare_digest(given.encode(), f"Bearer {expected}".encode()):
            return JsonResponse(
                error_body(
                    "Send the metrics token as 'Authorization: Bearer <token>'.",
                    "authentication_error",
                    "invalid_metrics_token",
                ),
                status=401,
            )
    return ExportToDjangoView(request)
