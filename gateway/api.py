"""Admin API of the data plane: backends, pools and the live queue (administrators only)."""

from __future__ import annotations

from typing import Any

from drf_spectacular.utils import OpenApiTypes, extend_schema
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from accounts.api_auth import IsGatewayAdmin
from accounts.api_errors import ApiError
from gateway import topology
from gateway.models import Backend, Pool
from gateway.outcomes import Outcome
from gateway.runtime import runtimes


def _raise(err: topology.TopologyError) -> None:
    raise ApiError(err.status, err.code, err.message, err.param) from None


def _live_state() -> dict[str, dict[str, Any]]:
    """In-flight counts and health from the running gateway (empty when none runs here)."""
    state: dict[str, dict[str, Any]] = {}
    for rt in runtimes():
        for name, slot in list(rt.slots.items()):
            entry = state.setdefault(name, {"inflight": 0, "healthy": True})
            entry["inflight"] += slot.inflight
            entry["healthy"] = entry["healthy"] and slot.healthy
    return state


def _backends() -> list[Backend]:
    return list(Backend.objects.prefetch_related("pools"))


class AdminBackendsApi(APIView):
    permission_classes = [IsGatewayAdmin]

    @extend_schema(responses=OpenApiTypes.OBJECT, summary="Every backend, with live state")
    def get(self, request: Request) -> Response:
        live = _live_state()
        return Response({"backends": [topology.backend_out(b, live) for b in _backends()]})

    @extend_schema(
        request=OpenApiTypes.OBJECT,
        responses=OpenApiTypes.OBJECT,
        summary="Create or update a backend by name (the complete editor) and apply it",
    )
    def put(self, request: Request) -> Response:
        try:
            backend = topology.backend_save(data=request.data)
        except topology.TopologyError as err:
            _raise(err)
        return Response(topology.backend_out(backend, _live_state()))


class AdminBackendItemApi(APIView):
    permission_classes = [IsGatewayAdmin]

    @extend_schema(responses={204: None}, summary="Delete a backend and apply the change")
    def delete(self, request: Request, name: str) -> Response:
        try:
            topology.backend_delete(name=name)
        except topology.TopologyError as err:
            _raise(err)
        return Response(status=204)


class AdminBackendDetectApi(APIView):
    permission_classes = [IsGatewayAdmin]

    @extend_schema(request=None, responses=OpenApiTypes.OBJECT, summary="Run detection now")
    def post(self, request: Request, name: str) -> Response:
        from asgiref.sync import async_to_sync

        backend = Backend.objects.filter(name=name).first()
        if backend is None:
            raise ApiError(404, "backend_not_found", f"No backend named '{name}'.")
        for rt in runtimes():
            if rt.loop is not None:
                import asyncio

                fut = asyncio.run_coroutine_threadsafe(rt.detect_all([name]), rt.loop)
                fut.result(timeout=15)
                break
        else:
            async_to_sync(_detect_once)(name)
        topology.apply_topology()  # every running gateway in this process takes the findings
        backend.refresh_from_db()
        return Response(topology.backend_out(backend, _live_state()))


async def _detect_once(name: str) -> None:
    """Detection without a running gateway (management use): probe and store."""
    import time

    import httpx
    from asgiref.sync import sync_to_async

    from gateway.detect import detect_engine, probe_models

    backend = await Backend.objects.aget(name=name)
    from gateway.crypto import decrypt

    key = decrypt(backend.api_key_encrypted)
    async with httpx.AsyncClient() as client:
        profile = await detect_engine(client, backend.base_url, key, now=time.time())
        models = await probe_models(client, backend.base_url, key)
    await sync_to_async(topology.save_discovery)(name, profile.to_json(), models)


class AdminPoolsApi(APIView):
    permission_classes = [IsGatewayAdmin]

    @extend_schema(responses=OpenApiTypes.OBJECT, summary="Every pool")
    def get(self, request: Request) -> Response:
        pools = Pool.objects.select_related("fallback").prefetch_related("backends")
        return Response({"pools": [topology.pool_out(p) for p in pools]})

    @extend_schema(
        request=OpenApiTypes.OBJECT,
        responses=OpenApiTypes.OBJECT,
        summary="Create or update a pool by name and apply it",
    )
    def put(self, request: Request) -> Response:
        from accounts.models import GatewayGroup

        known = set(GatewayGroup.objects.values_list("name", flat=True))
        try:
            pool = topology.pool_save(data=request.data, known_groups=known)
        except topology.TopologyError as err:
            _raise(err)
        return Response(topology.pool_out(pool))


class AdminPoolItemApi(APIView):
    permission_classes = [IsGatewayAdmin]

    @extend_schema(responses={204: None}, summary="Delete a pool and apply the change")
    def delete(self, request: Request, name: str) -> Response:
        try:
            topology.pool_delete(name=name)
        except topology.TopologyError as err:
            _raise(err)
        return Response(status=204)


class AdminQueueApi(APIView):
    permission_classes = [IsGatewayAdmin]

    @extend_schema(responses=OpenApiTypes.OBJECT, summary="The live admission queue")
    def get(self, request: Request) -> Response:
        from gateway.live import queue_state

        return Response(queue_state())


