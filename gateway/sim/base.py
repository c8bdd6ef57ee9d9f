"""The simulated engine's state and its plumbing: configuration, slots, records, counters, the
ASGI entry, the plain endpoints and what every /v1 request goes through (gateway/sim/engine.py
says what the engine imitates)."""

from __future__ import annotations

import asyncio
import json
import time
from collections import deque
from collections.abc import Coroutine
from dataclasses import asdict
from typing import Any, Self

from gateway.core.asgi import Receive, Scope, Send
from gateway.sim.config import (
    OWNER,
    OWNERS,
    SGLANG_SERVER_INFO_SINCE,
    SIM_VERSION,
    VLLM_NESTED_ERRORS_SINCE,
    SimConfig,
    check_setting,
    gpu_config,
    parse_version,
    setting_value,
    sglang_has_priority,
)
from gateway.sim.errors import SHUTTING_DOWN, Refused, anthropic_error, error_body
from gateway.sim.gpu import Gpu, exposition
from gateway.sim.jobs import Job, Record
from gateway.sim.slots import Slots
from gateway.sim.surfaces import CHAT, MESSAGES, Surface
from gateway.sim.wire import (
    JSON_TYPE,
    Disconnected,
    Drop,
    Handler,
    decode,
    encode,
    forever,
    read_body,
    send_bytes,
)

# The metrics faults that are a whole body of their own (SimConfig.metrics_fault).
METRICS_BODIES: dict[str, tuple[int, bytes]] = {
    "garbage": (200, b"\x00\xff<html>not metrics</html>\n{{{\n"),
    "huge": (200, b"# padding\n" * (5 << 20)),
    "negative": (200, b"vllm:num_requests_running -3\nvllm:num_requests_waiting -1\n"),
    "nan": (200, b"vllm:num_requests_running NaN\nvllm:num_requests_waiting 0\n"),
    "error": (500, b"Internal Server Error"),
    "hang": (200, b""),
}


