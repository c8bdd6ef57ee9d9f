"""A simulated OpenAI-compatible engine: demo backend, test upstream and benchmark target."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import hashlib
import heapq
import json
import struct
import sys
import threading
import time
from collections import deque
from collections.abc import Awaitable, Callable, Coroutine, Iterator
from dataclasses import asdict, dataclass, field
from json.encoder import encode_basestring_ascii
from typing import Any

import uvicorn

from gateway import serving

Scope = dict[str, Any]
Message = dict[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
Handler = Callable[[Scope, Receive, Send], Awaitable[None]]

SERVER_INFO_STYLES = ("none", "sglang", "vllm")
SGLANG_VERSION = "0.4.6-sim"
SIM_VERSION = "sim-1.0"
OWNER = "aiplane-sim"
EMBEDDING_DIMENSION = 8


@dataclass
class SimConfig:
    """How the simulated engine behaves; every field can be changed at run time."""

    models: list[str] = field(default_factory=lambda: ["sim-small", "sim-large"])
    # Concurrent generations, like a GPU server's batch; 0 holds every request in the queue.
    slots: int = 4
    # Tokens per completion unless max_tokens / max_completion_tokens asks for fewer.
    tokens: int = 16
    # Seconds between tokens; 0 is the instant engine, which never sleeps.
    token_delay: float = 0.02
    api_key: str | None = None
    # "sglang" serves /server_info from the sglang_* fields below; "vllm" only flips the queue.
    server_info: str = "none"
    sglang_priority: bool = True
    sglang_schedule_policy: str = "fcfs"
    sglang_low_first: bool = False
    # Admit waiters by the body's `priority`: larger first (SGLang's default), smaller first
    # under server_info="vllm" or sglang_low_first; arrival order when off.
    priority_scheduling: bool = False
    record_limit: int = 1000


# The accepted run-time types of each SimConfig field, for POST /sim/config.
_FIELD_TYPES: dict[str, tuple[type, ...]] = {
    "models": (list,),
    "slots": (int,),
    "tokens": (int,),
    "token_delay": (int, float),
    "api_key": (str, type(None)),
    "server_info": (str,),
    "sglang_priority": (bool,),
    "sglang_schedule_policy": (str,),
    "sglang_low_first": (bool,),
    "priority_scheduling": (bool,),
    "record_limit": (int,),
}

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

# Token texts grow on demand and are shared by every engine: they depend on nothing.
_tok_text: list[str] = []
_tok_json: list[bytes] = []
# Whole answers by token count, for the few counts that are actually asked for; every prefix
# up front would cost memory quadratic in the longest answer.
_answers: dict[int, bytes] = {}
_ANSWERS_KEPT = 64

# Whole answers are filled into byte templates: a generic JSON encoder costs several times more,
# and the instant engine is measured by its per-request cost.
_CHAT_BODY = (
    b'{"id":"chatcmpl-sim%d","object":"chat.completion","created":%d,"model":%b,'
    b'"choices":[{"index":0,"message":{"role":"assistant","content":%b},"logprobs":null,'
    b'"finish_reason":"%b"}],'
    b'"usage":{"prompt_tokens":%d,"completion_tokens":%d,"total_tokens":%d}}'
)
_TEXT_BODY = (
    b'{"id":"cmpl-sim%d","object":"text_completion","created":%d,"model":%b,'
    b'"choices":[{"index":0,"text":%b,"logprobs":null,"finish_reason":"%b"}],'
    b'"usage":{"prompt_tokens":%d,"completion_tokens":%d,"total_tokens":%d}}'
)


_tokens_lock = threading.Lock()


def _tokens(n: int) -> None:
    """Make sure the first n token texts exist."""
    # Engines in several threads (one SimServer per fake backend) may grow the lists at once;
    # readers check len(_tok_json) without the lock, so it is appended last.
    with _tokens_lock:
        while len(_tok_json) < n:
            text = f"tok{len(_tok_json)} "
            _tok_text.append(text)
            _tok_json.append(_encode(text).encode())


def _answer(n: int) -> bytes:
    """The JSON string of an answer of n tokens."""
    answer = _answers.get(n)
    if answer is None:
        if len(_answers) >= _ANSWERS_KEPT:
            _answers.clear()
        answer = _answers[n] = _encode("".join(_tok_text[:n])).encode()
    return answer


def _prompt_words(value: object) -> int:
    """Prompt tokens: words in a messages list or prompt, at least one."""
    # The usual shape, a list of messages with string contents, skips the general walk.
    total = 0
    if isinstance(value, list):
        for item in value:
            content = item.get("content") if isinstance(item, dict) else None
            if isinstance(content, str):
                total += len(content.split())
            else:
                total += _count_words(item)
    else:
        total = _count_words(value)
    return total if total > 0 else 1


def _count_words(value: object) -> int:
    """Whitespace-separated words in a prompt, messages list or content parts."""
    if isinstance(value, str):
        return len(value.split())
    if isinstance(value, list):
        return sum(_count_words(item) for item in value)
    if isinstance(value, dict):
        return _count_words(value.get("content")) + _count_words(value.get("text"))
    # A pre-tokenized prompt is a list of token ids: one word each.
    if isinstance(value, int):
        return 1
    return 0


def _embedding(item: object) -> list[float]:
    text = item if isinstance(item, str) else _encode(item)
    digest = hashlib.blake2b(text.encode(), digest_size=2 * EMBEDDING_DIMENSION).digest()
    return [round(v / 32767.5 - 1.0, 6) for v in struct.unpack("<8H", digest)]


def _error_body(message: str, type_: str, code: str, param: str | None = None) -> bytes:
    return _encode(
        {"error": {"message": message, "type": type_, "param": param, "code": code}}
    ).encode()


_SHUTTING_DOWN = _error_body("The engine is shutting down", "server_error", "sim_shutting_down")


def _error_type(status: int) -> str:
    if status == 429:
        return "rate_limit_error"
    if status >= 500:
        return "server_error"
    return "invalid_request_error"


class _Record:
    """One /v1 request as seen by the engine; rendered to JSON only when asked for."""

    __slots__ = ("body", "cancelled", "finished", "headers", "path", "started", "status")

    def __init__(self, path: str, headers: list[tuple[bytes, bytes]], body: Any) -> None:
        self.path = path
        self.headers = headers
        self.body = body
        self.started = time.time()
        self.finished: float | None = None
        self.status: int | None = None
        self.cancelled = False

    def as_dict(self) -> dict[str, Any]:
        return {
            "path": self.path,
            "headers": {k.decode("latin-1"): v.decode("latin-1") for k, v in self.headers},
            "body": self.body,
            "started": self.started,
            "finished": self.finished,
            "status": self.status,
            "cancelled": self.cancelled,
        }


class _Job:
    """What one completion request asks the engine to generate."""

    __slots__ = ("chat", "finish", "model", "n", "priority", "prompt_tokens", "usage_chunk")

    def __init__(
        self,
        *,
        chat: bool,
        model: str,
        n: int,
        finish: str,
        prompt_tokens: int,
        priority: int,
        usage_chunk: bool,
    ) -> None:
        self.chat = chat
        self.model = model
        self.n = n
        self.finish = finish
        self.prompt_tokens = prompt_tokens
        self.priority = priority
        self.usage_chunk = usage_chunk

    def usage(self) -> dict[str, int]:
        return {
            "prompt_tokens": self.prompt_tokens,
            "completion_tokens": self.n,
            "total_tokens": self.prompt_tokens + self.n,
        }


class _Disconnected(Exception):
    """The client went away while its request was being read."""


class SimEngine:
    """The engine: configuration, slots, waiting queue, records and counters; `app` is ASGI3."""

    def __init__(self, config: SimConfig | None = None) -> None:
        self.config = config if config is not None else SimConfig()
        self._records: deque[_Record] = deque(maxlen=max(self.config.record_limit, 0))
        self._inflight = 0
        self._waiting = 0
        self._max_inflight_seen = 0
        self._total = 0
        self._cancelled = 0
        self._seq = 0
        self._queue: list[tuple[int, int, asyncio.Future[None]]] = []
        self._fail_next = 0
        self._fail_status = 503
        self._active: set[asyncio.Task[Any]] = set()
        self._closing = False
        # The loop serving the app, known from lifespan startup; SimServer stops through it.
        self.loop: asyncio.AbstractEventLoop | None = None
        self._routes: dict[tuple[str, str], Handler] = {
            ("GET", "/v1/models"): self._v1_models,
            ("GET", "/models"): self._models,
            ("GET", "/health"): self._health,
            ("GET", "/version"): self._version,
            ("GET", "/server_info"): self._server_info,
            ("POST", "/v1/chat/completions"): self._chat,
            ("POST", "/v1/completions"): self._completions,
            ("POST", "/v1/embeddings"): self._embeddings,
            ("GET", "/sim/requests"): self._sim_requests,
            ("GET", "/sim/stats"): self._sim_stats,
            ("POST", "/sim/reset"): self._sim_reset,
            ("POST", "/sim/config"): self._sim_config,
        }

    @property
    def app(self) -> SimEngine:
        return self

    # -- Python API (call it on the engine's own event loop; across threads use HTTP) --

    def stats(self) -> dict[str, int]:
        return {
            "inflight": self._inflight,
            "waiting": self._waiting,
            "max_inflight_seen": self._max_inflight_seen,
            "total": self._total,
            "cancelled": self._cancelled,
        }

    def records(self) -> list[dict[str, Any]]:
        return [record.as_dict() for record in self._records]

    def reset(self) -> None:
        """Forget records, counters and pending failure injection; keep the configuration."""
        self._records.clear()
        self._total = 0
        self._cancelled = 0
        self._max_inflight_seen = self._inflight
        self._fail_next = 0
        self._fail_status = 503

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
        for name, value in changes.items():
            if name in ("fail_next", "fail_status"):
                if not isinstance(value, int) or isinstance(value, bool):
                    raise ValueError(f"{name} must be an integer")
                if name == "fail_status" and not 400 <= value <= 599:
                    raise ValueError("fail_status must be an HTTP error status (400-599)")
                continue
            types = _FIELD_TYPES.get(name)
            if types is None:
                raise ValueError(f"unknown sim setting {name!r}")
            # bool is an int subclass, yet `"slots": true` is a mistake worth reporting.
            if not isinstance(value, types) or (isinstance(value, bool) and bool not in types):
                raise ValueError(f"{name} has the wrong type")
            if isinstance(value, list) and not all(isinstance(m, str) for m in value):
                raise ValueError("models must be a list of strings")
            if name == "server_info" and value not in SERVER_INFO_STYLES:
                raise ValueError(f"server_info must be one of {', '.join(SERVER_INFO_STYLES)}")
            if isinstance(value, int | float) and not isinstance(value, bool) and value < 0:
                raise ValueError(f"{name} cannot be negative")
        # Validate everything first so that a rejected update changes nothing.
        for name, value in changes.items():
            if name == "fail_next":
                self._fail_next = value
            elif name == "fail_status":
                self._fail_status = value
            else:
                setattr(self.config, name, float(value) if name == "token_delay" else value)
        if self._records.maxlen != self.config.record_limit:
            self._records = deque(self._records, maxlen=self.config.record_limit)
        # More slots may admit waiters at once.
        if self._waiting:
            self._dispatch()
        return self._state()

    def _state(self) -> dict[str, Any]:
        return {
            **asdict(self.config),
            "fail_next": self._fail_next,
            "fail_status": self._fail_status,
        }

    # -- engine slots --

    def _try_acquire(self) -> bool:
        if self._waiting == 0 and self._inflight < self.config.slots:
            self._admit()
            return True
        return False

    def _admit(self) -> None:
        self._inflight += 1
        if self._inflight > self._max_inflight_seen:
            self._max_inflight_seen = self._inflight

    def _queue_key(self, priority: int) -> int:
        cfg = self.config
        if not cfg.priority_scheduling:
            return 0
        if cfg.server_info == "vllm" or cfg.sglang_low_first:
            return priority
        return -priority

    async def _acquire(self, priority: int) -> None:
        """Wait for an engine slot, in the queue order the configuration asks for."""
        if self._try_acquire():
            return
        future: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._seq += 1
        heapq.heappush(self._queue, (self._queue_key(priority), self._seq, future))
        self._waiting += 1
        try:
            await future
        except asyncio.CancelledError:
            if future.cancelled():
                # Still queued: the heap entry is skipped lazily by _dispatch.
                self._waiting -= 1
            else:
                # The slot was handed over just before the cancellation landed.
                self._release()
            raise

    def _release(self) -> None:
        self._inflight -= 1
        if self._waiting:
            self._dispatch()

    def _dispatch(self) -> None:
        queue = self._queue
        while queue and self._inflight < self.config.slots:
            future = heapq.heappop(queue)[2]
            if future.done():
                continue
            future.set_result(None)
            self._waiting -= 1
            self._admit()

    # -- ASGI --

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        kind = scope["type"]
        if kind == "http":
            handler = self._routes.get((scope["method"], scope["path"]))
            if handler is None:
                await _send_bytes(
                    send, 404, _error_body("Not found", "invalid_request_error", "not_found")
                )
                return
            try:
                await handler(scope, receive, send)
            except _Disconnected:
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
        data = [
            {"id": m, "object": "model", "created": created, "owned_by": OWNER}
            for m in self.config.models
        ]
        return _encode({"object": "list", "data": data}).encode()

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
            await _send_bytes(send, *error)
            return
        await _send_bytes(send, 200, self._models_body())

    async def _health(self, scope: Scope, receive: Receive, send: Send) -> None:
        await _send_bytes(send, 200, b"{}")

    async def _version(self, scope: Scope, receive: Receive, send: Send) -> None:
        await _send_bytes(send, 200, _encode({"version": SIM_VERSION}).encode())

    async def _server_info(self, scope: Scope, receive: Receive, send: Send) -> None:
        cfg = self.config
        if cfg.server_info != "sglang":
            await _send_bytes(
                send, 404, _error_body("Not found", "invalid_request_error", "not_found")
            )
            return
        info = {
            "version": SGLANG_VERSION,
            "model_path": cfg.models[0] if cfg.models else None,
            "served_model_name": cfg.models[0] if cfg.models else None,
            "enable_priority_scheduling": cfg.sglang_priority,
            "schedule_policy": cfg.sglang_schedule_policy,
            "schedule_low_priority_values_first": cfg.sglang_low_first,
            "max_running_requests": cfg.slots,
        }
        await _send_bytes(send, 200, _encode(info).encode())

    # -- introspection --

    async def _sim_requests(self, scope: Scope, receive: Receive, send: Send) -> None:
        await _send_bytes(send, 200, _encode(self.records()).encode())

    async def _sim_stats(self, scope: Scope, receive: Receive, send: Send) -> None:
        await _send_bytes(send, 200, _encode(self.stats()).encode())

    async def _sim_reset(self, scope: Scope, receive: Receive, send: Send) -> None:
        await _read_body(receive)
        self.reset()
        await _send_bytes(send, 200, _encode(self.stats()).encode())

    async def _sim_config(self, scope: Scope, receive: Receive, send: Send) -> None:
        raw = await _read_body(receive)
        try:
            changes = json.loads(raw) if raw else {}
        except ValueError:
            changes = None
        if not isinstance(changes, dict):
            await _send_bytes(
                send,
                400,
                _error_body("Body must be a JSON object", "invalid_request_error", "invalid_json"),
            )
            return
        try:
            state = self.configure(**changes)
        except ValueError as exc:
            await _send_bytes(
                send, 400, _error_body(str(exc), "invalid_request_error", "invalid_setting")
            )
            return
        await _send_bytes(send, 200, _encode(state).encode())

    # -- /v1 request plumbing --

    def _record(self, scope: Scope, body: Any) -> _Record:
        record = _Record(scope["path"], scope["headers"], body)
        self._total += 1
        if self._records.maxlen:
            self._records.append(record)
        return record

    def _check_auth(self, scope: Scope) -> tuple[int, bytes] | None:
        key = self.config.api_key
        if key is None:
            return None
        expected = b"Bearer " + key.encode()
        for name, value in scope["headers"]:
            if name == b"authorization" and value == expected:
                return None
        return 401, _error_body(
            "Incorrect API key provided", "invalid_request_error", "invalid_api_key"
        )

    def _check(self, scope: Scope, *, post: bool) -> tuple[int, bytes] | None:
        """Authentication, then per-request and queued failure injection."""
        error = self._check_auth(scope)
        if error is not None:
            return error
        for name, value in scope["headers"]:
            if name == b"x-sim-fail":
                try:
                    status = int(value)
                except ValueError:
                    status = 0
                if not 400 <= status <= 599:
                    return 400, _error_body(
                        "x-sim-fail must be an HTTP error status",
                        "invalid_request_error",
                        "invalid_header",
                        "x-sim-fail",
                    )
                return status, _error_body(
                    f"Injected failure {status}", _error_type(status), "sim_injected_failure"
                )
        if post and self._fail_next > 0:
            self._fail_next -= 1
            status = self._fail_status
            return status, _error_body(
                f"Injected failure {status}", _error_type(status), "sim_injected_failure"
            )
        return None

    async def _finish(self, send: Send, record: _Record, status: int, body: bytes) -> None:
        record.status = status
        await _send_bytes(send, status, body)
        record.finished = time.time()

    async def _open(
        self, scope: Scope, receive: Receive, send: Send
    ) -> tuple[_Record, dict[str, Any], str] | None:
        """Read, record and vet a /v1 POST; answers and returns None when it cannot run."""
        raw = await _read_body(receive)
        try:
            body = _decode(raw.decode())
        except ValueError:
            body = None
        record = self._record(scope, body)
        error = self._check(scope, post=True)
        if error is not None:
            await self._finish(send, record, *error)
            return None
        if not isinstance(body, dict):
            await self._finish(
                send,
                record,
                400,
                _error_body(
                    "The body must be a JSON object", "invalid_request_error", "invalid_json"
                ),
            )
            return None
        model = body.get("model")
        if not isinstance(model, str) or model not in self.config.models:
            await self._finish(
                send,
                record,
                404,
                _error_body(
                    f"The model '{model}' does not exist",
                    "invalid_request_error",
                    "model_not_found",
                    "model",
                ),
            )
            return None
        return record, body, model

    async def _chat(self, scope: Scope, receive: Receive, send: Send) -> None:
        await self._complete(scope, receive, send, chat=True)

    async def _completions(self, scope: Scope, receive: Receive, send: Send) -> None:
        await self._complete(scope, receive, send, chat=False)

    async def _complete(self, scope: Scope, receive: Receive, send: Send, *, chat: bool) -> None:
        opened = await self._open(scope, receive, send)
        if opened is None:
            return
        record, body, model = opened
        cfg = self.config
        prompt = body.get("messages") if chat else body.get("prompt")
        n = max(cfg.tokens, 0)
        finish = "stop"
        limit = body.get("max_completion_tokens", body.get("max_tokens"))
        if isinstance(limit, int) and not isinstance(limit, bool) and limit < n:
            n = max(limit, 0)
            finish = "length"
        priority = body.get("priority", 0)
        if not isinstance(priority, int) or isinstance(priority, bool):
            priority = 0
        options = body.get("stream_options")
        job = _Job(
            chat=chat,
            model=model,
            n=n,
            finish=finish,
            prompt_tokens=_prompt_words(prompt),
            priority=priority,
            usage_chunk=isinstance(options, dict) and options.get("include_usage") is True,
        )
        if len(_tok_json) < n:
            _tokens(n)
        stream = body.get("stream") is True
        delay = cfg.token_delay
        # The instant engine's hot path: no waiting, no watcher task, no sleep.
        if not stream and delay <= 0 and self._try_acquire():
            try:
                payload = self._whole(job)
            finally:
                self._release()
            await self._finish(send, record, 200, payload)
            return
        if stream:
            await self._guarded(receive, send, record, self._stream(send, record, job, delay))
        else:
            await self._guarded(receive, send, record, self._generate(job, delay))

    async def _generate(self, job: _Job, delay: float) -> bytes:
        await self._acquire(job.priority)
        try:
            if delay > 0 and job.n:
                await asyncio.sleep(delay * job.n)
            return self._whole(job)
        finally:
            self._release()

    async def _guarded(
        self,
        receive: Receive,
        send: Send,
        record: _Record,
        run: Coroutine[Any, Any, bytes | None],
    ) -> None:
        """Run work that may wait or take time, abandoning it if the client leaves.

        `run` returns a whole JSON answer, or None for a stream it has sent but for [DONE].
        """
        if self._closing:
            run.close()
            await self._finish(send, record, 503, _SHUTTING_DOWN)
            return
        task = asyncio.current_task()
        if task is None:
            raise RuntimeError("an ASGI app runs inside a task")
        watcher = asyncio.get_running_loop().create_task(_watch(receive, task, record))
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
                await self._finish(send, record, 503, _SHUTTING_DOWN)
                return
            payload = None
        if payload is None:
            await send({"type": "http.response.body", "body": _DONE, "more_body": False})
            record.finished = time.time()
        else:
            await self._finish(send, record, 200, payload)

    def _whole(self, job: _Job) -> bytes:
        self._seq += 1
        n, prompt_tokens = job.n, job.prompt_tokens
        return (_CHAT_BODY if job.chat else _TEXT_BODY) % (
            self._seq,
            int(time.time()),
            encode_basestring_ascii(job.model).encode(),
            _answer(n),
            job.finish.encode(),
            prompt_tokens,
            n,
            prompt_tokens + n,
        )

    async def _stream(self, send: Send, record: _Record, job: _Job, delay: float) -> bytes | None:
        """Send one SSE chunk per token, the finish chunk and the usage chunk; not [DONE]."""
        record.status = 200
        await send({"type": "http.response.start", "status": 200, "headers": _SSE_HEADERS})
        await self._acquire(job.priority)
        try:
            self._seq += 1
            base: dict[str, Any] = {
                "id": f"{'chatcmpl-sim' if job.chat else 'cmpl-sim'}{self._seq}",
                "object": "chat.completion.chunk" if job.chat else "text_completion",
                "created": int(time.time()),
                "model": job.model,
            }
            first, rest, final = _chunk_frames(base, job)
            for i in range(job.n):
                if delay > 0:
                    await asyncio.sleep(delay)
                head, tail = first if i == 0 else rest
                await send(
                    {
                        "type": "http.response.body",
                        "body": head + _tok_json[i] + tail,
                        "more_body": True,
                    }
                )
            await send({"type": "http.response.body", "body": final, "more_body": True})
            if job.usage_chunk:
                usage = _encode({**base, "choices": [], "usage": job.usage()})
                await send(
                    {
                        "type": "http.response.body",
                        "body": b"data: " + usage.encode() + b"\n\n",
                        "more_body": True,
                    }
                )
        finally:
            self._release()
        return None

    async def _embeddings(self, scope: Scope, receive: Receive, send: Send) -> None:
        opened = await self._open(scope, receive, send)
        if opened is None:
            return
        record, body, model = opened
        value = body.get("input")
        items: list[Any]
        if isinstance(value, str):
            items = [value]
        elif (
            isinstance(value, list)
            and value
            and all(isinstance(v, int) and not isinstance(v, bool) for v in value)
        ):
            items = [value]
        elif isinstance(value, list) and value and all(isinstance(v, str | list) for v in value):
            items = value
        else:
            await self._finish(
                send,
                record,
                400,
                _error_body(
                    "input must be a string or a list of strings",
                    "invalid_request_error",
                    "invalid_input",
                    "input",
                ),
            )
            return
        if self._try_acquire():
            try:
                payload = _embeddings_body(model, items)
            finally:
                self._release()
            await self._finish(send, record, 200, payload)
            return
        await self._guarded(receive, send, record, self._embed(model, items))

    async def _embed(self, model: str, items: list[Any]) -> bytes:
        await self._acquire(0)
        try:
            return _embeddings_body(model, items)
        finally:
            self._release()


def _embeddings_body(model: str, items: list[Any]) -> bytes:
    prompt_tokens = max(_count_words(items), 1)
    data = [
        {"object": "embedding", "index": i, "embedding": _embedding(item)}
        for i, item in enumerate(items)
    ]
    usage = {"prompt_tokens": prompt_tokens, "total_tokens": prompt_tokens}
    return _encode({"object": "list", "data": data, "model": model, "usage": usage}).encode()


def _chunk_frames(
    base: dict[str, Any], job: _Job
) -> tuple[tuple[bytes, bytes], tuple[bytes, bytes], bytes]:
    """Pre-serialize a stream's chunks once, leaving a hole where each token's JSON goes."""

    def split(choice: dict[str, Any]) -> tuple[bytes, bytes]:
        head, _, tail = _encode({**base, "choices": [choice]}).rpartition(_HOLE_JSON)
        return b"data: " + head.encode(), tail.encode() + b"\n\n"

    if job.chat:
        first = split(
            {
                "index": 0,
                "delta": {"role": "assistant", "content": _HOLE},
                "logprobs": None,
                "finish_reason": None,
            }
        )
        rest = split(
            {"index": 0, "delta": {"content": _HOLE}, "logprobs": None, "finish_reason": None}
        )
        last: dict[str, Any] = {
            "index": 0,
            "delta": {},
            "logprobs": None,
            "finish_reason": job.finish,
        }
    else:
        first = rest = split({"index": 0, "text": _HOLE, "logprobs": None, "finish_reason": None})
        last = {"index": 0, "text": "", "logprobs": None, "finish_reason": job.finish}
    final = b"data: " + _encode({**base, "choices": [last]}).encode() + b"\n\n"
    return first, rest, final


async def _watch(receive: Receive, task: asyncio.Task[Any], record: _Record) -> None:
    """Cancel the request's task when its client disconnects."""
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            record.cancelled = True
            task.cancel()
            return


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


