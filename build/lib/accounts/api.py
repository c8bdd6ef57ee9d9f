"""The /api/v0 REST API of identity: session, profile, personal tokens and administration."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from django.contrib.auth import authenticate, login, logout, update_session_auth_hash
from django.contrib.auth.models import User
from django.middleware.csrf import get_token
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import permissions, serializers
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from accounts import selectors, services
from accounts.allowances import Resolution, as_json, resolve_allowance
from accounts.api_auth import IsGatewayAdmin, enforce_csrf, resolved_for
from accounts.api_errors import ApiError
from accounts.models import ApiToken
from accounts.priority import Priority, effective_class
from accounts.rbac import Resolved, resolve_many
from accounts.serializers import (
    AdminTokenListOut,
    AdminTokenOut,
    AllowanceIn,
    CsrfOut,
    ErrorOut,
    GroupIn,
    GroupListOut,
    GroupOut,
    GroupRenameIn,
    LoginIn,
    MeIn,
    MeOut,
    PasswordChangeIn,
    PriorityIn,
    SettingListOut,
    TokenCreateIn,
    TokenDetailsOut,
    TokenListOut,
    TokenOut,
    TokenWithSecretOut,
    UserCreateIn,
    UserListOut,
    UserOut,
    UserUpdateIn,
)
from aiplane.catalog import setting

_ERROR_MEANINGS = {
    400: "Invalid request (code names the rule, param the field).",
    401: "No signed-in session.",
    403: "Not allowed (not_admin, csrf_failed, priority_above_ceiling, allowance_above_ceiling).",
    404: "No such object, or not yours.",
    409: "Conflicts with the current state.",
    429: "Too many failed sign-ins or wrong current passwords (code too_many_attempts); wait "
    "Retry-After seconds.",
}


def _errors(*statuses: int) -> dict[int, OpenApiResponse]:
    return {s: OpenApiResponse(ErrorOut, description=_ERROR_MEANINGS[s]) for s in statuses}


def _valid(serializer_class: type[serializers.Serializer], request: Request) -> dict[str, Any]:
    serializer = serializer_class(data=request.data)
    serializer.is_valid(raise_exception=True)
    return dict(serializer.validated_data)


def _me(request: Request) -> dict[str, Any]:
    user = request.user
    return {
        "id": user.pk,
        "username": user.get_username(),
        "is_admin": resolved_for(request).is_admin,
        "language": selectors.language_of(user=user),
    }


def _effective_for(resolved: Callable[[ApiToken], Resolved]) -> Callable[[ApiToken], Priority]:
    def effective(token: ApiToken) -> Priority:
        owner = resolved(token)
        return effective_class(
            token.priority_class, token.priority_set_by_admin, owner.inherited, owner.is_admin
        )

    return effective


def _resolution_for(
    resolved: Callable[[ApiToken], Resolved],
) -> Callable[[ApiToken], Resolution]:
    def resolution(token: ApiToken) -> Resolution:
        owner = resolved(token)
        return resolve_allowance(
            token.allowance_limits, token.allowance_set_by_admin, owner.allowance, owner.is_admin
        )

    return resolution


def _personal(request: Request, extra: dict[str, Any] | None = None) -> dict[str, Any]:
    """Serializer context for the signed-in owner's own tokens."""
    owner = resolved_for(request)
    return {
        "effective": _effective_for(lambda _token: owner),
        "resolution": _resolution_for(lambda _token: owner),
        **(extra or {}),
    }


def _admin_tokens(tokens: Iterable[ApiToken]) -> dict[str, Any]:
    """Serializer context for tokens of many owners: every owner resolved in one go."""
    tokens = list(tokens)
    resolved = resolve_many({t.owner_id: t.owner for t in tokens}.values())
    return {
        "resolved": resolved,
        "effective": _effective_for(lambda t: resolved[t.owner_id]),
        "resolution": _resolution_for(lambda t: resolved[t.owner_id]),
    }


# --- session ------------------------------------------------------------------------------


class SessionCsrfApi(APIView):
    authentication_classes: list[type] = []
    permission_classes = [permissions.AllowAny]

    @extend_schema(tags=["session"], summary="Set the CSRF cookie", responses={200: CsrfOut})
    def get(self, request: Request) -> Response:
        # get_token marks the cookie for the CSRF middleware to set on this response.
        return Response({"csrf_token": get_token(request._request)})


