"""The activity API's query and its records."""

from __future__ import annotations

from datetime import datetime

from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from gateway.admin.serializers.fields import OneOfField
from gateway.admin.serializers.filters import (
    MAX_PAGE,
    MAX_PAGE_SIZE,
    OUTCOMES,
    ClassFilter,
    PageFilter,
    PageOut,
    QueryIn,
    TextFilter,
    TimeFilter,
)


class ActivityQueryIn(QueryIn):
    user = TextFilter(required=False, help_text="The start of a username (any case).")
    token = TextFilter(
        required=False, help_text="A token id, or the start of a token's name (any case)."
    )
    model = TextFilter(required=False, help_text="Part of a model name (any case).")
    # "class" is a keyword: the field is added under its name in get_fields.
    outcome = OneOfField(choices=OUTCOMES, required=False)
    since = TimeFilter(required=False, help_text="From this time (ISO 8601), inclusive.")
    until = TimeFilter(required=False, help_text="Before this time (ISO 8601).")
    page = PageFilter(maximum=MAX_PAGE, required=False, default=1, help_text="From 1.")
    page_size = PageFilter(maximum=MAX_PAGE_SIZE, required=False, default=50)

    def get_fields(self) -> dict[str, serializers.Field]:
        fields = super().get_fields()
        ordered = {k: v for k, v in fields.items() if k in ("user", "token", "model")}
        ordered["class"] = ClassFilter(required=False)
        return {**ordered, **fields}


@extend_schema_field({"type": "string", "format": "date-time"})
class IsoTimeField(serializers.Field):
    """A datetime as Python's isoformat (+00:00), the form the activity API always answered."""

    def to_representation(self, value: datetime) -> str:
        return value.isoformat()


class ActivityRecordOut(serializers.Serializer):
    id = serializers.IntegerField()
    at = IsoTimeField()
    username = serializers.CharField(allow_blank=True)
    token_id = serializers.IntegerField(allow_null=True)
    token_name = serializers.CharField(allow_blank=True)
    model = serializers.CharField(allow_blank=True)
    path = serializers.CharField(allow_blank=True)
    backend = serializers.CharField(allow_blank=True)
    hint = serializers.CharField(allow_blank=True)
    score = serializers.FloatField(allow_null=True)
    queue_ms = serializers.FloatField()
    first_byte_ms = serializers.FloatField(allow_null=True)
    outcome = serializers.CharField()
    status = serializers.IntegerField()
    duration_ms = serializers.FloatField()
    surface = serializers.CharField(allow_blank=True)
    input_tokens = serializers.IntegerField(allow_null=True)
    output_tokens = serializers.IntegerField(allow_null=True)
    cached_tokens = serializers.IntegerField(allow_null=True)
    usage_estimated = serializers.BooleanField(
        help_text="The tokens are the gateway's own count (its prompt estimate and the pieces "
        "it relayed): the engine streamed without reporting usage."
    )
    error = serializers.CharField(allow_blank=True)

    def get_fields(self) -> dict[str, serializers.Field]:
        fields = super().get_fields()
        fields["class"] = serializers.CharField(
            source="priority_class",
            allow_null=True,
            help_text="null: refused or cut short before the caller was known.",
        )
        return fields


class ActivityPageOut(PageOut):
    results = ActivityRecordOut(many=True)
