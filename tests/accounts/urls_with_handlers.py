"""The project's URLs with the envelope handlers wired, plus two views the tests need."""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse
from django.urls import path

from aiplane.urls import urlpatterns as project_urlpatterns


def boom(request: HttpRequest) -> HttpResponse:
    raise RuntimeError("a bug")


def plain_form(request: HttpRequest) -> HttpResponse:
    """A plain Django view under /api/, so Django's own CSRF check applies."""
    return HttpResponse("ok")


urlpatterns = [
    path("api/v0/_test/boom", boom),
    path("api/v0/_test/plain", plain_form),
    path("elsewhere/plain", plain_form),
    *project_urlpatterns,
]

handler400 = "accounts.api_errors.bad_request"
handler404 = "accounts.api_errors.not_found"
handler500 = "accounts.api_errors.server_error"
