"""The one base of every /api/v0 request body: a JSON object with only the fields it knows.

DRF drops a field a serializer does not declare without a word, so a token created with
"expires" instead of "expires_at" had no expiry, and a backend saved with "max_inflght" kept its
old limit, both answered 201/200 as if all was taken. Here such a field is a 400 whose param
names it (and the closest known field, when one is close), reported with the body's other
errors, before anything is changed. The OpenAPI document says so: every body's schema has
additionalProperties false (`closed_bodies`, a drf-spectacular postprocessing hook).
"""

from __future__ import annotations

import difflib
from collections.abc import Mapping
from typing import Any

from rest_framework import serializers
from rest_framework.exceptions import ErrorDetail, ValidationError

UNKNOWN_FIELD = "unknown_field"


class BodyIn(serializers.Serializer):  # type: ignore[type-arg]
    """An input serializer that refuses fields it does not declare (nested ones too)."""

    def to_internal_value(self, data: Any) -> Any:
        if not isinstance(data, Mapping):
            raise ValidationError(
                {"non_field_errors": [ErrorDetail("Send a JSON object.", code="invalid_request")]}
            )
        unknown = {str(k): [self._unknown(str(k))] for k in data if k not in self.fields}
        try:
            value = super().to_internal_value(data)
        except ValidationError as exc:
            if not unknown:
                raise
            others = exc.detail
            if not isinstance(others, Mapping):
                others = {"non_field_errors": others}
            raise ValidationError({**unknown, **others}) from None
        if unknown:
            raise ValidationError(unknown)
        return value

    def _unknown(self, name: str) -> ErrorDetail:
        known = [n for n, f in self.fields.items() if not f.read_only]
        close = difflib.get_close_matches(name, known, n=1, cutoff=0.7)
        hint = f"; did you mean '{close[0]}'?" if close else f"; it takes {', '.join(known)}."
        shown = name if len(name) <= 60 else name[:60] + "..."
        return ErrorDetail(f"Unknown field '{shown}'{hint}", code=UNKNOWN_FIELD)


def _subclasses(cls: type) -> set[type]:
    found: set[type] = set()
    subclasses: list[type] = cls.__subclasses__()
    for sub in subclasses:
        found |= {sub, *_subclasses(sub)}
    return found


def closed_bodies(result: dict[str, Any], generator: Any, **_: Any) -> dict[str, Any]:
    """drf-spectacular's POSTPROCESSING_HOOKS: each BodyIn's schema takes no other property."""
    schemas = result.get("components", {}).get("schemas", {})
    names = {cls.__name__.removesuffix("Serializer") for cls in _subclasses(BodyIn)}
    for name, schema in schemas.items():
        if name in names or name.removesuffix("Request") in names:
            if schema.get("type") == "object":
                schema["additionalProperties"] = False
    return result