class SessionLoginApi(APIView):
    permission_classes = [permissions.AllowAny]

    @extend_schema(
        tags=["session"],
        summary="Sign in with a password (needs the CSRF cookie and X-CSRFToken)",
        request=LoginIn,
        responses={200: MeOut, **_errors(400, 401, 403, 429)},
    )
    def post(self, request: Request) -> Response:
        # Login CSRF matters too: otherwise a site could sign a victim into its own account.
        enforce_csrf(request)
        data = _valid(LoginIn, request)
        user = authenticate(request._request, username=data["username"], password=data["password"])
        if user is None:
            raise ApiError(401, "invalid_credentials", "Wrong username or password.")
        login(request._request, user)
        request.user = user
        return Response(_me(request))


class SessionLogoutApi(APIView):
    permission_classes = [permissions.AllowAny]

    @extend_schema(tags=["session"], summary="Sign out", request=None, responses={204: None})
    def post(self, request: Request) -> Response:
        enforce_csrf(request)
        logout(request._request)
        return Response(status=204)


class MeApi(APIView):
    @extend_schema(tags=["profile"], summary="Who am I", responses={200: MeOut, **_errors(401)})
    def get(self, request: Request) -> Response:
        return Response(_me(request))

    @extend_schema(
        tags=["profile"],
        summary="Choose the UI language",
        request=MeIn,
        responses={200: MeOut, **_errors(400, 401, 403)},
    )
    def put(self, request: Request) -> Response:
        data = _valid(MeIn, request)
        services.profile_update(user=request.user, language=data["language"])
        return Response(_me(request))


class MePasswordApi(APIView):
    @extend_schema(
        tags=["profile"],
        summary="Change my own password (the current one is needed)",
        description="Wrong current passwords count as failed sign-ins: they lock out alike.",
        request=PasswordChangeIn,
        responses={204: None, **_errors(400, 401, 403, 429)},
    )
    def post(self, request: Request) -> Response:
        data = _valid(PasswordChangeIn, request)
        user = services.password_change(
            user=request.user,
            current=data["current_password"],
            new=data["new_password"],
            request=request._request,
        )
        # Other sessions of this person end; this one stays signed in.
        update_session_auth_hash(request._request, user)
        return Response(status=204)


# --- personal tokens ----------------------------------------------------------------------


class TokenListApi(APIView):
    @extend_schema(
        tags=["tokens"], summary="List my tokens", responses={200: TokenListOut, **_errors(401)}
    )
    def get(self, request: Request) -> Response:
        tokens = selectors.tokens_of(owner=request.user)
        return Response({"tokens": TokenOut(tokens, many=True, context=_personal(request)).data})

    @extend_schema(
        tags=["tokens"],
        summary="Create a token (its plaintext is in this answer only)",
        request=TokenCreateIn,
        responses={201: TokenWithSecretOut, **_errors(400, 401, 403)},
    )
    def post(self, request: Request) -> Response:
        data = _valid(TokenCreateIn, request)
        token, plaintext = services.token_create(owner=request.user, **data)
        context = _personal(request, {"plaintext": plaintext})
        return Response(TokenWithSecretOut(token, context=context).data, status=201)


class TokenDetailsApi(APIView):
    @extend_schema(
        tags=["tokens"],
        summary="My tokens with my inherited priority, ceiling and the switch",
        responses={200: TokenDetailsOut, **_errors(401)},
    )
    def get(self, request: Request) -> Response:
        resolved = resolved_for(request)
        tokens = selectors.tokens_of(owner=request.user)
        body = {
            "tokens": TokenOut(tokens, many=True, context=_personal(request)).data,
            "owner_priority": resolved.inherited.label,
            "max_priority": resolved.max_priority.label,
            "priority_enabled": bool(setting("gateway.priority_enabled")),
            "owner_allowance": as_json(resolved.allowance),
            "allowance_ceiling": None if resolved.is_admin else as_json(resolved.allowance),
        }
        return Response(body)


class TokenItemApi(APIView):
    @extend_schema(
        tags=["tokens"], summary="Delete my token", responses={204: None, **_errors(401, 403, 404)}
    )
    def delete(self, request: Request, token_id: int) -> Response:
        token = selectors.token_of(owner=request.user, token_id=token_id)
        services.token_delete(token=token, actor=request.user)
        return Response(status=204)


class TokenPriorityApi(APIView):
    @extend_schema(
        tags=["tokens"],
        summary="Set my token's priority (up to my ceiling; null inherits)",
        request=PriorityIn,
        responses={200: TokenOut, **_errors(400, 401, 403, 404)},
    )
    def put(self, request: Request, token_id: int) -> Response:
        token = selectors.token_of(owner=request.user, token_id=token_id)
        data = _valid(PriorityIn, request)
        token = services.token_priority_set(
            token=token, actor=request.user, priority=data["priority"]
        )
        return Response(TokenOut(token, context=_personal(request)).data)


