"""The /v1 data plane: a raw ASGI app (no Django request cycle) in front of the model servers.

The path of one request: bearer token -> caller context (cached; gateway/dataplane/identity.py),
body and hints -> class, the route, then gateway/dataplane/admit.py waits for a slot and the relay
(gateway/dataplane/relay.py) rewrites the body for the backend actually chosen at the final
dispatch boundary and streams its answer back chunk by chunk, another replica trying it when the
first failed before answering. The slot is released exactly once, by the relay. Here: the routing
by path, the activity record every request leaves, and `_serve`.
"""

from __future__ import annotations

import contextlib
import functools
import json
import logging
import time
from collections.abc import Awaitable, Callable
from typing import Any

from gateway.admission.schedulers import OUTPUT_WEIGHT
from gateway.admission.types import Route
from gateway.allowances.counters import rate_limit_headers
from gateway.core.asgi import Receive, Scope, Send
from gateway.core.classes import MEDIUM
from gateway.core.errors import (
    GatewayError,
    InternalError,
    MethodNotAllowed,
    NoHealthyBackend,
    NotFound,
)
from gateway.core.outcomes import Outcome
from gateway.dataplane import count_tokens
from gateway.dataplane.admit import admit_and_forward, allowance_ticket, excluded_by_state, keeping
from gateway.dataplane.body import (
    ClientLeft,
    affinity_key,
    client_gone,
    off_loop,
    parse_body,
    read_body,
)
from gateway.dataplane.hints import Hint, apply_hint, parse_hints
from gateway.dataplane.identity import CallerLookup, SessionLookup, caller_of, check_allowlist
from gateway.dataplane.relay import LARGE_BODY, DropConnection
from gateway.dataplane.serving import quiet_dropped_connections
from gateway.dataplane.wait_budget import queue_wait_header, wait_budget
from gateway.dialects.anthropic.dialect import MESSAGES
from gateway.dialects.openai.dialect import Surface
from gateway.dialects.paths import SURFACES
from gateway.dialects.stored_state import RequestState, owner_of
from gateway.observability import records
from gateway.runtime.runtime import Runtime
from gateway.runtime.settings import GatewaySettings

log = logging.getLogger("aiplane.gateway")

