"""The live queue's picture."""

from __future__ import annotations

from rest_framework import serializers

from gateway.admin.serializers.topology import CapacityOut
from gateway.admission.schedulers import SCHEDULERS
from gateway.core.classes import CLASS_NAMES

# ----- the live queue ----------------------------------------------------------------------


class QueueBackendOut(serializers.Serializer):
    name = serializers.CharField()
    inflight = serializers.IntegerField()
    max_inflight = serializers.IntegerField()
    healthy = serializers.BooleanField()
    enabled = serializers.BooleanField()
    capacity = CapacityOut(allow_null=True, help_text="The learned limit; null unless auto.")


class QueueWaiterOut(serializers.Serializer):
    id = serializers.CharField(
        help_text="The waiter's id: its arrival number in this process; with shared admission, "
        "its id over the group (<process>:<n>)."
    )
    line = serializers.CharField(help_text="The id of the line it waits in (see lines).")
    position = serializers.IntegerField(help_text="1 = the one its line's next free slot goes to.")
    offset = serializers.IntegerField()
    score = serializers.FloatField(
        allow_null=True, help_text="The serial scheduler's score now; null for the others."
    )
    age_secs = serializers.FloatField()
    estimated_wait_secs = serializers.FloatField(
        allow_null=True,
        help_text="When it should have a slot: those before it in its line, at the pace its "
        "backends took requests lately; null while unknown (or with shared admission).",
    )
    waits_for = serializers.ListField(
        child=serializers.CharField(), help_text="The backends it may be given, warm one first."
    )
    model = serializers.CharField(allow_blank=True)
    user = serializers.CharField(allow_blank=True)
    token = serializers.CharField(allow_null=True)
    process = serializers.CharField(
        required=False, help_text="With shared admission: the gateway process it waits at."
    )

    def get_fields(self) -> dict[str, serializers.Field]:
        return {**super().get_fields(), "class": serializers.ChoiceField(choices=CLASS_NAMES)}


class QueueAdmissionOut(serializers.Serializer):
    at = serializers.FloatField(help_text="Unix time of the admission.")
    model = serializers.CharField(allow_blank=True)
    user = serializers.CharField(allow_blank=True)
    backend = serializers.CharField(allow_blank=True)
    waited_secs = serializers.FloatField()

    def get_fields(self) -> dict[str, serializers.Field]:
        return {**super().get_fields(), "class": serializers.ChoiceField(choices=CLASS_NAMES)}


class QueueDepthOut(serializers.Serializer):
    low = serializers.IntegerField()
    medium = serializers.IntegerField()
    high = serializers.IntegerField()


class QueueLineOut(serializers.Serializer):
    id = serializers.CharField()
    backends = serializers.ListField(
        child=serializers.CharField(), help_text="The backends whose slots its waiters share."
    )
    models = serializers.ListField(child=serializers.CharField())
    waiting = serializers.IntegerField()


class QueueOut(serializers.Serializer):
    priority_enabled = serializers.BooleanField()
    scheduler = serializers.ChoiceField(choices=SCHEDULERS)
    lines = QueueLineOut(
        many=True, help_text="Waiters that compete for the same backends' slots, one line each."
    )
    recent = QueueAdmissionOut(many=True)
    backends = QueueBackendOut(many=True)
    depth = QueueDepthOut()
    waiters = QueueWaiterOut(many=True, help_text="Line by line, each in dispatch order.")