class TokenAllowanceApi(APIView):
    @extend_schema(
        tags=["tokens"],
        summary="Set my token's own limits (each at most my own; null inherits mine)",
        request=AllowanceIn,
        responses={200: TokenOut, **_errors(400, 401, 403, 404)},
    )
    def put(self, request: Request, token_id: int) -> Response:
        token = selectors.token_of(owner=request.user, token_id=token_id)
        data = _valid(AllowanceIn, request)
        token = services.token_allowance_set(
            token=token, actor=request.user, allowance=data["allowance"]
        )
        return Response(TokenOut(token, context=_personal(request)).data)


class TokenRevokeApi(APIView):
    @extend_schema(
        tags=["tokens"],
        summary="Revoke my token",
        request=None,
        responses={200: TokenOut, **_errors(401, 403, 404)},
    )
    def post(self, request: Request, token_id: int) -> Response:
        token = selectors.token_of(owner=request.user, token_id=token_id)
        token = services.token_revoke(token=token, actor=request.user)
        return Response(TokenOut(token, context=_personal(request)).data)


class TokenRotateApi(APIView):
    @extend_schema(
        tags=["tokens"],
        summary="Give my token a new secret (the old one stops working)",
        request=None,
        responses={200: TokenWithSecretOut, **_errors(401, 403, 404, 409)},
    )
    def post(self, request: Request, token_id: int) -> Response:
        token = selectors.token_of(owner=request.user, token_id=token_id)
        token, plaintext = services.token_rotate(token=token, actor=request.user)
        context = _personal(request, {"plaintext": plaintext})
        return Response(TokenWithSecretOut(token, context=context).data)


# --- administration -----------------------------------------------------------------------


class AdminApi(APIView):
    permission_classes = [IsGatewayAdmin]


class AdminGroupsApi(AdminApi):
    @extend_schema(
        tags=["admin"], summary="List groups", responses={200: GroupListOut, **_errors(401, 403)}
    )
    def get(self, request: Request) -> Response:
        return Response({"groups": GroupOut(selectors.groups_all(), many=True).data})

    @extend_schema(
        tags=["admin"],
        summary="Create or update a group by name (omitted fields are kept)",
        request=GroupIn,
        responses={200: GroupOut, 201: GroupOut, **_errors(400, 401, 403, 409)},
    )
    def put(self, request: Request) -> Response:
        data = _valid(GroupIn, request)
        name = data.pop("name")
        members = data.pop("members", None)
        if "allowance" in data:
            data["allowance"] = as_json(data["allowance"])  # stored in the API's own form
        group, created = services.group_put(
            name=name, fields=data, members=members, actor=request.user
        )
        group = selectors.groups_all().get(pk=group.pk)
        return Response(GroupOut(group).data, status=201 if created else 200)


class AdminGroupItemApi(AdminApi):
    @extend_schema(
        tags=["admin"],
        summary="Delete a group",
        responses={204: None, **_errors(401, 403, 404, 409)},
    )
    def delete(self, request: Request, name: str) -> Response:
        services.group_delete(group=selectors.group_get(name=name), actor=request.user)
        return Response(status=204)


class AdminGroupRenameApi(AdminApi):
    @extend_schema(
        tags=["admin"],
        summary="Rename a group (pools that allow it follow)",
        request=GroupRenameIn,
        responses={200: GroupOut, **_errors(400, 401, 403, 404)},
    )
    def post(self, request: Request, name: str) -> Response:
        group = selectors.group_get(name=name)
        data = _valid(GroupRenameIn, request)
        group = services.group_rename(group=group, name=data["name"], actor=request.user)
        return Response(GroupOut(selectors.group_get(name=group.name)).data)


def _users_out(users: Iterable[User], *, many: bool = True) -> Any:
    users = list(users)
    data = UserOut(users, many=True, context={"resolved": resolve_many(users)}).data
    return data if many else data[0]


class AdminUsersApi(AdminApi):
    @extend_schema(
        tags=["admin"], summary="List users", responses={200: UserListOut, **_errors(401, 403)}
    )
    def get(self, request: Request) -> Response:
        return Response({"users": _users_out(selectors.users_all())})

    @extend_schema(
        tags=["admin"],
        summary="Create a local account",
        request=UserCreateIn,
        responses={201: UserOut, **_errors(400, 401, 403)},
    )
    def post(self, request: Request) -> Response:
        user = services.user_create(**_valid(UserCreateIn, request), actor=request.user)
        return Response(_users_out([selectors.user_get(user_id=user.pk)], many=False), status=201)


