"""Exact error bodies the API answers with, spelled out once for the tests."""

from __future__ import annotations

from typing import Any


def envelope(message: str, type_: str, code: str, param: str | None = None) -> dict[str, Any]:
    return {"error": {"message": message, "type": type_, "param": param, "code": code}}


NOT_SIGNED_IN = envelope(
    "Authentication credentials were not provided.", "authentication_error", "not_authenticated"
)
NOT_ADMIN = envelope("Administrator rights are required.", "permission_error", "not_admin")
TOKEN_NOT_FOUND = envelope("Token not found.", "not_found_error", "token_not_found")
INVALID_PRIORITY = envelope(
    'Priority must be "low", "medium", "high" or null.',
    "invalid_request_error",
    "invalid_priority",
    "priority",
)
CSRF_MISSING = envelope("CSRF Failed: CSRF token missing.", "permission_error", "csrf_failed")


def above_ceiling(wanted: str, ceiling: str) -> dict[str, Any]:
    return envelope(
        f"Priority {wanted} is above your maximum, {ceiling}.",
        "permission_error",
        "priority_above_ceiling",
        "priority",
    )
