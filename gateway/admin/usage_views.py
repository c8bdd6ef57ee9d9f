"""The usage API: everyone's (administrators) and one's own, as JSON or CSV."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from django.db.models import QuerySet
from django.utils import timezone
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework.negotiation import BaseContentNegotiation
from rest_framework.renderers import BaseRenderer, JSONRenderer
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from accounts.api_auth import IsGatewayAdmin, resolved_for
from accounts.api_errors import ApiError
from gateway.admin import openapi, services
from gateway.admin.allowance_left import allowance_left
from gateway.admin.serializers.usage import OwnUsageOut, OwnUsageQueryIn, UsageOut, UsageQueryIn
from gateway.admin.usage_report import UsageQueryError, as_csv, report
from gateway.models import ActivityRecord


class CsvRenderer(BaseRenderer):
    media_type = "text/csv"
    format = "csv"
    charset = "utf-8"

    def render(self, data: Any, media_type: Any = None, renderer_context: Any = None) -> Any:
        return as_csv(data).encode(self.charset)


class CsvOrJson(BaseContentNegotiation):
    """CSV for format=csv, or for Accept: text/csv without a format; JSON otherwise. An unknown
    format is left to the query's validation (a 400 in the envelope), not DRF's 404."""

    def select_renderer(
        self, request: Request, renderers: Any, format_suffix: Any = None
    ) -> tuple[BaseRenderer, str]:
        wanted = request.query_params.get("format", "")
        accept = request.META.get("HTTP_ACCEPT", "")
        ranges = {part.split(";")[0].strip().lower() for part in accept.split(",")}
        if wanted == "csv" or (wanted == "" and "text/csv" in ranges):
            return CsvRenderer(), CsvRenderer.media_type
        return JSONRenderer(), JSONRenderer.media_type

    def select_parser(self, request: Request, parsers: Any) -> Any:
        return parsers[0] if parsers else None


RESPONSES_400 = openapi.errors(
    400,
    meaning=(
        "A parameter is not valid (code invalid_filter, param its name), since is not before "
        "until, or the series would be too long (param bucket)."
    ),
)
CSV_RESPONSE = OpenApiResponse(
    OpenApiTypes.STR,
    description=(
        "With format=csv or Accept: text/csv: a header row, then a row per bucket and group "
        "(with bucket) or per group: start, the group's key fields, requests, input_tokens, "
        "output_tokens, cached_tokens, refused_<reason> per refusal reason, and "
        "queue_wait_<class>_p50_ms and _p95_ms per class (empty when none queued)."
    ),
)


def usage_responses(body: type[UsageOut]) -> dict[Any, Any]:
    """What a usage view answers: `body` as JSON, the report as CSV, or a 400."""
    return {(200, "application/json"): body, (200, "text/csv"): CSV_RESPONSE, **RESPONSES_400}


DESCRIPTION = (
    "Per group over the range (results), per bucket and group (series, with bucket), and in "
    "total: requests; input, output and cached tokens as the engines reported them (a request "
    "without a report counts as a request only); refusals by reason; and the queue wait's "
    "nearest-rank p50 and p95 by class, over the requests that queued. Buckets are in UTC."
)


class UsageView(APIView):
    """The common part: the query, the report, its shape as JSON or CSV; errors always JSON."""

    query_in: type[UsageQueryIn] = UsageQueryIn
    body_out: type[UsageOut] = UsageOut
    renderer_classes = [JSONRenderer, CsvRenderer]
    content_negotiation_class = CsvOrJson

    def records(self, request: Request) -> QuerySet[ActivityRecord]:
        raise NotImplementedError

    def added(self, request: Request) -> dict[str, Any]:
        return {}

    def handle_exception(self, exc: Exception) -> Response:
        # A refusal is read by a program or a person: the envelope, never a CSV of it.
        self.request.accepted_renderer = JSONRenderer()
        self.request.accepted_media_type = JSONRenderer.media_type
        return super().handle_exception(exc)

    def get(self, request: Request) -> Response:
        q = services.validated(self.query_in, request.query_params)
        until = q.get("until") or timezone.now()
        since = q.get("since") or until - timedelta(days=1)
        try:
            body = report(
                self.records(request),
                group_by=q["group_by"],
                since=since,
                until=until,
                bucket=q.get("bucket"),
            )
        except UsageQueryError as err:
            raise ApiError(400, "invalid_filter", err.message, err.param) from None
        data = self.body_out({**body, **self.added(request)}).data
        response = Response(data)
        if isinstance(request.accepted_renderer, CsvRenderer):
            stamp = since.strftime("%Y%m%dT%H%M")
            name = f"usage-{q['group_by']}-{stamp}.csv"
            response["Content-Disposition"] = f'attachment; filename="{name}"'
        return response


class AdminUsageApi(UsageView):
    permission_classes = [IsGatewayAdmin]

    @extend_schema(
        parameters=[UsageQueryIn],
        responses=usage_responses(UsageOut),
        summary="Usage by user, group, token, model or class over a time range, and over time",
        description=DESCRIPTION
        + " By group, a user's request counts in each of the groups the user belongs to now.",
    )
    def get(self, request: Request) -> Response:
        return super().get(request)

    def records(self, request: Request) -> QuerySet[ActivityRecord]:
        return ActivityRecord.objects.all()


class OwnUsageApi(UsageView):
    """The signed-in person's own requests, and nobody else's, whatever the query says."""

    query_in = OwnUsageQueryIn
    body_out = OwnUsageOut

    @extend_schema(
        parameters=[OwnUsageQueryIn],
        responses=usage_responses(OwnUsageOut),
        summary="My own usage by token, model or class over a time range, and over time",
        description=DESCRIPTION
        + " allowance: what is left of each of my limits (mine, and each token's own) in its "
        "current window, from the gateway's counters (over every process with Redis).",
    )
    def get(self, request: Request) -> Response:
        return super().get(request)

    def records(self, request: Request) -> QuerySet[ActivityRecord]:
        return ActivityRecord.objects.filter(user_id=request.user.pk)

    def added(self, request: Request) -> dict[str, Any]:
        return {"allowance": allowance_left(request.user, resolved_for(request))}
