"""Topology stored in the database: backends (model servers) and pools that group them."""

from __future__ import annotations

from django.db import models

STRATEGIES = ("least_inflight", "round_robin", "prefix_affinity")


KINDS = ("chat", "embedding")


class Backend(models.Model):
    name = models.SlugField(max_length=100, unique=True)
    base_url = models.URLField(
        max_length=500, help_text="OpenAI base URL, e.g. http://host:8000/v1"
    )
    api_key_encrypted = models.TextField(blank=True, default="")
    max_inflight = models.PositiveIntegerField(default=16)
    # max_inflight "auto": the limit is learned from the engine (gateway/engines/capacity.py),
    # within floor..ceiling; max_inflight keeps the fixed number for when it is fixed again.
    capacity_auto = models.BooleanField(default=False)
    capacity_floor = models.PositiveIntegerField(default=1)
    capacity_ceiling = models.PositiveIntegerField(default=256)
    # Reserved headroom: {"low": 2, "medium": 1}, the slots of its limit kept from a class while
    # a higher one comes (gateway/admission/queue.py `reserved`).
    headroom = models.JSONField(default=dict, blank=True)
    weight = models.PositiveIntegerField(default=1)
    enabled = models.BooleanField(default=True)
    health_path = models.CharField(max_length=200, blank=True, default="/health")
    # Narrows what the backend reports; empty = everything its /models lists.
    served_models = models.JSONField(default=list, blank=True)
    # Names callers may use instead of a served id: {"alias": "served-id"}.
    aliases = models.JSONField(default=dict, blank=True)
    priority_mode = models.JSONField(default=dict, blank=True)  # {"mode": "auto"} when empty
    # How the Messages and Responses APIs are served: {"messages": "auto|native|translate",
    # "responses": ...}; missing keys are "auto" (native where detection found them served).
    surfaces = models.JSONField(default=dict, blank=True)
    # Whether it may keep Responses state (store, previous_response_id, conversations) for
    # callers when it serves /v1/responses itself (gateway/dialects/stored_state.py).
    store_responses = models.BooleanField(default=False)
    profile = models.JSONField(default=dict, blank=True)  # what detection found
    discovered_models = models.JSONField(default=list, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ("name",)

    def __str__(self) -> str:
        return self.name


class Pool(models.Model):
    name = models.SlugField(max_length=100, unique=True)
    kind = models.CharField(max_length=20, choices=[(k, k) for k in KINDS], default="chat")
    strategy = models.CharField(
        max_length=30, choices=[(s, s) for s in STRATEGIES], default="least_inflight"
    )
    # Who may call its models: everyone, or members of the named groups (none named: nobody).
    # Explicit, so emptying the list can never open a pool by accident.
    everyone = models.BooleanField(default=False)
    allowed_groups = models.JSONField(default=list, blank=True)  # group names
    fallback = models.ForeignKey(
        "self", null=True, blank=True, on_delete=models.SET_NULL, related_name="fallback_for"
    )
    backends = models.ManyToManyField(Backend, related_name="pools", blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ("name",)

    def __str__(self) -> str:
        return self.name


class ActivityRecord(models.Model):
    """One request's story: who, what, which backend, which class, how long it queued."""

    at = models.DateTimeField(db_index=True)
    token_id = models.BigIntegerField(null=True, blank=True, db_index=True)
    token_name = models.CharField(max_length=200, blank=True, default="")
    user_id = models.BigIntegerField(null=True, blank=True)
    username = models.CharField(max_length=150, blank=True, default="", db_index=True)
    model = models.CharField(max_length=200, db_index=True)
    path = models.CharField(max_length=100, blank=True, default="")
    backend = models.CharField(max_length=100, blank=True, default="")
    # null: refused or cut short before the caller was known (a bad token, say): no class at
    # all, which the API says as null, where "" would be one more name beside low..high.
    priority_class = models.CharField(max_length=10, null=True, blank=True)  # noqa: DJ001
    hint = models.CharField(max_length=200, blank=True, default="")
    score = models.FloatField(null=True, blank=True)
    queue_ms = models.FloatField(default=0)
    first_byte_ms = models.FloatField(null=True, blank=True)
    outcome = models.CharField(max_length=20)
    status = models.PositiveSmallIntegerField(default=0)
    duration_ms = models.FloatField(default=0)
    surface = models.CharField(max_length=20, blank=True, default="")
    input_tokens = models.PositiveIntegerField(null=True, blank=True)
    output_tokens = models.PositiveIntegerField(null=True, blank=True)
    cached_tokens = models.PositiveIntegerField(null=True, blank=True)
    # The tokens are the gateway's count: the engine streamed without reporting usage.
    usage_estimated = models.BooleanField(default=False)
    error = models.CharField(max_length=500, blank=True, default="")

    class Meta:
        ordering = ("-at", "-id")

    def __str__(self) -> str:
        return f"{self.at:%Y-%m-%d %H:%M:%S} {self.username} {self.model} {self.outcome}"
