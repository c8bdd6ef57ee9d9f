"""The usage reports' queries and answers, the administrator's and a person's own."""

from __future__ import annotations

from typing import Any, Final

from rest_framework import serializers

from accounts.allowances import Measure, Window
from gateway.admin.serializers.filters import ChoiceFilter, TimeFilter
from gateway.admin.usage_report import (
    BUCKETS,
    GROUP_KEYS,
    MAX_BUCKETS,
    MAX_SERIES_ROWS,
    QUEUE_WAIT_SAMPLE_BOUND,
    REFUSALS,
)

USAGE_GROUPS: Final = tuple(GROUP_KEYS)

# A person's own usage: by user or group it would be one row, themselves.
OWN_USAGE_GROUPS: Final = ("token", "model", "class")


class UsageQueryIn(serializers.Serializer):
    """The range, grouping and buckets of a usage query (format=csv is read by the renderer)."""

    group_by = ChoiceFilter(choices=USAGE_GROUPS, help_text="What the sums are grouped by.")
    since = TimeFilter(required=False, help_text="From this time (ISO 8601); default a day ago.")
    until = TimeFilter(required=False, help_text="Before this time (ISO 8601); default now.")
    bucket = ChoiceFilter(
        choices=tuple(BUCKETS),
        required=False,
        help_text=(
            f"Also a time series in buckets of this length (UTC), at most {MAX_BUCKETS} of them "
            f"and {MAX_SERIES_ROWS} rows of bucket and group."
        ),
    )
    format = ChoiceFilter(
        choices=("json", "csv"),
        required=False,
        help_text="csv: the rows as CSV with a header row (as Accept: text/csv does).",
    )

    def to_internal_value(self, data: Any) -> Any:
        return super().to_internal_value({k: v for k, v in data.items() if v != ""})


class OwnUsageQueryIn(UsageQueryIn):
    group_by = ChoiceFilter(
        choices=OWN_USAGE_GROUPS,
        required=False,
        default="token",
        help_text="What the sums are grouped by; default token.",
    )


class QueueWaitOut(serializers.Serializer):
    requests = serializers.IntegerField(help_text="Queued requests the percentiles are over.")
    p50 = serializers.FloatField(allow_null=True, help_text="Milliseconds; null for none.")
    p95 = serializers.FloatField(allow_null=True, help_text="Milliseconds; null for none.")


class QueueWaitByClassOut(serializers.Serializer):
    low = QueueWaitOut()
    medium = QueueWaitOut()
    high = QueueWaitOut()


# A field per refusal reason, so a reason added to gateway/core/outcomes.py is counted and
# described.
RefusalsOut = type(
    "RefusalsOut",
    (serializers.Serializer,),
    {reason: serializers.IntegerField() for reason in REFUSALS},
)


class UsageTotalsOut(serializers.Serializer):
    requests = serializers.IntegerField()
    input_tokens = serializers.IntegerField()
    output_tokens = serializers.IntegerField()
    cached_tokens = serializers.IntegerField()
    refusals = RefusalsOut()
    queue_wait_ms = QueueWaitByClassOut(
        help_text="Nearest-rank percentiles of the queue wait of requests that queued, by class."
    )


class UsageRowOut(UsageTotalsOut):
    """One group's sums: its key fields (username; group; token_id and token_name; model; or
    priority_class), then requests, the tokens the engines reported, refusals and queue waits."""

    username = serializers.CharField(required=False)
    group = serializers.CharField(
        required=False, allow_null=True, help_text="null: requests without a signed-in user."
    )
    token_id = serializers.IntegerField(required=False, allow_null=True)
    token_name = serializers.CharField(required=False, allow_blank=True)
    model = serializers.CharField(required=False)
    priority_class = serializers.CharField(
        required=False,
        allow_null=True,
        help_text="null: requests that ended before their caller was known.",
    )

    def to_representation(self, instance: Any) -> Any:
        # Only the group's own key fields: a row by model has no token.
        shown = super().to_representation(instance)
        return {k: v for k, v in shown.items() if k in instance}


class UsageBucketRowOut(UsageRowOut):
    start = serializers.CharField(help_text="The bucket's start (ISO 8601, UTC).")


class UsageBucketTotalsOut(UsageTotalsOut):
    start = serializers.CharField(help_text="The bucket's start (ISO 8601, UTC).")


class UsageOut(serializers.Serializer):
    group_by = serializers.ChoiceField(choices=USAGE_GROUPS)
    bucket = serializers.ChoiceField(choices=tuple(BUCKETS), allow_null=True)
    since = serializers.CharField()
    until = serializers.CharField()
    buckets = serializers.ListField(
        child=serializers.CharField(),
        help_text="Every bucket's start, empty ones too (none without bucket).",
    )
    results = UsageRowOut(many=True, help_text="Each group over the whole range.")
    series = UsageBucketRowOut(
        many=True, help_text="Each bucket and group that has requests (none without bucket)."
    )
    bucket_totals = UsageBucketTotalsOut(
        many=True, help_text="Every bucket (empty ones too) over all groups; none without bucket."
    )
    totals = UsageTotalsOut(help_text="Every request of the range (a request counts once).")
    sample_every = serializers.IntegerField(
        help_text=(
            f"1, or k when more than {QUEUE_WAIT_SAMPLE_BOUND} requests queued: the percentiles "
            "are then over every k-th of them."
        )
    )


class AllowanceLeftOut(serializers.Serializer):
    measure = serializers.ChoiceField(choices=[m.value for m in Measure])
    window = serializers.ChoiceField(choices=[w.value for w in Window])
    limit = serializers.IntegerField()
    model = serializers.CharField(allow_null=True, help_text="null: every model together.")
    used = serializers.IntegerField(
        allow_null=True,
        help_text="Counted in the current window (null: the gateway's counters did not answer).",
    )
    reserved = serializers.IntegerField(
        allow_null=True, help_text="Held by requests in flight until their usage is known."
    )
    remaining = serializers.IntegerField(allow_null=True, help_text="limit - used - reserved.")
    resets_at = serializers.CharField(help_text="When the current window ends (ISO 8601, UTC).")


class TokenAllowanceLeftOut(serializers.Serializer):
    token_id = serializers.IntegerField()
    token_name = serializers.CharField()
    limits = AllowanceLeftOut(many=True)


class OwnAllowanceOut(serializers.Serializer):
    person = AllowanceLeftOut(
        many=True, help_text="My limits, counted over all my tokens (none: unlimited)."
    )
    tokens = TokenAllowanceLeftOut(
        many=True, help_text="Each live token of mine that has its own limits, counted alone."
    )


class OwnUsageOut(UsageOut):
    group_by = serializers.ChoiceField(choices=OWN_USAGE_GROUPS)
    allowance = OwnAllowanceOut(help_text="What is left of my allowance, now.")
