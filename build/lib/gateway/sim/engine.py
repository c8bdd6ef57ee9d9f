"""A simulated OpenAI-compatible engine: demo backend, test upstream and benchmark target.

It imitates SGLang (`server_info="sglang"`), vLLM (`"vllm"`) or a plain OpenAI-compatible server
(`"none"`) wherever the gateway's tests lean on an engine's behaviour, and behind flags serves
Anthropic's Messages API and OpenAI's Responses API natively, as the engines that have them do.
Each row below was read in the engine's own source (SGLang and vLLM main, 2026; the versions
named) or in the API's reference, and has a test that names its number: rows 1-11 in
tests/gateway/sim/test_engine.py, rows 12-18 in tests/gateway/sim/test_surfaces.py.

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
| 12. With `tools` a chat answers a tool call | vLLM; OpenAI's  | vllm chat_completion/serving.py  |
| when tool_choice is "required" (the first   | Chat            | (chat_completion_full_generator: |
| tool), names one (that one), or is "auto"   | Completions API | is_finish_reason_tool_calls);    |
| and the user text names tools (those), or   |                 |                                  |
| with `tool_calls` > 1 (and                  |                 | tool_parsers/                    |
| parallel_tool_calls not false) to           |                 | hermes_tool_parser.py (the       |
| successive tools. The arguments put the     |                 | name's DeltaToolCall first)      |
| last user text in the first required string |                 |                                  |
| property ({"query": text} without           |                 |                                  |
| properties). finish_reason is "tool_calls", |                 |                                  |
| but "stop" for a call forced by name.       |                 |                                  |
| Streamed, a call's first delta has index,   |                 |                                  |
| id, type and name, the next ones argument   |                 |                                  |
| fragments. After a tool result (tools       |                 |                                  |
| given) the answer is the result's words     |                 |                                  |
+---------------------------------------------+-----------------+----------------------------------+
| 13. With `cached_tokens`, usage has         | vLLM; OpenAI    | vllm entrypoints/openai/engine/  |
| prompt_tokens_details.cached_tokens (at     |                 | protocol.py: UsageInfo,          |
| most the prompt), in a stream's             |                 | PromptTokenUsageInfo with        |
| include_usage chunk too                     |                 | --enable-prompt-tokens-details   |
+---------------------------------------------+-----------------+----------------------------------+
| 14. With `messages`, /v1/messages answers   | Anthropic's     | Anthropic API reference:         |
| as Anthropic documents it: a Message (msg_  | Messages API;   | Messages, Streaming Messages,    |
| id; text and tool_use blocks, toolu_ ids;   | SGLang          | Count Message tokens, Errors;    |
| stop_reason end_turn, max_tokens,           |                 | sglang srt/entrypoints/          |
| stop_sequence naming the sequence, tool_use |                 | anthropic/                       |
| also for a forced tool; usage.input_tokens  |                 |                                  |
| net of cache_read_input_tokens). A stream   |                 |                                  |
| is message_start (usage.input_tokens,       |                 |                                  |
| output_tokens 1), ping, per block           |                 |                                  |
| content_block_start / _delta (text_delta;   |                 |                                  |
| input_json_delta, from an empty one) /      |                 |                                  |
| _stop, message_delta (stop_reason,          |                 |                                  |
| stop_sequence, usage.output_tokens),        |                 |                                  |
| message_stop, and no [DONE]. /v1/messages/  |                 |                                  |
| count_tokens answers {"input_tokens": n},   |                 |                                  |
| the same count. Errors are {"type":         |                 |                                  |
| "error", "error": {"type", "message"}} with |                 |                                  |
| Anthropic's types (overloaded_error for 503 |                 |                                  |
| and 529); the key comes as x-api-key or     |                 |                                  |
| Bearer                                      |                 |                                  |
+---------------------------------------------+-----------------+----------------------------------+
| 15. Under "vllm", /v1/messages answers as   | vLLM 0.33       | vllm entrypoints/anthropic/      |
| vLLM's: whole answers drop null fields (no  |                 | serving.py                       |
| stop_sequence), ids are chatcmpl-, usage is |                 | (messages_full_converter,        |
| input_tokens and output_tokens only; a      |                 | message_stream_converter,        |
| stream has no ping, its message_start       |                 | count_tokens), api_router.py,    |
| message no type or role and output_tokens   |                 | protocol.py; openai/             |
| 0, a tool's input no empty first fragment,  |                 | api_server.py:                   |
| message_delta usage input_tokens too; a     |                 | validation_exception_handler;    |
| stop sequence and a forced tool end with    |                 | vllm issue #51572                |
| end_turn. Errors name vLLM's class          |                 |                                  |
| (NotFoundError); a body that does not       |                 |                                  |
| validate gets vLLM's 400 {"error": {...,    |                 |                                  |
| "type": "Bad Request"}}; only a Bearer key  |                 |                                  |
| is read; a body's priority is ignored;      |                 |                                  |
| count_tokens adds context_management        |                 |                                  |
+---------------------------------------------+-----------------+----------------------------------+
| 16. With `responses`, /v1/responses answers | OpenAI's        | OpenAI API reference: Responses, |
| a Response (resp_ id; message and           | Responses API;  | Streaming events; vllm           |
| function_call output items; usage with      | vLLM            | entrypoints/openai/responses/    |
| input_tokens_details.cached_tokens; status  |                 | serving.py                       |
| incomplete with incomplete_details when     |                 | (responses_stream_generator),    |
| max_output_tokens cuts) to a string or      |                 | simple_streaming_events.py,      |
| items (message, function_call,              |                 | api_router.py                    |
| function_call_output, whose output is       |                 |                                  |
| echoed), instructions counted. A stream is  |                 |                                  |
| typed events, `event:` named,               |                 |                                  |
| sequence_number from 0: response.created,   |                 |                                  |
| .in_progress, .output_item.added,           |                 |                                  |
| .content_part.added, .output_text.delta,    |                 |                                  |
| .output_text.done, .content_part.done,      |                 |                                  |
| .output_item.done, for a call               |                 |                                  |
| .function_call_arguments.delta / .done,     |                 |                                  |
| then response.completed                     |                 |                                  |
| (response.incomplete when cut); vLLM ends   |                 |                                  |
| with .completed always and sends created    |                 |                                  |
| and in_progress before admission            |                 |                                  |
+---------------------------------------------+-----------------+----------------------------------+
| 17. `store` is ignored and reported false,  | vLLM; OpenAI    | vllm responses/serving.py:       |
| unless `responses_store` keeps each stored  |                 | enable_store,                    |
| response's conversation (its token count)   |                 | _make_not_found_error; its env   |
| in memory for previous_response_id; an      |                 | VLLM_ENABLE_RESPONSES_API_STORE  |
| unknown one is vLLM's 404 "Response with id |                 |                                  |
| '...' not found." (param response_id), or   |                 |                                  |
| OpenAI's 400 previous_response_not_found    |                 |                                  |
+---------------------------------------------+-----------------+----------------------------------+
| 18. Off, /v1/messages, its count_tokens and | engines without | gateway/engines/detection.py:    |
| /v1/responses answer 404 like any unknown   | and with the    | _serves; the handlers above      |
| path; on, a body `{}` is a 400 in the       | surfaces        |                                  |
| surface's envelope, which detection reads   |                 |                                  |
| as served                                   |                 |                                  |
+---------------------------------------------+-----------------+----------------------------------+

Source paths are relative to python/sglang/ and vllm/ in the engines' repositories.

Not imitated, on purpose: SGLang notices that a non-streaming client left only when it next polls
(seconds); the sim frees the slot at once. vLLM's `--max-num-queued-reqs` counts running requests
too; the sim's bound is SGLang's. Requests that carry a priority while scheduling is off are
ignored (SGLang 0.5.4+, vLLM), not aborted as SGLang 0.5.3 did. A tool answer writes no text
before its calls, and max_tokens never cuts a call's arguments. vLLM's chat choices carry a
`stop_reason` the sim leaves out. Of the Responses API only POST /v1/responses is served: no
retrieval, background mode or conversations. Images are counted as no words.

Faults on purpose: with `directives=True` a request whose text (its last message, prompt or first
input; on /v1/responses its last input item when that is a user message) starts with
`[[sim:...]]` gets the fault it names; the syntax and the wire-level faults are in
gateway/sim/faults.py. Faults that end an answer early take no slot; the others (hang-mid, slow,
garbage, no-blank, cut) queue for one like any request. On /v1/messages and /v1/responses a fault
answers in the surface's envelope and events (`shape` also takes anthropic and anthropic-vllm on
/v1/messages), and a stream's `after` counts from its first generated event: the events before it
(message_start, ping, response.created, ...) always go out.

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

Concurrency as the engine sees it: `open` counts generation requests (POST /v1/..., count_tokens
too) from the moment their body is read until their last byte is sent or their client's disconnect
is seen, and `max_open_seen` is its maximum since the last reset (see `_count_open` for why it
is exact). The priority queue, the records (/sim/requests, with each request's path), the fault
injection (fail_next, x-sim-fail, directives) and the shutdown cover every surface alike.
"""