class EngineBase:
    """The engine's state and plumbing; `app` is ASGI3. The layers above add the paths."""

    # The routes, by method and path; SimEngine fills them in, as they name every layer's handlers.
    _routes: dict[tuple[str, str], Handler]

    def __init__(self, config: SimConfig | None = None) -> None:
        self.config = config if config is not None else SimConfig()
        self._records: deque[Record] = deque(maxlen=max(self.config.record_limit, 0))
        self.slots = Slots(self.config)
        self.gpu: Gpu | None = None
        self._sync_gpu()
        self._open_count = 0
        self._max_open_seen = 0
        self._total = 0
        self._cancelled = 0
        self._seq = 0
        self._fail_next = 0
        self._fail_status = 503
        # Stored responses (responses_store): their conversation's tokens, by response id.
        self._stored: dict[str, int] = {}
        self._active: set[asyncio.Task[Any]] = set()
        self._closing = False
        # The loop serving the app, known from lifespan startup; SimServer stops through it.
        self.loop: asyncio.AbstractEventLoop | None = None

    @property
    def app(self) -> Self:
        return self

    # -- Python API (call it on the engine's own event loop; across threads use HTTP) --

    def stats(self) -> dict[str, int]:
        slots = self.slots
        return {
            "inflight": slots.inflight,
            "waiting": slots.waiting,
            "max_inflight_seen": slots.max_inflight_seen,
            "open": self._open_count,
            "max_open_seen": self._max_open_seen,
            "total": self._total,
            "cancelled": self._cancelled,
            "rejected": slots.rejected,
            "evicted": slots.evicted,
            **(self.gpu.stats() if self.gpu is not None else {}),
        }

    def records(self) -> list[dict[str, Any]]:
        return [record.as_dict() for record in self._records]

    def reset(self) -> None:
        """Forget records, counters, stored responses and pending failure injection.

        The configuration stays.

        The maxima restart from what is open right now, so a run measures only itself.
        """
        self._records.clear()
        self._total = 0
        self._cancelled = 0
        self.slots.reset()
        if self.gpu is not None:
            self.gpu.reset_maxima()
        self._max_open_seen = self._open_count
        self._fail_next = 0
        self._fail_status = 503
        self._stored.clear()

    def abort_all(self) -> None:
        """End every waiting or running generation now: the server is stopping.

        Streams end with [DONE], requests that had no answer yet get a 503, and later ones are
        refused with a 503 until the next lifespan startup.
        """
        self._closing = True
        for task in list(self._active):
            task.cancel()

    def configure(self, **changes: Any) -> dict[str, Any]:
        """Update config fields plus `fail_next`/`fail_status`; returns the resulting state."""
        # Validate everything first so that a rejected update changes nothing.
        for name, value in changes.items():
            check_setting(name, value)
        for name, value in changes.items():
            if name == "fail_next":
                self._fail_next = value
            elif name == "fail_status":
                self._fail_status = value
            else:
                setattr(self.config, name, setting_value(name, value))
        self._sync_gpu()
        if self._records.maxlen != self.config.record_limit:
            self._records = deque(self._records, maxlen=self.config.record_limit)
        # More slots may admit waiters at once.
        if self.slots.waiting:
            self.slots.dispatch()
        return self._state()

    def _sync_gpu(self) -> None:
        """The simulated GPU as the configuration now says: on, off, or reshaped in place (its
        running and waiting sequences kept, as when another tenant takes half the engine)."""
        shape = gpu_config(self.config)
        if shape is None:
            self.gpu = None
        elif self.gpu is None:
            self.gpu = Gpu(shape)
        else:
            self.gpu.config = shape

    def _state(self) -> dict[str, Any]:
        return {
            **asdict(self.config),
            "fail_next": self._fail_next,
            "fail_status": self._fail_status,
        }

    # -- the imitated engine --

    def error_shape(self) -> str:
        style = self.config.server_info
        if style == "sglang":
            return "sglang"
        if style == "vllm":
            nested = parse_version(self.config.vllm_version) >= VLLM_NESTED_ERRORS_SINCE
            return "vllm" if nested else "vllm-flat"
        return "openai"

    def keep_response(self, job: Job) -> None:
        """Store a response for previous_response_id: its conversation's tokens so far."""
        if not job.store or job.turn is None:
            return
        self._stored[job.ident] = job.prompt_tokens + job.turn.generated
        while len(self._stored) > max(self.config.record_limit, 1):
            del self._stored[next(iter(self._stored))]

    # -- what the engine has open --

    def _count_open(self, record: Record) -> None:
        """Count a request whose body was just read as open (after _open's yield, if any).

        A client that leaves and, at once, hands its place to the next request (the gateway
        freeing a slot) sends its FIN before the next request's bytes. The event loop reads both
        in that order, but the disconnect reaches this app one callback later (uvicorn's
        connection_lost, then the waiting receive() of the request's watcher), while the new
        request may already run. So an arrival that would set a new maximum first yields once:
        every disconnect the loop had already read is then seen by its watcher (which closes
        its request on the spot, see _watch) before the arrival is counted. That is the order
        in which a real engine's scheduler learns of them: the abort of a request whose
        connection closed first, then the work that arrived after it. Arrivals that cannot set
        a new maximum never yield, so the instant engine's hot path stays as it was.
        """
        self._open_count += 1
        record.open = True
        if self._open_count > self._max_open_seen:
            self._max_open_seen = self._open_count

    def _leave(self, record: Record) -> None:
        if record.open:
            record.open = False
            self._open_count -= 1

    # -- ASGI --

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        kind = scope["type"]
        if kind == "http":
            handler = self._routes.get((scope["method"], scope["path"]))
            if handler is None:
                await send_bytes(
                    send, 404, error_body("Not found", "invalid_request_error", "not_found")
                )
                return
            try:
                await handler(scope, receive, send)
            except Disconnected:
                pass
        elif kind == "lifespan":
            while True:
                message = await receive()
                if message["type"] == "lifespan.startup":
                    self.loop = asyncio.get_running_loop()
                    self._closing = False
                    await send({"type": "lifespan.startup.complete"})
                elif message["type"] == "lifespan.shutdown":
                    await send({"type": "lifespan.shutdown.complete"})
                    return

    # -- plain endpoints --

    def _models_body(self) -> bytes:
        created = int(time.time())
        owner = OWNERS.get(self.config.server_info, OWNER)
        data = [
            {"id": m, "object": "model", "created": created, "owned_by": owner}
            for m in self.config.models
        ]
        return encode({"object": "list", "data": data}).encode()

    async def _v1_models(self, scope: Scope, receive: Receive, send: Send) -> None:
        record = self._record(scope, None)
        error = self._check(scope, post=False)
        if error is not None:
            await self._finish(send, record, *error)
            return
        await self._finish(send, record, 200, self._models_body())

    async def _models(self, scope: Scope, receive: Receive, send: Send) -> None:
        error = self._check_auth(scope)
        if error is not None:
            await send_bytes(send, *error)
            return
        await send_bytes(send, 200, self._models_body())

    async def _metrics(self, scope: Scope, receive: Receive, send: Send) -> None:
        """GET /metrics in the configured engine's shape: the simulated GPU's gauges, or the
        slots' (no KV cache to tell of); 404 without, as SGLang without --enable-metrics."""
        shape, fault = self.config.metrics, self.config.metrics_fault
        if shape == "none":
            await send_bytes(send, 404, b'{"detail":"Not Found"}')
            return
        if fault in METRICS_BODIES:
            if fault == "hang":
                await forever()
            status, body = METRICS_BODIES[fault]
            await send_bytes(send, status, body, b"text/plain")
            return
        gpu, slots = self.gpu, self.slots
        running, waiting = (
            (len(gpu.running), len(gpu.waiting)) if gpu else (slots.inflight, slots.waiting)
        )
        text = exposition(
            shape,
            running=running,
            waiting=0 if fault == "zero-waiting" else waiting,
            kv_usage=gpu.kv_usage if gpu else None,
            preemptions=gpu.preemptions if gpu else 0,
            model=self.config.models[0] if self.config.models else "sim",
        )
        await send_bytes(send, 200, text.encode(), b"text/plain; version=0.0.4; charset=utf-8")

    async def _health(self, scope: Scope, receive: Receive, send: Send) -> None:
        await send_bytes(send, 200, b"{}")

    async def _version(self, scope: Scope, receive: Receive, send: Send) -> None:
        style = self.config.server_info
        version = {"sglang": self.config.sglang_version, "vllm": self.config.vllm_version}
        await send_bytes(send, 200, encode({"version": version.get(style, SIM_VERSION)}).encode())

    def _server_info_body(self) -> bytes:
        cfg = self.config
        info: dict[str, Any] = {
            "model_path": cfg.models[0] if cfg.models else None,
            "served_model_name": cfg.models[0] if cfg.models else None,
            "tp_size": 1,
            "schedule_policy": cfg.sglang_schedule_policy,
            "max_running_requests": cfg.slots,
            "max_queued_requests": cfg.max_queued_requests,
        }
        if sglang_has_priority(self.config):
            info["enable_priority_scheduling"] = cfg.priority_scheduling
            info["schedule_low_priority_values_first"] = cfg.sglang_low_first
        info["version"] = cfg.sglang_version
        return encode(info).encode()

    async def _get_server_info(self, scope: Scope, receive: Receive, send: Send) -> None:
        if self.config.server_info != "sglang":
            await send_bytes(
                send, 404, error_body("Not found", "invalid_request_error", "not_found")
            )
            return
        await send_bytes(send, 200, self._server_info_body())

    async def _server_info(self, scope: Scope, receive: Receive, send: Send) -> None:
        cfg = self.config
        if (
            cfg.server_info != "sglang"
            or parse_version(cfg.sglang_version) < SGLANG_SERVER_INFO_SINCE
        ):
            await send_bytes(
                send, 404, error_body("Not found", "invalid_request_error", "not_found")
            )
            return
        await send_bytes(send, 200, self._server_info_body())

    # -- introspection --

    async def _sim_requests(self, scope: Scope, receive: Receive, send: Send) -> None:
        await send_bytes(send, 200, encode(self.records()).encode())

    async def _sim_stats(self, scope: Scope, receive: Receive, send: Send) -> None:
        await send_bytes(send, 200, encode(self.stats()).encode())

    async def _sim_reset(self, scope: Scope, receive: Receive, send: Send) -> None:
        await read_body(receive)
        self.reset()
        await send_bytes(send, 200, encode(self.stats()).encode())

    async def _sim_config(self, scope: Scope, receive: Receive, send: Send) -> None:
        raw = await read_body(receive)
        try:
            changes = json.loads(raw) if raw else {}
        except ValueError:
            changes = None
        if not isinstance(changes, dict):
            await send_bytes(
                send,
                400,
                error_body("Body must be a JSON object", "invalid_request_error", "invalid_json"),
            )
            return
        try:
            state = self.configure(**changes)
        except ValueError as exc:
            await send_bytes(
                send, 400, error_body(str(exc), "invalid_request_error", "invalid_setting")
            )
            return
        await send_bytes(send, 200, encode(state).encode())

    # -- /v1 request plumbing --

    def _record(self, scope: Scope, body: Any) -> Record:
        record = Record(scope["path"], scope["headers"], body)
        self._total += 1
        if self._records.maxlen:
            self._records.append(record)
        return record

    def _check_auth(self, scope: Scope, surface: Surface = CHAT) -> tuple[int, bytes] | None:
        key = self.config.api_key
        if key is None:
            return None
        expected = b"Bearer " + key.encode()
        # Anthropic's clients send x-api-key; vLLM reads only Bearer (vllm issue #51572).
        anthropic = surface is MESSAGES and self.config.server_info != "vllm"
        for name, value in scope["headers"]:
            if name == b"authorization" and value == expected:
                return None
            if anthropic and name == b"x-api-key" and value == key.encode():
                return None
        if anthropic:
            return 401, anthropic_error("anthropic", 401, "invalid x-api-key")
        return 401, error_body(
            "Incorrect API key provided", "invalid_request_error", "invalid_api_key"
        )

    def _injected(self, status: int, surface: Surface = CHAT) -> tuple[int, bytes]:
        return status, surface.error(
            surface.shape(self), status, f"Injected failure {status}", "sim_injected_failure"
        )

    def _check(
        self, scope: Scope, *, post: bool, surface: Surface = CHAT
    ) -> tuple[int, bytes] | None:
        """Authentication, then per-request and queued failure injection."""
        error = self._check_auth(scope, surface)
        if error is not None:
            return error
        for name, value in scope["headers"]:
            if name == b"x-sim-fail":
                try:
                    status = int(value)
                except ValueError:
                    status = 0
                if not 400 <= status <= 599:
                    return 400, error_body(
                        "x-sim-fail must be an HTTP error status",
                        "invalid_request_error",
                        "invalid_header",
                        "x-sim-fail",
                    )
                return self._injected(status, surface)
        if post and self._fail_next > 0:
            self._fail_next -= 1
            return self._injected(self._fail_status, surface)
        return None

    async def _finish(
        self, send: Send, record: Record, status: int, body: bytes, kind: bytes = JSON_TYPE
    ) -> None:
        record.status = status
        await send_bytes(send, status, body, kind)
        record.finished = time.time()

    async def _start(
        self, send: Send, record: Record, status: int, headers: list[tuple[bytes, bytes]]
    ) -> None:
        record.status = status
        await send({"type": "http.response.start", "status": status, "headers": headers})

    async def _arrive(self, scope: Scope, receive: Receive) -> tuple[Record, Any]:
        """Read a POST's body (None when it is not JSON) and record it, counted open."""
        raw = await read_body(receive)
        try:
            body = decode(raw.decode())
        except ValueError:
            body = None
        record = self._record(scope, body)
        if self._open_count >= self._max_open_seen:
            await asyncio.sleep(0)  # why: see _count_open
        self._count_open(record)
        return record, body

    async def _refuse(self, send: Send, record: Record, error: tuple[int, bytes]) -> None:
        """Answer an open record with `error` and close it."""
        try:
            await self._finish(send, record, *error)
        finally:
            self._leave(record)

    async def _guarded(
        self,
        receive: Receive,
        send: Send,
        record: Record,
        run: Coroutine[Any, Any, bytes | None],
        surface: Surface = CHAT,
    ) -> None:
        """Run work that may wait or take time, abandoning it if the client leaves.

        `run` returns a whole JSON answer, or None when it has sent its answer but for the end
        (the surface's tail: a chat stream's [DONE]; nothing for a deliberately broken answer,
        which raises instead).
        """
        if self._closing:
            run.close()
            await self._finish(send, record, 503, self._shutting_down(surface))
            return
        task = asyncio.current_task()
        if task is None:
            raise RuntimeError("an ASGI app runs inside a task")
        watcher = asyncio.get_running_loop().create_task(self._watch(receive, task, record))
        self._active.add(task)
        payload: bytes | None
        try:
            try:
                payload = await run
            finally:
                # Once the response completes, receive() reports a disconnect: stop listening
                # before the last byte goes out.
                watcher.cancel()
                self._active.discard(task)
        except Refused as refused:
            # Only an answer that has not started is refused this way; a stream writes its own.
            body = surface.error(surface.shape(self), 503, refused.message, refused.code)
            await self._finish(send, record, 503, body)
            return
        except asyncio.CancelledError:
            if record.cancelled:
                task.uncancel()
                self._cancelled += 1
                record.finished = time.time()
                return
            if not self._closing:
                raise
            # Stopped by abort_all: give the client a well-formed ending so the server can
            # close the connection at once instead of waiting out its graceful timeout.
            task.uncancel()
            if record.status is None:
                await self._finish(send, record, 503, self._shutting_down(surface))
                return
            if record.fault is not None:
                raise Drop from None  # a deliberately broken answer cannot end well
            payload = None
        if payload is None:
            await send({"type": "http.response.body", "body": surface.tail, "more_body": False})
            record.finished = time.time()
        else:
            await self._finish(send, record, 200, payload)

    def _shutting_down(self, surface: Surface) -> bytes:
        if surface is CHAT:
            return SHUTTING_DOWN
        message = "The engine is shutting down"
        return surface.error(surface.shape(self), 503, message, "sim_shutting_down")

    async def _watch(self, receive: Receive, task: asyncio.Task[Any], record: Record) -> None:
        """Cancel the request's task when its client disconnects.

        The request stops counting as open right here, not when its task has unwound: see
        _arrive for why that moment matters.
        """
        while True:
            message = await receive()
            if message["type"] == "http.disconnect":
                record.cancelled = True
                self._leave(record)
                task.cancel()
                return
