"""Backends and pools: the editor's input, the API's output."""

from __future__ import annotations

from typing import Any

from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers
from rest_framework.exceptions import ErrorDetail, ValidationError

from gateway.admin.serializers.fields import (
    NAME_RE,
    PRIORITY_MODE_SCHEMA,
    AliasesField,
    ApiKeyField,
    BaseUrlField,
    BoolField,
    HeadroomField,
    HealthPathField,
    IntegerRangeField,
    JsonObjectSerializer,
    NameField,
    NameListField,
    OneOfField,
    PriorityModeField,
    StrictField,
    StringListField,
    SurfacesField,
    refuse,
)
from gateway.models import KINDS, STRATEGIES, Backend, Pool

MAX_INFLIGHT = 100_000
_MAX_INFLIGHT_SCHEMA = {
    "oneOf": [
        {"type": "integer", "minimum": 1, "maximum": MAX_INFLIGHT},
        {"type": "string", "enum": ["auto"]},
    ]
}


@extend_schema_field(_MAX_INFLIGHT_SCHEMA)
class MaxInflightField(StrictField):
    """A fixed limit (1..100000), or "auto": learned from the engine within the backend's
    capacity_floor..capacity_ceiling."""

    def to_internal_value(self, data: Any) -> int | str:
        if data == "auto":
            return "auto"
        if isinstance(data, bool) or not isinstance(data, int) or not 1 <= data <= MAX_INFLIGHT:
            raise refuse(f'max_inflight must be an integer from 1 to {MAX_INFLIGHT}, or "auto".')
        return data


@extend_schema_field(_MAX_INFLIGHT_SCHEMA)
class MaxInflightOut(serializers.Field):
    def to_representation(self, value: Any) -> Any:
        return value


class PoolNamesField(NameListField):
    def known(self, names: list[str]) -> set[str]:
        return set(Pool.objects.filter(name__in=names).values_list("name", flat=True))


class BackendIn(JsonObjectSerializer):
    """Create or update by name; fields left out keep their stored value (or the default)."""

    name = NameField()
    base_url = BaseUrlField(required=False, help_text="Required for a new backend.")
    api_key = ApiKeyField(required=False, allow_null=True)
    max_inflight = MaxInflightField(
        required=False, help_text='A fixed number, or "auto": learned from the engine.'
    )
    capacity_floor = IntegerRangeField(
        lo=1, hi=MAX_INFLIGHT, required=False, help_text='"auto" never goes below this.'
    )
    capacity_ceiling = IntegerRangeField(
        lo=1, hi=MAX_INFLIGHT, required=False, help_text='"auto" never goes above this.'
    )
    weight = IntegerRangeField(lo=1, hi=1000, required=False)
    enabled = BoolField(required=False)
    health_path = HealthPathField(required=False)
    models = StringListField(required=False, help_text="Narrows what /models reports.")
    aliases = AliasesField(required=False, help_text='{"alias": "served model id"}')
    priority = PriorityModeField(required=False)
    surfaces = SurfacesField(required=False)
    headroom = HeadroomField(
        required=False,
        help_text="Slots kept from a class while a higher one comes (gateway.headroom_secs).",
    )
    store_responses = BoolField(
        required=False,
        help_text="Let it keep Responses state (store, previous_response_id, conversations) "
        "for callers when it serves /v1/responses itself; each stored id stays its caller's.",
    )
    pools = PoolNamesField(
        what="pool",
        code="unknown_pool",
        required=False,
        help_text="Replaces the pools it belongs to; in none, its models answer 404.",
    )

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        stored = Backend.objects.filter(name=attrs["name"]).first()
        if "base_url" not in attrs and stored is None:
            raise ValidationError(
                {"base_url": [ErrorDetail("A new backend needs a base_url.", code="invalid_url")]}
            )
        known = stored or Backend()
        floor = attrs.get("capacity_floor", known.capacity_floor)
        ceiling = attrs.get("capacity_ceiling", known.capacity_ceiling)
        if floor > ceiling:
            field = "capacity_floor" if "capacity_floor" in attrs else "capacity_ceiling"
            message = f"capacity_floor ({floor}) must not be above capacity_ceiling ({ceiling})."
            raise ValidationError({field: [ErrorDetail(message, code="invalid")]})
        return attrs


class EngineProfileOut(serializers.Serializer):
    kind = serializers.CharField()
    version = serializers.CharField(allow_null=True)
    priority_scheduling = serializers.BooleanField(allow_null=True)
    schedule_policy = serializers.CharField(allow_null=True)
    low_values_first = serializers.BooleanField(allow_null=True)
    detected_at = serializers.FloatField(allow_null=True)
    messages = serializers.BooleanField(
        allow_null=True, help_text="It serves the Anthropic Messages API itself."
    )
    responses = serializers.BooleanField(
        allow_null=True, help_text="It serves the OpenAI Responses API itself."
    )


@extend_schema_field(PRIORITY_MODE_SCHEMA)
class PriorityModeOut(serializers.DictField):
    pass