COUNT_TOKENS = count_tokens.PATH

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
        # The app is what raises DropConnection: the servers' tracebacks of it go with it.
        quiet_dropped_connections()

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

    # ----- /v1/models ----------------------------------------------------------------------

    async def _models(self, scope: Scope, send: Send) -> None:
        rt = self.runtime
        await rt.ensure_started()
        caller = await caller_of(
            dict(scope["headers"]),
            caller_for_token=self.caller_for_token,
            caller_for_session=self.caller_for_session,
        )
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
        # No class until the caller is known: a request refused or cut short before that ran
        # at none, and a default would put it in a class it never had.
        record = records.Entry(
            started=time.time(),
            token_id=None,
            token_name=None,
            user_id=None,
            username="",
            model="",
            cls=None,
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
            if record.input_tokens is not None and record.cls is not None:
                rt.metrics.count_tokens(record.cls, record.model, record)
            self.recorder.add(record)

    async def _serve(
        self, scope: Scope, receive: Receive, send: Send, surface: Surface, record: records.Entry
    ) -> None:
        rt = self.runtime
        headers = dict(scope["headers"])
        caller = await caller_of(
            headers,
            surface,
            caller_for_token=self.caller_for_token,
            caller_for_session=self.caller_for_session,
        )
        settings = rt.settings
        _known(record, caller, settings)
        raw = await read_body(receive)
        large = len(raw) >= LARGE_BODY
        body = parse_body(raw) if not large else await off_loop(parse_body, raw)
        media = rt.settings.media_urls
        if not large:
            model = surface.parse(body, media=media)
        else:  # checking each of its parts (media URLs, a dialect's blocks) leaves the loop too
            model = await off_loop(functools.partial(surface.parse, body, media=media))
        record.model = model
        hint = parse_hints(headers, body)
        if hint is not None:
            record.hint = hint.describe()
        cls, offset = _class_of(caller, hint, settings)
        record.cls = cls
        route = self._route_for(surface, body, model, caller)
        state, excluded = None, frozenset[str]()
        if surface.keeps_state:
            state = RequestState(rt.owners, owner_of(caller.user_id, caller.token_id))
            excluded = await excluded_by_state(rt, surface, body, route, state, model)

        queue = rt.queue
        affinity = affinity_key(body) if route.strategy == "prefix_affinity" else None
        # wspt's cost: the whole body's size (about 4 bytes a token), so no field escapes it.
        cost = max(1, len(raw) // 4) if queue.config.name == "wspt" else 1
        # Fair share by work charges the prompt now (about 4 bytes a token) and settles what
        # the engine reports when the request ends (`charge` below).
        work = float(max(1, len(raw) // 4))
        w = queue.waiter(
            route,
            cls=cls,
            offset=offset,
            budget=wait_budget(headers, settings.upstream_wait_secs),
            affinity_key=affinity,
            cost=cost,
            owner=caller.username,
            tag=record,
            excluded=excluded,
            work=work,
        )
        ticket, extra = None, None
        if caller.allowance:
            # Over its allowance it never waits: checked (and its estimate reserved) before
            # admission, and from here on released in the one `finally` below.
            ticket = await allowance_ticket(rt, caller, surface, body, raw, model, cls)
            extra = rate_limit_headers(
                ticket.requests, ticket.tokens, rt.allowances.clock(), anthropic=surface is MESSAGES
            )
        # Resolves when the client goes away; raced against admission and the answer.
        gone = client_gone(scope, receive)
        try:
            await admit_and_forward(
                rt, send, surface, body, w, gone, record,
                large=large, extra_headers=extra, ticket=ticket, state=state,
            )  # fmt: skip
        except GatewayError as err:
            # Every answer says how long it waited in line, a refusal too (a 503 after the
            # whole budget, a 429 at once).
            err.extra_headers = [
                *(extra if extra is not None else err.extra_headers or []),
                queue_wait_header(record.queue_ms),
            ]
            raise
        finally:
            gone.cancel()
            # What it took of its class's fair share: its prompt and weighted output as the
            # engine reported them (nothing, if it never ran; the estimate, if none was).
            ran = record.first_byte_ms is not None
            reported = record.input_tokens is not None or record.output_tokens is not None
            took = (record.input_tokens or 0) + OUTPUT_WEIGHT * (record.output_tokens or 0)
            queue.charge(w, (took if reported else work) if ran else 0.0)
            if ticket is not None:
                # The one release of the reservation, whatever ended the request: the relay has
                # put the engine's usage on the record by now (none: nothing was generated).
                ticket.settle(
                    record.input_tokens,
                    record.output_tokens,
                    answered=record.first_byte_ms is not None,
                )

    def _route_for(self, surface: Surface, body: dict[str, Any], model: str, caller: Any) -> Route:
        """The request's route, refused now when none of its backends could serve it."""
        check_allowlist(caller, model)
        snapshot = self.runtime.snapshot
        route = snapshot.resolve(surface.kind, model, caller.groups)
        if surface.keeps_state:
            upstreams = snapshot.upstreams
            surface.check_route(body, lambda: keeping(route, upstreams, usable=True))
        if not route.has_usable():
            # Waiting the whole budget for a backend that is down helps nobody: say so now.
            raise NoHealthyBackend(
                f"No healthy backend serves '{model}' right now (all are down or disabled); "
                "try again later.",
                retry_after=5,
            )
        return route

    async def _count_tokens(
        self, scope: Scope, receive: Receive, send: Send, surface: Surface, record: records.Entry
    ) -> None:
        """POST /v1/messages/count_tokens (gateway/dataplane/count_tokens.py). A count is a
        request of the caller's allowance."""
        rt = self.runtime
        caller = await caller_of(
            dict(scope["headers"]),
            surface,
            caller_for_token=self.caller_for_token,
            caller_for_session=self.caller_for_session,
        )
        cls = _known(record, caller, rt.settings)
        raw = await read_body(receive)
        large = len(raw) >= LARGE_BODY
        body = parse_body(raw) if not large else await off_loop(parse_body, raw)
        tokens, extra = await count_tokens.count(
            rt, caller, surface, body, record, cls=cls, large=large
        )
        record.outcome, record.status = Outcome.IMMEDIATE, 200
        await send_json(send, 200, {"input_tokens": tokens}, extra)


def _known(record: records.Entry, caller: Any, settings: GatewaySettings) -> int:
    """The caller is known: who it is, and its class (before any hint lowers it), on the record
    at once, so a request cut short from here on (its client leaving mid-body, a body refused)
    is recorded at the caller's class. Returns that class."""
    record.token_id, record.token_name = caller.token_id, caller.token_name
    record.user_id, record.username = caller.user_id, caller.username
    record.cls = cls = _class_of(caller, None, settings)[0]
    return cls


def _class_of(caller: Any, hint: Hint | None, settings: GatewaySettings) -> tuple[int, int]:
    """The class a request runs at and its offset there: the caller's, lowered by its hint."""
    if settings.priority_enabled:
        return apply_hint(int(caller.priority), hint)
    return MEDIUM, 0


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

