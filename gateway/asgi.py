"""The /v1 data plane: a raw ASGI app (no Django request cycle) in front of the model servers.

The path of one request: bearer token -> caller context (cached), body and hints -> class,
`route_or_wait` for a slot, then at the final dispatch boundary rewrite the body for the backend
actually chosen and stream its answer back chunk by chunk. The slot is released exactly once.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import time
import zlib
from collections.abc import Awaitable, Callable
from typing import Any

import aiohttp

from gateway import activity
from gateway.admission import (
    CLASS_NAMES,
    MEDIUM,
    Acquired,
    QueueCancelled,
    QueueFull,
    QueueTimeout,
    RouteGone,
    Waiter,
    route_or_wait,
)
from gateway.errors import (
    BadRequest,
    CapacityTimeout,
    Forbidden,
    GatewayError,
    InternalError,
    MethodNotAllowed,
    NotFound,
    TooManyRequests,
    Unauthorized,
    Unavailable,
    UpstreamError,
)
from gateway.hints import apply_hint, parse_hints
from gateway.mapping import apply_mapping
from gateway.registry import KIND_OF_PATH
from gateway.runtime import Runtime

log = logging.getLogger("aiplane.gateway")

Scope = dict[str, Any]
Receive = Callable[[], Awaitable[dict[str, Any]]]
Send = Callable[[dict[str, Any]], Awaitable[None]]

MAX_BODY = 32 * 1024 * 1024
MAX_RETRIES = 2  # another replica, at most twice, for failures before any byte was sent
RETRYABLE_STATUS = frozenset({502, 503, 504})
CLASS_BYTES = tuple(name.encode() for name in CLASS_NAMES)
# Bodies this big are parsed and serialized in a worker thread: tens of milliseconds of JSON on
# the event loop would stall every other request.
LARGE_BODY = 1 << 20
STALLED_CLIENT_SECS = 120.0  # a stream send blocked this long means the client stopped reading
REFUSALS = frozenset({400, 401, 403, 404, 405})  # turned away before admission
PASSED_RESPONSE_HEADERS = frozenset(
    {"content-type", "content-encoding", "cache-control", "retry-after"}
)

CallerLookup = Callable[[str], Awaitable[Any]]
SessionLookup = Callable[[str], Awaitable[Any]]


class _Retryable(Exception):
    """The chosen backend failed before sending a byte; another replica may take the request."""


class GatewayApp:
    """ASGI callable for everything under /v1/."""

    def __init__(
        self,
        runtime: Runtime,
        *,
        caller_for_token: CallerLookup,
        caller_for_session: SessionLookup | None = None,
        recorder: activity.Recorder | None = None,
    ) -> None:
        self.runtime = runtime
        self.caller_for_token = caller_for_token
        self.caller_for_session = caller_for_session
        self.recorder = recorder or activity.Recorder()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            return
        path = scope["path"]
        try:
            if path == "/v1/models":
                if scope["method"] != "GET":
                    raise MethodNotAllowed("Use GET for /v1/models.")
                await self._models(scope, send)
            elif path in KIND_OF_PATH:
                if scope["method"] != "POST":
                    raise MethodNotAllowed(f"Use POST for {path}.")
                await self._proxy(scope, receive, send, KIND_OF_PATH[path])
            else:
                raise NotFound(f"Unknown path {path}.")
        except GatewayError as err:
            await send_error(send, err)
        except Exception:
            # Whatever else went wrong (the database down on a cache miss, a bug): the client
            # still gets the envelope, unless its answer had already started.
            log.exception("unexpected error on %s", path)
            with contextlib.suppress(Exception):
                await send_error(send, InternalError("The gateway failed; try again."))

    # ----- identity ------------------------------------------------------------------------

    async def _caller(self, headers: dict[bytes, bytes]) -> Any:
        auth = headers.get(b"authorization")
        if auth is not None:
            scheme, _, token = auth.decode("latin-1").partition(" ")
            if scheme.lower() != "bearer" or not token.strip():
                raise Unauthorized("Send your API token as 'Authorization: Bearer <token>'.")
            caller = await self.caller_for_token(token.strip())
            if caller is None:
                raise Unauthorized("The API token is invalid, expired or revoked.")
            return caller
        # The playground: a signed-in browser. The custom header cannot be sent cross-site
        # without a CORS preflight (which /v1 never grants), so it doubles as CSRF protection.
        if self.caller_for_session is not None and headers.get(b"x-aiplane-session") == b"1":
            key = _cookie(headers.get(b"cookie", b""), "sessionid")
            if key:
                caller = await self.caller_for_session(key)
                if caller is not None:
                    return caller
        raise Unauthorized("Missing API token: send 'Authorization: Bearer <token>'.")

    # ----- /v1/models ----------------------------------------------------------------------

    async def _models(self, scope: Scope, send: Send) -> None:
        rt = self.runtime
        await rt.ensure_started()
        caller = await self._caller(dict(scope["headers"]))
        names = rt.snapshot.models_for(caller.groups, caller.model_allowlist)
        created = int(rt.started_at)
        data = [
            {"id": n, "object": "model", "created": created, "owned_by": "aiplane"} for n in names
        ]
        await send_json(send, 200, {"object": "list", "data": data})

    # ----- completions and embeddings ------------------------------------------------------

    async def _proxy(self, scope: Scope, receive: Receive, send: Send, kind: str) -> None:
        rt = self.runtime
        if not rt.started:
            await rt.ensure_started()
        # Every request leaves a record, refused ones included (who tried what, and why not).
        record = activity.Entry(
            started=time.time(),
            token_id=None,
            token_name=None,
            user_id=None,
            username="",
            model="",
            cls=MEDIUM,
            path=scope["path"],
        )
        try:
            await self._serve(scope, receive, send, kind, record)
        except GatewayError as err:
            record.status = err.status
            if not record.outcome:
                record.outcome = "refused" if err.status in REFUSALS else "error"
            raise
        except Exception:
            record.status, record.outcome = 500, "error"
            raise
        finally:
            record.duration_ms = (time.time() - record.started) * 1000
            self.recorder.add(record)

    async def _serve(
        self, scope: Scope, receive: Receive, send: Send, kind: str, record: activity.Entry
    ) -> None:
        rt = self.runtime
        headers = dict(scope["headers"])
        caller = await self._caller(headers)
        record.token_id, record.token_name = caller.token_id, caller.token_name
        record.user_id, record.username = caller.user_id, caller.username
        raw = await read_body(receive)
        try:
            body = json.loads(raw) if len(raw) < LARGE_BODY else await _off_loop(json.loads, raw)
        except ValueError:
            raise BadRequest("The request body is not valid JSON.") from None
        if not isinstance(body, dict):
            raise BadRequest("The request body must be a JSON object.")
        model = body.get("model")
        if not isinstance(model, str) or not model:
            raise BadRequest("'model' is required and must be a string.", param="model")
        record.model = model[:200]
        hint = parse_hints(headers, body)
        if hint is not None:
            record.hint = hint.describe()
        settings = rt.settings
        if settings.priority_enabled:
            cls, offset = apply_hint(int(caller.priority), hint)
        else:
            cls, offset = MEDIUM, 0
        record.cls = cls
        if caller.model_allowlist is not None and model not in caller.model_allowlist:
            raise Forbidden(f"This token may not use the model '{model}'.", param="model")
        route = rt.snapshot.resolve(kind, model, caller.groups)

        queue = rt.queue
        affinity = _affinity_key(body) if route.strategy == "prefix_affinity" else None
        # wspt's cost: the whole body's size (about 4 bytes a token), so no field escapes it.
        cost = max(1, len(raw) // 4) if queue.config.name == "wspt" else 1
        w = queue.waiter(
            route,
            cls=cls,
            offset=offset,
            budget=settings.upstream_wait_secs,
            affinity_key=affinity,
            cost=cost,
            owner=caller.username,
            tag=record,
        )
        # Resolves when the client goes away; raced against admission and the upstream answer.
        gone = asyncio.ensure_future(_disconnected(receive))
        try:
            large = len(raw) >= LARGE_BODY
            await self._admit_and_forward(scope, send, body, w, gone, record, large)
        finally:
            gone.cancel()

    async def _admit_and_forward(
        self,
        scope: Scope,
        send: Send,
        body: dict[str, Any],
        w: Waiter,
        gone: asyncio.Future[Any],
        record: activity.Entry,
        large: bool = False,
    ) -> None:
        rt = self.runtime
        queue = rt.queue
        retries = 0
        while True:
            try:
                acquired = await route_or_wait(queue, w, gone=gone)
            except QueueTimeout:
                if retries:
                    # Its budget ran out while a backend failed it: that failure is the answer.
                    record.outcome = "upstream_error"
                    raise UpstreamError(
                        "The model server failed before answering and no other was free."
                    ) from None
                record.outcome = "expired"
                record.queue_ms = (queue.clock() - w.arrival) * 1000
                wait = rt.settings.upstream_wait_secs
                raise CapacityTimeout(
                    f"No capacity for '{record.model}' within {wait:.0f} seconds; try again later.",
                    retry_after=max(1.0, min(wait, 30.0)),
                ) from None
            except QueueCancelled:
                record.outcome = "cancelled"
                record.status = 499  # the client closed the request; nothing is sent
                record.queue_ms = (queue.clock() - w.arrival) * 1000
                return
            except QueueFull as err:
                record.outcome = "rejected"
                raise TooManyRequests(
                    f"The gateway queue is full: {err.reason}.", retry_after=err.retry_after
                ) from None
            except RouteGone:
                record.outcome = "error"
                record.queue_ms = (queue.clock() - w.arrival) * 1000
                raise Unavailable(
                    f"The model '{record.model}' is no longer available to you.", retry_after=5
                ) from None
            if not record.outcome:
                record.outcome = "immediate" if w.waited == 0 else "waited"
            record.queue_ms = w.waited * 1000
            record.score = queue.score(w)
            try:
                await self._forward(scope, send, body, acquired, gone, record, large)
                return
            except _Retryable as why:
                acquired.release()
                failed = acquired.backend
                retries += 1
                w = queue.retry_waiter(w, failed)
                # The topology may have changed since it arrived: retry on today's route.
                w.route = rt.snapshot.route_for_key(w.route.key) or w.route
                if retries > MAX_RETRIES or not w.route.usable_targets(w.excluded):
                    record.backend = failed
                    record.outcome = "upstream_error"
                    raise UpstreamError(
                        f"The model server failed before answering: {why}."
                    ) from None
                log.info("retrying %s on another replica after %s failed", record.model, failed)

    async def _forward(
        self,
        scope: Scope,
        send: Send,
        client_body: dict[str, Any],
        acquired: Acquired,
        gone: asyncio.Future[Any],
        record: activity.Entry,
        large: bool = False,
    ) -> None:
        """Send to the chosen backend and stream its answer back; the slot is freed on exit."""
        rt = self.runtime
        up = rt.snapshot.upstreams.get(acquired.backend)
        if up is None or rt.session is None:
            acquired.release()
            raise _Retryable(f"backend {acquired.backend} was removed")
        record.backend = up.name
        # The final dispatch boundary: a fresh copy, so a retry never inherits another
        # backend's model id or priority field.
        body = dict(client_body)
        body["model"] = acquired.model
        try:
            apply_mapping(body, up.mapping, acquired.waiter.cls)
            payload = _dump(body) if not large else await _off_loop(_dump, body)
        except BaseException:
            acquired.release()  # cancelled (or failed) before the request left: free the slot
            raise

        task = asyncio.current_task()
        if task is None:  # pragma: no cover - ASGI servers always run us in a task
            raise RuntimeError("the gateway must run inside an asyncio task")
        state = {"active": True, "client_gone": False}

        def on_gone(_: object) -> None:
            if state["active"]:
                state["client_gone"] = True
                task.cancel()

        if gone.done():
            acquired.release()
            record.outcome, record.status = "cancelled", 499
            return
        gone.add_done_callback(on_gone)
        resp: aiohttp.ClientResponse | None = None
        started = False
        try:
            try:
                resp = await rt.session.post(
                    up.url(scope["path"]), data=payload, headers=up.headers, allow_redirects=False
                )
            except (TimeoutError, aiohttp.ClientConnectionError, OSError) as err:
                raise _Retryable(f"{up.name}: {type(err).__name__}") from None
            if resp.status in RETRYABLE_STATUS:
                raise _Retryable(f"{up.name} answered {resp.status}")
            out_headers = [
                (k.lower().encode(), v.encode())
                for k, v in resp.headers.items()
                if k.lower() in PASSED_RESPONSE_HEADERS
            ]
            out_headers.append((b"x-aiplane-backend", up.name.encode()))
            out_headers.append((b"x-aiplane-queue-ms", f"{record.queue_ms:.1f}".encode()))
            out_headers.append((b"x-aiplane-class", CLASS_BYTES[acquired.waiter.cls]))
            record.status = resp.status
            length = resp.content_length
            if length is not None and length <= 1 << 20:
                data = await resp.read()
                record.first_byte_ms = (time.time() - record.started) * 1000
                out_headers.append((b"content-length", str(len(data)).encode()))
                started = True
                await send(
                    {"type": "http.response.start", "status": resp.status, "headers": out_headers}
                )
                await send({"type": "http.response.body", "body": data})
            else:
                # Wait for the first bytes before answering: a backend that dies before sending
                # any can still be retried elsewhere, and status line and first token leave
                # together.
                chunks = resp.content.iter_any().__aiter__()
                first = await anext(chunks, b"")
                record.first_byte_ms = (time.time() - record.started) * 1000
                started = True
                await send(
                    {"type": "http.response.start", "status": resp.status, "headers": out_headers}
                )
                if first:
                    # A client that stops reading would hold the slot for as long as its socket
                    # stays open: a send blocked for STALLED_CLIENT_SECS counts as leaving.
                    loop = asyncio.get_running_loop()
                    blocked = [0.0]  # when the send in progress began (loop time), 0 if none

                    def watch() -> None:
                        if not state["active"]:
                            return
                        if blocked[0] and loop.time() - blocked[0] >= STALLED_CLIENT_SECS:
                            on_gone(None)
                            return
                        watchdog[0] = loop.call_later(STALLED_CLIENT_SECS, watch)

                    watchdog = [loop.call_later(STALLED_CLIENT_SECS, watch)]
                    try:
                        blocked[0] = loop.time()
                        await send({"type": "http.response.body", "body": first, "more_body": True})
                        async for chunk in chunks:
                            blocked[0] = loop.time()
                            await send(
                                {"type": "http.response.body", "body": chunk, "more_body": True}
                            )
                            blocked[0] = 0.0
                    finally:
                        watchdog[0].cancel()
                await send({"type": "http.response.body", "body": b""})
            state["active"] = False
        except asyncio.CancelledError:
            state["active"] = False
            if not state["client_gone"]:
                raise
            task.uncancel()
            record.outcome = "cancelled" if not started else "client_closed"
            if not started:
                record.status = 499
        except (TimeoutError, aiohttp.ClientError) as err:
            state["active"] = False
            if not started:
                raise _Retryable(f"{up.name}: {type(err).__name__}") from None
            # Mid-stream failure: the status line is gone. An event stream gets a final error
            # event (as vLLM sends one) instead of [DONE], so the client knows it was cut short.
            log.warning("upstream %s failed mid-response: %r", up.name, err)
            record.outcome = "upstream_error"
            tail = b""
            if resp is not None and resp.content_type == "text/event-stream":
                failure = UpstreamError(f"The model server {up.name} failed mid-stream.")
                tail = b"data: " + failure.body() + b"\n\n"
            with contextlib.suppress(Exception):
                await send({"type": "http.response.body", "body": tail})
        finally:
            state["active"] = False
            gone.remove_done_callback(on_gone)
            if resp is not None:
                # close() drops the connection when the body was not fully read, which is how
                # the engine learns that the client left mid-stream.
                resp.close()
            acquired.release()


# ----- small helpers ------------------------------------------------------------------------


async def read_body(receive: Receive) -> bytes:
    chunks = []
    size = 0
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            raise BadRequest("The client disconnected while sending the request.")
        chunk = message.get("body", b"")
        size += len(chunk)
        if size > MAX_BODY:
            raise BadRequest("The request body is too large.", code="request_too_large")
        chunks.append(chunk)
        if not message.get("more_body", False):
            return b"".join(chunks) if len(chunks) != 1 else chunks[0]


async def _disconnected(receive: Receive) -> None:
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            return


async def send_json(send: Send, status: int, payload: object) -> None:
    body = json.dumps(payload).encode()
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [
                (b"content-type", b"application/json"),
                (b"content-length", str(len(body)).encode()),
            ],
        }
    )
    await send({"type": "http.response.body", "body": body})


async def send_error(send: Send, err: GatewayError) -> None:
    body = err.body()
    headers = [*err.headers(), (b"content-length", str(len(body)).encode())]
    await send({"type": "http.response.start", "status": err.status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


def _dump(body: dict[str, Any]) -> bytes:
    return json.dumps(body, separators=(",", ":")).encode()


async def _off_loop(fn: Callable[..., Any], *args: Any) -> Any:
    return await asyncio.get_running_loop().run_in_executor(None, fn, *args)


def _cookie(header: bytes, name: str) -> str | None:
    for part in header.decode("latin-1").split(";"):
        key, _, value = part.strip().partition("=")
        if key == name:
            return value
    return None


def _affinity_key(body: dict[str, Any]) -> int | None:
    """A hash of the prompt's start: requests sharing it reuse the same engine's prefix cache."""
    messages = body.get("messages")
    if isinstance(messages, list) and messages:
        # Bounded work whatever the prompt's size: the first 256 characters of two messages.
        head = "\x00".join(
            str(m.get("content", ""))[:256] if isinstance(m, dict) else "" for m in messages[:2]
        )
    else:
        prompt = body.get("prompt") or body.get("input")
        if not isinstance(prompt, str):
            return None
        head = prompt[:512]
    return zlib.crc32(head.encode())