ACTIVITY_FIELDS = (
    "at", "username", "token_id", "token_name", "model", "path", "backend", "priority_class",
    "hint", "score", "queue_ms", "first_byte_ms", "outcome", "status", "duration_ms", "surface",
    "input_tokens", "output_tokens", "cached_tokens", "error",
)  # fmt: skip


OUTCOMES = tuple(str(outcome) for outcome in Outcome)  # what the activity filter accepts


class AdminActivityApi(APIView):
    permission_classes = [IsGatewayAdmin]

    @extend_schema(
        responses=OpenApiTypes.OBJECT,
        summary="Activity records, newest first",
        description=(
            "Filters: user (username), token (id or name), model, class (low|medium|high), "
            "outcome, since and until (ISO 8601). Pages: page (from 1) and page_size (<= 500)."
        ),
    )
    def get(self, request: Request) -> Response:
        from django.utils.dateparse import parse_datetime

        from gateway.models import ActivityRecord

        q = request.query_params
        records = ActivityRecord.objects.all()
        if q.get("user"):
            records = records.filter(username=q["user"])
        if q.get("token"):
            # A token id, or a token's name.
            if q["token"].isdigit():
                records = records.filter(token_id=int(q["token"]))
            else:
                records = records.filter(token_name=q["token"])
        if q.get("model"):
            records = records.filter(model=q["model"])
        if q.get("class"):
            if q["class"] not in ("low", "medium", "high"):
                raise ApiError(400, "invalid_filter", "class must be low, medium or high.", "class")
            records = records.filter(priority_class=q["class"])
        if q.get("outcome"):
            if q["outcome"] not in OUTCOMES:
                raise ApiError(
                    400,
                    "invalid_filter",
                    f"outcome must be one of: {', '.join(OUTCOMES)}.",
                    "outcome",
                )
            records = records.filter(outcome=q["outcome"])
        for name, lookup in (("since", "at__gte"), ("until", "at__lt")):
            if q.get(name):
                when = parse_datetime(q[name])
                if when is None:
                    raise ApiError(400, "invalid_filter", f"{name} must be an ISO 8601 time.", name)
                records = records.filter(**{lookup: when})
        page = _positive(q.get("page", "1"), "page", 10**9)
        size = _positive(q.get("page_size", "50"), "page_size", 500)
        total = records.count()
        rows = list(records.values("id", *ACTIVITY_FIELDS)[(page - 1) * size : page * size])
        for row in rows:
            row["at"] = row["at"].isoformat()
            row["class"] = row.pop("priority_class")
        return Response(
            {
                "count": total,
                "page": page,
                "page_size": size,
                "has_next": page * size < total,
                "results": rows,
            }
        )


def _positive(raw: str, name: str, maximum: int) -> int:
    if not raw.isdigit() or not 1 <= int(raw) <= maximum:
        raise ApiError(400, "invalid_filter", f"{name} must be from 1 to {maximum}.", name)
    return int(raw)


USAGE_GROUPS = {"user": ("username",), "token": ("token_id", "token_name"), "model": ("model",)}


class AdminUsageApi(APIView):
    permission_classes = [IsGatewayAdmin]

    @extend_schema(
        responses=OpenApiTypes.OBJECT,
        summary="Token usage summed by user, token or model over a time range",
        description=(
            "group_by: user | token | model (required). since and until (ISO 8601) bound the "
            "range; without them, the last 24 hours. Each group: requests, input_tokens, "
            "output_tokens and cached_tokens as the engines reported them (requests without a "
            "report count as requests only)."
        ),
    )
    def get(self, request: Request) -> Response:
        from datetime import UTC, timedelta

        from django.db.models import Count, Sum
        from django.utils import timezone
        from django.utils.dateparse import parse_datetime

        from gateway.models import ActivityRecord

        q = request.query_params
        group_by = q.get("group_by", "")
        if group_by not in USAGE_GROUPS:
            raise ApiError(
                400, "invalid_filter", "group_by must be user, token or model.", "group_by"
            )
        bounds: dict[str, Any] = {}
        for name in ("since", "until"):
            if q.get(name):
                when = parse_datetime(q[name]) if len(q[name]) <= 64 else None
                if when is None:
                    raise ApiError(400, "invalid_filter", f"{name} must be an ISO 8601 time.", name)
                if timezone.is_naive(when):
                    when = timezone.make_aware(when, UTC)
                bounds[name] = when
        until = bounds.get("until") or timezone.now()
        since = bounds.get("since") or until - timedelta(days=1)
        keys = USAGE_GROUPS[group_by]
        rows = (
            ActivityRecord.objects.filter(at__gte=since, at__lt=until)
            .values(*keys)
            .annotate(
                requests=Count("id"),
                input_tokens=Sum("input_tokens"),
                output_tokens=Sum("output_tokens"),
                cached_tokens=Sum("cached_tokens"),
            )
            .order_by(*keys)
        )
        results = [
            {**row, **{k: row[k] or 0 for k in ("input_tokens", "output_tokens", "cached_tokens")}}
            for row in rows
        ]
        totals = {
            k: sum(r[k] for r in results)
            for k in ("requests", "input_tokens", "output_tokens", "cached_tokens")
        }
        return Response(
            {
                "group_by": group_by,
                "since": since.isoformat(),
                "until": until.isoformat(),
                "results": results,
                "totals": totals,
            }
        )
