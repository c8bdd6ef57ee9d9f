"""GET /api/v0/admin/audit: the audit log, newest first, filtered and a page at a time."""

from __future__ import annotations

from typing import Any

from drf_spectacular.utils import OpenApiResponse, extend_schema, extend_schema_field
from rest_framework import serializers
from rest_framework.exceptions import ValidationError
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from accounts.api_auth import IsGatewayAdmin
from accounts.serializers import ErrorOut
from aiplane.audit import ACTIONS, KINDS, changes
from aiplane.models import AuditEntry
from gateway.admin.serializers.filters import (
    MAX_PAGE,
    MAX_PAGE_SIZE,
    ChoiceFilter,
    PageFilter,
    PageOut,
    QueryIn,
    TextFilter,
    TimeFilter,
    filtered,
    page_of,
)

# Each filter of the audit log and the field lookup it sets.
AUDIT_LOOKUPS = {
    "actor": "actor_name__icontains",
    "kind": "kind",
    "action": "action",
    "target": "target__icontains",
    "since": "at__gte",
    "until": "at__lt",
}


class ListedChoiceFilter(ChoiceFilter):
    """One of the many audit kinds or actions: the refusal lists them all."""

    def _refusal(self) -> ValidationError:
        return self.refuse(f"{self.field_name} must be one of: {', '.join(self.choices)}.")


class AuditQueryIn(QueryIn):
    actor = TextFilter(required=False, help_text="Part of the actor's name (a username).")
    kind = ListedChoiceFilter(choices=KINDS, required=False, help_text="What was changed.")
    action = ListedChoiceFilter(choices=ACTIONS, required=False, help_text="One action exactly.")
    target = TextFilter(required=False, help_text="Part of the target's name.")
    since = TimeFilter(required=False, help_text="From this time (ISO 8601), inclusive.")
    until = TimeFilter(required=False, help_text="Before this time (ISO 8601).")
    page = PageFilter(maximum=MAX_PAGE, required=False, default=1, help_text="From 1.")
    page_size = PageFilter(maximum=MAX_PAGE_SIZE, required=False, default=50)

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        since, until = attrs.get("since"), attrs.get("until")
        if since is not None and until is not None and since >= until:
            raise serializers.ValidationError(
                {"until": serializers.ErrorDetail("until must be after since.", "invalid_filter")}
            )
        return attrs


class AuditChangeOut(serializers.Serializer):
    field = serializers.CharField()
    before = serializers.JSONField(allow_null=True)
    after = serializers.JSONField(allow_null=True)


class AuditEntryOut(serializers.Serializer):
    id = serializers.IntegerField()
    at = serializers.DateTimeField()
    actor = serializers.CharField(
        source="actor_name",
        allow_blank=True,
        help_text='A username, a command ("manage.py serve"), or "" for the system.',
    )
    action = serializers.ChoiceField(choices=ACTIONS)
    kind = serializers.ChoiceField(choices=KINDS)
    target = serializers.CharField()
    before = serializers.JSONField(
        allow_null=True, help_text="The object before (null for a creation); secrets masked."
    )
    after = serializers.JSONField(
        allow_null=True, help_text="The object after (null for a deletion); secrets masked."
    )
    changes = serializers.SerializerMethodField(help_text="Only the fields that differ.")

    @extend_schema_field(AuditChangeOut(many=True))
    def get_changes(self, entry: AuditEntry) -> list[dict[str, Any]]:
        return changes(entry.before, entry.after)


class AuditPageOut(PageOut):
    results = AuditEntryOut(many=True)


class AdminAuditApi(APIView):
    permission_classes = [IsGatewayAdmin]

    @extend_schema(
        tags=["admin"],
        summary="The audit log of administrative changes, newest first",
        parameters=[AuditQueryIn],
        responses={
            200: AuditPageOut,
            400: OpenApiResponse(
                ErrorOut, description="A filter is not valid (code invalid_filter, param its name)."
            ),
            401: OpenApiResponse(ErrorOut, description="No signed-in session."),
            403: OpenApiResponse(ErrorOut, description="Not an administrator (not_admin)."),
        },
    )
    def get(self, request: Request) -> Response:
        query = AuditQueryIn(data=request.query_params)
        query.is_valid(raise_exception=True)
        q = query.validated_data
        entries = filtered(AuditEntry.objects.all(), q, AUDIT_LOOKUPS)
        return Response(AuditPageOut(page_of(entries, q)).data)
