"""Who may call /api/v0: session authentication (401 when signed out) and the admin check.

DRF imports this module while it is itself loading (DEFAULT_AUTHENTICATION_CLASSES), so it
must not import rest_framework.views, and it reaches the models only inside functions.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from rest_framework import authentication, permissions
from rest_framework.request import Request

if TYPE_CHECKING:
    from rest_framework.views import APIView

    from accounts.rbac import Resolved


class SessionAuthentication(authentication.SessionAuthentication):
    def authenticate_header(self, request: Request) -> str:
        # Any value makes DRF answer NotAuthenticated with 401; without one it downgrades to 403.
        return "Session"


def enforce_csrf(request: Request) -> None:
    """Check CSRF for a view that runs before anyone is signed in (DRF only checks sessions)."""
    SessionAuthentication().enforce_csrf(request)


def resolved_for(request: Request) -> Resolved:
    """The signed-in person's RBAC answer, resolved once per request."""
    from accounts.rbac import resolve

    cached: Resolved | None = getattr(request, "_aiplane_resolved", None)
    if cached is None:
        cached = resolve(request.user)
        request._aiplane_resolved = cached  # type: ignore[attr-defined]
    return cached


class IsGatewayAdmin(permissions.BasePermission):
    """Administrators only: 401 for nobody signed in, 403 (code not_admin) for others."""

    message = "Administrator rights are required."
    code = "not_admin"

    def has_permission(self, request: Request, view: APIView) -> bool:
        user = request.user
        if user is None or not user.is_authenticated:
            return False
        return resolved_for(request).is_admin