from __future__ import annotations

import asyncio
import heapq
import json
import time
from collections import deque
from collections.abc import Awaitable, Callable, Coroutine
from dataclasses import asdict
from http import HTTPStatus
from json.encoder import encode_basestring_ascii
from typing import TYPE_CHECKING, Any

from gateway.sim import faults
from gateway.sim.chat import _chat_body, _chat_turn_events
from gateway.sim.config import (
    _FIELD_TYPES,
    _SGLANG_NO_PRIORITY_RANK,
    _SGLANG_PRIORITY_POLICIES,
    EVICTED,
    OWNER,
    OWNERS,
    QUEUE_FULL,
    SERVER_INFO_STYLES,
    SGLANG_PRIORITY_SINCE,
    SGLANG_SERVER_INFO_SINCE,
    SIM_VERSION,
    VLLM_NESTED_ERRORS_SINCE,
    SimConfig,
    _parse_version,
)
from gateway.sim.errors import _SHUTTING_DOWN, _anthropic_error, _error_body, _error_inner, _Refused
from gateway.sim.jobs import _chunk_frames, _Job, _priority_of, _Record, _TurnJob, _usage_event
from gateway.sim.messages import _anthropic_tool_result, _messages_problem, _messages_prompt
from gateway.sim.responses import _response_items, _responses_problem, _responses_prompt
from gateway.sim.surfaces import _CHAT, _MESSAGES, _RESPONSES
from gateway.sim.text import (
    _CHAT_BODY,
    _TEXT_BODY,
    _answer,
    _embeddings_body,
    _prompt_words,
    _tok_json,
    _tokens,
)
from gateway.sim.turns import (
    _BadTurn,
    _int_or_none,
    _last_user_text,
    _plan_turn,
    _stops_of,
    _text_of,
)
from gateway.sim.wire import (
    _GARBAGE,
    _HTML_PAGE,
    _JSON,
    _NOT_JSON,
    _SSE_HEADERS,
    _after,
    _decode,
    _Disconnected,
    _Drop,
    _drop_before_any_byte,
    _encode,
    _forever,
    _read_body,
    _send_bytes,
    _send_more,
)

