"""Who calls: a bearer token, Anthropic's x-api-key, or a signed-in browser's session.

The lookups are passed in (aiplane/wiring.py builds them): the data plane never asks the
database itself, and knows a caller only as what they hand back.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from gateway.core.errors import BadRequest, Forbidden, Unauthorized, echoed
from gateway.dialects.openai.dialect import Surface

CallerLookup = Callable[[str], Awaitable[Any]]

SessionLookup = Callable[[str, int | None], Awaitable[Any]]


async def caller_of(
    headers: dict[bytes, bytes],
    surface: Surface | None = None,
    *,
    caller_for_token: CallerLookup,
    caller_for_session: SessionLookup | None,
) -> Any:
    """The caller of a request, by its headers; a 401 that says what to send when none."""
    auth = headers.get(b"authorization")
    key = surface.api_key(headers) if auth is None and surface is not None else None
    if key is not None:
        # Anthropic's clients send the key as x-api-key (Claude Code's ANTHROPIC_API_KEY).
        caller = await caller_for_token(key.decode("latin-1").strip())
        if caller is None:
            raise Unauthorized("The API token is invalid, expired or revoked.")
        return caller
    if auth is not None:
        scheme, _, token = auth.decode("latin-1").partition(" ")
        if scheme.lower() != "bearer" or not token.strip():
            raise Unauthorized("Send your API token as 'Authorization: Bearer <token>'.")
        caller = await caller_for_token(token.strip())
        if caller is None:
            raise Unauthorized("The API token is invalid, expired or revoked.")
        return caller
    # The playground: a signed-in browser. The custom header cannot be sent cross-site
    # without a CORS preflight (which /v1 never grants), so it doubles as CSRF protection.
    if caller_for_session is not None and headers.get(b"x-aiplane-session") == b"1":
        caller = await _session_caller(headers, caller_for_session)
        if caller is not None:
            return caller
    raise Unauthorized("Missing API token: send 'Authorization: Bearer <token>'.")


async def _session_caller(
    headers: dict[bytes, bytes], caller_for_session: SessionLookup
) -> Any | None:
    session = _cookie(headers.get(b"cookie", b""), "sessionid")
    if not session:
        return None
    # The person may run as one of their own tokens (its class and allowlist).
    as_token = _token_id(headers.get(b"x-aiplane-token"))
    caller = await caller_for_session(session, as_token)
    if caller is None and as_token is not None:
        raise Unauthorized(
            "That token is not one of yours, or it is revoked or expired.",
            code="invalid_token_choice",
        )
    return caller


def check_allowlist(caller: Any, model: str) -> None:
    """A token limited to some models may use those only."""
    if caller.model_allowlist is not None and model not in caller.model_allowlist:
        raise Forbidden(f"This token may not use the model '{echoed(model)}'.", param="model")


def _token_id(header: bytes | None) -> int | None:
    """The X-AIplane-Token header: the id of one of the signed-in person's tokens."""
    if header is None:
        return None
    text = header.decode("latin-1").strip()
    if not (text.isascii() and text.isdigit()) or len(text) > 18:
        raise BadRequest("X-AIplane-Token must be the id of one of your tokens.")
    return int(text)


def _cookie(header: bytes, name: str) -> str | None:
    for part in header.decode("latin-1").split(";"):
        key, _, value = part.strip().partition("=")
        if key == name:
            return value
    return None
