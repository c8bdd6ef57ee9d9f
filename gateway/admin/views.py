"""Admin API of the data plane: backends, pools and the live queue (administrators only)."""

from __future__ import annotations

import asyncio
import time
from typing import Any

import httpx
from asgiref.sync import async_to_sync, sync_to_async
from drf_spectacular.utils import extend_schema
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from accounts.api_auth import IsGatewayAdmin
from accounts.api_errors import ApiError
from accounts.models import GatewayGroup
from gateway.admin import openapi, services, shapes
from gateway.admin.activity_filters import activity_filtered
from gateway.admin.crypto import decrypt
from gateway.admin.models_overview import models_overview
from gateway.admin.serializers.activity import ActivityPageOut, ActivityQueryIn
from gateway.admin.serializers.filters import page_of
from gateway.admin.serializers.models import ModelsOut
from gateway.admin.serializers.queue import QueueOut
from gateway.admin.serializers.topology import (
    BackendDetectOut,
    BackendIn,
    BackendListOut,
    BackendOut,
    PoolIn,
    PoolListOut,
    PoolOut,
    RenameIn,
)
from gateway.engines.detection import ProbeFailure, check_models, detect_engine, models_url
from gateway.models import ActivityRecord, Backend, Pool
from gateway.observability.live_queue import queue_state, shared_inflight
from gateway.runtime.runtime import current_runtime


def _live_state() -> dict[str, dict[str, Any]]:
    """In-flight counts (over every process with shared admission) and health from the
    running gateway (empty when none runs here)."""
    rt = current_runtime()
    if rt is None:
        return {}
    slots = list(rt.slots.items())
    shared = shared_inflight(rt.queue, [name for name, _ in slots]) or {}
    return {
        name: {
            "inflight": shared.get(name, slot.inflight),
            "healthy": slot.healthy,
            "capacity": rt.capacity.describe(name, slot),
        }
        for name, slot in slots
    }


def _backends() -> list[Backend]:
    return list(Backend.objects.prefetch_related("pools"))


def _backend_out(backend: Backend) -> Any:
    return BackendOut(shapes.backend_out(backend, _live_state())).data


class AdminBackendsApi(APIView):
    permission_classes = [IsGatewayAdmin]

    @extend_schema(responses={200: BackendListOut}, summary="Every backend, with live state")
    def get(self, request: Request) -> Response:
        live = _live_state()
        backends = [shapes.backend_out(b, live) for b in _backends()]
        return Response(BackendListOut({"backends": backends}).data)

    @extend_schema(
        request=BackendIn,
        responses={200: BackendOut},
        summary="Create or update a backend by name (the complete editor) and apply it",
    )
    def put(self, request: Request) -> Response:
        return Response(_backend_out(services.backend_save(data=request.data, actor=request.user)))


class AdminBackendItemApi(APIView):
    permission_classes = [IsGatewayAdmin]

    @extend_schema(responses={204: None}, summary="Delete a backend and apply the change")
    def delete(self, request: Request, name: str) -> Response:
        services.backend_delete(name=name, actor=request.user)
        return Response(status=204)


class AdminBackendDetectApi(APIView):
    permission_classes = [IsGatewayAdmin]

    @extend_schema(
        request=None,
        responses={200: BackendDetectOut},
        summary="Run detection now; says what failed when the engine could not be read",
    )
    def post(self, request: Request, name: str) -> Response:
        backend = Backend.objects.filter(name=name).first()
        if backend is None:
            raise ApiError(404, "backend_not_found", f"No backend named '{name}'.")
        failures: dict[str, ProbeFailure | None] | None = None
        rt = current_runtime()
        if rt is not None and rt.loop is not None:
            fut = asyncio.run_coroutine_threadsafe(rt.detect_report([name]), rt.loop)
            failures = fut.result(timeout=15)
        if failures is None or name not in failures:
            # No gateway runs here, or its snapshot does not know the backend yet.
            failures = {name: async_to_sync(_detect_once)(name)}
        services.apply_topology()  # every running gateway in this process takes the findings
        backend.refresh_from_db()
        failure = failures.get(name)
        detection = {"ok": failure is None, **(failure.to_json() if failure else {})}
        if failure is None:
            detection["url"] = models_url(backend.base_url)
        out = {**shapes.backend_out(backend, _live_state()), "detection": detection}
        return Response(BackendDetectOut(out).data)