async def _send_bytes(send: Send, status: int, body: bytes) -> None:
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [(b"content-type", _JSON), (b"content-length", b"%d" % len(body))],
        }
    )
    await send({"type": "http.response.body", "body": body})


# -- running it --


def uvicorn_config(
    engine: SimEngine, host: str = "127.0.0.1", port: int = 0, *, fast: bool = False
) -> uvicorn.Config:
    """The engine's uvicorn configuration: no websockets, lifespan on, uvloop when `fast`."""
    return serving.uvicorn_config(engine.app, host, port, fast=fast, ws="none")


class SimServer(serving.ThreadedServer):
    """Runs a SimEngine under uvicorn in a daemon thread with its own event loop."""

    def __init__(
        self,
        config: SimConfig | None = None,
        *,
        host: str = "127.0.0.1",
        port: int = 0,
        engine: SimEngine | None = None,
    ) -> None:
        self.engine = engine if engine is not None else SimEngine(config)
        super().__init__(self.engine.app, host=host, port=port, ws="none")

    def stop(self, timeout: float = 5.0) -> None:
        loop = self.engine.loop
        if loop is not None:
            # Ends open streams and parked requests at once instead of after uvicorn's grace
            # period; the loop may already be closed when the server died first.
            with contextlib.suppress(RuntimeError):
                loop.call_soon_threadsafe(self.engine.abort_all)
        super().stop(timeout)

    def __enter__(self) -> SimServer:
        self.start()
        return self


