"""The one error envelope: the pure builder, the DRF handler, and Django-level failures."""

from __future__ import annotations

from typing import Any

import pytest
from django.test import Client
from rest_framework import exceptions

from accounts.api_errors import ApiError, as_api_error
from aiplane.envelope import error_body
from tests.support.errors import envelope

HANDLERS_URLCONF = "tests.accounts.urls_with_handlers"


def test_the_envelope_is_openais_shape() -> None:
    assert error_body("No.", "permission_error", "not_admin") == {
        "error": {"message": "No.", "type": "permission_error", "param": None, "code": "not_admin"}
    }


@pytest.mark.parametrize(
    ("status", "type_"),
    [
        (400, "invalid_request_error"),
        (401, "authentication_error"),
        (403, "permission_error"),
        (404, "not_found_error"),
        (409, "invalid_request_error"),
        (429, "rate_limit_error"),
        (500, "server_error"),
        (503, "server_error"),
    ],
)
def test_an_api_error_takes_its_type_from_its_status(status: int, type_: str) -> None:
    assert ApiError(status, "some_code", "Message.").body() == envelope(
        "Message.", type_, "some_code"
    )


def test_an_explicit_type_and_param_win() -> None:
    error = ApiError(400, "c", "m", param="p", type="custom_error")
    assert error.body() == envelope("m", "custom_error", "c", "p")


@pytest.mark.parametrize(
    ("exc", "status", "expected"),
    [
        (
            exceptions.ValidationError({"name": ["Too long."]}),
            400,
            envelope("Too long.", "invalid_request_error", "invalid", "name"),
        ),
        (
            exceptions.ValidationError({"non_field_errors": ["Mismatch."]}),
            400,
            envelope("Mismatch.", "invalid_request_error", "invalid"),
        ),
        (
            exceptions.ValidationError(
                {"a": {"b": [exceptions.ErrorDetail("Deep.", code="deep")]}}
            ),
            400,
            envelope("Deep.", "invalid_request_error", "deep", "a.b"),
        ),
        (
            exceptions.ValidationError({"items": [{}, {"x": ["Bad."]}]}),
            400,
            envelope("Bad.", "invalid_request_error", "invalid", "items.1.x"),
        ),
        (
            exceptions.NotAuthenticated(),
            401,
            envelope(
                "Authentication credentials were not provided.",
                "authentication_error",
                "not_authenticated",
            ),
        ),
        (
            exceptions.PermissionDenied(),
            403,
            envelope(
                "You do not have permission to perform this action.",
                "permission_error",
                "permission_denied",
            ),
        ),
        (
            exceptions.NotFound(),
            404,
            envelope("Not found.", "not_found_error", "not_found"),
        ),
        (
            exceptions.Throttled(wait=3),
            429,
            envelope(
                "Request was throttled. Expected available in 3 seconds.",
                "rate_limit_error",
                "throttled",
            ),
        ),
    ],
)
def test_drf_exceptions_map_onto_the_envelope(
    exc: Exception, status: int, expected: dict[str, Any]
) -> None:
    error = as_api_error(exc)
    assert error is not None
    assert (error.status, error.body()) == (status, expected)


def test_django_404_and_permission_denied_map_too() -> None:
    from django.core.exceptions import PermissionDenied
    from django.http import Http404

    assert as_api_error(Http404("secret detail")).body() == envelope(  # type: ignore[union-attr]
        "Not found.", "not_found_error", "not_found"
    )
    assert as_api_error(PermissionDenied()).status == 403  # type: ignore[union-attr]


def test_an_unexpected_exception_is_left_to_django() -> None:
    assert as_api_error(RuntimeError("bug")) is None


@pytest.mark.django_db
def test_an_unknown_api_path_answers_in_the_envelope(settings: Any) -> None:
    settings.ROOT_URLCONF = HANDLERS_URLCONF
    response = Client().get("/api/v0/no/such/thing")
    assert response.status_code == 404
    assert response.json() == envelope("Not found.", "not_found_error", "not_found")


@pytest.mark.django_db
def test_an_unknown_page_elsewhere_keeps_djangos_page(settings: Any) -> None:
    settings.ROOT_URLCONF = HANDLERS_URLCONF
    response = Client().get("/no/such/page")
    assert response.status_code == 404
    assert response["Content-Type"].startswith("text/html")


@pytest.mark.django_db
def test_a_crash_under_the_api_answers_in_the_envelope(settings: Any) -> None:
    settings.ROOT_URLCONF = HANDLERS_URLCONF
    response = Client(raise_request_exception=False).get("/api/v0/_test/boom")
    assert response.status_code == 500
    assert response.json() == envelope("Internal server error.", "server_error", "internal_error")


@pytest.mark.django_db
def test_djangos_own_csrf_failure_under_the_api_answers_in_the_envelope(settings: Any) -> None:
    settings.ROOT_URLCONF = HANDLERS_URLCONF
    settings.CSRF_FAILURE_VIEW = "accounts.api_errors.csrf_failure"
    response = Client(enforce_csrf_checks=True).post("/api/v0/_test/plain")
    assert response.status_code == 403
    assert response.json() == envelope(
        "CSRF Failed: CSRF cookie not set.", "permission_error", "csrf_failed"
    )
    elsewhere = Client(enforce_csrf_checks=True).post("/elsewhere/plain")
    assert elsewhere.status_code == 403
    assert elsewhere["Content-Type"].startswith("text/html")
