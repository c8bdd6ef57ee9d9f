"""The OpenAPI document is served and describes exactly the routes of accounts/urls.py."""

from __future__ import annotations

import re
from typing import Any

import pytest
import yaml
from django.test import Client
from django.urls import URLPattern

from accounts import urls as accounts_urls

pytestmark = pytest.mark.django_db

METHODS = ("get", "post", "put", "patch", "delete")


def openapi_path(route: str) -> str:
    return "/api/v0/" + re.sub(r"<(?:\w+:)?(\w+)>", r"{\1}", route)


def routed() -> dict[str, set[str]]:
    """Every accounts route with the HTTP methods its view implements."""
    routes = {}
    for pattern in accounts_urls.urlpatterns:
        assert isinstance(pattern, URLPattern)
        view_class = pattern.callback.view_class  # type: ignore[attr-defined]
        methods = {m for m in METHODS if hasattr(view_class, m)}
        routes[openapi_path(str(pattern.pattern))] = methods
    return routes


@pytest.fixture(scope="module")
def schema(django_db_blocker: Any) -> dict[str, Any]:
    with django_db_blocker.unblock():
        response = Client().get("/api/v0/openapi.json", HTTP_ACCEPT="application/json")
    assert response.status_code == 200
    return yaml.safe_load(response.content)  # JSON is YAML, so either rendering parses


def test_the_document_is_served_to_anyone(schema: dict[str, Any]) -> None:
    assert schema["openapi"].startswith("3.")
    assert schema["info"]["title"] == "aiplane administration and personal API"


def test_every_route_is_documented_with_exactly_its_methods(schema: dict[str, Any]) -> None:
    documented = {
        path: {m for m in operations if m in METHODS}
        for path, operations in schema["paths"].items()
        if path in routed()
    }
    assert documented == routed()


def test_every_documented_accounts_path_is_routed(schema: dict[str, Any]) -> None:
    ours = (
        "/api/v0/tokens",
        "/api/v0/me",
        "/api/v0/session/",
        "/api/v0/admin/groups",
        "/api/v0/admin/users",
        "/api/v0/admin/tokens",
        "/api/v0/admin/settings",
        "/api/v0/admin/audit",
    )
    documented = {p for p in schema["paths"] if p.startswith(ours)}
    assert documented == set(routed())


def test_errors_are_documented_in_the_envelope(schema: dict[str, Any]) -> None:
    put = schema["paths"]["/api/v0/tokens/{token_id}/priority"]["put"]
    assert set(put["responses"]) == {"200", "400", "401", "403", "404", "406", "413", "415"}
    ref = put["responses"]["403"]["content"]["application/json"]["schema"]["$ref"]
    assert ref == "#/components/schemas/ErrorOut"
    envelope = schema["components"]["schemas"]["ErrorDetailOut"]["properties"]
    assert set(envelope) == {"message", "type", "param", "code"}


def test_priority_fields_are_documented_as_the_three_labels_or_null(
    schema: dict[str, Any],
) -> None:
    body = schema["components"]["schemas"]["PriorityIn"]["properties"]["priority"]
    text = str(body)
    assert "null" in text.lower() or "nullable" in text
    enums = [s for s in schema["components"]["schemas"].values() if "enum" in s]
    assert any(set(s["enum"]) >= {"low", "medium", "high"} for s in enums)


def test_session_routes_are_described_as_cookie_authenticated(schema: dict[str, Any]) -> None:
    schemes = schema["components"]["securitySchemes"]
    assert schemes["cookieAuth"] == {"type": "apiKey", "in": "cookie", "name": "sessionid"}


def test_every_operation_documents_the_refusals_its_view_implies(schema: dict[str, Any]) -> None:
    operations = {
        (path, method): op
        for path, ops in schema["paths"].items()
        for method, op in ops.items()
        if method in METHODS
    }
    for (path, method), op in operations.items():
        documented = set(op["responses"])
        assert "406" in documented, (path, method)
        if path.startswith("/api/v0/admin/"):
            assert {"401", "403"} <= documented, (path, method)
        if "{" in path:
            assert "404" in documented, (path, method)
        if "requestBody" in op:
            assert {"400", "413", "415"} <= documented, (path, method)
        if method == "post":  # the CSRF check parses a form body, even where no body is read
            assert "415" in documented, (path, method)
        for status, answer in op["responses"].items():
            if status.startswith(("4", "5")):
                ref = answer["content"]["application/json"]["schema"]["$ref"]
                assert ref == "#/components/schemas/ErrorOut", (path, method, status)
    login = operations[("/api/v0/session/login", "post")]
    assert {"400", "401", "403"} <= set(login["responses"])
    assert "401" not in operations[("/api/v0/session/csrf", "get")]["responses"]


def test_a_name_in_a_path_is_documented_with_the_converters_pattern(schema: dict[str, Any]) -> None:
    from aiplane.converters import NAME_PATTERN

    params = schema["paths"]["/api/v0/admin/groups/{name}"]["delete"]["parameters"]
    assert params[0]["schema"] == {"type": "string", "pattern": f"^{NAME_PATTERN}$"}
