"""The simulated engine's bytes on the wire: JSON, SSE frames, reading and sending."""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
from collections.abc import Awaitable, Callable
from typing import Any

from gateway.core.asgi import Receive, Scope, Send

Handler = Callable[[Scope, Receive, Send], Awaitable[None]]

_encode = json.JSONEncoder(separators=(",", ":")).encode

_decode = json.JSONDecoder().decode

_JSON = b"application/json"

_SSE_HEADERS = [
    (b"content-type", b"text/event-stream"),
    (b"cache-control", b"no-cache"),
]

_DONE = b"data: [DONE]\n\n"

# JSON escapes NUL as \u0000, so it marks where a token goes in a pre-serialized chunk.
_HOLE = "\x00"

_HOLE_JSON = '"\\u0000"'

# Fault bodies: a line no SSE or UTF-8 decoder accepts as anything, and JSON cut mid-object.
_GARBAGE = b"\xfe\xff not an event \xff\n\n"

_NOT_JSON = b'{"id":"chatcmpl-sim","object":"chat.completion","choices":[{"index":0,"mess'

_HTML_PAGE = (
    "<html>\r\n<head><title>{code} {phrase}</title></head>\r\n<body>\r\n"
    "<center><h1>{code} {phrase}</h1></center>\r\n<hr><center>nginx</center>\r\n"
    "</body>\r\n</html>\r\n"
)


# -- Anthropic's Messages API --


def _sse(name: str, data: dict[str, Any]) -> bytes:
    return b"event: " + name.encode() + b"\ndata: " + _encode(data).encode() + b"\n\n"


class _Disconnected(Exception):
    """The client went away while its request was being read."""


class _Drop(Exception):
    """Raised out of the app on purpose: uvicorn then drops the connection (a fault)."""


class _QuietDrops(logging.Filter):
    """Keeps uvicorn from logging a traceback for each connection the sim drops on purpose."""

    def filter(self, record: logging.LogRecord) -> bool:
        return not (record.exc_info and isinstance(record.exc_info[1], _Drop))


logging.getLogger("uvicorn.error").addFilter(_QuietDrops())


async def _send_more(send: Send, body: bytes) -> None:
    await send({"type": "http.response.body", "body": body, "more_body": True})


async def _after(delay: float, payload: bytes) -> bytes:
    if delay > 0:
        await asyncio.sleep(delay)
    return payload


async def _forever() -> None:
    """Wait until cancelled: the client leaving (the watcher) or the server stopping."""
    await asyncio.get_running_loop().create_future()


async def _drop_before_any_byte(send: Send) -> None:
    """Drop the connection without writing a byte, which no ASGI message says.

    uvicorn marks the answer started before it looks its status line up, so an unknown status
    fails inside send() with nothing written; raising then makes it close the connection (a
    plain raise before any answer would get uvicorn's own 500 instead).
    """
    with contextlib.suppress(KeyError):
        await send({"type": "http.response.start", "status": 0, "headers": []})
    raise _Drop


async def _read_body(receive: Receive) -> bytes:
    message = await receive()
    if message["type"] == "http.disconnect":
        raise _Disconnected
    body: bytes = message.get("body", b"")
    if not message.get("more_body"):
        return body
    parts = [body]
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            raise _Disconnected
        parts.append(message.get("body", b""))
        if not message.get("more_body"):
            return b"".join(parts)


async def _send_bytes(send: Send, status: int, body: bytes, kind: bytes = _JSON) -> None:
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [(b"content-type", kind), (b"content-length", b"%d" % len(body))],
        }
    )
    await send({"type": "http.response.body", "body": body})
