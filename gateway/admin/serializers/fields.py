"""Input and output shapes of the data plane's admin API: backends, pools, activity, the queue.

The inputs are strict where DRF's stock fields coerce: "8" is not an integer, "yes" is not a
boolean. Every refusal names the field (param) and a stable code; the messages are the ones the
admin UI has always shown, and every string that reaches the database or an HTTP client has a
bounded length and no character PostgreSQL, a header or a URL parser would refuse later.
"""

from __future__ import annotations

import re
import unicodedata
from typing import Any, Final

from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers
from rest_framework.exceptions import ErrorDetail, ValidationError
from rest_framework.fields import empty

from aiplane.api_input import BodyIn
from aiplane.converters import NAME_PATTERN
from gateway.core.classes import CLASS_NAMES
from gateway.engines.base_url import MAX_LENGTH as BASE_URL_LENGTH
from gateway.engines.base_url import BadBaseUrl, check_base_url
from gateway.engines.priority_forwarding import MappingError, parse_priority_mode
from gateway.engines.profiles import SURFACE_MODES

NAME_RE: Final = re.compile(NAME_PATTERN)

NAME_MESSAGE: Final = (
    "A name uses letters, digits, '-', '_' or '.', and starts with a letter or digit."
)

MODEL_NAME_LENGTH: Final = 200  # gateway.models.ActivityRecord.model

MAX_ENTRIES: Final = 1000

API_KEY_LENGTH: Final = 4096

HEALTH_PATH_LENGTH: Final = 200  # gateway.models.Backend.health_path


def refuse(message: str, code: str = "invalid_value") -> ValidationError:
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
            raise refuse(NAME_MESSAGE, "invalid_name")
        return super().validate_empty_values(data)

    def to_internal_value(self, data: Any) -> str:
        if not isinstance(data, str) or not NAME_RE.fullmatch(data):
            raise refuse(NAME_MESSAGE, "invalid_name")
        return data