class CapacityOut(serializers.Serializer):
    """A learned limit as this process's gateway holds it now."""

    limit = serializers.IntegerField(help_text="The limit in force.")
    reason = serializers.ChoiceField(
        choices=("metrics", "latency", "stale", "floor", "ceiling"),
        help_text="Why it is there: the engine's gauges, latency alone, stale metrics (held "
        "at what runs), or a bound.",
    )
    mode = serializers.ChoiceField(choices=("metrics", "latency"))
    engine_running = serializers.FloatField(allow_null=True)
    engine_waiting = serializers.FloatField(allow_null=True)
    engine_kv_usage = serializers.FloatField(allow_null=True)
    metrics_error = serializers.CharField(
        allow_null=True, help_text="Why the engine's last metrics could not be used."
    )


class BackendOut(serializers.Serializer):
    name = serializers.CharField()
    base_url = serializers.CharField()
    has_api_key = serializers.BooleanField(help_text="The key itself is never returned.")
    max_inflight = MaxInflightOut(help_text='The fixed limit, or "auto" (see capacity).')
    capacity_floor = serializers.IntegerField()
    capacity_ceiling = serializers.IntegerField()
    weight = serializers.IntegerField()
    enabled = serializers.BooleanField()
    health_path = serializers.CharField(allow_blank=True)
    models = serializers.ListField(child=serializers.CharField())
    aliases = serializers.DictField(child=serializers.CharField())
    priority = PriorityModeOut()
    profile = EngineProfileOut(allow_null=True, help_text="What detection found; null before.")
    discovered_models = serializers.ListField(child=serializers.CharField())
    forwarding = serializers.CharField(help_text="What the gateway sends upstream, and why.")
    surfaces = serializers.DictField(
        child=serializers.ChoiceField(choices=("auto", "native", "translate")),
        help_text="The mode of each surface beyond chat (auto follows detection).",
    )
    serving = serializers.DictField(
        child=serializers.ChoiceField(choices=("native", "translated")),
        help_text="How each surface is served now: passed through, or translated to chat.",
    )
    store_responses = serializers.BooleanField(
        help_text="It keeps Responses state for callers (when it serves /v1/responses itself)."
    )
    headroom = serializers.DictField(
        child=serializers.IntegerField(),
        help_text="Of its limit, the slots kept from low and from medium while a higher class "
        "comes.",
    )
    pools = serializers.ListField(child=serializers.CharField())
    healthy = serializers.BooleanField(allow_null=True, help_text="null: no gateway runs here.")
    inflight = serializers.IntegerField(allow_null=True)
    capacity = CapacityOut(allow_null=True, help_text="The learned limit now; null unless auto.")


class DetectionOut(serializers.Serializer):
    ok = serializers.BooleanField(help_text="The engine's models list was read.")
    url = serializers.CharField(help_text="The URL probed for the models list.")
    reason = serializers.ChoiceField(
        choices=("unreachable", "status", "not_models"), required=False
    )
    error = serializers.CharField(required=False, help_text="The transport's or engine's words.")
    status = serializers.IntegerField(required=False, allow_null=True)


class BackendDetectOut(BackendOut):
    detection = DetectionOut(help_text="How this detection went.")


class BackendListOut(serializers.Serializer):
    backends = BackendOut(many=True)


# ----- pools -------------------------------------------------------------------------------


@extend_schema_field({"type": "string", "nullable": True})
class FallbackField(StrictField):
    def validate_empty_values(self, data: Any) -> tuple[bool, Any]:
        if data is None:
            return True, None
        return super().validate_empty_values(data)

    def to_internal_value(self, data: Any) -> Pool | None:
        if data == "":
            return None
        if not isinstance(data, str):
            raise refuse("fallback must be a pool name or null.")
        refusal = refuse(f"No other pool named '{data}'.", "unknown_pool")
        if not NAME_RE.fullmatch(data) or data == self.parent.initial_data.get("name"):
            raise refusal
        target = Pool.objects.filter(name=data).first()
        if target is None:
            raise refusal
        return target


class GroupNamesField(NameListField):
    def known(self, names: list[str]) -> set[str]:
        return set(names) & set(self.context.get("known_groups", ()))


class BackendNamesField(NameListField):
    def known(self, names: list[str]) -> set[str]:
        return set(Backend.objects.filter(name__in=names).values_list("name", flat=True))


class PoolIn(JsonObjectSerializer):
    """Create or update by name; members and the fallback must exist."""

    name = NameField()
    kind = OneOfField(choices=KINDS, required=False)
    strategy = OneOfField(choices=STRATEGIES, required=False)
    everyone = BoolField(
        required=False,
        help_text="true: any caller may use it; false: only allowed_groups (none: nobody).",
    )
    allowed_groups = GroupNamesField(
        what="group",
        code="unknown_group",
        required=False,
        help_text="Who may use it unless everyone is true.",
    )
    fallback = FallbackField(required=False, help_text="Another pool, or null for none.")
    backends = BackendNamesField(
        what="backend", code="unknown_backend", required=False, help_text="Replaces the members."
    )


class RenameIn(JsonObjectSerializer):
    """A backend's or pool's new name."""

    name = NameField()


class PoolOut(serializers.Serializer):
    name = serializers.CharField()
    kind = serializers.ChoiceField(choices=KINDS)
    strategy = serializers.ChoiceField(choices=STRATEGIES)
    everyone = serializers.BooleanField()
    allowed_groups = serializers.ListField(child=serializers.CharField())
    fallback = serializers.CharField(allow_null=True)
    backends = serializers.ListField(child=serializers.CharField())


class PoolListOut(serializers.Serializer):
    pools = PoolOut(many=True)
