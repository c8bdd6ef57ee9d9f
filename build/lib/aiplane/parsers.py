"""The JSON parser of /api/v0: a body that is not plain, well-formed I-JSON is a 400, never a 500.

DRF's own JSONParser turns only ValueError into a ParseError, so a deeply nested body escapes as
RecursionError (a 500), and strings with unpaired surrogates or numbers beyond a double get
through to the views, where the database or the renderer fails on them later. This parser
refuses all of them at the door, for every view, with DRF's ParseError (code parse_error);
`decode` is the same rule without DRF, raising NotJson:

- more than MAX_DEPTH levels of arrays and objects (the stdlib decoder recurses per level);
- text that does not decode in the declared charset (UTF-8 unless the request says otherwise);
- NaN, Infinity and numbers that overflow a double (not JSON, or not I-JSON, RFC 7493);
- strings or keys holding an unpaired surrogate (I-JSON forbids them, and no UTF-8 column,
  header or response can carry one);
- bodies larger than DATA_UPLOAD_MAX_MEMORY_SIZE (413, as Django does for form bodies).
"""

from __future__ import annotations

import json
import re
from typing import Any

from django.conf import settings
from rest_framework import exceptions, parsers, renderers

from aiplane.json_numbers import finite_float, refuse_constant

# Far deeper than any body of this API (a backend's priority mapping is three levels), far
# shallower than the interpreter's recursion limit, so the refusal never depends on the stack.
MAX_DEPTH = 32

_SURROGATE = re.compile("[\ud800-\udfff]")


class BodyTooLarge(exceptions.APIException):
    status_code = 413
    default_detail = "The request body is too large."
    default_code = "request_too_large"


def _integer(text: str) -> int:
    try:
        return int(text)
    except ValueError:  # past sys.get_int_max_str_digits()
        raise ValueError(f"a number is too long ({len(text)} characters)") from None


class NotJson(ValueError):
    """Why a body is not a document this parser accepts; the DRF parser makes it a ParseError."""


def _check_text(text: str) -> None:
    if not text.isascii() and _SURROGATE.search(text):
        raise NotJson("a string holds an unpaired surrogate")


def check_document(document: Any) -> None:
    """Refuse a decoded document nested deeper than MAX_DEPTH or holding unpaired surrogates.

    Iterative, so checking a deep document cannot itself run out of stack.
    """
    pending: list[tuple[Any, int]] = [(document, 1)]
    while pending:
        value, depth = pending.pop()
        if isinstance(value, str):
            _check_text(value)
            continue
        if not isinstance(value, dict | list):
            continue
        if depth > MAX_DEPTH:
            raise NotJson(f"the body nests deeper than {MAX_DEPTH} levels")
        if isinstance(value, dict):
            for key, item in value.items():
                _check_text(key)
                pending.append((item, depth + 1))
        else:
            pending.extend((item, depth + 1) for item in value)


def decode(raw: bytes, encoding: str = "utf-8") -> Any:
    """The document in `raw`, or NotJson saying what is wrong with it (no DRF needed here)."""
    try:
        text = raw.decode(encoding)
    except (UnicodeError, LookupError) as exc:
        raise NotJson(str(exc)) from None
    try:
        document = json.loads(
            text, parse_constant=refuse_constant, parse_float=finite_float, parse_int=_integer
        )
    except RecursionError:
        raise NotJson(f"the body nests deeper than {MAX_DEPTH} levels") from None
    except ValueError as exc:  # JSONDecodeError, or one of the hooks above
        raise NotJson(str(exc)) from None
    check_document(document)
    return document


class JSONParser(parsers.BaseParser):
    """DEFAULT_PARSER_CLASSES for /api/v0: application/json, refused whole or parsed whole."""

    media_type = "application/json"
    renderer_class = renderers.JSONRenderer

    def parse(
        self,
        stream: Any,
        media_type: str | None = None,
        parser_context: dict[str, Any] | None = None,
    ) -> Any:
        encoding = parsers.get_encoding(parser_context or {})
        limit = settings.DATA_UPLOAD_MAX_MEMORY_SIZE
        raw = stream.read() if limit is None else stream.read(limit + 1)
        if limit is not None and len(raw) > limit:
            raise BodyTooLarge()
        try:
            return decode(raw, encoding)
        except NotJson as why:
            raise exceptions.ParseError(f"JSON parse error - {why}") from None
