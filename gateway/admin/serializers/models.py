"""The Models page: every name a caller can use and the routes behind it."""

from __future__ import annotations

from rest_framework import serializers

from gateway.admin.serializers.topology import CapacityOut, EngineProfileOut, PriorityModeOut

# ----- the models overview -----------------------------------------------------------------


class LastErrorOut(serializers.Serializer):
    at = serializers.DateTimeField()
    message = serializers.CharField(help_text="What failed, in the engine's or probe's words.")
    source = serializers.ChoiceField(
        choices=("health", "request"), help_text="A health probe, or a request relayed to it."
    )


class ModelRouteOut(serializers.Serializer):
    pool = serializers.CharField()
    allowed_groups = serializers.ListField(
        child=serializers.CharField(), help_text="Who may call it; empty: everyone."
    )
    pool_fallback = serializers.CharField(
        allow_null=True, help_text="The pool this pool falls back to when all of it is down."
    )
    backend = serializers.CharField()
    backend_model = serializers.CharField(
        help_text="The id the backend knows the model by (differs for an alias)."
    )
    enabled = serializers.BooleanField()
    healthy = serializers.BooleanField(allow_null=True, help_text="null: no gateway runs here.")
    inflight = serializers.IntegerField(allow_null=True)
    max_inflight = serializers.IntegerField(help_text="The limit in force (learned when auto).")
    capacity = CapacityOut(allow_null=True, help_text="The learned limit; null unless auto.")
    profile = EngineProfileOut(allow_null=True, help_text="The detected engine; null before.")
    priority = PriorityModeOut()
    priority_forwarded = serializers.BooleanField(
        help_text="Whether the request's class is sent to this engine."
    )
    forwarding = serializers.CharField(help_text="What the gateway sends upstream, and why.")
    last_error = LastErrorOut(
        allow_null=True, help_text="The backend's last failure since this process started."
    )


class ModelOut(serializers.Serializer):
    name = serializers.CharField(help_text="The name a caller sends as `model`.")
    kind = serializers.ChoiceField(choices=("chat", "embedding"))
    status = serializers.ChoiceField(
        choices=("ok", "degraded", "down"),
        help_text="ok: every backend behind it serves; degraded: some do; down: none does.",
    )
    routes = ModelRouteOut(many=True)


class ModelsOut(serializers.Serializer):
    running = serializers.BooleanField(help_text="false: no gateway runs here (no live state).")
    priority_enabled = serializers.BooleanField()
    models = ModelOut(many=True)