async def _detect_once(name: str) -> ProbeFailure | None:
    """Detection without a running gateway (management use): probe and store."""
    backend = await Backend.objects.aget(name=name)
    key = decrypt(backend.api_key_encrypted)
    async with httpx.AsyncClient() as client:
        profile = await detect_engine(client, backend.base_url, key, now=time.time())
        models, failure = await check_models(client, backend.base_url, key)
    if not models:
        models = list(backend.discovered_models or [])  # unreachable: keep what we knew
    await sync_to_async(services.save_discovery)(name, profile.to_json(), models)
    return failure


class AdminBackendRenameApi(APIView):
    permission_classes = [IsGatewayAdmin]

    @extend_schema(
        request=RenameIn,
        responses={200: BackendOut},
        summary="Rename a backend (its pools follow; the running gateway picks it up)",
    )
    def post(self, request: Request, name: str) -> Response:
        data = services.validated(RenameIn, request.data)
        backend = services.backend_rename(name=name, new=data["name"], actor=request.user)
        return Response(_backend_out(backend))


class AdminPoolRenameApi(APIView):
    permission_classes = [IsGatewayAdmin]

    @extend_schema(
        request=RenameIn,
        responses={200: PoolOut},
        summary="Rename a pool (pools falling back to it follow)",
    )
    def post(self, request: Request, name: str) -> Response:
        data = services.validated(RenameIn, request.data)
        pool = services.pool_rename(name=name, new=data["name"], actor=request.user)
        return Response(PoolOut(shapes.pool_state(pool)).data)


class AdminPoolsApi(APIView):
    permission_classes = [IsGatewayAdmin]

    @extend_schema(responses={200: PoolListOut}, summary="Every pool")
    def get(self, request: Request) -> Response:
        pools = Pool.objects.select_related("fallback").prefetch_related("backends")
        return Response(PoolListOut({"pools": [shapes.pool_state(p) for p in pools]}).data)

    @extend_schema(
        request=PoolIn,
        responses={200: PoolOut},
        summary="Create or update a pool by name and apply it",
    )
    def put(self, request: Request) -> Response:
        known = set(GatewayGroup.objects.values_list("name", flat=True))
        pool = services.pool_save(data=request.data, known_groups=known, actor=request.user)
        return Response(PoolOut(shapes.pool_state(pool)).data)


class AdminPoolItemApi(APIView):
    permission_classes = [IsGatewayAdmin]

    @extend_schema(responses={204: None}, summary="Delete a pool and apply the change")
    def delete(self, request: Request, name: str) -> Response:
        services.pool_delete(name=name, actor=request.user)
        return Response(status=204)


class AdminModelsApi(APIView):
    permission_classes = [IsGatewayAdmin]

    @extend_schema(
        responses={200: ModelsOut},
        summary="Every model and alias, with the pools and backends behind it, live",
        description=(
            "Per model name and kind, each (pool, backend) that serves it: who may call it, "
            "health, requests in flight against capacity, the detected engine, whether the "
            "priority is forwarded, and the backend's last failure (health probe or request)."
        ),
    )
    def get(self, request: Request) -> Response:
        return Response(ModelsOut(models_overview()).data)


class AdminQueueApi(APIView):
    permission_classes = [IsGatewayAdmin]

    @extend_schema(responses={200: QueueOut}, summary="The live admission queue")
    def get(self, request: Request) -> Response:
        return Response(QueueOut(queue_state(current_runtime())).data)


ACTIVITY_FIELDS = (
    "at", "username", "token_id", "token_name", "model", "path", "backend", "priority_class",
    "hint", "score", "queue_ms", "first_byte_ms", "outcome", "status", "duration_ms", "surface",
    "input_tokens", "output_tokens", "cached_tokens", "usage_estimated", "error",
)  # fmt: skip


class AdminActivityApi(APIView):
    permission_classes = [IsGatewayAdmin]

    @extend_schema(
        parameters=[ActivityQueryIn],
        responses={
            200: ActivityPageOut,
            **openapi.errors(
                400, meaning="A filter is not valid (code invalid_filter, param its name)."
            ),
        },
        summary="Activity records, newest first",
    )
    def get(self, request: Request) -> Response:
        q = services.validated(ActivityQueryIn, request.query_params)
        records = activity_filtered(ActivityRecord.objects.all(), q)
        page = page_of(records.values("id", *ACTIVITY_FIELDS), q)
        return Response(ActivityPageOut(page).data)