class AdminUserItemApi(AdminApi):
    @extend_schema(
        tags=["admin"],
        summary="Change an account (username, email, active, password)",
        request=UserUpdateIn,
        responses={200: UserOut, **_errors(400, 401, 403, 404, 409)},
    )
    def put(self, request: Request, user_id: int) -> Response:
        user = selectors.user_get(user_id=user_id)
        data = _valid(UserUpdateIn, request)
        user = services.user_update(user=user, **data, actor=request.user)
        if user.pk == request.user.pk and "password" in data:
            # Keep the administrator who changed their own password signed in.
            update_session_auth_hash(request._request, user)
        return Response(_users_out([selectors.user_get(user_id=user.pk)], many=False))

    @extend_schema(
        tags=["admin"],
        summary="Delete an account and its tokens",
        responses={204: None, **_errors(401, 403, 404, 409)},
    )
    def delete(self, request: Request, user_id: int) -> Response:
        services.user_delete(user=selectors.user_get(user_id=user_id), actor=request.user)
        return Response(status=204)


class AdminTokensApi(AdminApi):
    @extend_schema(
        tags=["admin"],
        summary="Every token with its owner, priority and who set it",
        responses={200: AdminTokenListOut, **_errors(401, 403)},
    )
    def get(self, request: Request) -> Response:
        tokens = list(selectors.tokens_all())
        data = AdminTokenOut(tokens, many=True, context=_admin_tokens(tokens)).data
        return Response({"tokens": data})


class AdminTokenPriorityApi(AdminApi):
    @extend_schema(
        tags=["admin"],
        summary="Override any token's priority (null inherits)",
        request=PriorityIn,
        responses={200: AdminTokenOut, **_errors(400, 401, 403, 404)},
    )
    def put(self, request: Request, token_id: int) -> Response:
        token = selectors.token_get(token_id=token_id)
        data = _valid(PriorityIn, request)
        services.token_priority_override(token=token, admin=request.user, priority=data["priority"])
        token = selectors.token_get(token_id=token_id)
        return Response(AdminTokenOut(token, context=_admin_tokens([token])).data)


class AdminTokenAllowanceApi(AdminApi):
    @extend_schema(
        tags=["admin"],
        summary="Set any token's limits (on another's token they stand alone; null inherits)",
        request=AllowanceIn,
        responses={200: AdminTokenOut, **_errors(400, 401, 403, 404)},
    )
    def put(self, request: Request, token_id: int) -> Response:
        token = selectors.token_get(token_id=token_id)
        data = _valid(AllowanceIn, request)
        services.token_allowance_override(
            token=token, admin=request.user, allowance=data["allowance"]
        )
        token = selectors.token_get(token_id=token_id)
        return Response(AdminTokenOut(token, context=_admin_tokens([token])).data)


class AdminTokenRevokeApi(AdminApi):
    @extend_schema(
        tags=["admin"],
        summary="Revoke any token at once (its owner sees who did; revoking again changes nothing)",
        request=None,
        responses={200: AdminTokenOut, **_errors(401, 403, 404)},
    )
    def post(self, request: Request, token_id: int) -> Response:
        token = selectors.token_get(token_id=token_id)
        services.token_revoke(token=token, actor=request.user)
        token = selectors.token_get(token_id=token_id)
        return Response(AdminTokenOut(token, context=_admin_tokens([token])).data)


class AdminTokenItemApi(AdminApi):
    @extend_schema(
        tags=["admin"],
        summary="Delete any token (it stops working at once)",
        responses={204: None, **_errors(401, 403, 404)},
    )
    def delete(self, request: Request, token_id: int) -> Response:
        services.token_delete(token=selectors.token_get(token_id=token_id), actor=request.user)
        return Response(status=204)


class AdminSettingsApi(AdminApi):
    @extend_schema(
        tags=["admin"],
        summary="Every operator setting with its current value",
        responses={200: SettingListOut, **_errors(401, 403)},
    )
    def get(self, request: Request) -> Response:
        return Response({"settings": selectors.settings_catalog()})

    @extend_schema(
        tags=["admin"],
        summary="Save settings: a JSON object of key: value, stored all or nothing",
        request={
            "application/json": {
                "type": "object",
                "additionalProperties": True,
                "example": {"gateway.priority_enabled": True, "gateway.priority_default": "high"},
            }
        },
        responses={200: SettingListOut, **_errors(400, 401, 403)},
    )
    def post(self, request: Request) -> Response:
        services.settings_save(values=request.data, actor=request.user)
        return Response({"settings": selectors.settings_catalog()})
