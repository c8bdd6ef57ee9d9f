"""Backends and pools: the editor's input, the API's output."""

from __future__ import annotations

from typing import Any

from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers
from rest_framework.exceptions import ErrorDetail, ValidationError

from gateway.admin.serializers.fields import (
    _PRIORITY_MODE_SCHEMA,
    NAME_RE,
    AliasesField,
    ApiKeyField,
    BaseUrlField,
    BoolField,
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
    _refuse,
)
from gateway.models import KINDS, STRATEGIES, Backend, Pool


class PoolNamesField(NameListField):
    def known(self, names: list[str]) -> set[str]:
        return set(Pool.objects.filter(name__in=names).values_list("name", flat=True))


class BackendIn(JsonObjectSerializer):
    """Create or update by name; fields left out keep their stored value (or the default)."""

    name = NameField()
    base_url = BaseUrlField(required=False, help_text="Required for a new backend.")
    api_key = ApiKeyField(required=False, allow_null=True)
    max_inflight = IntegerRangeField(lo=1, hi=100_000, required=False)
    weight = IntegerRangeField(lo=1, hi=1000, required=False)
    enabled = BoolField(required=False)
    health_path = HealthPathField(required=False)
    models = StringListField(required=False, help_text="Narrows what /models reports.")
    aliases = AliasesField(required=False, help_text='{"alias": "served model id"}')
    priority = PriorityModeField(required=False)
    surfaces = SurfacesField(required=False)
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
        if "base_url" not in attrs and not Backend.objects.filter(name=attrs["name"]).exists():
            raise ValidationError(
                {"base_url": [ErrorDetail("A new backend needs a base_url.", code="invalid_url")]}
            )
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


@extend_schema_field(_PRIORITY_MODE_SCHEMA)
class PriorityModeOut(serializers.DictField):
    pass


class BackendOut(serializers.Serializer):
    name = serializers.CharField()
    base_url = serializers.CharField()
    has_api_key = serializers.BooleanField(help_text="The key itself is never returned.")
    max_inflight = serializers.IntegerField()
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
    pools = serializers.ListField(child=serializers.CharField())
    healthy = serializers.BooleanField(allow_null=True, help_text="null: no gateway runs here.")
    inflight = serializers.IntegerField(allow_null=True)


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
            raise _refuse("fallback must be a pool name or null.")
        refusal = _refuse(f"No other pool named '{data}'.", "unknown_pool")
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
