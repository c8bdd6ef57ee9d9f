"""The client's request: its body read and parsed, whether the client left, its affinity key."""

from __future__ import annotations

import asyncio
import zlib
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from gateway.core import wire_json
from gateway.core.asgi import GONE
from gateway.core.errors import (
    BadRequest,
)

if TYPE_CHECKING:
    from gateway.core.asgi import Receive, Scope


MAX_BODY = 32 * 1024 * 1024


# ----- small helpers ------------------------------------------------------------------------


class ClientLeft(Exception):
    """The client went away before its request was complete: there is nobody to answer."""


async def read_body(receive: Receive) -> bytes:
    chunks = []
    size = 0
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            # It left, or the server gave up on its body (and answered 408 itself).
            raise ClientLeft("the client went away while sending its request")
        chunk = message.get("body", b"")
        size += len(chunk)
        if size > MAX_BODY:
            raise BadRequest("The request body is too large.", code="request_too_large")
        chunks.append(chunk)
        if not message.get("more_body", False):
            return b"".join(chunks) if len(chunks) != 1 else chunks[0]


def _gone(scope: Scope, receive: Receive) -> asyncio.Future[Any]:
    """What resolves when the client goes away: the connection's own future (gateway.protocol),
    or a task that waits on `receive()` for the disconnect where the server has none."""
    gone: asyncio.Future[Any] | None = scope.get(GONE)
    return gone if gone is not None else asyncio.ensure_future(_disconnected(receive))


async def _disconnected(receive: Receive) -> None:
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            return


def parse_body(raw: bytes) -> dict[str, Any]:
    """A request body as a JSON object, or a 400 that says what is wrong with it."""
    try:
        body = wire_json.loads_body(raw)
    except RecursionError:
        raise BadRequest("The request body is nested too deeply.") from None
    except ValueError as err:  # UnicodeDecodeError included
        raise BadRequest(f"The request body is not valid JSON: {_reason(err)}") from None
    if not isinstance(body, dict):
        raise BadRequest("The request body must be a JSON object.")
    return body


def _reason(err: ValueError) -> str:
    text = str(err)
    return text if len(text) <= 200 else text[:199] + "…"


async def _off_loop(fn: Callable[..., Any], *args: Any) -> Any:
    return await asyncio.get_running_loop().run_in_executor(None, fn, *args)


def _affinity_key(body: dict[str, Any]) -> int | None:
    """A hash of the prompt's start: requests sharing it reuse the same engine's prefix cache."""
    messages = body.get("messages")
    if isinstance(messages, list) and messages:
        # Bounded work whatever the prompt's size or shape: 256 characters of two messages.
        head = "\x00".join(
            _text_head(m.get("content")) if isinstance(m, dict) else "" for m in messages[:2]
        )
    else:
        prompt = body.get("prompt") or body.get("input")
        if not isinstance(prompt, str):
            return None
        head = prompt[:512]
    return zlib.crc32(head.encode("utf-8", "surrogatepass"))


def _text_head(content: object) -> str:
    """The first 256 characters of a message's text: a string, or its first text part."""
    if isinstance(content, str):
        return content[:256]
    if isinstance(content, list):
        for part in content[:4]:
            if isinstance(part, dict) and isinstance(part.get("text"), str):
                return part["text"][:256]
    return ""