if TYPE_CHECKING:
    from gateway.core.asgi import Receive, Scope, Send
    from gateway.sim.surfaces import _Surface
    from gateway.sim.turns import _Turn
    from gateway.sim.wire import Handler


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
        # Stored responses (responses_store): their conversation's tokens, by response id.
        self._stored: dict[str, int] = {}
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
            ("POST", "/v1/messages"): self._messages,
            ("POST", "/v1/messages/count_tokens"): self._count_tokens,
            ("POST", "/v1/responses"): self._responses,
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
        """Forget records, counters, stored responses and pending failure injection.

        The configuration stays.

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
            if name == "tool_calls" and isinstance(value, int) and value < 1:
                raise ValueError("tool_calls must be at least 1")
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

    def _check_auth(self, scope: Scope, surface: _Surface = _CHAT) -> tuple[int, bytes] | None:
        key = self.config.api_key
        if key is None:
            return None
        expected = b"Bearer " + key.encode()
        # Anthropic's clients send x-api-key; vLLM reads only Bearer (vllm issue #51572).
        anthropic = surface is _MESSAGES and self.config.server_info != "vllm"
        for name, value in scope["headers"]:
            if name == b"authorization" and value == expected:
                return None
            if anthropic and name == b"x-api-key" and value == key.encode():
                return None
        if anthropic:
            return 401, _anthropic_error("anthropic", 401, "invalid x-api-key")
        return 401, _error_body(
            "Incorrect API key provided", "invalid_request_error", "invalid_api_key"
        )

    def _injected(self, status: int, surface: _Surface = _CHAT) -> tuple[int, bytes]:
        return status, surface.error(
            surface.shape(self), status, f"Injected failure {status}", "sim_injected_failure"
        )

    def _check(
        self, scope: Scope, *, post: bool, surface: _Surface = _CHAT
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
                    return 400, _error_body(
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

    async def _arrive(self, scope: Scope, receive: Receive) -> tuple[_Record, Any]:
        """Read a POST's body (None when it is not JSON) and record it, counted open."""
        raw = await _read_body(receive)
        try:
            body = _decode(raw.decode())
        except ValueError:
            body = None
        record = self._record(scope, body)
        if self._open_count >= self._max_open_seen:
            await asyncio.sleep(0)  # why: see _count_open
        self._count_open(record)
        return record, body

    async def _refuse(self, send: Send, record: _Record, error: tuple[int, bytes]) -> None:
        """Answer an open record with `error` and close it."""
        try:
            await self._finish(send, record, *error)
        finally:
            self._leave(record)

    async def _open(
        self, scope: Scope, receive: Receive, send: Send
    ) -> tuple[_Record, dict[str, Any], str] | None:
        """Read, record and vet a /v1 POST; answers and returns None when it cannot run.

        The record it returns is open: the caller must _leave it when its answer ends.
        """
        record, body = await self._arrive(scope, receive)
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
        await self._refuse(send, record, error)
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
            usage_chunk = isinstance(options, dict) and options.get("include_usage") is True
            tools = body.get("tools")
            stop = body.get("stop")
            job: _Job
            # Plain requests carry neither and report no cache: only the others pay for more.
            if tools or stop or cfg.cached_tokens is not None:
                try:
                    turn = (
                        self._chat_turn(body, chat, tools, stop, limit) if tools or stop else None
                    )
                except _BadTurn as exc:
                    error = _error_body(
                        str(exc), "invalid_request_error", "invalid_tool_choice", "tool_choice"
                    )
                    await self._finish(send, record, 400, error)
                    return
                job = _TurnJob(
                    chat=chat,
                    model=model,
                    n=n if turn is None else turn.generated,
                    finish=finish,
                    prompt_tokens=_prompt_words(prompt),
                    priority=_priority_of(body),
                    usage_chunk=usage_chunk,
                    cached=cfg.cached_tokens,
                    turn=turn,
                )
            else:
                job = _Job(
                    chat=chat,
                    model=model,
                    n=n,
                    finish=finish,
                    prompt_tokens=_prompt_words(prompt),
                    priority=_priority_of(body),
                    usage_chunk=usage_chunk,
                )
            if len(_tok_json) < n:
                _tokens(n)
            stream = body.get("stream") is True
            delay = cfg.token_delay
            if cfg.directives and await self._with_fault(
                receive,
                send,
                record,
                faults.directive_text(body),
                stream,
                job,
                lambda wait: self._generate(job, wait),
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
                run = (
                    self._stream(send, record, job, delay)
                    if job.turn is None
                    else self._stream_events(send, record, job, delay, _CHAT)
                )
                await self._guarded(receive, send, record, run)
            else:
                await self._guarded(receive, send, record, self._generate(job, delay))
        finally:
            self._leave(record)

    def _chat_turn(
        self, body: dict[str, Any], chat: bool, tools: Any, stop: Any, limit: Any
    ) -> _Turn:
        """The turn of a chat or text completion that carries tools or stop sequences."""
        specs: list[tuple[str, Any]] = []
        mode, named, tool_result, user_text = "auto", None, None, ""
        if chat and isinstance(tools, list):
            for tool in tools:
                function = tool.get("function") if isinstance(tool, dict) else None
                if isinstance(function, dict) and isinstance(function.get("name"), str):
                    specs.append((function["name"], function.get("parameters")))
            choice = body.get("tool_choice")
            if choice in ("none", "required"):
                mode = choice
            elif isinstance(choice, dict) and isinstance(choice.get("function"), dict):
                mode, named = "named", choice["function"].get("name")
            messages = body.get("messages")
            if isinstance(messages, list) and messages:
                last = messages[-1]
                if isinstance(last, dict) and last.get("role") == "tool":
                    tool_result = _text_of(last.get("content"), ("text",))
                user_text = _last_user_text(messages)
        self._seq += 1
        prefix = "chatcmpl-tool-sim" if self.config.server_info == "vllm" else "call_sim"
        base = self._seq
        return _plan_turn(
            tokens=max(self.config.tokens, 0),
            tools=specs,
            mode=mode,
            named=named,
            tool_result=tool_result,
            user_text=user_text,
            limit=_int_or_none(limit),
            stops=_stops_of(stop),
            calls=self.config.tool_calls if body.get("parallel_tool_calls") is not False else 1,
            call_id=lambda i: f"{prefix}{base}_{i}",
        )

    async def _generate(self, job: _Job, delay: float, surface: _Surface | None = None) -> bytes:
        await self._acquire(job.priority, job.n)
        try:
            if delay > 0 and job.n:
                await asyncio.sleep(delay * job.n)
            return self._whole(job) if surface is None else surface.whole(self, job)
        finally:
            self._release()

    async def _guarded(
        self,
        receive: Receive,
        send: Send,
        record: _Record,
        run: Coroutine[Any, Any, bytes | None],
        surface: _Surface = _CHAT,
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
        except _Refused as refused:
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
                raise _Drop from None  # a deliberately broken answer cannot end well
            payload = None
        if payload is None:
            await send({"type": "http.response.body", "body": surface.tail, "more_body": False})
            record.finished = time.time()
        else:
            await self._finish(send, record, 200, payload)

    def _shutting_down(self, surface: _Surface) -> bytes:
        if surface is _CHAT:
            return _SHUTTING_DOWN
        message = "The engine is shutting down"
        return surface.error(surface.shape(self), 503, message, "sim_shutting_down")

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
        if job.turn is not None or job.cached is not None:
            return _chat_body(job, self._seq)
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

    async def _stream_admitted(
        self,
        send: Send,
        record: _Record,
        job: _Job,
        surface: _Surface = _CHAT,
        first: list[bytes] | None = None,
    ) -> bool:
        """Take a slot for a stream, answering a refusal as SGLang does: 200, error, [DONE].

        vLLM answers 200 before the request is queued (with the `first` events its surface
        sends before generating); SGLang and the generic sim send the status line with the
        first chunk. Returns False when refused (all but the stream's tail sent).
        """
        early = self.config.server_info == "vllm"
        if early:
            await self._start(send, record, 200, _SSE_HEADERS)
            for event in first or ():
                await _send_more(send, event)
        try:
            await self._acquire(job.priority, job.n)
        except _Refused as refused:
            if not early:
                await self._start(send, record, 200, _SSE_HEADERS)
            event = surface.error_event(
                surface.shape(self), 503, refused.message, refused.code, len(first or ())
            )
            await send({"type": "http.response.body", "body": event, "more_body": True})
            return False
        return True

    def _chat_events(self, job: _Job) -> list[tuple[bytes, bool]]:
        """A chat or completion stream's events, each marked whether it is a generated token."""
        base = self._stream_base(job)
        if job.turn is not None:
            return _chat_turn_events(job, base)
        first, rest, final = _chunk_frames(base, job)
        events = [
            ((first if i == 0 else rest)[0] + _tok_json[i] + (first if i == 0 else rest)[1], True)
            for i in range(job.n)
        ]
        events.append((final, False))
        if job.usage_chunk:
            events.append((_usage_event(base, job), False))
        return events

    async def _stream_events(
        self, send: Send, record: _Record, job: _Job, delay: float, surface: _Surface
    ) -> bytes | None:
        """Send a surface's stream events, `delay` before each generated one; not its tail."""
        events = surface.events(self, job)
        early = surface.early(self) if self.config.server_info == "vllm" else 0
        first = [event for event, _ in events[:early]]
        if not await self._stream_admitted(send, record, job, surface, first):
            return None
        try:
            started = record.status is not None
            count = 0
            for event, paced in events[early:]:
                if paced:
                    count += 1
                    if delay > 0:
                        await asyncio.sleep(delay)
                    elif not count & 63:
                        await asyncio.sleep(0)  # why: see _stream
                if not started:
                    await self._start(send, record, 200, _SSE_HEADERS)
                    started = True
                await _send_more(send, event)
            surface.sent(self, job)
        finally:
            self._release()
        return None

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

    # -- Anthropic's /v1/messages and OpenAI's /v1/responses --

    async def _not_served(self, send: Send) -> None:
        """What an engine without the surface answers: 404, as for any unknown path."""
        await _send_bytes(send, 404, _error_body("Not found", "invalid_request_error", "not_found"))

    async def _open_surface(
        self, scope: Scope, receive: Receive, send: Send, surface: _Surface
    ) -> tuple[_Record, dict[str, Any]] | None:
        """_open for a surface that checks its own body and answers in its own envelope.

        The record it returns is open: the caller must _leave it when its answer ends.
        """
        record, body = await self._arrive(scope, receive)
        error = self._check(scope, post=True, surface=surface)
        if error is None:
            if isinstance(body, dict):
                return record, body
            error = 400, surface.invalid(self, "The body must be a JSON object")
        await self._refuse(send, record, error)
        return None

    def _unknown_model(self, surface: _Surface, model: str) -> tuple[int, bytes] | None:
        if model in self.config.models:
            return None
        if surface is _MESSAGES:
            if self.config.server_info == "vllm":
                message = f"The model `{model}` does not exist."
                return 404, _anthropic_error("anthropic-vllm", 404, message)
            return 404, _anthropic_error("anthropic", 404, f"model: {model}")
        message = f"The model '{model}' does not exist"
        return 404, _error_body(message, "invalid_request_error", "model_not_found", "model")

    async def _generation(
        self,
        receive: Receive,
        send: Send,
        record: _Record,
        job: _Job,
        stream: bool,
        text: str | None,
        surface: _Surface,
    ) -> None:
        """Run a surface's generation: its fault if `text` asks for one, else its answer."""
        delay = self.config.token_delay
        if self.config.directives and await self._with_fault(
            receive,
            send,
            record,
            text,
            stream,
            job,
            lambda wait: self._generate(job, wait, surface),
            surface,
        ):
            return
        run: Coroutine[Any, Any, bytes | None]
        if stream:
            run = self._stream_events(send, record, job, delay, surface)
        else:
            run = self._generate(job, delay, surface)
        await self._guarded(receive, send, record, run, surface)

    async def _messages(self, scope: Scope, receive: Receive, send: Send) -> None:
        await self._serve_surface(
            scope, receive, send, _MESSAGES, self.config.messages, self._run_messages
        )

    async def _serve_surface(
        self,
        scope: Scope,
        receive: Receive,
        send: Send,
        surface: _Surface,
        served: bool,
        run: Callable[[Receive, Send, _Record, dict[str, Any]], Awaitable[None]],
    ) -> None:
        """A request to Messages or Responses: a 404 where the engine does not serve it, else
        `run` on its open record, closed whichever way `run` ends."""
        if not served:
            await self._not_served(send)
            return
        opened = await self._open_surface(scope, receive, send, surface)
        if opened is None:
            return
        record, body = opened
        try:
            await run(receive, send, record, body)
        finally:
            self._leave(record)

    async def _run_messages(
        self, receive: Receive, send: Send, record: _Record, body: dict[str, Any]
    ) -> None:
        cfg = self.config
        vllm = cfg.server_info == "vllm"
        problem = _messages_problem(body, count=False)
        if problem is not None:
            await self._finish(send, record, 400, _MESSAGES.invalid(self, problem))
            return
        unknown = self._unknown_model(_MESSAGES, body["model"])
        if unknown is not None:
            await self._finish(send, record, *unknown)
            return
        try:
            turn = self._messages_turn(body)
        except _BadTurn as exc:
            await self._finish(send, record, 400, _MESSAGES.invalid(self, str(exc)))
            return
        self._seq += 1
        job = _TurnJob(
            chat=True,
            model=body["model"],
            n=turn.generated,
            finish=turn.finish,
            prompt_tokens=_messages_prompt(body),
            # vLLM's Anthropic request has no priority: the chat request it becomes runs at 0.
            priority=None if vllm else _priority_of(body),
            usage_chunk=False,
            cached=cfg.cached_tokens,
            turn=turn,
            body=body,
            ident=f"chatcmpl-sim{self._seq}" if vllm else f"msg_sim{self._seq}",
        )
        stream = body.get("stream") is True
        await self._generation(
            receive, send, record, job, stream, faults.directive_text(body), _MESSAGES
        )

    def _messages_turn(self, body: dict[str, Any]) -> _Turn:
        cfg = self.config
        tools = [(tool["name"], tool.get("input_schema")) for tool in body.get("tools") or ()]
        choice = body.get("tool_choice") or {"type": "auto"}
        mode = {"auto": "auto", "any": "required", "none": "none", "tool": "named"}[choice["type"]]
        messages = body["messages"]
        self._seq += 1
        base = self._seq
        prefix = "chatcmpl-tool-sim" if cfg.server_info == "vllm" else "toolu_sim"
        return _plan_turn(
            tokens=max(cfg.tokens, 0),
            tools=tools,
            mode=mode,
            named=choice.get("name"),
            tool_result=_anthropic_tool_result(messages[-1]) if messages else None,
            user_text=_last_user_text(messages),
            limit=body["max_tokens"],
            stops=body.get("stop_sequences") or [],
            calls=1 if choice.get("disable_parallel_tool_use") is True else cfg.tool_calls,
            call_id=lambda i: f"{prefix}{base}_{i}",
        )

    async def _count_tokens(self, scope: Scope, receive: Receive, send: Send) -> None:
        if not self.config.messages:
            await self._not_served(send)
            return
        opened = await self._open_surface(scope, receive, send, _MESSAGES)
        if opened is None:
            return
        record, body = opened
        try:
            problem = _messages_problem(body, count=True)
            if problem is not None:
                await self._finish(send, record, 400, _MESSAGES.invalid(self, problem))
                return
            unknown = self._unknown_model(_MESSAGES, body["model"])
            if unknown is not None:
                await self._finish(send, record, *unknown)
                return
            count = _messages_prompt(body)
            answer: dict[str, Any] = {"input_tokens": count}
            if self.config.server_info == "vllm":
                answer["context_management"] = {"original_input_tokens": count}
            payload = _encode(answer).encode()
            # Counting runs no generation, so it takes no slot, even under a fault.
            if self.config.directives and await self._with_fault(
                receive,
                send,
                record,
                faults.directive_text(body),
                False,
                None,
                lambda wait: _after(wait, payload),
                _MESSAGES,
            ):
                return
            await self._finish(send, record, 200, payload)
        finally:
            self._leave(record)

    async def _responses(self, scope: Scope, receive: Receive, send: Send) -> None:
        await self._serve_surface(
            scope, receive, send, _RESPONSES, self.config.responses, self._run_responses
        )

    async def _run_responses(
        self, receive: Receive, send: Send, record: _Record, body: dict[str, Any]
    ) -> None:
        cfg = self.config
        problem = _responses_problem(body)
        if problem is not None:
            await self._finish(send, record, 400, _RESPONSES.invalid(self, problem))
            return
        unknown = self._unknown_model(_RESPONSES, body["model"])
        if unknown is not None:
            await self._finish(send, record, *unknown)
            return
        earlier = 0
        previous = body.get("previous_response_id")
        if previous is not None:
            stored = self._stored.get(previous)
            if stored is None:
                await self._finish(send, record, *self._no_previous(previous))
                return
            earlier = stored
        items = _response_items(body["input"])
        try:
            turn = self._responses_turn(body, items)
        except _BadTurn as exc:
            await self._finish(send, record, 400, _RESPONSES.invalid(self, str(exc)))
            return
        self._seq += 1
        job = _TurnJob(
            chat=True,
            model=body["model"],
            n=turn.generated,
            finish=turn.finish,
            prompt_tokens=max(earlier + _responses_prompt(body, items), 1),
            priority=_priority_of(body),
            usage_chunk=False,
            cached=cfg.cached_tokens,
            turn=turn,
            body=body,
            ident=f"resp_sim{self._seq}",
            store=cfg.responses_store and body.get("store") is not False,
        )
        last = items[-1] if items else None
        text = None
        if last is not None and last.get("role") == "user":
            text = _text_of(last.get("content"))
        await self._generation(
            receive, send, record, job, body.get("stream") is True, text, _RESPONSES
        )

    def _responses_turn(self, body: dict[str, Any], items: list[dict[str, Any]]) -> _Turn:
        cfg = self.config
        tools = [
            (tool["name"], tool.get("parameters"))
            for tool in body.get("tools") or ()
            if tool.get("type") == "function"
        ]
        choice = body.get("tool_choice")
        mode, named = "auto", None
        if choice in ("none", "required"):
            mode = choice
        elif isinstance(choice, dict) and choice.get("type") == "function":
            mode, named = "named", choice.get("name")
        last = items[-1] if items else None
        tool_result = None
        if last is not None and last.get("type") == "function_call_output":
            tool_result = _text_of(last.get("output"), ("input_text", "output_text", "text"))
        self._seq += 1
        base = self._seq
        return _plan_turn(
            tokens=max(cfg.tokens, 0),
            tools=tools,
            mode=mode,
            named=named,
            tool_result=tool_result,
            user_text=_last_user_text(items),
            limit=body.get("max_output_tokens"),
            stops=[],
            calls=cfg.tool_calls if body.get("parallel_tool_calls") is not False else 1,
            call_id=lambda i: f"call_sim{base}_{i}",
        )

    def _no_previous(self, previous: str) -> tuple[int, bytes]:
        """An unknown previous_response_id: vLLM's 404 (responses/serving.py), OpenAI's 400."""
        shape = self._shape()
        if shape == "openai":
            message = f"Previous response with id '{previous}' not found."
            return 400, _error_body(
                message,
                "invalid_request_error",
                "previous_response_not_found",
                "previous_response_id",
            )
        inner = _error_inner(shape, 404, f"Response with id '{previous}' not found.", "")
        inner["type"], inner["param"] = "invalid_request_error", "response_id"
        return 404, _encode({"error": inner} if shape == "vllm" else inner).encode()

    def _keep(self, job: _Job) -> None:
        """Store a response for previous_response_id: its conversation's tokens so far."""
        if not job.store or job.turn is None:
            return
        self._stored[job.ident] = job.prompt_tokens + job.turn.generated
        while len(self._stored) > max(self.config.record_limit, 1):
            del self._stored[next(iter(self._stored))]

    # -- faults on purpose --

    async def _with_fault(
        self,
        receive: Receive,
        send: Send,
        record: _Record,
        text: str | None,
        stream: bool,
        job: _Job | None,
        whole: Callable[[float], Coroutine[Any, Any, bytes]],
        surface: _Surface = _CHAT,
    ) -> bool:
        """Answer as the [[sim:...]] directive `text` starts with asks; False when it has none.

        `text` is the request's last user text (faults.directive_text for the OpenAI bodies);
        `whole(delay)` waits for a slot and returns the whole answer `delay` later; `job` is
        what a stream would generate (None for embeddings, which never stream).
        """
        try:
            if text is None or not text.startswith("[["):
                return False
            fault = faults.parse(text).get("sim")
            if fault is None:
                return False
            record.fault = fault.fault
            stream = stream and job is not None
            await self._faulty(receive, send, record, fault, stream, job, whole, surface)
        except faults.DirectiveError as exc:
            if record.status is not None:
                raise
            if surface is _MESSAGES:
                error = _anthropic_error(surface.shape(self), 400, str(exc))
            else:
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
        surface: _Surface,
    ) -> None:
        """Answer as the directive asks (see the table of sim faults above)."""
        name = fault.fault
        if name == "status":
            code = fault.integer("code", 500, 400, 599)
            shape = fault.choice("shape", surface.shape(self), surface.shapes)
            message = f"Injected failure {code}"
            await self._finish(send, record, code, surface.error(shape, code, message, "sim_fault"))
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
            shape = fault.choice("shape", surface.shape(self), surface.shapes)
            refused = _Refused(QUEUE_FULL if name == "queue-full" else EVICTED)
            message, error_code = refused.message, refused.code
            if stream:
                await self._start(send, record, 200, _SSE_HEADERS)
                event = surface.error_event(shape, 503, message, error_code, 0)
                await send({"type": "http.response.body", "body": event, "more_body": True})
                await send({"type": "http.response.body", "body": surface.tail})
                record.finished = time.time()
            else:
                body = surface.error(shape, 503, message, error_code)
                await self._finish(send, record, 503, body)
        elif name == "bad-json":
            await self._finish(send, record, 200, _NOT_JSON)
        elif name == "reset":
            await _drop_before_any_byte(send)
        elif name == "hang":
            await self._guarded(receive, send, record, _forever(), surface)
        elif name == "slow":
            slow = fault.number("delay", 0.05, 0.0, 60.0)
            if stream and job is not None:
                run = surface.stream(self, send, record, job, slow)
                await self._guarded(receive, send, record, run, surface)
            else:
                await self._guarded(receive, send, record, whole(slow), surface)
        elif name in ("hang-mid", "cut", "garbage", "no-blank"):
            if not stream and name in ("garbage", "no-blank"):
                raise faults.DirectiveError(f"{name} needs a streaming request")
            # Without `after` a whole answer breaks halfway (-1 tells _broken_whole so).
            after = fault.integer("after", 1 if stream else -1, 0, 1 << 30)
            delay = self.config.token_delay
            if stream and job is not None:
                broken = self._broken_stream(send, record, job, delay, name, after, surface)
                await self._guarded(receive, send, record, broken, surface)
            else:
                cut = self._broken_whole(send, record, whole(delay), name, after)
                await self._guarded(receive, send, record, cut, surface)

    async def _broken_stream(
        self,
        send: Send,
        record: _Record,
        job: _Job,
        delay: float,
        name: str,
        after: int,
        surface: _Surface,
    ) -> bytes | None:
        """A stream that goes wrong after `after` token events, as `name` says.

        The events a surface sends before its first token (message_start, response.created,
        ...) always go out: `after` counts from its first generated event.
        """
        marked = surface.events(self, job)
        early = surface.early(self) if self.config.server_info == "vllm" else 0
        if not await self._stream_admitted(
            send, record, job, surface, [event for event, _ in marked[:early]]
        ):
            return None
        try:
            events = [event for event, _ in marked[early:]]
            lead = next((i for i, (_, paced) in enumerate(marked[early:]) if paced), len(events))
            # An event without its blank line needs a next one to run into.
            after = min(lead + after, len(events) - 1 if name == "no-blank" else len(events))
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
                if delay > 0 and marked[early + i][1]:
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
            faults.directive_text(body),
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
