"""Query filters shared by the admin lists: text, time, class, choice, page."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any, Final

from django.db.models import QuerySet
from django.utils import timezone
from django.utils.dateparse import parse_datetime
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers
from rest_framework.exceptions import ValidationError
from rest_framework.fields import empty

from gateway.admin.serializers.fields import MODEL_NAME_LENGTH, StrictField, plain, refuse
from gateway.core.classes import CLASS_NAMES
from gateway.core.outcomes import Outcome

# ----- activity ----------------------------------------------------------------------------

# What happened to a request: the one vocabulary of gateway/core/outcomes.py.
OUTCOMES: Final = tuple(str(outcome) for outcome in Outcome)

MAX_PAGE: Final = 10**9

MAX_PAGE_SIZE: Final = 500


class FilterField(StrictField):
    """A query parameter; every refusal is code invalid_filter, param the parameter's name."""

    def refuse(self, message: str) -> ValidationError:
        return refuse(message, "invalid_filter")


@extend_schema_field({"type": "string", "maxLength": MODEL_NAME_LENGTH})
class TextFilter(FilterField):
    def to_internal_value(self, data: Any) -> str:
        if len(data) > MODEL_NAME_LENGTH or not plain(data):
            raise self.refuse(
                f"{self.field_name} must be at most {MODEL_NAME_LENGTH} characters,"
                " without control characters."
            )
        return str(data)


class PageFilter(FilterField):
    def __init__(self, *, maximum: int, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.maximum = maximum
        self._spectacular_annotation = {
            "field": {"type": "integer", "minimum": 1, "maximum": maximum}
        }

    def to_internal_value(self, data: Any) -> int:
        # isdigit() alone takes "²", which int() refuses: only ASCII digits are a number here.
        text = str(data)
        digits = text.isascii() and text.isdigit() and len(text) <= len(str(self.maximum))
        if not digits or not 1 <= int(text) <= self.maximum:
            raise self.refuse(f"{self.field_name} must be from 1 to {self.maximum}.")
        return int(text)


class QueryIn(serializers.Serializer):
    """The query of an admin list: its filters, and `page` and `page_size` declared last."""

    def to_internal_value(self, data: Any) -> Any:
        # An empty parameter is no filter at all, as it always was.
        return super().to_internal_value({k: v for k, v in data.items() if v != ""})


def filtered(
    rows: QuerySet[Any, Any], q: Mapping[str, Any], lookups: Mapping[str, str]
) -> QuerySet[Any, Any]:
    """`rows` narrowed by each filter the validated query `q` holds; `lookups` names the field
    lookup of each parameter ("since": "at__gte")."""
    return rows.filter(**{lookup: q[name] for name, lookup in lookups.items() if name in q})


# A page of an admin list, as `page_of` builds it; each list adds its `results`. (A comment, not
# a docstring: the schema would show it as every page's description.)
class PageOut(serializers.Serializer):
    count = serializers.IntegerField()
    page = serializers.IntegerField()
    page_size = serializers.IntegerField()
    has_next = serializers.BooleanField()


def page_of(rows: QuerySet[Any, Any], q: Mapping[str, Any]) -> dict[str, Any]:
    """The page of `rows` that the validated `page` and `page_size` of `q` ask for, as the
    page serializers (`PageOut`'s) write it."""
    page, size = q["page"], q["page_size"]
    total = rows.count()
    return {
        "count": total,
        "page": page,
        "page_size": size,
        "has_next": page * size < total,
        "results": list(rows[(page - 1) * size : page * size]),
    }


@extend_schema_field({"type": "string", "format": "date-time"})
class TimeFilter(FilterField):
    def to_internal_value(self, data: Any) -> datetime:
        refusal = self.refuse(f"{self.field_name} must be an ISO 8601 time.")
        try:
            when = parse_datetime(str(data))  # None when malformed, ValueError when impossible
        except ValueError:
            raise refusal from None
        if when is None:
            raise refusal
        if timezone.is_naive(when):
            when = when.replace(tzinfo=UTC)
        try:
            # In UTC, so no database sees an offset it cannot store (PostgreSQL: +-15:59).
            return when.astimezone(UTC)
        except OverflowError:
            raise refusal from None


class ClassFilter(FilterField):
    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._spectacular_annotation = {"field": {"type": "string", "enum": list(CLASS_NAMES)}}

    def to_internal_value(self, data: Any) -> str:
        if data not in CLASS_NAMES:
            raise self.refuse("class must be low, medium or high.")
        return str(data)


class ChoiceFilter(FilterField):
    """One of a few words; required unless it has a default."""

    def __init__(self, *, choices: tuple[str, ...], **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.choices = choices
        self._spectacular_annotation = {"field": {"type": "string", "enum": list(choices)}}

    def _refusal(self) -> ValidationError:
        *first, last = self.choices
        return self.refuse(f"{self.field_name} must be {', '.join(first)} or {last}.")

    def validate_empty_values(self, data: Any) -> tuple[bool, Any]:
        if data is empty and self.required:
            raise self._refusal()
        return super().validate_empty_values(data)

    def to_internal_value(self, data: Any) -> str:
        if data not in self.choices:
            raise self._refusal()
        return str(data)
