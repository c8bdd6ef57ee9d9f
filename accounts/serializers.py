"""Input and output shapes of /api/v0, one small serializer per operation."""

from __future__ import annotations

from typing import Any

from django.utils import timezone
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from accounts.allowances import (
    MAX_LIMIT,
    MAX_LIMITS,
    InvalidAllowance,
    Measure,
    Window,
    as_json,
    parse_allowance,
)
from accounts.models import LANGUAGES, group_name_validator
from accounts.priority import LABELS, InvalidPriority, Priority, parse_priority
from aiplane.api_input import BodyIn

# A priority in the schema: its label.
LABEL_SCHEMA = {"type": "string", "enum": list(LABELS)}


@extend_schema_field({**LABEL_SCHEMA, "nullable": True})
class PriorityField(serializers.Field):
    """A priority label, or null for "inherit"; anything else is code invalid_priority."""

    default_error_messages = {
        "invalid_priority": 'Priority must be "low", "medium", "high" or null.',
    }

    def __init__(self, **kwargs: Any) -> None:
        kwargs.setdefault("allow_null", True)
        super().__init__(**kwargs)

    def to_internal_value(self, data: Any) -> Priority | None:
        try:
            return parse_priority(data)
        except InvalidPriority:
            self.fail("invalid_priority")
            raise  # unreachable: fail() raises

    def to_representation(self, value: Any) -> str | None:
        return None if value is None else Priority(value).label


LIMIT_SCHEMA = {
    "type": "object",
    "properties": {
        "measure": {"type": "string", "enum": [m.value for m in Measure]},
        "window": {"type": "string", "enum": [w.value for w in Window]},
        "limit": {"type": "integer", "minimum": 0, "maximum": MAX_LIMIT},
        "model": {
            "type": "string",
            "nullable": True,
            "description": "Only requests for this model (as the caller names it); null: all.",
        },
    },
    "required": ["measure", "window", "limit"],
    "additionalProperties": False,
}
ALLOWANCE_SCHEMA = {
    "type": "array",
    "items": LIMIT_SCHEMA,
    "maxItems": MAX_LIMITS,
    "nullable": True,
}


@extend_schema_field(ALLOWANCE_SCHEMA)
class AllowanceField(serializers.Field):
    """A list of limits, or null; anything else is code invalid_allowance, its param the place
    (`allowance.0.limit`)."""

    def __init__(self, **kwargs: Any) -> None:
        kwargs.setdefault("allow_null", True)
        super().__init__(**kwargs)

    def to_internal_value(self, data: Any) -> Any:
        try:
            return parse_allowance(data)
        except InvalidAllowance as err:
            # A nested detail, so the error's param names the very limit and field.
            detail: Any = [serializers.ErrorDetail(str(err), code="invalid_allowance")]
            for part in reversed(err.param.split(".")[1:]):
                detail = {part: detail}
            raise serializers.ValidationError(detail) from None

    def to_representation(self, value: Any) -> Any:
        if value is None or isinstance(value, list):
            return value  # stored JSON, already in the API's form
        return as_json(value)


# --- errors -------------------------------------------------------------------------------


class ErrorDetailOut(serializers.Serializer):
    message = serializers.CharField()
    type = serializers.CharField()
    param = serializers.CharField(allow_null=True)
    code = serializers.CharField()


class ErrorOut(serializers.Serializer):
    error = ErrorDetailOut()


# --- session and profile ------------------------------------------------------------------


class CsrfOut(serializers.Serializer):
    csrf_token = serializers.CharField()


class LoginIn(BodyIn):
    username = serializers.CharField(max_length=150)
    password = serializers.CharField(max_length=4096, trim_whitespace=False)


class MeOut(serializers.Serializer):
    id = serializers.IntegerField()
    username = serializers.CharField()
    is_admin = serializers.BooleanField()
    language = serializers.ChoiceField(choices=LANGUAGES)


class PasswordChangeIn(BodyIn):
    current_password = serializers.CharField(max_length=4096, trim_whitespace=False)
    new_password = serializers.CharField(max_length=4096, trim_whitespace=False)


class MeIn(BodyIn):
    language = serializers.CharField()

    def validate_language(self, value: str) -> str:
        if value not in LANGUAGES:
            raise serializers.ValidationError(
                f"Language must be one of: {', '.join(LANGUAGES)}.", code="invalid_language"
            )
        return value


# --- personal tokens ----------------------------------------------------------------------