async def serve(
    config: SimConfig | None = None,
    host: str = "127.0.0.1",
    port: int = 9100,
    *,
    engine: SimEngine | None = None,
) -> None:
    """Serve the engine on the running event loop until cancelled, then shut down cleanly."""
    engine = engine if engine is not None else SimEngine(config)
    server = uvicorn.Server(uvicorn_config(engine, host, port))
    task = asyncio.ensure_future(server.serve())
    try:
        await asyncio.shield(task)
    except asyncio.CancelledError:
        server.should_exit = True
        await task
        raise


def _parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="python -m gateway.sim", description="Run the simulated OpenAI-compatible engine."
    )
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=9100)
    parser.add_argument("--slots", type=int, default=4, help="concurrent generations")
    parser.add_argument("--tokens", type=int, default=16, help="tokens per completion")
    parser.add_argument(
        "--token-delay-ms", type=float, default=20.0, help="delay between tokens; 0 = instant"
    )
    parser.add_argument("--models", default="sim-small,sim-large", help="comma-separated ids")
    parser.add_argument("--server-info", choices=SERVER_INFO_STYLES, default="none")
    parser.add_argument("--api-key", default=None)
    parser.add_argument(
        "--priority-scheduling",
        action="store_true",
        help="admit waiting requests by the body's `priority` field",
    )
    parser.add_argument("--sglang-low-first", action="store_true")
    parser.add_argument("--sglang-schedule-policy", default="fcfs")
    parser.add_argument("--no-sglang-priority", action="store_true")
    parser.add_argument("--record-limit", type=int, default=1000)
    return parser.parse_args(argv)


def _iter_models(spec: str) -> Iterator[str]:
    for name in spec.split(","):
        if name.strip():
            yield name.strip()


def main(argv: list[str] | None = None) -> None:
    args = _parse_args(argv)
    config = SimConfig(
        models=list(_iter_models(args.models)),
        slots=args.slots,
        tokens=args.tokens,
        token_delay=args.token_delay_ms / 1000.0,
        api_key=args.api_key,
        server_info=args.server_info,
        sglang_priority=not args.no_sglang_priority,
        sglang_schedule_policy=args.sglang_schedule_policy,
        sglang_low_first=args.sglang_low_first,
        priority_scheduling=args.priority_scheduling,
        record_limit=args.record_limit,
    )
    engine = SimEngine(config)
    server = uvicorn.Server(uvicorn_config(engine, args.host, args.port, fast=True))
    print(
        f"aiplane-sim serving {', '.join(config.models)} on http://{args.host}:{args.port}",
        file=sys.stderr,
    )
    server.run()


if __name__ == "__main__":
    main()
