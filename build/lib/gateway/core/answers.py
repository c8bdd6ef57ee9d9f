"""Engines' error answers, read in whichever shape they come, as the gateway's own errors.

Engines answer errors in at least three shapes (FACTS.md): OpenAI's and newer vLLM's nested
`{"error": {"message", "type", "param", "code"}}`, SGLang's and older vLLM's flat
`{"object": "error", "message", "type", "param", "code": <int>}`, and FastAPI's
`{"detail": ...}`; proxies in front of them answer HTML. Whatever the shape, the client gets our
envelope with the engine's message kept, and can tell its own faults (4xx) from the backend's
(502/503/504). The message is scrubbed first (gateway/core/redaction.py): an engine quoting the
gateway's key back ("Invalid API key: Bearer ...") must not hand it to the caller.
"""

from __future__ import annotations

import json
import re
from email.utils import parsedate_to_datetime
from typing import Any

from gateway.core.errors import (
    BackendAuthFailed,
    BackendOverloaded,
    EngineRefusal,
    GatewayError,
    UpstreamError,
    UpstreamTimeout,
)
from gateway.core.redaction import NO_SECRETS, Secrets, scrub

MAX_ERROR_BODY = 64 * 1024  # what is read of an error answer; the rest is not worth waiting for
MAX_MESSAGE = 500  # characters of the engine's message passed on
RETRY_STATUS = frozenset({502, 503, 504})  # worth another replica, before any byte was sent
DEFAULT_RETRY_AFTER = 5.0  # for an engine's 503 that does not say when
_CODE = re.compile(r"[a-z][a-z0-9_]{0,63}")
_TAGS = re.compile(r"<(script|style)\b.*?</\1\s*>|<[^>]*>", re.IGNORECASE | re.DOTALL)
_TYPE_BY_STATUS = {401: "authentication_error", 403: "permission_error", 429: "rate_limit_error"}


def engine_message(
    body: bytes, content_type: str = "", secrets: Secrets = NO_SECRETS
) -> tuple[str, str | None, str | None]:
    """(message, type, code) of an engine's error answer, the text itself when not JSON, without
    the backend's key (`secrets`) or anything else that looks like a credential."""
    data: Any = None
    if body[:1] in (b"{", b"[") or "json" in content_type:
        try:
            data = json.loads(body)
        except (ValueError, RecursionError):
            data = None
    if isinstance(data, dict):
        inner = data.get("error")
        source = inner if isinstance(inner, dict) else data
        message = source.get("message")
        if message is None and isinstance(inner, str):
            message = inner
        if message is None:
            message = data.get("detail")
        if message is not None:
            if not isinstance(message, str):
                message = json.dumps(message, ensure_ascii=False)
            return _said(message, secrets), _str(source.get("type")), _code(source.get("code"))
    text = body.decode("utf-8", "replace")
    if "html" in content_type or text.lstrip()[:1] == "<":
        text = _TAGS.sub(" ", text)
    return _said(text, secrets), None, None


def error_for_status(
    status: int,
    body: bytes,
    *,
    content_type: str,
    retry_after: str | None,
    backend: str,
    secrets: Secrets = NO_SECRETS,
) -> GatewayError:
    """The client's error for an engine's non-2xx answer (see the module docstring); `secrets`
    are the backend's own key, which its message loses.

    502/503/504 are also worth another replica; this is what the client gets once none is left.
    """
    message, type_, code = engine_message(body, content_type, secrets)
    said = f": {message}" if message else ""
    if status in (401, 403):
        # Never the client's 401: its own token was fine, the gateway's key for the engine not.
        return BackendAuthFailed(
            f"The model server {backend} refused the gateway's credentials ({status}){said}"
        )
    if status == 503:
        return BackendOverloaded(
            f"The model server {backend} is overloaded (503){said}",
            retry_after=_seconds(retry_after),
        )
    if status == 504:
        return UpstreamTimeout(f"The model server {backend} timed out (504){said}")
    if 400 <= status < 500:
        return EngineRefusal(
            status,
            message or f"The model server {backend} refused the request ({status}).",
            type_=type_ or _TYPE_BY_STATUS.get(status, "invalid_request_error"),
            code=code or "upstream_refused",
            param=None,
        )
    if 300 <= status < 400:
        return UpstreamError(
            f"The model server {backend} answered with a redirect ({status}); check its base URL."
        )
    return UpstreamError(f"The model server {backend} failed ({status}){said}")


def _said(text: str, secrets: Secrets) -> str:
    """The engine's text as the client may read it: scrubbed whole (a cut could leave half a
    key that no longer looks like one), then on one line and trimmed."""
    text = " ".join(scrub(text, secrets).split())
    return text if len(text) <= MAX_MESSAGE else text[: MAX_MESSAGE - 1] + "…"


def _str(value: object) -> str | None:
    return value if isinstance(value, str) and value else None


def _code(value: object) -> str | None:
    # SGLang's code is the HTTP status (an int): not a code a client could switch on.
    return value if isinstance(value, str) and _CODE.fullmatch(value) else None


def _seconds(retry_after: str | None) -> float:
    """Retry-After as seconds (it may be a number or an HTTP date)."""
    if not retry_after:
        return DEFAULT_RETRY_AFTER
    text = retry_after.strip()
    if text.isdigit():
        return max(1.0, min(float(text), 3600.0))
    try:
        from datetime import UTC, datetime

        when = parsedate_to_datetime(text)
        return max(1.0, min((when - datetime.now(UTC)).total_seconds(), 3600.0))
    except (TypeError, ValueError):
        return DEFAULT_RETRY_AFTER


# What an error inside a stream says its status is, when it says it by name.
_STATUS_BY_NAME = {
    "service_unavailable": 503, "overloaded_error": 503, "bad_request": 400,
    "badrequesterror": 400, "invalid_request_error": 400, "authentication_error": 401,
    "permission_error": 403, "not_found_error": 404, "rate_limit_error": 429,
}  # fmt: skip


def _status_of(error: dict[str, Any]) -> int:
    code = error.get("code")
    if isinstance(code, int) and not isinstance(code, bool) and 400 <= code <= 599:
        return code
    name = error.get("type")
    if isinstance(name, str):
        return _STATUS_BY_NAME.get(name.lower(), 502)
    return 502


ERROR_TYPES: dict[int, str] = {
    400: "invalid_request_error",
    401: "authentication_error",
    403: "permission_error",
    404: "not_found_error",
    413: "request_too_large",
    429: "rate_limit_error",
    500: "api_error",
    502: "api_error",
    503: "overloaded_error",
    # Anthropic's own 504 type (its errors page and the SDK's GatewayTimeoutErrorObject).
    504: "timeout_error",
    529: "overloaded_error",
}


def error_type(status: int) -> str:
    """Anthropic's error type for any status: its table, else (as its errors page says for
    unlisted 4xx) invalid_request_error for a 4xx, else api_error."""
    found = ERROR_TYPES.get(status)
    if found is not None:
        return found
    return "invalid_request_error" if 400 <= status < 500 else "api_error"
