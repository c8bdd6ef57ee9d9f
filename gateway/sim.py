"""A simulated OpenAI-compatible engine: demo backend, test upstream and benchmark target.

It imitates SGLang (`server_info="sglang"`), vLLM (`"vllm"`) or a plain OpenAI-compatible server
(`"none"`) wherever the gateway's tests lean on an engine's behaviour. Each row below was read in
the engine's own source (SGLang and vLLM main, 2026; the versions named) and has a test in
tests/gateway/test_sim.py that names its number.

+---------------------------------------------+-----------------+----------------------------------+
| behaviour                                   | imitates        | source read                      |
+=============================================+=================+==================================+
| 1. The server info is one flat object       | SGLang 0.4.6 to | sglang srt/entrypoints/          |
| (server args, scheduler info, `version`) at | 0.5.23          | http_server.py: get_server_info, |
| /get_server_info, and also at /server_info  |                 | server_info                      |
| from 0.5.6; other styles answer 404 there   |                 |                                  |
+---------------------------------------------+-----------------+----------------------------------+
| 2. `enable_priority_scheduling` and         | SGLang 0.5.3    | sglang srt/server_args.py;       |
| `schedule_low_priority_values_first` are    |                 | FACTS.md                         |
| reported, and priority is honoured, only    |                 |                                  |
| from 0.5.3; `version` is `sglang_version`   |                 |                                  |
+---------------------------------------------+-----------------+----------------------------------+
| 3. /v1/models entries are owned_by `sglang` | SGLang, vLLM    | sglang srt/entrypoints/openai/   |
| / `vllm`; /version reports the imitated     |                 | protocol.py, vllm entrypoints/   |
| version                                     |                 | openai/engine/protocol.py:       |
|                                             |                 | ModelCard                        |
+---------------------------------------------+-----------------+----------------------------------+
| 4. With priority scheduling larger values   | SGLang          | sglang srt/managers/             |
| run first (smaller with                     |                 | schedule_policy.py:              |
| `schedule_low_priority_values_first`),      |                 | _sort_by_priority_and_fcfs,      |
| equal ones in arrival order under fcfs; lof |                 | _sort_by_longest_output          |
| runs the longest output first (within a     |                 |                                  |
| priority); other policies ignore priority   |                 |                                  |
+---------------------------------------------+-----------------+----------------------------------+
| 5. A request without a priority runs after  | SGLang 0.5.3    | sglang srt/managers/             |
| every request that has one (SGLang gives it |                 | scheduler.py:                    |
| sys.maxsize, or -sys.maxsize-1 when larger  |                 | _set_or_validate_priority        |
| values run first)                           |                 |                                  |
+---------------------------------------------+-----------------+----------------------------------+
| 6. Smaller values run first, and a request  | vLLM 0.33       | vllm entrypoints/openai/         |
| without a priority counts as 0              |                 | chat_completion/protocol.py      |
|                                             |                 | (priority: int = 0); FACTS.md    |
+---------------------------------------------+-----------------+----------------------------------+
| 7. A stream's status line leaves with its   | SGLang, since   | sglang srt/entrypoints/openai/   |
| first chunk: a stream still waiting for a   | PR #21900       | serving_chat.py:                 |
| slot has sent nothing at all (the generic   | (2026-04)       | _handle_streaming_request        |
| sim does the same)                          |                 |                                  |
+---------------------------------------------+-----------------+----------------------------------+
| 8. A stream answers 200 at once, before its | vLLM            | vllm entrypoints/openai/         |
| request is queued                           |                 | chat_completion/api_router.py    |
|                                             |                 | (returns the StreamingResponse)  |
+---------------------------------------------+-----------------+----------------------------------+
| 9. `max_queued_requests` (SGLang's          | SGLang          | sglang srt/managers/             |
| --max-queued-requests) bounds the waiters:  |                 | scheduler.py:                    |
| an arrival beyond it is refused with 503    |                 | _abort_on_queued_limit           |
| "The request queue is full."; with priority |                 |                                  |
| scheduling a strictly better arrival evicts |                 |                                  |
| the least preferred waiter (the newest of   |                 |                                  |
| the lowest) with 503 "The request is        |                 |                                  |
| aborted by a higher priority request."      |                 |                                  |
+---------------------------------------------+-----------------+----------------------------------+
| 10. Error bodies: SGLang flat               | SGLang; vLLM    | sglang http_server.py            |
| {"object":"error", "message", "type",       | 0.10.0 and 0.33 | (HTTPException handler), openai/ |
| "param", "code": int} (`type` the status as |                 | serving_base.py; vllm            |
| text for an abort); vLLM nested {"error":   |                 | entrypoints/openai/engine/       |
| {"message", "type", "param", "code": int}}  |                 | protocol.py ErrorInfo, PR #22099 |
| from 0.10.1, flat before; the generic sim   |                 |                                  |
| OpenAI's {"error": {..., "code": str}}      |                 |                                  |
+---------------------------------------------+-----------------+----------------------------------+
| 11. A refused or evicted stream is 200, one | SGLang; vLLM    | sglang openai/serving_chat.py:   |
| error event {"error": {...}} (SGLang names  | ends failed     | _generate_chat_stream,           |
| the status there: SERVICE_UNAVAILABLE),     | streams alike   | serving_base.py:                 |
| then `data: [DONE]`, as every failed stream |                 | create_streaming_error_response; |
| ends                                        |                 | vllm chat_completion/serving.py  |
+---------------------------------------------+-----------------+----------------------------------+

Source paths are relative to python/sglang/ and vllm/ in the engines' repositories.

Not imitated, on purpose: SGLang notices that a non-streaming client left only when it next polls
(seconds); the sim frees the slot at once. vLLM's `--max-num-queued-reqs` counts running requests
too; the sim's bound is SGLang's. Requests that carry a priority while scheduling is off are
ignored (SGLang 0.5.4+, vLLM), not aborted as SGLang 0.5.3 did.

Faults on purpose: with `directives=True` a request whose text (its last message, prompt or first
input) starts with `[[sim:...]]` gets the fault it names; the syntax and the wire-level faults are
in gateway/faults.py. Faults that end an answer early take no slot; the others (hang-mid, slow,
garbage, no-blank, cut) queue for one like any request.

================  ==================  ============================================================
sim fault         params (default)    what the client receives
================  ==================  ============================================================
status            code=500, shape     that error status (400-599) with an error body in `shape`
                                      (openai, sglang, vllm-flat, vllm; default: the engine's)
html              code=500            that status with an HTML error page (text/html)
redirect          code=302, location  that 3xx with a Location header and an empty body
queue-full        shape               SGLang's refusal: 503 "The request queue is full." (a stream:
                                      200, an error event, then [DONE])
evicted           shape               the same with "The request is aborted by a higher priority
                                      request."
hang                                  nothing, until the client leaves
hang-mid          after=1 (or half)   streams: `after` token events, then nothing until the client
                                      leaves; otherwise the head (full content-length) and `after`
                                      bytes of the body (half of it by default), then nothing
slow              delay=0.05          seconds between tokens (a whole answer waits delay x tokens)
bad-json                              200 application/json whose body is not JSON
garbage           after=1             streams: `after` token events, a line that is not SSE (and
                                      not UTF-8), then the rest of the stream
no-blank          after=1             streams: `after` token events, then one event without its
                                      blank line (it runs into the next), then the rest
cut               after=1 (or half)   streams: `after` token events, then the connection drops
                                      (no final chunk); otherwise the head (full content-length)
                                      and `after` bytes (half by default), then the connection drops
reset                                 the connection drops before any byte
================  ==================  ============================================================

Concurrency as the engine sees it: `open` counts generation requests (POST /v1/...) from the
moment their body is read until their last byte is sent or their client's disconnect is seen,
and `max_open_seen` is its maximum since the last reset (see `_count_open` for why it is
exact).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import hashlib
import heapq
import json
import logging
import re
import struct
import sys
import threading
import time
from collections import deque
from collections.abc import Awaitable, Callable, Coroutine, Iterator
from dataclasses import asdict, dataclass, field
from http import HTTPStatus
from json.encoder import encode_basestring_ascii
from typing import Any

import uvicorn

from gateway import faults, serving

Scope = dict[str, Any]
Message = dict[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
Handler = Callable[[Scope, Receive, Send], Awaitable[None]]

SERVER_INFO_STYLES = ("none", "sglang", "vllm")
ERROR_SHAPES = ("openai", "sglang", "vllm-flat", "vllm")
SIM_VERSION = "sim-1.0"
OWNER = "aiplane-sim"
OWNERS = {"none": OWNER, "sglang": "sglang", "vllm": "vllm"}
EMBEDDING_DIMENSION = 8
QUEUE_FULL = "The request queue is full."
EVICTED = "The request is aborted by a higher priority request."

# Versions at which the imitated behaviour changed.
SGLANG_PRIORITY_SINCE = (0, 5, 3)
SGLANG_SERVER_INFO_SINCE = (0, 5, 6)
VLLM_NESTED_ERRORS_SINCE = (0, 10, 1)
# SGLang ranks a request without a priority after all others, whichever the direction.
_SGLANG_NO_PRIORITY_RANK = sys.maxsize + 1
# SGLang's policies that sort by priority; the cache-aware ones ignore it.
_SGLANG_PRIORITY_POLICIES = ("fcfs", "lof")

_VERSION = re.compile(r"(\d+)\.(\d+)\.(\d+)")


def _parse_version(text: str) -> tuple[int, int, int]:
    match = _VERSION.match(text)
    if match is None:
        raise ValueError(f"{text!r} is not a version like 0.5.23")
    return int(match.group(1)), int(match.group(2)), int(match.group(3))


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
    # The engine imitated (see the table above): "none", "sglang" or "vllm".
    server_info: str = "none"
    sglang_version: str = "0.5.23"
    sglang_schedule_policy: str = "fcfs"
    sglang_low_first: bool = False
    vllm_version: str = "0.33.0"
    # Admit waiters by the body's `priority` in the imitated engine's order; arrival order when
    # off. Under "sglang" this is --enable-priority-scheduling, reported by the server info.
    priority_scheduling: bool = False
    # SGLang's --max-queued-requests: more waiters than this are refused (None: unbounded).
    max_queued_requests: int | None = None
    # Honour [[sim:...]] fault directives; off, so callers of the demo engine cannot ask for one.
    directives: bool = False
    record_limit: int = 1000


# The accepted run-time types of each SimConfig field, for POST /sim/config.
_FIELD_TYPES: dict[str, tuple[type, ...]] = {
    "models": (list,),
    "slots": (int,),
    "tokens": (int,),
    "token_delay": (int, float),
    "api_key": (str, type(None)),
    "server_info": (str,),
    "sglang_version": (str,),
    "sglang_schedule_policy": (str,),
    "sglang_low_first": (bool,),
    "vllm_version": (str,),
    "priority_scheduling": (bool,),
    "max_queued_requests": (int, type(None)),
    "directives": (bool,),
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
# Fault bodies: a line no SSE or UTF-8 decoder accepts as anything, and JSON cut mid-object.
_GARBAGE = b"\xfe\xff not an event \xff\n\n"
_NOT_JSON = b'{"id":"chatcmpl-sim","object":"chat.completion","choices":[{"index":0,"mess'
_HTML_PAGE = (
    "<html>\r\n<head><title>{code} {phrase}</title></head>\r\n<body>\r\n"
    "<center><h1>{code} {phrase}</h1></center>\r\n<hr><center>nginx</center>\r\n"
    "</body>\r\n</html>\r\n"
)

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
    """The sim's own refusals (bad key, body or model): OpenAI's envelope in every style."""
    return _encode(
        {"error": {"message": message, "type": type_, "param": param, "code": code}}
    ).encode()


def _vllm_type(status: int) -> str:
    # vLLM names the error class: BadRequestError, NotFoundError, InternalServerError, ...
    return "".join(HTTPStatus(status).phrase.split()) + "Error"


def _error_inner(shape: str, status: int, message: str, code: str) -> dict[str, Any]:
    if shape == "sglang":
        return {"object": "error", "message": message, "type": str(status), "param": None,
                "code": status}  # fmt: skip
    if shape == "vllm-flat":
        return {"object": "error", "message": message, "type": _vllm_type(status),
                "param": None, "code": status}  # fmt: skip
    if shape == "vllm":
        return {"message": message, "type": _vllm_type(status), "param": None, "code": status}
    return {"message": message, "type": _error_type(status), "param": None, "code": code}


def shaped_error(shape: str, status: int, message: str, code: str) -> bytes:
    """A non-streaming error body as the engine of `shape` writes it (`code` for openai only)."""
    inner = _error_inner(shape, status, message, code)
    body = {"error": inner} if shape in ("openai", "vllm") else inner
    return _encode(body).encode()


def shaped_error_event(shape: str, status: int, message: str, code: str) -> bytes:
    """The error event that ends a failed stream: {"error": ...} in the engine's inner shape."""
    inner = _error_inner(shape, status, message, code)
    if shape == "sglang":
        # In a stream SGLang names the status (SERVICE_UNAVAILABLE) instead of numbering it.
        inner["type"] = HTTPStatus(status).name
    return b"data: " + _encode({"error": inner}).encode() + b"\n\n"