class TokenOut(serializers.Serializer):
    id = serializers.IntegerField()
    name = serializers.CharField()
    prefix = serializers.CharField()
    created_at = serializers.DateTimeField()
    last_used_at = serializers.DateTimeField(allow_null=True)
    expires_at = serializers.DateTimeField(allow_null=True)
    revoked = serializers.BooleanField(source="is_revoked")
    revoked_at = serializers.DateTimeField(allow_null=True)
    revoked_by = serializers.SerializerMethodField(
        help_text="Who revoked it: the owner or an administrator (null if unknown or not revoked)."
    )
    priority = PriorityField(help_text="The saved override; null inherits the owner's groups.")
    effective_priority = serializers.SerializerMethodField()
    model_allowlist = serializers.ListField(child=serializers.CharField(), allow_null=True)
    priority_set_by = serializers.SerializerMethodField(
        help_text="Who saved the override (null: nobody, or an account since deleted)."
    )
    priority_set_by_admin = serializers.BooleanField(
        help_text="An administrator set it for the owner: the owner's ceiling does not cap it."
    )
    allowance = AllowanceField(
        help_text="The token's own limits; null inherits the owner's allowance."
    )
    effective_allowance = serializers.SerializerMethodField(
        help_text="The limits its requests meet (the lower of owner's and token's on each)."
    )

    @extend_schema_field({**ALLOWANCE_SCHEMA, "nullable": False})
    def get_effective_allowance(self, token: Any) -> Any:
        return as_json(self.context["resolution"](token).effective)

    @extend_schema_field(LABEL_SCHEMA)
    def get_effective_priority(self, token: Any) -> str:
        return self.context["effective"](token).label

    @extend_schema_field({"type": "string", "nullable": True})
    def get_priority_set_by(self, token: Any) -> str | None:
        setter = token.priority_set_by
        return None if setter is None else str(setter.get_username())

    @extend_schema_field({"type": "string", "nullable": True})
    def get_revoked_by(self, token: Any) -> str | None:
        revoker = token.revoked_by
        return None if revoker is None else str(revoker.get_username())


class TokenWithSecretOut(TokenOut):
    plaintext = serializers.SerializerMethodField(help_text="Shown once; only a digest is kept.")

    @extend_schema_field(OpenApiTypes.STR)
    def get_plaintext(self, token: Any) -> str:
        return str(self.context["plaintext"])


class TokenListOut(serializers.Serializer):
    tokens = TokenOut(many=True)


class TokenDetailsOut(serializers.Serializer):
    tokens = TokenOut(many=True)
    owner_priority = PriorityField(allow_null=False, help_text="Inherited from your groups.")
    max_priority = PriorityField(allow_null=False, help_text="The highest value you may set.")
    priority_enabled = serializers.BooleanField()
    owner_allowance = AllowanceField(
        allow_null=False, help_text="Inherited from your groups ([]: no limits)."
    )
    allowance_ceiling = AllowanceField(
        help_text="The most your tokens' limits may be; null: no ceiling (administrators)."
    )


class TokenCreateIn(BodyIn):
    name = serializers.CharField(max_length=100)
    priority = PriorityField(required=False, default=None)
    allowance = AllowanceField(required=False, default=None)
    model_allowlist = serializers.ListField(
        child=serializers.CharField(max_length=200),
        required=False,
        allow_null=True,
        default=None,
        max_length=1000,
    )
    expires_at = serializers.DateTimeField(required=False, allow_null=True, default=None)

    def validate_expires_at(self, value: Any) -> Any:
        if value is not None and value <= timezone.now():
            raise serializers.ValidationError(
                "The expiry must be in the future.", code="expiry_in_past"
            )
        return value

    def validate_model_allowlist(self, value: list[str] | None) -> list[str] | None:
        if value is None:
            return None
        # An empty list would be a token that can call nothing: surely not what was meant.
        if not value:
            raise serializers.ValidationError(
                "Name at least one model, or send null for every model your groups allow.",
                code="empty_allowlist",
            )
        return sorted(set(value))


class PriorityIn(BodyIn):
    priority = PriorityField(required=True)


class AllowanceIn(BodyIn):
    allowance = AllowanceField(required=True)


# --- administration -----------------------------------------------------------------------


class GroupOut(serializers.Serializer):
    name = serializers.CharField()
    description = serializers.CharField()
    is_admin = serializers.BooleanField()
    is_default = serializers.BooleanField()
    priority = PriorityField()
    allowance = AllowanceField(
        help_text="Its members' limits; null: no say (as a null priority), []: no limits."
    )
    members = serializers.SerializerMethodField()
    created_at = serializers.DateTimeField()
    updated_at = serializers.DateTimeField()

    @extend_schema_field({"type": "array", "items": {"type": "string"}})
    def get_members(self, group: Any) -> list[str]:
        return sorted(user.get_username() for user in group.members.all())


class GroupListOut(serializers.Serializer):
    groups = GroupOut(many=True)


