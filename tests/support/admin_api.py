"""The admin API tests' backends, pools and request helpers."""

from __future__ import annotations

from typing import Any

from django.forms.models import model_to_dict
from django.test import Client

from gateway.models import Backend, Pool
from tests.support.errors import envelope

BACKENDS = "/api/v0/admin/backends"

POOLS = "/api/v0/admin/pools"


def put(client: Client, url: str, payload: Any, **extra: Any) -> Any:
    return client.put(url, payload, content_type="application/json", **extra)


def invalid(message: str, code: str, param: str | None = None) -> dict[str, Any]:
    return envelope(message, "invalid_request_error", code, param)


def row(name: str) -> dict[str, Any]:
    """Everything stored about a backend, timestamps included, to prove a refusal wrote nothing."""
    backend = Backend.objects.get(name=name)
    return {**model_to_dict(backend), "updated_at": backend.updated_at}


def pool_row(name: str) -> dict[str, Any]:
    pool = Pool.objects.get(name=name)
    return {
        **model_to_dict(pool, exclude=["backends"]),
        "backends": sorted(b.name for b in pool.backends.all()),
        "updated_at": pool.updated_at,
    }