class IntegerRangeField(StrictField):
    def __init__(self, *, lo: int, hi: int, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.lo, self.hi = lo, hi
        self._spectacular_annotation = {"field": {"type": "integer", "minimum": lo, "maximum": hi}}

    def to_internal_value(self, data: Any) -> int:
        if isinstance(data, bool) or not isinstance(data, int) or not self.lo <= data <= self.hi:
            raise refuse(f"{self.field_name} must be an integer from {self.lo} to {self.hi}.")
        return data


@extend_schema_field({"type": "boolean"})
class BoolField(StrictField):
    def to_internal_value(self, data: Any) -> bool:
        if not isinstance(data, bool):
            raise refuse(f"{self.field_name} must be true or false.")
        return data


class OneOfField(StrictField):
    def __init__(self, *, choices: tuple[str, ...], **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.choices = choices
        self._spectacular_annotation = {"field": {"type": "string", "enum": list(choices)}}

    def to_internal_value(self, data: Any) -> str:
        if not isinstance(data, str) or data not in self.choices:
            raise refuse(f"{self.field_name} must be one of: {', '.join(self.choices)}.")
        return data


def plain(text: str) -> bool:
    """No control characters: NUL breaks PostgreSQL, CR/LF break headers and logs."""
    return not any(unicodedata.category(ch) == "Cc" for ch in text)


def _one_token(field: str, data: str, limit: int) -> str:
    """`data` as it can travel in a request line or a header: one token of at most `limit`
    printable ASCII characters, no space among them."""
    if len(data) > limit or not all("!" <= ch <= "~" for ch in data):
        raise refuse(f"{field} must be at most {limit} printable ASCII characters, without spaces.")
    return data


def _entry(value: Any, field: str, message: str) -> str:
    if not isinstance(value, str) or not value:
        raise refuse(message)
    if len(value) > MODEL_NAME_LENGTH:
        raise refuse(f"{field} entries may be at most {MODEL_NAME_LENGTH} characters.")
    if not plain(value):
        raise refuse(f"{field} entries may not contain control characters.")
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
            raise refuse(message)
        if len(data) > MAX_ENTRIES:
            raise refuse(f"{self.field_name} may have at most {MAX_ENTRIES} entries.")
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
            raise refuse(self.MESSAGE)
        if len(data) > MAX_ENTRIES:
            raise refuse(f"aliases may have at most {MAX_ENTRIES} entries.")
        return {
            _entry(k, "aliases", self.MESSAGE): _entry(v, "aliases", self.MESSAGE)
            for k, v in data.items()
        }


@extend_schema_field({"type": "string", "format": "uri", "maxLength": BASE_URL_LENGTH})
class BaseUrlField(StrictField):
    def to_internal_value(self, data: Any) -> str:
        if not isinstance(data, str):
            raise refuse("base_url must be an http:// or https:// URL.", "invalid_url")
        try:
            return check_base_url(data)
        except BadBaseUrl as err:
            raise refuse(str(err), "invalid_url") from None


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
            raise refuse("api_key must be a string.")
        # It travels as "Authorization: Bearer <key>": header text, one token.
        return _one_token("api_key", data, API_KEY_LENGTH)


@extend_schema_field({"type": "string", "maxLength": HEALTH_PATH_LENGTH})
class HealthPathField(StrictField):
    def to_internal_value(self, data: Any) -> str:
        if not isinstance(data, str) or (data and not data.startswith("/")):
            raise refuse("health_path must start with '/' (or be empty to probe /models).")
        return _one_token("health_path", data, HEALTH_PATH_LENGTH)


PRIORITY_MODE_SCHEMA: Final = {
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


@extend_schema_field(PRIORITY_MODE_SCHEMA)
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
        if not isinstance(data, dict):
            raise refuse("surfaces must be an object of surface: mode.")
        for name, mode in data.items():
            if name not in SURFACE_NAMES:
                raise refuse(
                    f"surfaces: unknown surface {name!r}; there are messages and responses."
                )
            if mode not in SURFACE_MODES:
                raise refuse(f"surfaces.{name} must be auto, native or translate.")
        return {name: data[name] for name in SURFACE_NAMES if data.get(name, "auto") != "auto"}


HEADROOM_CLASSES: Final = ("low", "medium")  # high is kept from nothing
HEADROOM_MAX: Final = 1000

_HEADROOM_SCHEMA: Final = {
    "type": "object",
    "properties": {
        name: {"type": "integer", "minimum": 0, "maximum": HEADROOM_MAX}
        for name in HEADROOM_CLASSES
    },
    "additionalProperties": False,
}


@extend_schema_field(_HEADROOM_SCHEMA)
class HeadroomField(StrictField):
    """Reserved headroom: {"low": 2, "medium": 1} keeps the backend's last two slots from low
    and its last one from medium while a higher class comes; a class left out is kept from
    none. Nested: a lower class is kept from at least as many as a higher one."""

    def to_internal_value(self, data: Any) -> dict[str, int]:
        if not isinstance(data, dict):
            raise refuse('headroom must be an object of class: slots, e.g. {"low": 2}.')
        for name, keep in data.items():
            if name not in HEADROOM_CLASSES:
                raise refuse(f"headroom: unknown class {name!r}; there are low and medium.")
            if isinstance(keep, bool) or not isinstance(keep, int) or not 0 <= keep <= HEADROOM_MAX:
                raise refuse(f"headroom.{name} must be an integer from 0 to {HEADROOM_MAX}.")
        low, medium = data.get("low", 0), data.get("medium", 0)
        if medium > low:
            raise refuse(
                f"headroom.low ({low}) must be at least headroom.medium ({medium}): "
                "a lower class is kept from at least as many slots as a higher one."
            )
        return {name: data[name] for name in HEADROOM_CLASSES if data.get(name, 0)}


# Bodies of the topology's writes: a JSON object of known fields (aiplane/api_input.py).
JsonObjectSerializer = BodyIn


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
            raise refuse(f"Unknown {self.what}: {unknown[0]}.", self.code)
        return names
