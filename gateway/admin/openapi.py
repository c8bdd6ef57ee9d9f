"""What the admin API's schema says of its views' refusals."""

from __future__ import annotations

from drf_spectacular.utils import OpenApiResponse

from accounts.serializers import ErrorOut


def errors(*statuses: int, meaning: str) -> dict[int, OpenApiResponse]:
    """Each status answered in the error envelope, with what it means for this view."""
    return {s: OpenApiResponse(ErrorOut, description=meaning) for s in statuses}
