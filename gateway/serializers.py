"""Input and output shapes of the data plane's admin API: backends, pools, activity, the queue.

The inputs are strict where DRF's stock fields coerce: "8" is not an integer, "yes" is not a
boolean. Every refusal names the field (param) and a stable code; the messages are the ones the
admin UI has always shown, and every string that reaches the database or an HTTP client has a
bounded length and no character PostgreSQL, a header or a URL parser would refuse later.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any, Final

from django.db.models import QuerySet
from django.utils import timezone
from django.utils.dateparse import parse_datetime
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers
from rest_framework.exceptions import ErrorDetail, ValidationError
from rest_framework.fields import empty

from accounts.allowances import Measure, Window
from aiplane.converters import NAME_PATTERN
from gateway.admission import SCHEDULERS
from gateway.base_url import MAX_LENGTH as BASE_URL_LENGTH
from gateway.base_url import BadBaseUrl, check_base_url
from gateway.mapping import CLASS_NAMES, MappingError, parse_priority_mode
from gateway.models import KINDS, STRATEGIES, Backend, Pool
from gateway.outcomes import Outcome
from gateway.usage_report import (
    BUCKETS,
    GROUP_KEYS,
    MAX_BUCKETS,
    MAX_SERIES_ROWS,
    QUEUE_WAIT_SAMPLE_BOUND,
    REFUSALS,
)

NAME_RE: Final = re.compile(NAME_PATTERN)
NAME_MESSAGE: Final = (
    "A name uses letters, digits, '-', '_' or '.', and starts with a letter or digit."
)
MODEL_NAME_LENGTH: Final = 200  # gateway.models.ActivityRecord.model
MAX_ENTRIES: Final = 1000
API_KEY_LENGTH: Final = 4096
HEALTH_PATH_LENGTH: Final = 200  # gateway.models.Backend.health_path


def _refuse(message: str, code: str = "invalid_value") -> ValidationError:
    return ValidationError(ErrorDetail(message, code=code))


class StrictField(serializers.Field):
    """A field whose refusals, null included, are its own message and code (not DRF's)."""

    def validate_empty_values(self, data: Any) -> tuple[bool, Any]:
        if data is None and not self.allow_null:
            return False, data  # to_internal_value words the refusal
        return super().validate_empty_values(data)

    def to_representation(self, value: Any) -> Any:
        return value


@extend_schema_field({"type": "string", "pattern": f"^{NAME_PATTERN}$"})
class NameField(StrictField):
    """A backend or pool name; missing, null or malformed are all code invalid_name."""

    def validate_empty_values(self, data: Any) -> tuple[bool, Any]:
        if data is empty:
            raise _refuse(NAME_MESSAGE, "invalid_name")
        return super().validate_empty_values(data)

    def to_internal_value(self, data: Any) -> str:
        if not isinstance(data, str) or not NAME_RE.fullmatch(data):
            raise _refuse(NAME_MESSAGE, "invalid_name")
        return data


class IntegerRangeField(StrictField):
    def __init__(self, *, lo: int, hi: int, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.lo, self.hi = lo, hi
        self._spectacular_annotation = {"field": {"type": "integer", "minimum": lo, "maximum": hi}}

    def to_internal_value(self, data: Any) -> int:
        if isinstance(data, bool) or not isinstance(data, int) or not self.lo <= data <= self.hi:
            raise _refuse(f"{self.field_name} must be an integer from {self.lo} to {self.hi}.")
        return data


@extend_schema_field({"type": "boolean"})
class BoolField(StrictField):
    def to_internal_value(self, data: Any) -> bool:
        if not isinstance(data, bool):
            raise _refuse(f"{self.field_name} must be true or false.")
        return data


class OneOfField(StrictField):
    def __init__(self, *, choices: tuple[str, ...], **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.choices = choices
        self._spectacular_annotation = {"field": {"type": "string", "enum": list(choices)}}

    def to_internal_value(self, data: Any) -> str:
        if not isinstance(data, str) or data not in self.choices:
            raise _refuse(f"{self.field_name} must be one of: {', '.join(self.choices)}.")
        return data


def _plain(text: str) -> bool:
    """No control characters: NUL breaks PostgreSQL, CR/LF break headers and logs."""
    return not any(unicodedata.category(ch) == "Cc" for ch in text)


def _entry(value: Any, field: str, message: str) -> str:
    if not isinstance(value, str) or not value:
        raise _refuse(message)
    if len(value) > MODEL_NAME_LENGTH:
        raise _refuse(f"{field} entries may be at most {MODEL_NAME_LENGTH} characters.")
    if not _plain(value):
        raise _refuse(f"{field} entries may not contain control characters.")
    return value


@extend_schema_field(
    {
        "type": "array",
        "items": {"type": "string", "minLength": 1, "maxLength": MODEL_NAME_LENGTH},
        "maxItems": MAX_ENTRIES,
    }
)
class StringListField(StrictField):
    """A list of non-empty strings, duplicates dropped in order."""

    def to_internal_value(self, data: Any) -> list[str]:
        message = f"{self.field_name} must be a list of non-empty strings."
        if not isinstance(data, list):
            raise _refuse(message)
        if len(data) > MAX_ENTRIES:
            raise _refuse(f"{self.field_name} may have at most {MAX_ENTRIES} entries.")
        return list(dict.fromkeys(_entry(v, self.field_name, message) for v in data))


@extend_schema_field(
    {
        "type": "object",
        "additionalProperties": {"type": "string", "minLength": 1, "maxLength": MODEL_NAME_LENGTH},
        "maxProperties": MAX_ENTRIES,
    }
)
class AliasesField(StrictField):
    MESSAGE = "aliases must map alias names to served model ids."

    def to_internal_value(self, data: Any) -> dict[str, str]:
        if not isinstance(data, dict):
            raise _refuse(self.MESSAGE)
        if len(data) > MAX_ENTRIES:
            raise _refuse(f"aliases may have at most {MAX_ENTRIES} entries.")
        return {
            _entry(k, "aliases", self.MESSAGE): _entry(v, "aliases", self.MESSAGE)
            for k, v in data.items()
        }


@extend_schema_field({"type": "string", "format": "uri", "maxLength": BASE_URL_LENGTH})
class BaseUrlField(StrictField):
    def to_internal_value(self, data: Any) -> str:
        if not isinstance(data, str):
            raise _refuse("base_url must be an http:// or https:// URL.", "invalid_url")
        try:
            return check_base_url(data)
        except BadBaseUrl as err:
            raise _refuse(str(err), "invalid_url") from None


@extend_schema_field(
    {
        "type": "string",
        "nullable": True,
        "maxLength": API_KEY_LENGTH,
        "description": "Write-only; null keeps the stored key, an empty string clears it.",
    }
)
class ApiKeyField(StrictField):
    def to_internal_value(self, data: Any) -> str:
        if not isinstance(data, str):
            raise _refuse("api_key must be a string.")
        # It travels as "Authorization: Bearer <key>": header text, one token.
        if len(data) > API_KEY_LENGTH or not all("!" <= ch <= "~" for ch in data):
            raise _refuse(
                f"api_key must be at most {API_KEY_LENGTH} printable ASCII characters,"
                " without spaces."
            )
        return data


@extend_schema_field({"type": "string", "maxLength": HEALTH_PATH_LENGTH})
class HealthPathField(StrictField):
    def to_internal_value(self, data: Any) -> str:
        if not isinstance(data, str) or (data and not data.startswith("/")):
            raise _refuse("health_path must start with '/' (or be empty to probe /models).")
        if len(data) > HEALTH_PATH_LENGTH or not all("!" <= ch <= "~" for ch in data):
            raise _refuse(
                f"health_path must be at most {HEALTH_PATH_LENGTH} printable ASCII characters,"
                " without spaces."
            )
        return data


_PRIORITY_MODE_SCHEMA: Final = {
    "type": "object",
    "properties": {
        "mode": {"type": "string", "enum": ["auto", "gateway", "custom"]},
        "mapping": {
            "type": "object",
            "description": "Only for mode custom: the body field and its value for each class.",
            "properties": {
                "field": {"type": "string", "pattern": "^[A-Za-z_][A-Za-z0-9_]{0,63}$"},
                **{
                    name: {"type": "integer", "minimum": -(2**31), "maximum": 2**31 - 1}
                    for name in CLASS_NAMES
                },
            },
            "required": ["field", *CLASS_NAMES],
        },
    },
    "required": ["mode"],
}


@extend_schema_field(_PRIORITY_MODE_SCHEMA)
class PriorityModeField(StrictField):
    """The forwarding mode; errors name their place inside it (priority.mapping.low)."""

    def to_internal_value(self, data: Any) -> dict[str, Any]:
        try:
            return parse_priority_mode(data).to_json()
        except MappingError as err:
            detail: Any = [ErrorDetail(err.message, code=err.code)]
            # The param is a path from the payload's root, whose first step is this field.
            for step in reversed((err.param or "").split(".")[1:]):
                detail = {step: detail}
            raise ValidationError(detail) from None


SURFACE_NAMES: Final = ("messages", "responses")
_SURFACES_SCHEMA: Final = {
    "type": "object",
    "properties": {
        name: {"type": "string", "enum": ["auto", "native", "translate"]} for name in SURFACE_NAMES
    },
    "additionalProperties": False,
}


@extend_schema_field(_SURFACES_SCHEMA)
class SurfacesField(StrictField):
    """How the Messages and Responses APIs are served: {"messages": "auto"|"native"|
    "translate", "responses": ...}; a surface left out is automatic."""

    def to_internal_value(self, data: Any) -> dict[str, str]:
        from gateway.registry import SURFACE_MODES

        if not isinstance(data, dict):
            raise _refuse("surfaces must be an object of surface: mode.")
        for name, mode in data.items():
            if name not in SURFACE_NAMES:
                raise _refuse(
                    f"surfaces: unknown surface {name!r}; there are messages and responses."
                )
            if mode not in SURFACE_MODES:
                raise _refuse(f"surfaces.{name} must be auto, native or translate.")
        return {name: data[name] for name in SURFACE_NAMES if data.get(name, "auto") != "auto"}


class JsonObjectSerializer(serializers.Serializer):
    """An input serializer whose body must be a JSON object (code invalid_request otherwise)."""

    def to_internal_value(self, data: Any) -> Any:
        if not isinstance(data, Mapping):
            raise ValidationError(
                {"non_field_errors": [ErrorDetail("Send a JSON object.", code="invalid_request")]}
            )
        return super().to_internal_value(data)


# ----- backends ----------------------------------------------------------------------------


class NameListField(StringListField):
    """Names that must exist: unknown ones are `code`, "Unknown <what>: <name>."."""

    def __init__(self, *, what: str, code: str, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.what, self.code = what, code

    def known(self, names: list[str]) -> set[str]:
        raise NotImplementedError

    def to_internal_value(self, data: Any) -> list[str]:
        names = super().to_internal_value(data)
        # A string that is not a name names nothing; only names are looked up.
        known = self.known([n for n in names if NAME_RE.fullmatch(n)])
        unknown = [n for n in names if n not in known]
        if unknown:
            raise _refuse(f"Unknown {self.what}: {unknown[0]}.", self.code)
        return names


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


# ----- activity ----------------------------------------------------------------------------

# What happened to a request: the one vocabulary of gateway/outcomes.py.
OUTCOMES: Final = tuple(str(outcome) for outcome in Outcome)
MAX_PAGE: Final = 10**9
MAX_PAGE_SIZE: Final = 500


class FilterField(StrictField):
    """A query parameter; every refusal is code invalid_filter, param the parameter's name."""

    def refuse(self, message: str) -> ValidationError:
        return _refuse(message, "invalid_filter")


@extend_schema_field({"type": "string", "maxLength": MODEL_NAME_LENGTH})
class TextFilter(FilterField):
    def to_internal_value(self, data: Any) -> str:
        if len(data) > MODEL_NAME_LENGTH or not _plain(data):
            raise self.refuse(
                f"{self.field_name} must be at most {MODEL_NAME_LENGTH} characters,"
                " without control characters."
            )
        return str(data)


class PageFilter(FilterField):
    def __init__(self, *, maximum: int, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.maximum = maximum
        self._spectacular_annotation = {
            "field": {"type": "integer", "minimum": 1, "maximum": maximum}
        }

    def to_internal_value(self, data: Any) -> int:
        # isdigit() alone takes "²", which int() refuses: only ASCII digits are a number here.
        text = str(data)
        digits = text.isascii() and text.isdigit() and len(text) <= len(str(self.maximum))
        if not digits or not 1 <= int(text) <= self.maximum:
            raise self.refuse(f"{self.field_name} must be from 1 to {self.maximum}.")
        return int(text)


def page_of(rows: QuerySet[Any, Any], q: Mapping[str, Any]) -> dict[str, Any]:
    """The page of `rows` that the validated `page` and `page_size` of `q` ask for, as the
    page serializers (ActivityPageOut, AuditPageOut) write it."""
    page, size = q["page"], q["page_size"]
    total = rows.count()
    return {
        "count": total,
        "page": page,
        "page_size": size,
        "has_next": page * size < total,
        "results": list(rows[(page - 1) * size : page * size]),
    }


@extend_schema_field({"type": "string", "format": "date-time"})
class TimeFilter(FilterField):
    def to_internal_value(self, data: Any) -> datetime:
        refusal = self.refuse(f"{self.field_name} must be an ISO 8601 time.")
        try:
            when = parse_datetime(str(data))  # None when malformed, ValueError when impossible
        except ValueError:
            raise refusal from None
        if when is None:
            raise refusal
        if timezone.is_naive(when):
            when = when.replace(tzinfo=UTC)
        try:
            # In UTC, so no database sees an offset it cannot store (PostgreSQL: +-15:59).
            return when.astimezone(UTC)
        except OverflowError:
            raise refusal from None


class ClassFilter(FilterField):
    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._spectacular_annotation = {"field": {"type": "string", "enum": list(CLASS_NAMES)}}

    def to_internal_value(self, data: Any) -> str:
        if data not in CLASS_NAMES:
            raise self.refuse("class must be low, medium or high.")
        return str(data)


class ActivityQueryIn(serializers.Serializer):
    user = TextFilter(required=False, help_text="The start of a username (any case).")
    token = TextFilter(
        required=False, help_text="A token id, or the start of a token's name (any case)."
    )
    model = TextFilter(required=False, help_text="Part of a model name (any case).")
    # "class" is a keyword: the field is added under its name in get_fields.
    outcome = OneOfField(choices=OUTCOMES, required=False)
    since = TimeFilter(required=False, help_text="From this time (ISO 8601), inclusive.")
    until = TimeFilter(required=False, help_text="Before this time (ISO 8601).")
    page = PageFilter(maximum=MAX_PAGE, required=False, default=1, help_text="From 1.")
    page_size = PageFilter(maximum=MAX_PAGE_SIZE, required=False, default=50)

    def get_fields(self) -> dict[str, serializers.Field]:
        fields = super().get_fields()
        ordered = {k: v for k, v in fields.items() if k in ("user", "token", "model")}
        ordered["class"] = ClassFilter(required=False)
        return {**ordered, **fields}

    def to_internal_value(self, data: Any) -> Any:
        # An empty parameter is no filter at all, as it always was.
        return super().to_internal_value({k: v for k, v in data.items() if v != ""})


USAGE_GROUPS: Final = tuple(GROUP_KEYS)
# A person's own usage: by user or group it would be one row, themselves.
OWN_USAGE_GROUPS: Final = ("token", "model", "class")


class ChoiceFilter(FilterField):
    """One of a few words; required unless it has a default."""

    def __init__(self, *, choices: tuple[str, ...], **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.choices = choices
        self._spectacular_annotation = {"field": {"type": "string", "enum": list(choices)}}

    def _refusal(self) -> ValidationError:
        *first, last = self.choices
        return self.refuse(f"{self.field_name} must be {', '.join(first)} or {last}.")

    def validate_empty_values(self, data: Any) -> tuple[bool, Any]:
        if data is empty and self.required:
            raise self._refusal()
        return super().validate_empty_values(data)

    def to_internal_value(self, data: Any) -> str:
        if data not in self.choices:
            raise self._refusal()
        return str(data)


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


# A field per refusal reason, so a reason added to gateway/outcomes.py is counted and described.
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
    priority_class = serializers.CharField(required=False)

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


@extend_schema_field({"type": "string", "format": "date-time"})
class IsoTimeField(serializers.Field):
    """A datetime as Python's isoformat (+00:00), the form the activity API always answered."""

    def to_representation(self, value: datetime) -> str:
        return value.isoformat()


class ActivityRecordOut(serializers.Serializer):
    id = serializers.IntegerField()
    at = IsoTimeField()
    username = serializers.CharField(allow_blank=True)
    token_id = serializers.IntegerField(allow_null=True)
    token_name = serializers.CharField(allow_blank=True)
    model = serializers.CharField(allow_blank=True)
    path = serializers.CharField(allow_blank=True)
    backend = serializers.CharField(allow_blank=True)
    hint = serializers.CharField(allow_blank=True)
    score = serializers.FloatField(allow_null=True)
    queue_ms = serializers.FloatField()
    first_byte_ms = serializers.FloatField(allow_null=True)
    outcome = serializers.CharField()
    status = serializers.IntegerField()
    duration_ms = serializers.FloatField()
    surface = serializers.CharField(allow_blank=True)
    input_tokens = serializers.IntegerField(allow_null=True)
    output_tokens = serializers.IntegerField(allow_null=True)
    cached_tokens = serializers.IntegerField(allow_null=True)
    error = serializers.CharField(allow_blank=True)

    def get_fields(self) -> dict[str, serializers.Field]:
        fields = super().get_fields()
        fields["class"] = serializers.CharField(source="priority_class")
        return fields


class ActivityPageOut(serializers.Serializer):
    count = serializers.IntegerField()
    page = serializers.IntegerField()
    page_size = serializers.IntegerField()
    has_next = serializers.BooleanField()
    results = ActivityRecordOut(many=True)


# ----- the live queue ----------------------------------------------------------------------


class QueueBackendOut(serializers.Serializer):
    name = serializers.CharField()
    inflight = serializers.IntegerField()
    max_inflight = serializers.IntegerField()
    healthy = serializers.BooleanField()
    enabled = serializers.BooleanField()


class QueueWaiterOut(serializers.Serializer):
    id = serializers.IntegerField()
    line = serializers.CharField(help_text="The id of the line it waits in (see lines).")
    position = serializers.IntegerField(help_text="1 = the one its line's next free slot goes to.")
    offset = serializers.IntegerField()
    score = serializers.FloatField(
        allow_null=True, help_text="The serial scheduler's score now; null for the others."
    )
    age_secs = serializers.FloatField()
    waits_for = serializers.ListField(
        child=serializers.CharField(), help_text="The backends it may be given, warm one first."
    )
    model = serializers.CharField(allow_blank=True)
    user = serializers.CharField(allow_blank=True)
    token = serializers.CharField(allow_null=True)

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
    max_inflight = serializers.IntegerField()
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
