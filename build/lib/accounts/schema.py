"""OpenAPI extensions: describe our session authentication like DRF's own."""

from __future__ import annotations

from drf_spectacular.authentication import SessionScheme


class AiplaneSessionScheme(SessionScheme):
    target_class = "accounts.api_auth.SessionAuthentication"
