"""The ceiling of our stack (FACTS.md): a raw ASGI app that only reads the body, posts it with
aiohttp to the engine and streams the answer back. No identity, queue, rewrite or records.

    AIPLANE_BARE_UPSTREAM=http://127.0.0.1:9100 uvicorn bench.bare_proxy:app --loop uvloop ...

The benchmark runs it beside the gateway in the same run: what the gateway adds beyond this is
the cost of being a gateway.
"""

from __future__ import annotations

import os
from typing import Any

import aiohttp

UPSTREAM = os.environ.get("AIPLANE_BARE_UPSTREAM", "http://127.0.0.1:9100")
_session: aiohttp.ClientSession | None = None


async def app(scope: dict[str, Any], receive: Any, send: Any) -> None:
    global _session
    if scope["type"] == "lifespan":
        while True:
            message = await receive()
            if message["type"] == "lifespan.startup":
                _session = aiohttp.ClientSession(
                    connector=aiohttp.TCPConnector(limit=0), auto_decompress=False
                )
                await send({"type": "lifespan.startup.complete"})
            elif message["type"] == "lifespan.shutdown":
                if _session is not None:
                    await _session.close()
                await send({"type": "lifespan.shutdown.complete"})
                return
    if scope["type"] != "http" or _session is None:
        return
    body = b""
    while True:
        message = await receive()
        body += message.get("body", b"")
        if not message.get("more_body"):
            break
    async with _session.post(
        UPSTREAM + scope["path"], data=body, headers={"content-type": "application/json"}
    ) as resp:
        headers = [(b"content-type", resp.headers.get("content-type", "").encode())]
        await send({"type": "http.response.start", "status": resp.status, "headers": headers})
        async for chunk in resp.content.iter_any():
            await send({"type": "http.response.body", "body": chunk, "more_body": True})
        await send({"type": "http.response.body", "body": b""})
