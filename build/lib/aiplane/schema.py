"""The OpenAPI schema class of /api/v0: error answers derived from how each view is built.

Besides what a view's @extend_schema declares, every operation documents the refusals its
construction implies, so the document cannot drift from the code:

406  always: DRF's content negotiation runs first, and only application/json is rendered
401  a permission other than AllowAny (nobody signed in)
403  an administrators-only permission (not_admin), or an unsafe method under session
     authentication (csrf_failed)
415  a POST under session authentication (the CSRF check parses a form body)
400  a request body (parse_error and field rules), with 413 (too large) and 415 (not JSON)
404  a path parameter (nothing by that id or name, or not yours)
429  a throttle
"""

from __future__ import annotations

from typing import Any

from drf_spectacular import openapi
from drf_spectacular.utils import OpenApiResponse
from rest_framework.authentication import SessionAuthentication
from rest_framework.permissions import AllowAny

MEANINGS = {
    400: "Invalid request (code names the rule, param the field).",
    401: "No signed-in session.",
    403: "Not allowed (not_admin, csrf_failed, priority_above_ceiling).",
    404: "No such object, or not yours.",
    406: "The Accept header rules out application/json.",
    409: "Conflicts with the current state.",
    413: "The request body is too large.",
    415: "The request body is not application/json.",
    429: "Too many requests: Retry-After says when to try again.",
}

UNSAFE = frozenset({"POST", "PUT", "PATCH", "DELETE"})
BODIED = frozenset({"POST", "PUT", "PATCH"})


class AutoSchema(openapi.AutoSchema):
    def implied_errors(self) -> set[int]:
        """The error statuses this operation answers by construction."""
        from accounts.api_auth import IsGatewayAdmin

        view = self.view
        statuses = {406}
        permissions = view.get_permissions()
        if any(not isinstance(p, AllowAny) for p in permissions):
            statuses.add(401)
        if any(isinstance(p, IsGatewayAdmin) for p in permissions):
            statuses.add(403)
        sessions = any(isinstance(a, SessionAuthentication) for a in view.get_authenticators())
        if self.method in UNSAFE and sessions:
            statuses.add(403)
        if self.method == "POST" and sessions:
            # Django's CSRF check reads request.POST, which DRF parses: a form body is refused
            # (415) even where the view itself never reads one.
            statuses.add(415)
        if self.method in BODIED and self.get_request_serializer() is not None:
            statuses.update({400, 413, 415})
        if "{" in self.path:
            statuses.add(404)
        if view.get_throttles():
            statuses.add(429)
        return statuses

    def _get_response_bodies(self, direction: Any = "response") -> dict[str, Any]:
        from accounts.serializers import ErrorOut

        responses: dict[str, Any] = super()._get_response_bodies(direction)
        for status in sorted(self.implied_errors()):
            if str(status) not in responses:
                answer = OpenApiResponse(ErrorOut, description=MEANINGS[status])
                responses[str(status)] = self._get_response_for_code(
                    answer, str(status), direction=direction
                )
        return dict(sorted(responses.items()))
