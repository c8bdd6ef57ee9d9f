"""Credentials removed from whatever an engine says before it reaches a client, a record, a log
line or an administrator's page.

An engine may quote what it was sent: "Invalid API key: Bearer <the gateway's key>" in a 401,
in a stream's error event, in a header. Two parts, both pure:

- a backend's own key, in every form an engine may quote it (raw, after "Bearer ",
  percent-encoded, base64, JSON-escaped), prepared once per snapshot as `Secrets`;
- anything that looks like a secret whoever it belongs to: a bearer or basic credential, an
  OpenAI- or Anthropic-style `sk-` key, the gateway's own `gwk_` tokens, the value of an
  `x-api-key`, `api_key` or `authorization` field.

Engine *text* (error messages, probe failures, header values) gets both (`scrub`); the bytes of
a successful answer the exact key (`scrub_answer`), tested with one substring search per chunk,
so that a normal stream costs no regular expression, and both where they carry an error.
"""

from __future__ import annotations

import base64
import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import AnyStr, Final
from urllib.parse import quote

MARKER: Final = "[redacted]"
MARKER_BYTES: Final = MARKER.encode()

# A key this short is a placeholder ("EMPTY", "none", vLLM's examples), not a credential: its
# bare text is left alone (it would blank every "none" in an answer); "Bearer <it>" is not.
MIN_KEY: Final = 8

# What a secret's characters are: base64 and base64url, JWTs' dots, token68's ~ and +. Never a
# quote or a backslash, so a JSON text stays JSON when one is replaced.
_KEY_CHARS = r"[A-Za-z0-9._~+/-]"
_GENERIC = (
    # "Bearer <token>" / "Basic <credentials>", but not when the word after it is prose ("Bearer
    # token.", "Basic authentication"): a secret has a digit or a symbol inside it, or is long.
    r"(?P<scheme>\b(?:bearer|basic)\s+)"
    r"(?P<credential>(?=[A-Za-z]*[0-9_~+/-]|[A-Za-z]*\.[A-Za-z0-9])"
    rf"{_KEY_CHARS}{{5,}}[A-Za-z0-9_~+/-]=*|[A-Za-z]{{24,}}=*)"
    # The value of a header or a field that holds a key: a header line, or quoted as in JSON
    # (a JSON null or number after it is no key, and must stay JSON).
    r"|(?P<field>\b(?:x-api-key|api[-_]key|(?:proxy-)?authorization)"
    r"(?:[\"']\s*[:=]\s*[\"']|\s*[:=]\s*)(?:(?:bearer|basic)\s+)?)(?P<value>[^\s\"',;&]+)"
    # Keys by their well-known prefixes: OpenAI's and Anthropic's sk-, the gateway's own gwk_.
    r"|\bsk-[A-Za-z0-9_-]{6,}"
    r"|\bgwk_[0-9A-Fa-f]{8,}"
)
_SECRET = re.compile(_GENERIC, re.IGNORECASE)
_SECRET_BYTES = re.compile(_GENERIC.encode(), re.IGNORECASE)
# An error inside an answer's bytes (not the `"error": null` every Responses object carries).
_ERROR = re.compile(rb'"error"\s*:\s*[{"]|"(?:object|type)"\s*:\s*"error"')


@dataclass(frozen=True, slots=True)
class Secrets:
    """One backend's own key, in every form an engine may quote it; made once per snapshot.

    `texts`, longest first (a form containing another goes first), are what engine text loses;
    `needle` is what an answer's bytes are tested for, chunk by chunk, and lose.
    """

    texts: tuple[str, ...] = ()
    needle: bytes = b""

    @classmethod
    def of(cls, key: str | None) -> Secrets:
        key = (key or "").strip()
        if not key:
            return NO_SECRETS
        bearer = f"Bearer {key}"
        if len(key) < MIN_KEY:
            return cls((bearer,), bearer.encode())
        # The bare key covers "Bearer <key>" (which keeps its "Bearer "); its encodings do not.
        forms = {key, quote(key, safe=""), json.dumps(key)[1:-1], key.replace("/", "\\/")}
        for plain in (key.encode(), bearer.encode()):
            for encoded in (base64.b64encode(plain), base64.urlsafe_b64encode(plain)):
                forms.update((encoded.decode(), encoded.decode().rstrip("=")))  # padded or not
        return cls(tuple(sorted(forms, key=len, reverse=True)), key.encode())

    def __bool__(self) -> bool:
        return bool(self.texts)


NO_SECRETS: Final = Secrets()


def scrub(text: str, secrets: Secrets = NO_SECRETS) -> str:
    """`text` without the backend's own key (any form) and without anything that looks like a
    secret, each replaced by MARKER."""
    for form in secrets.texts:
        if form in text:
            text = text.replace(form, MARKER)
    if not text:
        return text
    return _SECRET.sub(_masked, text)


def scrub_answer(data: bytes, secrets: Secrets) -> bytes:
    """The bytes of an engine's 2xx answer (whole events, a whole body) as the client may get
    them: without the backend's own key, tested for with one substring search; an error the
    engine put inside (a stream's error event) loses anything secret-looking too."""
    needle = secrets.needle
    if needle and needle in data:
        data = data.replace(needle, MARKER_BYTES)
    if b'"error"' in data and _ERROR.search(data):
        data = _SECRET_BYTES.sub(_masked_bytes, data)
    return data


def scrub_header(value: bytes, secrets: Secrets) -> bytes:
    """A response header's value from the engine: its key, and any secret, removed."""
    needle = secrets.needle
    if needle and needle in value:
        value = value.replace(needle, MARKER_BYTES)
    elif value in _CLEAN_HEADERS:
        return value
    scrubbed = _SECRET_BYTES.sub(_masked_bytes, value)
    if scrubbed == value and len(_CLEAN_HEADERS) < MAX_CLEAN_HEADERS:
        _CLEAN_HEADERS.add(value)
    return scrubbed


# Header values seen without a secret: every answer brings the same few (its content type, a
# cache policy), so the expression runs once per value rather than once per request. Bounded,
# against an engine that varies them.
MAX_CLEAN_HEADERS: Final = 256
_CLEAN_HEADERS: set[bytes] = set()


def _masker(marker: AnyStr) -> Callable[[re.Match[AnyStr]], AnyStr]:
    """What a secret's match becomes, in text or in bytes: the marker, after the scheme or the
    field name that said it was a secret."""

    def masked(match: re.Match[AnyStr]) -> AnyStr:
        if match.group("credential") is not None:
            return match.group("scheme") + marker
        if match.group("value") is not None:
            return match.group("field") + marker
        return marker

    return masked


_masked = _masker(MARKER)
_masked_bytes = _masker(MARKER_BYTES)
