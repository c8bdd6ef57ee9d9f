"""The /v1 data plane: a raw ASGI app (no Django request cycle) in front of the model servers.

The path of one request: bearer token -> caller context (cached), body and hints -> class,
`route_or_wait` for a slot, then the relay (gateway/dataplane/relay.py) rewrites the body for the
backend actually chosen at the final dispatch boundary and streams its answer back chunk by chunk.
The slot is released exactly once, by the relay.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import json
import logging
import time
from collections.abc import Awaitable, Callable
from typing import Any

from gateway.admission.types import (
    QueueCancelled,
    QueueFull,
    QueueTimeout,
    Route,
    RouteGone,
    Waiter,
)
from gateway.admission.wait import route_or_wait
from gateway.allowances import counters
from gateway.allowances.counters import (
    AllowanceExceeded,
    Demand,
    Ticket,
    estimate,
    rate_limit_headers,
)
from gateway.core.asgi import Receive, Scope, Send
from gateway.core.classes import MEDIUM
from gateway.core.errors import (
    BadRequest,
    CapacityTimeout,
    Forbidden,
    GatewayError,
    InternalError,
    MethodNotAllowed,
    NoHealthyBackend,
    NotFound,
    TooManyRequests,
    Unauthorized,
    Unavailable,
    UpstreamError,
    echoed,
)
from gateway.core.outcomes import Outcome
from gateway.dataplane import count_tokens
from gateway.dataplane.body import (
    ClientLeft,
    _affinity_key,
    _gone,
    _off_loop,
    parse_body,
    read_body,
)
from gateway.dataplane.hints import apply_hint, parse_hints
from gateway.dataplane.identity import _cookie, _token_id
from gateway.dataplane.relay import LARGE_BODY, DropConnection, Relay, Retryable
from gateway.dialects import media_urls
from gateway.dialects.anthropic import count_tokens as anthropic_count_tokens
from gateway.dialects.anthropic import errors, validate
from gateway.dialects.anthropic.dialect import MESSAGES
from gateway.dialects.openai.dialect import Surface
from gateway.dialects.paths import SURFACES
from gateway.dialects.stored_state import RequestState, owner_of
from gateway.observability import records
from gateway.runtime.runtime import Runtime

log = logging.getLogger("aiplane.gateway")

MAX_RETRIES = 2  # another replica, at most twice, for failures before any byte was sent

COUNT_TOKENS = count_tokens.PATH

CallerLookup = Callable[[str], Awaitable[Any]]

SessionLookup = Callable[[str, int | None], Awaitable[Any]]


Handler = Callable[[Scope, Receive, Send, Surface, records.Entry], Awaitable[None]]


class GatewayApp:
    """ASGI callable for everything under /v1/."""

    def __init__(
        self,
        runtime: Runtime,
        *,
        caller_for_token: CallerLookup,
        caller_for_session: SessionLookup | None = None,
        recorder: records.Recorder | None = None,
    ) -> None:
        self.runtime = runtime
        self.caller_for_token = caller_for_token
        self.caller_for_session = caller_for_session
        self.recorder = recorder or records.Recorder()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            return
        path = scope["path"]
        surface = SURFACES.get(path)
        try:
            if path == "/v1/models":
                if scope["method"] != "GET":
                    raise MethodNotAllowed("Use GET for /v1/models.")
                await self._models(scope, send)
            elif surface is not None:
                if scope["method"] != "POST":
                    raise MethodNotAllowed(f"Use POST for {path}.")
                await self._proxy(scope, receive, send, surface, self._serve)
            elif path == COUNT_TOKENS:
                surface = MESSAGES
                if scope["method"] != "POST":
                    raise MethodNotAllowed(f"Use POST for {path}.")
                await self._proxy(scope, receive, send, surface, self._count_tokens)
            else:
                raise NotFound(f"Unknown path {path}.")
        except GatewayError as err:
            await send_error(send, err, surface)
        except DropConnection:
            raise  # the server drops the connection: the answer must look broken
        except Exception:
            # Whatever else went wrong (the database down on a cache miss, a bug): the client
            # still gets the envelope, unless its answer had already started.
            log.exception("unexpected error on %s", path)
            with contextlib.suppress(Exception):
                await send_error(send, InternalError("The gateway failed; try again."), surface)

    # ----- identity ------------------------------------------------------------------------

    async def _caller(self, headers: dict[bytes, bytes], surface: Surface | None = None) -> Any:
        auth = headers.get(b"authorization")
        key = surface.api_key(headers) if auth is None and surface is not None else None
        if key is not None:
            # Anthropic's clients send the key as x-api-key (Claude Code's ANTHROPIC_API_KEY).
            caller = await self.caller_for_token(key.decode("latin-1").strip())
            if caller is None:
                raise Unauthorized("The API token is invalid, expired or revoked.")
            return caller
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
            session = _cookie(headers.get(b"cookie", b""), "sessionid")
            if session:
                # The person may run as one of their own tokens (its class and allowlist).
                as_token = _token_id(headers.get(b"x-aiplane-token"))
                caller = await self.caller_for_session(session, as_token)
                if caller is not None:
                    return caller
                if as_token is not None:
                    raise Unauthorized(
                        "That token is not one of yours, or it is revoked or expired.",
                        code="invalid_token_choice",
                    )
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

    async def _proxy(
        self, scope: Scope, receive: Receive, send: Send, surface: Surface, serve: Handler
    ) -> None:
        """Run `serve` for one request and leave its activity record, whatever happens."""
        rt = self.runtime
        if not rt.started:
            await rt.ensure_started()
        # Every request leaves a record, refused ones included (who tried what, and why not).
        record = records.Entry(
            started=time.time(),
            token_id=None,
            token_name=None,
            user_id=None,
            username="",
            model="",
            cls=MEDIUM,
            path=scope["path"],
            surface=surface.name,
        )
        try:
            await serve(scope, receive, send, surface, record)
        except GatewayError as err:
            # The one place a refusal decides the outcome: each error names its own.
            record.status = err.status
            record.error = err.message
            if err.outcome is not None:
                record.outcome = err.outcome
            raise
        except DropConnection:
            raise  # the relay recorded how the answer ended
        except ClientLeft as gone:
            record.outcome, record.status, record.error = Outcome.CANCELLED, 499, str(gone)
        except Exception:
            record.status, record.outcome = 500, Outcome.ERROR
            raise
        finally:
            record.duration_ms = (time.time() - record.started) * 1000
            record.outcome = str(record.outcome)  # a plain str: the record's fast path
            if record.input_tokens is not None:
                rt.metrics.count_tokens(record.cls, record.model, record)
            self.recorder.add(record)

    async def _serve(
        self, scope: Scope, receive: Receive, send: Send, surface: Surface, record: records.Entry
    ) -> None:
        rt = self.runtime
        headers = dict(scope["headers"])
        caller = await self._caller(headers, surface)
        record.token_id, record.token_name = caller.token_id, caller.token_name
        record.user_id, record.username = caller.user_id, caller.username
        raw = await read_body(receive)
        large = len(raw) >= LARGE_BODY
        body = parse_body(raw) if not large else await _off_loop(parse_body, raw)
        media = rt.settings.media_urls
        if not large:
            model = surface.parse(body, media=media)
        else:  # checking each of its parts (media URLs, a dialect's blocks) leaves the loop too
            model = await _off_loop(functools.partial(surface.parse, body, media=media))
        record.model = model
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
            raise Forbidden(f"This token may not use the model '{echoed(model)}'.", param="model")
        route = rt.snapshot.resolve(surface.kind, model, caller.groups)
        surface.check_route(body, route, rt.snapshot.upstreams)
        if not route.has_usable():
            # Waiting the whole budget for a backend that is down helps nobody: say so now.
            raise NoHealthyBackend(
                f"No healthy backend serves '{model}' right now (all are down or disabled); "
                "try again later.",
                retry_after=5,
            )
        state, excluded = None, frozenset[str]()
        if surface.keeps_state:
            state = RequestState(rt.owners, owner_of(caller.user_id, caller.token_id))
            excluded = await surface.admit_state(body, route, rt.snapshot.upstreams, state)
            if excluded and not route.usable_targets(excluded):
                raise NoHealthyBackend(
                    f"The backend that keeps this conversation for '{model}' is down or "
                    "disabled right now; try again later.",
                    retry_after=5,
                )

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
            excluded=excluded,
        )
        if not caller.allowance:
            # Resolves when the client goes away; raced against admission and the answer.
            gone = _gone(scope, receive)
            try:
                await self._admit_and_forward(
                    send, surface, body, w, gone, record, large, state=state
                )
            finally:
                gone.cancel()
            return
        # Over its allowance it never waits: checked (and its estimate reserved) before
        # admission, and from here on released in the one `finally` below.
        ticket = await self._allow(caller, surface, body, raw, model, cls)
        gone = _gone(scope, receive)
        extra = rate_limit_headers(
            ticket.requests, ticket.tokens, rt.allowances.clock(), anthropic=surface is MESSAGES
        )
        try:
            await self._admit_and_forward(
                send, surface, body, w, gone, record, large, extra, ticket, state=state
            )
        except GatewayError as err:
            err.extra_headers = extra
            raise
        finally:
            gone.cancel()
            # The one release of the reservation, whatever ended the request: the relay has put
            # the engine's usage on the record by now (none: nothing was generated).
            ticket.settle(
                record.input_tokens,
                record.output_tokens,
                answered=record.first_byte_ms is not None,
            )

    async def _allow(
        self,
        caller: Any,
        surface: Surface,
        body: dict[str, Any],
        raw: bytes,
        model: str,
        cls: int,
    ) -> Ticket:
        """Take the request's share of its allowance, or refuse it (429) before it waits."""
        input_tokens, output_tokens = estimate(body, len(raw), embedding=surface.kind != "chat")
        demand = Demand(caller.allowance, model, input_tokens, output_tokens)
        return await self._take(surface, demand, cls)

    async def _take(self, surface: Surface, demand: Demand, cls: int) -> Ticket:
        rt = self.runtime
        try:
            return await rt.allowances.admit(demand)
        except AllowanceExceeded as err:
            rt.metrics.refused_by_allowance(err.reason, cls)
            err.extra_headers = rate_limit_headers(
                err.requests, err.tokens, rt.allowances.clock(), anthropic=surface is MESSAGES
            )
            raise

    async def _count_tokens(
        self, scope: Scope, receive: Receive, send: Send, surface: Surface, record: records.Entry
    ) -> None:
        """POST /v1/messages/count_tokens: counted by a backend that serves Messages itself, on
        the bounded path of gateway/dataplane/count_tokens.py, else estimated
        (messages.count_tokens_estimate). A count is a request of the caller's allowance."""
        rt = self.runtime
        caller = await self._caller(dict(scope["headers"]), surface)
        record.token_id, record.token_name = caller.token_id, caller.token_name
        record.user_id, record.username = caller.user_id, caller.username
        if rt.settings.priority_enabled:
            record.cls = int(caller.priority)
        raw = await read_body(receive)
        large = len(raw) >= LARGE_BODY
        body = parse_body(raw) if not large else await _off_loop(parse_body, raw)
        try:
            validate.validate(body, counting=True)
        except errors.MessagesError as err:
            raise BadRequest(err.message) from None
        # A counting engine may render the prompt, fetching its images to count them.
        media_urls.refuse_inside(media_urls.in_messages(body), rt.settings.media_urls)
        model = str(body["model"])
        record.model = model
        if caller.model_allowlist is not None and model not in caller.model_allowlist:
            raise Forbidden(f"This token may not use the model '{echoed(model)}'.", param="model")
        route = rt.snapshot.resolve(surface.kind, model, caller.groups)
        extra: list[tuple[bytes, bytes]] = []
        if caller.allowance:
            ticket = await self._take(surface, counters.demand(caller.allowance, model), record.cls)
            ticket.settle(0, 0)  # it reserved nothing: its requests counted when admitted
            extra = rate_limit_headers(
                ticket.requests, ticket.tokens, rt.allowances.clock(), anthropic=True
            )
        count = await count_tokens.engine_count(rt, route, body, record, large=large)
        if count is None:
            count = anthropic_count_tokens.count_tokens_estimate(body)
        record.outcome, record.status = Outcome.IMMEDIATE, 200
        await send_json(send, 200, {"input_tokens": count}, extra)

    async def _admit_and_forward(
        self,
        send: Send,
        surface: Surface,
        body: dict[str, Any],
        w: Waiter,
        gone: asyncio.Future[Any],
        record: records.Entry,
        large: bool = False,
        extra_headers: list[tuple[bytes, bytes]] | None = None,
        ticket: Ticket | None = None,
        *,
        state: RequestState | None = None,
    ) -> None:
        """Wait for a slot, relay, and on a failure before any byte try another replica."""
        rt = self.runtime
        queue = rt.queue
        failure: Retryable | None = None  # the last replica's failure, the answer if none is left
        retries = 0
        while True:
            try:
                acquired = await route_or_wait(queue, w, gone=gone)
            except QueueTimeout:
                if failure is not None:
                    # Its budget ran out while a backend failed it: that failure is the answer.
                    raise failure.error from None
                record.queue_ms = (queue.clock() - w.arrival) * 1000
                raise self._expired(w.route, record.model) from None
            except QueueCancelled:
                record.outcome = Outcome.CANCELLED
                record.status = 499  # the client closed the request; nothing is sent
                record.queue_ms = (queue.clock() - w.arrival) * 1000
                return
            except QueueFull as err:
                raise TooManyRequests(
                    f"The gateway queue is full: {err.reason}.", retry_after=err.retry_after
                ) from None
            except RouteGone:
                record.queue_ms = (queue.clock() - w.arrival) * 1000
                raise Unavailable(
                    f"The model '{record.model}' is no longer available to you.", retry_after=5
                ) from None
            if not record.outcome:
                record.outcome = Outcome.IMMEDIATE if w.waited == 0 else Outcome.WAITED
            record.queue_ms = w.waited * 1000
            record.score = queue.score(w)
            up = rt.snapshot.upstreams.get(acquired.backend)
            try:
                if up is None or rt.session is None:
                    acquired.release()
                    raise Retryable(
                        f"backend {acquired.backend} was removed",
                        UpstreamError(f"The backend {acquired.backend} was removed."),
                    )
                relay = Relay(
                    rt.session, up, acquired, send=send, gone=gone, record=record,
                    timeouts=rt.timeouts, extra_headers=extra_headers, ticket=ticket,
                    state=state,
                )  # fmt: skip
                try:
                    await relay.run(surface, body, large=large)
                except GatewayError as err:
                    if err.status >= 500:  # the backend's fault, not the client's
                        rt.errors.note(up.name, err.message, "request")
                    raise
                finally:
                    if record.outcome == Outcome.UPSTREAM_ERROR:  # broken mid-answer
                        rt.errors.note(up.name, record.error or "", "request")
                return
            except Retryable as why:
                failure = why
                failed = acquired.backend
                rt.errors.note(failed, f"{why.error.message} ({why})", "request")
                retries += 1
                w = queue.retry_waiter(w, failed)
                # The topology may have changed since it arrived: retry on today's route, and
                # not at all when the model or the caller's access is gone.
                route = rt.snapshot.route_for_key(w.route.key)
                if route is None:
                    raise Unavailable(
                        f"The model '{record.model}' is no longer available to you.",
                        retry_after=5,
                    ) from None
                w.route = route
                if retries > MAX_RETRIES or not w.route.usable_targets(w.excluded):
                    record.backend = failed
                    raise why.error from None
                log.info("retrying %s on another replica after %s", record.model, why)

    def _expired(self, route: Route, model: str) -> GatewayError:
        """The wait budget ran out: because nothing was free, or nothing was up."""
        wait = self.runtime.settings.upstream_wait_secs
        retry_after = max(1.0, min(wait, 30.0))
        if not route.has_usable():
            return NoHealthyBackend(
                f"No healthy backend for '{model}' came back within {wait:.0f} seconds; "
                "try again later.",
                retry_after=retry_after,
            )
        return CapacityTimeout(
            f"No capacity for '{model}' within {wait:.0f} seconds; try again later.",
            retry_after=retry_after,
        )


async def send_json(
    send: Send, status: int, payload: object, extra: list[tuple[bytes, bytes]] | None = None
) -> None:
    body = json.dumps(payload).encode()
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [
                (b"content-type", b"application/json"),
                (b"content-length", str(len(body)).encode()),
                *(extra or ()),
            ],
        }
    )
    await send({"type": "http.response.body", "body": body})


async def send_error(send: Send, err: GatewayError, surface: Surface | None = None) -> None:
    """A refusal in the envelope of the surface called (OpenAI's where there is none)."""
    status, headers, body = surface.error(err) if surface is not None else _plain(err)
    headers = [*headers, (b"content-length", str(len(body)).encode())]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


def _plain(err: GatewayError) -> tuple[int, list[tuple[bytes, bytes]], bytes]:
    return err.status, err.headers(), err.body()
