"""The one error envelope of /api/v0 (OpenAI's shape) and the handlers that produce it.

ApiError                 raised by services and views: status, code, message, param, type
exception_handler        DRF: ValidationError 400, NotAuthenticated 401, PermissionDenied 403
                         (CSRF failures get code "csrf_failed"), NotFound/Http404 404, ...
bad_request, not_found,  Django's handler400/404/500 for /api/ paths (400: what Django
server_error             refuses before any view runs, such as a Host header not served here)
csrf_failure             Django's CSRF_FAILURE_VIEW for /api/ paths
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from django.core.exceptions import DisallowedHost, RequestDataTooBig, TooManyFieldsSent
from django.core.exceptions import PermissionDenied as DjangoPermissionDenied
from django.http import Http404, HttpRequest, HttpResponse, JsonResponse
from django.views import defaults as django_defaults
from rest_framework import exceptions
from rest_framework.response import Response
from rest_framework.views import set_rollback

from aiplane.envelope import error_body

API_PREFIX = "/api/"

TYPE_BY_STATUS = {
    400: "invalid_request_error",
    401: "authentication_error",
    403: "permission_error",
    404: "not_found_error",
    409: "invalid_request_error",
    429: "rate_limit_error",
}


def error_type_for(status: int) -> str:
    if status >= 500:
        return "server_error"
    return TYPE_BY_STATUS.get(status, "invalid_request_error")


class ApiError(Exception):
    """A refusal with a stable snake_case code, shaped by the exception handler."""

    def __init__(
        self,
        status: int,
        code: str,
        message: str,
        param: str | None = None,
        type: str | None = None,  # the envelope's own word, worth shadowing the builtin here
        reasons: list[dict[str, Any]] | None = None,
    ) -> None:
        super().__init__(message)
        self.status = status
        self.code = code
        self.message = message
        self.param = param
        self.type = type or error_type_for(status)
        # Several causes of one refusal ({"code", "message", "params"} each), so a client can
        # show every one in its own language; the envelope stays OpenAI's with one extra key.
        self.reasons = reasons

    def body(self) -> dict[str, Any]:
        body = error_body(self.message, self.type, self.code, self.param)
        if self.reasons is not None:
            body["error"]["reasons"] = self.reasons
        return body


def _first_error(detail: Any, path: tuple[str, ...] = ()) -> tuple[tuple[str, ...], Any]:
    """The first offending field (as a path) and its first ErrorDetail, in declaration order."""
    if isinstance(detail, Mapping):
        for key, value in detail.items():
            return _first_error(value, (*path, str(key)))
    if isinstance(detail, list):
        for index, value in enumerate(detail):
            if not value:
                continue  # ListSerializer reports {} for the items that were fine
            if isinstance(value, Mapping):
                return _first_error(value, (*path, str(index)))
            return _first_error(value, path)
    return path, detail


def _validation_error(exc: exceptions.ValidationError) -> ApiError:
    path, first = _first_error(exc.detail)
    param = ".".join(path) or None
    if param == "non_field_errors":
        param = None
    code = getattr(first, "code", None) or "invalid"
    return ApiError(400, str(code), str(first), param)


def _api_exception(exc: exceptions.APIException) -> ApiError:
    status = exc.status_code
    detail = exc.detail
    message = str(detail) if not isinstance(detail, (dict, list)) else str(exc.default_detail)
    code = getattr(detail, "code", None) or exc.default_code
    if isinstance(exc, exceptions.PermissionDenied) and message.startswith("CSRF Failed"):
        code = "csrf_failed"
    return ApiError(status, str(code), message)


def as_api_error(exc: Exception) -> ApiError | None:
    """Translate any exception a view may raise; None for the unexpected (a 500)."""
    if isinstance(exc, ApiError):
        return exc
    if isinstance(exc, Http404):
        exc = exceptions.NotFound()
    elif isinstance(exc, DjangoPermissionDenied):
        exc = exceptions.PermissionDenied()
    if isinstance(exc, exceptions.ValidationError):
        return _validation_error(exc)
    if isinstance(exc, exceptions.APIException):
        return _api_exception(exc)
    return None


def exception_handler(exc: Exception, context: Mapping[str, Any]) -> Response | None:
    """DRF's EXCEPTION_HANDLER: every refusal in the envelope."""
    error = as_api_error(exc)
    if error is None:
        return None
    headers: dict[str, str] = {}
    auth_header = getattr(exc, "auth_header", None)
    if auth_header:
        headers["WWW-Authenticate"] = auth_header
    elif error.status == 401:
        headers["WWW-Authenticate"] = "Session"
    wait = getattr(exc, "wait", None)
    if wait is not None:
        headers["Retry-After"] = str(int(wait))
    set_rollback()
    return Response(error.body(), status=error.status, headers=headers)


def _is_api(request: HttpRequest) -> bool:
    return request.path.startswith(API_PREFIX)


def bad_request(request: HttpRequest, exception: Exception | None = None) -> HttpResponse:
    """handler400: the envelope under /api/, Django's page elsewhere."""
    if not _is_api(request):
        return django_defaults.bad_request(request, exception or Exception())
    message, code = "The request is not valid.", "invalid_request"
    if isinstance(exception, DisallowedHost):
        message = "This server does not answer for that Host."
    elif isinstance(exception, RequestDataTooBig | TooManyFieldsSent):
        message, code = "The request body is too large.", "request_too_large"
    return JsonResponse(error_body(message, "invalid_request_error", code), status=400)


def not_found(request: HttpRequest, exception: Exception | None = None) -> HttpResponse:
    """handler404: the envelope under /api/, Django's page elsewhere."""
    if _is_api(request):
        body = error_body("Not found.", "not_found_error", "not_found")
        return JsonResponse(body, status=404)
    return django_defaults.page_not_found(request, exception or Http404())


def server_error(request: HttpRequest) -> HttpResponse:
    """handler500: the envelope under /api/, Django's page elsewhere."""
    if _is_api(request):
        body = error_body("Internal server error.", "server_error", "internal_error")
        return JsonResponse(body, status=500)
    return django_defaults.server_error(request)


def csrf_failure(request: HttpRequest, reason: str = "") -> HttpResponse:
    """CSRF_FAILURE_VIEW: the envelope under /api/, our localized page elsewhere (Django's own
    page styles itself inline, which the Content-Security-Policy refuses)."""
    if _is_api(request):
        body = error_body(f"CSRF Failed: {reason}", "permission_error", "csrf_failed")
        return JsonResponse(body, status=403)
    from aiplane.ui import page

    return page(request, "403_csrf.html", status=403, title_id="forbidden-title")