class GroupIn(BodyIn):
    name = serializers.CharField(max_length=64, validators=[group_name_validator])
    description = serializers.CharField(required=False, allow_blank=True, max_length=2000)
    is_admin = serializers.BooleanField(required=False)
    is_default = serializers.BooleanField(required=False)
    priority = PriorityField(required=False)
    allowance = AllowanceField(
        required=False,
        help_text="null: no say; []: no limits; a person gets the most generous of their groups'.",
    )
    members = serializers.ListField(
        child=serializers.CharField(max_length=150),
        required=False,
        help_text="Usernames; replaces the member list. Omit to keep it.",
    )


class GroupRenameIn(BodyIn):
    name = serializers.CharField(max_length=64, validators=[group_name_validator])


class UserOut(serializers.Serializer):
    id = serializers.IntegerField()
    username = serializers.CharField()
    email = serializers.CharField()
    is_active = serializers.BooleanField()
    is_superuser = serializers.BooleanField()
    is_admin = serializers.SerializerMethodField()
    groups = serializers.SerializerMethodField()
    date_joined = serializers.DateTimeField()
    last_login = serializers.DateTimeField(allow_null=True)

    @extend_schema_field(OpenApiTypes.BOOL)
    def get_is_admin(self, user: Any) -> bool:
        return bool(self.context["resolved"][user.pk].is_admin)

    priority = serializers.SerializerMethodField()
    max_priority = serializers.SerializerMethodField()

    @extend_schema_field({"type": "array", "items": {"type": "string"}})
    def get_groups(self, user: Any) -> list[str]:
        """Every group the person is in, the default groups (everyone's) included."""
        return sorted(self.context["resolved"][user.pk].groups)

    @extend_schema_field(LABEL_SCHEMA)
    def get_priority(self, user: Any) -> str:
        """The class their requests get unless a token says otherwise (highest group's)."""
        return str(self.context["resolved"][user.pk].inherited.label)

    @extend_schema_field(LABEL_SCHEMA)
    def get_max_priority(self, user: Any) -> str:
        """The highest class they may choose for their own tokens."""
        return str(self.context["resolved"][user.pk].max_priority.label)


class UserListOut(serializers.Serializer):
    users = UserOut(many=True)


class UserCreateIn(BodyIn):
    username = serializers.RegexField(r"^[\w.@+-]+\Z", max_length=150)
    email = serializers.EmailField(required=False, allow_blank=True, default="", max_length=254)
    password = serializers.CharField(
        required=False, allow_null=True, default=None, trim_whitespace=False, max_length=4096
    )
    is_active = serializers.BooleanField(required=False, default=True)
    groups = serializers.ListField(
        child=serializers.CharField(max_length=64),
        required=False,
        help_text="Group names to make the person a member of (default groups need no entry).",
    )


class UserUpdateIn(BodyIn):
    username = serializers.RegexField(r"^[\w.@+-]+\Z", max_length=150, required=False)
    email = serializers.EmailField(required=False, allow_blank=True, max_length=254)
    password = serializers.CharField(required=False, trim_whitespace=False, max_length=4096)
    is_active = serializers.BooleanField(required=False)
    groups = serializers.ListField(
        child=serializers.CharField(max_length=64),
        required=False,
        help_text="Replaces the person's memberships (default groups aside). Omit to keep them.",
    )


class OwnerOut(serializers.Serializer):
    id = serializers.IntegerField()
    username = serializers.CharField()


class AdminTokenOut(TokenOut):
    owner = OwnerOut()
    owner_priority = serializers.SerializerMethodField()
    owner_allowance = serializers.SerializerMethodField()
    allowance_set_by = serializers.SerializerMethodField()
    allowance_set_by_admin = serializers.BooleanField()

    @extend_schema_field({**ALLOWANCE_SCHEMA, "nullable": False})
    def get_owner_allowance(self, token: Any) -> Any:
        return as_json(self.context["resolved"][token.owner_id].allowance)

    @extend_schema_field({"type": "string", "nullable": True})
    def get_allowance_set_by(self, token: Any) -> str | None:
        setter = token.allowance_set_by
        return None if setter is None else str(setter.get_username())

    @extend_schema_field(LABEL_SCHEMA)
    def get_owner_priority(self, token: Any) -> str:
        return str(self.context["resolved"][token.owner_id].inherited.label)


class AdminTokenListOut(serializers.Serializer):
    tokens = AdminTokenOut(many=True)


class SettingOut(serializers.Serializer):
    key = serializers.CharField()
    kind = serializers.ChoiceField(choices=["bool", "int", "choice"])
    default = serializers.JSONField()
    choices = serializers.ListField(child=serializers.CharField())
    section = serializers.CharField()
    value = serializers.JSONField()
    min = serializers.IntegerField(allow_null=True)
    max = serializers.IntegerField(allow_null=True)


class SettingListOut(serializers.Serializer):
    settings = SettingOut(many=True)