_SHUTTING_DOWN = _error_body("The engine is shutting down", "server_error", "sim_shutting_down")


def _error_type(status: int) -> str:
    if status == 429:
        return "rate_limit_error"
    if status >= 500:
        return "server_error"
    return "invalid_request_error"


class _Record:
    """One /v1 request as seen by the engine; rendered to JSON only when asked for."""

    __slots__ = (
        "body",
        "cancelled",
        "fault",
        "finished",
        "headers",
        "open",
        "path",
        "started",
        "status",
    )

    def __init__(self, path: str, headers: list[tuple[bytes, bytes]], body: Any) -> None:
        self.path = path
        self.headers = headers
        self.body = body
        self.started = time.time()
        self.finished: float | None = None
        self.status: int | None = None
        self.cancelled = False
        self.open = False
        self.fault: str | None = None

    def as_dict(self) -> dict[str, Any]:
        return {
            "path": self.path,
            "headers": {k.decode("latin-1"): v.decode("latin-1") for k, v in self.headers},
            "body": self.body,
            "started": self.started,
            "finished": self.finished,
            "status": self.status,
            "cancelled": self.cancelled,
            "fault": self.fault,
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
        priority: int | None,
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


class _Refused(Exception):
    """The bounded queue turned the request away (full, or evicted by a better arrival)."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message
        # The code the generic sim's OpenAI envelope gives it (the engines' shapes number it).
        self.code = "queue_full" if message == QUEUE_FULL else "evicted"


class _Drop(Exception):
    """Raised out of the app on purpose: uvicorn then drops the connection (a fault)."""


class _QuietDrops(logging.Filter):
    """Keeps uvicorn from logging a traceback for each connection the sim drops on purpose."""

    def filter(self, record: logging.LogRecord) -> bool:
        return not (record.exc_info and isinstance(record.exc_info[1], _Drop))


logging.getLogger("uvicorn.error").addFilter(_QuietDrops())


def _priority_of(body: dict[str, Any]) -> int | None:
    priority = body.get("priority")
    if isinstance(priority, int) and not isinstance(priority, bool):
        return priority
    return None


class SimEngine:
    """The engine: configuration, slots, waiting queue, records and counters; `app` is ASGI3."""

    def __init__(self, config: SimConfig | None = None) -> None:
        self.config = config if config is not None else SimConfig()
        self._records: deque[_Record] = deque(maxlen=max(self.config.record_limit, 0))
        self._inflight = 0
        self._waiting = 0
        self._max_inflight_seen = 0
        self._open_count = 0
        self._max_open_seen = 0
        self._total = 0
        self._cancelled = 0
        self._rejected = 0
        self._evicted = 0
        self._seq = 0
        # (rank, secondary, arrival, future): the smallest runs first.
        self._queue: list[tuple[int, int, int, asyncio.Future[None]]] = []
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
            ("GET", "/get_server_info"): self._get_server_info,
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
            "open": self._open_count,
            "max_open_seen": self._max_open_seen,
            "total": self._total,
            "cancelled": self._cancelled,
            "rejected": self._rejected,
            "evicted": self._evicted,
        }

    def records(self) -> list[dict[str, Any]]:
        return [record.as_dict() for record in self._records]

    def reset(self) -> None:
        """Forget records, counters and pending failure injection; keep the configuration.

        The maxima restart from what is open right now, so a run measures only itself.
        """
        self._records.clear()
        self._total = 0
        self._cancelled = 0
        self._rejected = 0
        self._evicted = 0
        self._max_inflight_seen = self._inflight
        self._max_open_seen = self._open_count
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
            if name in ("sglang_version", "vllm_version"):
                _parse_version(str(value))
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

    # -- the imitated engine --

    def _shape(self) -> str:
        style = self.config.server_info
        if style == "sglang":
            return "sglang"
        if style == "vllm":
            nested = _parse_version(self.config.vllm_version) >= VLLM_NESTED_ERRORS_SINCE
            return "vllm" if nested else "vllm-flat"
        return "openai"

    def _sglang_has_priority(self) -> bool:
        return _parse_version(self.config.sglang_version) >= SGLANG_PRIORITY_SINCE

    def _ranks_by_priority(self) -> bool:
        cfg = self.config
        if not cfg.priority_scheduling:
            return False
        if cfg.server_info == "sglang":
            return (
                self._sglang_has_priority()
                and cfg.sglang_schedule_policy in _SGLANG_PRIORITY_POLICIES
            )
        return True

    def _rank(self, priority: int | None) -> int:
        """Where a waiter's priority puts it: the smallest rank runs first."""
        if not self._ranks_by_priority():
            return 0
        cfg = self.config
        if cfg.server_info == "vllm":
            return 0 if priority is None else priority
        if priority is None:
            return _SGLANG_NO_PRIORITY_RANK
        return priority if cfg.sglang_low_first else -priority

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

    async def _acquire(self, priority: int | None, n: int = 0) -> None:
        """Wait for an engine slot, in the queue order the configuration asks for.

        Raises _Refused when the bounded queue turns the request away, or evicts it later.
        """
        if self._try_acquire():
            return
        cfg = self.config
        rank = self._rank(priority)
        # SGLang's lof policy runs the longest output first (within a priority, when on).
        lof = cfg.server_info == "sglang" and cfg.sglang_schedule_policy == "lof"
        secondary = -n if lof else 0
        bound = cfg.max_queued_requests
        if bound is not None and self._waiting >= bound and not self._evict_for(rank):
            self._rejected += 1
            raise _Refused(QUEUE_FULL)
        future: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._seq += 1
        heapq.heappush(self._queue, (rank, secondary, self._seq, future))
        self._waiting += 1
        try:
            await future
        except asyncio.CancelledError:
            if future.cancelled():
                # Still queued: the heap entry is skipped lazily by _dispatch.
                self._waiting -= 1
            elif future.exception() is None:
                # The slot was handed over just before the cancellation landed.
                self._release()
            # Otherwise it was evicted just before, and is counted out already.
            raise

    def _evict_for(self, rank: int) -> bool:
        """SGLang's eviction: the least preferred waiter makes room for a strictly better one."""
        if not self._ranks_by_priority():
            return False
        worst: tuple[int, int, int, asyncio.Future[None]] | None = None
        for entry in self._queue:
            if entry[3].done():
                continue
            # Ties go to the newest: (rank, arrival) is largest for the least preferred.
            if worst is None or (entry[0], entry[2]) > (worst[0], worst[2]):
                worst = entry
        if worst is None or not rank < worst[0]:
            return False
        worst[3].set_exception(_Refused(EVICTED))
        self._waiting -= 1
        self._evicted += 1
        return True

    def _release(self) -> None:
        self._inflight -= 1
        if self._waiting:
            self._dispatch()

    def _dispatch(self) -> None:
        queue = self._queue
        while queue and self._inflight < self.config.slots:
            future = heapq.heappop(queue)[3]
            if future.done():
                continue
            future.set_result(None)
            self._waiting -= 1
            self._admit()

    # -- what the engine has open --

    def _count_open(self, record: _Record) -> None:
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

    def _leave(self, record: _Record) -> None:
        if record.open:
            record.open = False
            self._open_count -= 1

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
        owner = OWNERS.get(self.config.server_info, OWNER)
        data = [
            {"id": m, "object": "model", "created": created, "owned_by": owner}
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
        style = self.config.server_info
        version = {"sglang": self.config.sglang_version, "vllm": self.config.vllm_version}
        await _send_bytes(send, 200, _encode({"version": version.get(style, SIM_VERSION)}).encode())

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
        if self._sglang_has_priority():
            info["enable_priority_scheduling"] = cfg.priority_scheduling
            info["schedule_low_priority_values_first"] = cfg.sglang_low_first
        info["version"] = cfg.sglang_version
        return _encode(info).encode()

    async def _get_server_info(self, scope: Scope, receive: Receive, send: Send) -> None:
        if self.config.server_info != "sglang":
            await _send_bytes(
                send, 404, _error_body("Not found", "invalid_request_error", "not_found")
            )
            return
        await _send_bytes(send, 200, self._server_info_body())

    async def _server_info(self, scope: Scope, receive: Receive, send: Send) -> None:
        cfg = self.config
        if (
            cfg.server_info != "sglang"
            or _parse_version(cfg.sglang_version) < SGLANG_SERVER_INFO_SINCE
        ):
            await _send_bytes(
                send, 404, _error_body("Not found", "invalid_request_error", "not_found")
            )
            return
        await _send_bytes(send, 200, self._server_info_body())

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

    def _injected(self, status: int) -> tuple[int, bytes]:
        return status, shaped_error(
            self._shape(), status, f"Injected failure {status}", "sim_injected_failure"
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
                return self._injected(status)
        if post and self._fail_next > 0:
            self._fail_next -= 1
            return self._injected(self._fail_status)
        return None

    async def _finish(
        self, send: Send, record: _Record, status: int, body: bytes, kind: bytes = _JSON
    ) -> None:
        record.status = status
        await _send_bytes(send, status, body, kind)
        record.finished = time.time()

    async def _start(
        self, send: Send, record: _Record, status: int, headers: list[tuple[bytes, bytes]]
    ) -> None:
        record.status = status
        await send({"type": "http.response.start", "status": status, "headers": headers})

    async def _open(
        self, scope: Scope, receive: Receive, send: Send
    ) -> tuple[_Record, dict[str, Any], str] | None:
        """Read, record and vet a /v1 POST; answers and returns None when it cannot run.

        The record it returns is open: the caller must _leave it when its answer ends.
        """
        raw = await _read_body(receive)
        try:
            body = _decode(raw.decode())
        except ValueError:
            body = None
        record = self._record(scope, body)
        if self._open_count >= self._max_open_seen:
            await asyncio.sleep(0)  # why: see _count_open
        self._count_open(record)
        error = self._check(scope, post=True)
        if error is None:
            if not isinstance(body, dict):
                error = (
                    400,
                    _error_body(
                        "The body must be a JSON object", "invalid_request_error", "invalid_json"
                    ),
                )
            else:
                model = body.get("model")
                if isinstance(model, str) and model in self.config.models:
                    return record, body, model
                error = (
                    404,
                    _error_body(
                        f"The model '{model}' does not exist",
                        "invalid_request_error",
                        "model_not_found",
                        "model",
                    ),
                )
        try:
            await self._finish(send, record, *error)
        finally:
            self._leave(record)
        return None

    async def _chat(self, scope: Scope, receive: Receive, send: Send) -> None:
        await self._complete(scope, receive, send, chat=True)

    async def _completions(self, scope: Scope, receive: Receive, send: Send) -> None:
        await self._complete(scope, receive, send, chat=False)

    async def _complete(self, scope: Scope, receive: Receive, send: Send, *, chat: bool) -> None:
        opened = await self._open(scope, receive, send)
        if opened is None:
            return
        record, body, model = opened
        try:
            cfg = self.config
            prompt = body.get("messages") if chat else body.get("prompt")
            n = max(cfg.tokens, 0)
            finish = "stop"
            limit = body.get("max_completion_tokens", body.get("max_tokens"))
            if isinstance(limit, int) and not isinstance(limit, bool) and limit < n:
                n = max(limit, 0)
                finish = "length"
            options = body.get("stream_options")
            job = _Job(
                chat=chat,
                model=model,
                n=n,
                finish=finish,
                prompt_tokens=_prompt_words(prompt),
                priority=_priority_of(body),
                usage_chunk=isinstance(options, dict) and options.get("include_usage") is True,
            )
            if len(_tok_json) < n:
                _tokens(n)
            stream = body.get("stream") is True
            delay = cfg.token_delay
            if cfg.directives and await self._with_fault(
                receive, send, record, body, stream, job, lambda wait: self._generate(job, wait)
            ):
                return
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
        finally:
            self._leave(record)

    async def _generate(self, job: _Job, delay: float) -> bytes:
        await self._acquire(job.priority, job.n)
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

        `run` returns a whole JSON answer, or None when it has sent its answer but for the end
        (a stream's [DONE]; nothing for a deliberately broken answer, which raises instead).
        """
        if self._closing:
            run.close()
            await self._finish(send, record, 503, _SHUTTING_DOWN)
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
        except _Refused as refused:
            # Only an answer that has not started is refused this way; a stream writes its own.
            body = shaped_error(self._shape(), 503, refused.message, refused.code)
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
                await self._finish(send, record, 503, _SHUTTING_DOWN)
                return
            if record.fault is not None:
                raise _Drop from None  # a deliberately broken answer cannot end well
            payload = None
        if payload is None:
            await send({"type": "http.response.body", "body": _DONE, "more_body": False})
            record.finished = time.time()
        else:
            await self._finish(send, record, 200, payload)

    async def _watch(self, receive: Receive, task: asyncio.Task[Any], record: _Record) -> None:
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

    def _stream_base(self, job: _Job) -> dict[str, Any]:
        self._seq += 1
        return {
            "id": f"{'chatcmpl-sim' if job.chat else 'cmpl-sim'}{self._seq}",
            "object": "chat.completion.chunk" if job.chat else "text_completion",
            "created": int(time.time()),
            "model": job.model,
        }

    async def _stream_admitted(self, send: Send, record: _Record, job: _Job) -> bool:
        """Take a slot for a stream, answering a refusal as SGLang does: 200, error, [DONE].

        vLLM answers 200 before the request is queued; SGLang and the generic sim send the
        status line with the first chunk. Returns False when refused (all but [DONE] sent).
        """
        early = self.config.server_info == "vllm"
        if early:
            await self._start(send, record, 200, _SSE_HEADERS)
        try:
            await self._acquire(job.priority, job.n)
        except _Refused as refused:
            if not early:
                await self._start(send, record, 200, _SSE_HEADERS)
            event = shaped_error_event(self._shape(), 503, refused.message, refused.code)
            await send({"type": "http.response.body", "body": event, "more_body": True})
            return False
        return True

    async def _stream(self, send: Send, record: _Record, job: _Job, delay: float) -> bytes | None:
        """Send one SSE chunk per token, the finish chunk and the usage chunk; not [DONE]."""
        if not await self._stream_admitted(send, record, job):
            return None
        try:
            base = self._stream_base(job)
            first, rest, final = _chunk_frames(base, job)
            started = record.status is not None
            if job.n:
                if delay > 0:
                    await asyncio.sleep(delay)
                if not started:
                    await self._start(send, record, 200, _SSE_HEADERS)
                head, tail = first
                await send(
                    {
                        "type": "http.response.body",
                        "body": head + _tok_json[0] + tail,
                        "more_body": True,
                    }
                )
                head, tail = rest
                for i in range(1, job.n):
                    if delay > 0:
                        await asyncio.sleep(delay)
                    elif not i & 63:
                        # An instant stream still lets the loop run now and then, as a real
                        # engine's decode steps do: else a long one would hold it (and a
                        # client's disconnect unseen) until its last token.
                        await asyncio.sleep(0)
                    await send(
                        {
                            "type": "http.response.body",
                            "body": head + _tok_json[i] + tail,
                            "more_body": True,
                        }
                    )
            elif not started:
                await self._start(send, record, 200, _SSE_HEADERS)
            await send({"type": "http.response.body", "body": final, "more_body": True})
            if job.usage_chunk:
                await send(
                    {
                        "type": "http.response.body",
                        "body": _usage_event(base, job),
                        "more_body": True,
                    }
                )
        finally:
            self._release()
        return None

    # -- faults on purpose --

    async def _with_fault(
        self,
        receive: Receive,
        send: Send,
        record: _Record,
        body: dict[str, Any],
        stream: bool,
        job: _Job | None,
        whole: Callable[[float], Coroutine[Any, Any, bytes]],
    ) -> bool:
        """Answer as the body's [[sim:...]] directive asks; False when it has none.

        `whole(delay)` waits for a slot and returns the whole answer `delay` later; `job` is
        what a stream would generate (None for embeddings, which never stream).
        """
        try:
            fault = faults.find(body, "sim")
            if fault is None:
                return False
            record.fault = fault.fault
            await self._faulty(receive, send, record, fault, stream and job is not None, job, whole)
        except faults.DirectiveError as exc:
            if record.status is not None:
                raise
            error = _error_body(str(exc), "invalid_request_error", "invalid_sim_directive")
            await self._finish(send, record, 400, error)
        return True

    async def _faulty(
        self,
        receive: Receive,
        send: Send,
        record: _Record,
        fault: faults.Directive,
        stream: bool,
        job: _Job | None,
        whole: Callable[[float], Coroutine[Any, Any, bytes]],
    ) -> None:
        """Answer as the directive asks (see the table of sim faults above)."""
        name = fault.fault
        if name == "status":
            code = fault.integer("code", 500, 400, 599)
            shape = fault.choice("shape", self._shape(), ERROR_SHAPES)
            message = f"Injected failure {code}"
            await self._finish(send, record, code, shaped_error(shape, code, message, "sim_fault"))
        elif name == "html":
            code = fault.integer("code", 500, 400, 599)
            page = _HTML_PAGE.format(code=code, phrase=HTTPStatus(code).phrase).encode()
            await self._finish(send, record, code, page, b"text/html; charset=utf-8")
        elif name == "redirect":
            code = fault.integer("code", 302, 300, 399)
            location = fault.args.get("location", "/v1/elsewhere").encode()
            headers = [(b"location", location), (b"content-length", b"0")]
            await self._start(send, record, code, headers)
            await send({"type": "http.response.body", "body": b""})
            record.finished = time.time()
        elif name in ("queue-full", "evicted"):
            shape = fault.choice("shape", self._shape(), ERROR_SHAPES)
            refused = _Refused(QUEUE_FULL if name == "queue-full" else EVICTED)
            message, error_code = refused.message, refused.code
            if stream:
                await self._start(send, record, 200, _SSE_HEADERS)
                event = shaped_error_event(shape, 503, message, error_code)
                await send({"type": "http.response.body", "body": event, "more_body": True})
                await send({"type": "http.response.body", "body": _DONE})
                record.finished = time.time()
            else:
                await self._finish(send, record, 503, shaped_error(shape, 503, message, error_code))
        elif name == "bad-json":
            await self._finish(send, record, 200, _NOT_JSON)
        elif name == "reset":
            await _drop_before_any_byte(send)
        elif name == "hang":
            await self._guarded(receive, send, record, _forever())
        elif name == "slow":
            slow = fault.number("delay", 0.05, 0.0, 60.0)
            if stream and job is not None:
                await self._guarded(receive, send, record, self._stream(send, record, job, slow))
            else:
                await self._guarded(receive, send, record, whole(slow))
        elif name in ("hang-mid", "cut", "garbage", "no-blank"):
            if not stream and name in ("garbage", "no-blank"):
                raise faults.DirectiveError(f"{name} needs a streaming request")
            # Without `after` a whole answer breaks halfway (-1 tells _broken_whole so).
            after = fault.integer("after", 1 if stream else -1, 0, 1 << 30)
            delay = self.config.token_delay
            run: Coroutine[Any, Any, bytes | None]
            if stream and job is not None:
                run = self._broken_stream(send, record, job, delay, name, after)
            else:
                run = self._broken_whole(send, record, whole(delay), name, after)
            await self._guarded(receive, send, record, run)

    async def _broken_stream(
        self, send: Send, record: _Record, job: _Job, delay: float, name: str, after: int
    ) -> bytes | None:
        """A stream that goes wrong after `after` token events, as `name` says."""
        if not await self._stream_admitted(send, record, job):
            return None
        try:
            base = self._stream_base(job)
            first, rest, final = _chunk_frames(base, job)
            events = [
                (first if i == 0 else rest)[0] + _tok_json[i] + (first if i == 0 else rest)[1]
                for i in range(job.n)
            ]
            events.append(final)
            if job.usage_chunk:
                events.append(_usage_event(base, job))
            # An event without its blank line needs a next one to run into.
            after = min(after, len(events) - 1 if name == "no-blank" else len(events))
            if record.status is None:
                await self._start(send, record, 200, _SSE_HEADERS)
            for i, event in enumerate(events):
                if i == after:
                    if name == "hang-mid":
                        await _forever()
                    if name == "cut":
                        raise _Drop
                    if name == "garbage":
                        await _send_more(send, _GARBAGE)
                    if name == "no-blank":
                        event = event[:-1]
                if delay > 0:
                    await asyncio.sleep(delay)
                await _send_more(send, event)
            if after == len(events):
                if name == "hang-mid":
                    await _forever()
                if name == "cut":
                    raise _Drop
                if name == "garbage":
                    await _send_more(send, _GARBAGE)
        finally:
            self._release()
        return None

    async def _broken_whole(
        self,
        send: Send,
        record: _Record,
        whole: Coroutine[Any, Any, bytes],
        name: str,
        after: int,
    ) -> bytes | None:
        """A whole answer whose head promises all of it and whose body stops after `after` bytes."""
        payload = await whole
        if not 0 <= after <= len(payload):
            after = len(payload) // 2
        headers = [(b"content-type", _JSON), (b"content-length", b"%d" % len(payload))]
        await self._start(send, record, 200, headers)
        await send({"type": "http.response.body", "body": payload[:after], "more_body": True})
        if name == "cut":
            raise _Drop
        await _forever()
        return None

    # -- embeddings --

    async def _embeddings(self, scope: Scope, receive: Receive, send: Send) -> None:
        opened = await self._open(scope, receive, send)
        if opened is None:
            return
        record, body, model = opened
        try:
            await self._run_embeddings(receive, send, record, body, model)
        finally:
            self._leave(record)

    async def _run_embeddings(
        self, receive: Receive, send: Send, record: _Record, body: dict[str, Any], model: str
    ) -> None:
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
        priority = _priority_of(body)
        if self.config.directives and await self._with_fault(
            receive,
            send,
            record,
            body,
            False,
            None,
            lambda wait: self._embed(model, items, priority, wait),
        ):
            return
        if self._try_acquire():
            try:
                payload = _embeddings_body(model, items)
            finally:
                self._release()
            await self._finish(send, record, 200, payload)
            return
        await self._guarded(receive, send, record, self._embed(model, items, priority))

    async def _embed(
        self, model: str, items: list[Any], priority: int | None, delay: float = 0.0
    ) -> bytes:
        await self._acquire(priority)
        try:
            if delay > 0:
                await asyncio.sleep(delay)
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


def _usage_event(base: dict[str, Any], job: _Job) -> bytes:
    return b"data: " + _encode({**base, "choices": [], "usage": job.usage()}).encode() + b"\n\n"


async def _send_more(send: Send, body: bytes) -> None:
    await send({"type": "http.response.body", "body": body, "more_body": True})


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
    parser.add_argument(
        "--server-info", choices=SERVER_INFO_STYLES, default="none", help="the engine imitated"
    )
    parser.add_argument("--sglang-version", default=SimConfig.sglang_version)
    parser.add_argument("--vllm-version", default=SimConfig.vllm_version)
    parser.add_argument("--api-key", default=None)
    parser.add_argument(
        "--priority-scheduling",
        action="store_true",
        help="admit waiting requests by the body's `priority` field",
    )
    parser.add_argument("--sglang-low-first", action="store_true")
    parser.add_argument("--sglang-schedule-policy", default="fcfs")
    parser.add_argument(
        "--max-queued-requests", type=int, default=None, help="refuse waiters beyond this many"
    )
    parser.add_argument(
        "--directives", action="store_true", help="honour [[sim:...]] fault directives"
    )
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
        sglang_version=args.sglang_version,
        sglang_schedule_policy=args.sglang_schedule_policy,
        sglang_low_first=args.sglang_low_first,
        vllm_version=args.vllm_version,
        priority_scheduling=args.priority_scheduling,
        max_queued_requests=args.max_queued_requests,
        directives=args.directives,
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
