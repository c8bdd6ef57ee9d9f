"""A simulated OpenAI-compatible engine: demo backend, test upstream and benchmark target.

It imitates SGLang (`server_info="sglang"`), vLLM (`"vllm"`) or a plain OpenAI-compatible server
(`"none"`) wherever the gateway's tests lean on an engine's behaviour, and behind flags serves
Anthropic's Messages API and OpenAI's Responses API natively, as the engines that have them do.
Each row below was read in the engine's own source (SGLang and vLLM main, 2026; the versions
named) or in the API's reference, and has a test that names its number: rows 1-11 in
tests/gateway/test_sim.py, rows 12-18 in tests/gateway/test_sim_surfaces.py.

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
| 18. Off, /v1/messages, its count_tokens and | engines without | gateway/detect.py: _serves; the  |
| /v1/responses answer 404 like any unknown   | and with the    | handlers above                   |
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
gateway/faults.py. Faults that end an answer early take no slot; the others (hang-mid, slow,
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
    # Serve Anthropic's /v1/messages (+ /count_tokens) natively; off, both answer 404.
    messages: bool = False
    # Serve OpenAI's /v1/responses natively; off, it answers 404.
    responses: bool = False
    # Keep stored responses in memory for previous_response_id (vLLM's
    # VLLM_ENABLE_RESPONSES_API_STORE); off, `store` is ignored as vLLM does by default.
    responses_store: bool = False
    # Tool calls in one tool answer when the request allows parallel calls (successive tools).
    tool_calls: int = 1
    # Prompt tokens reported as read from the prefix cache (at most the prompt); None: not reported.
    cached_tokens: int | None = None


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
    "messages": (bool,),
    "responses": (bool,),
    "responses_store": (bool,),
    "tool_calls": (int,),
    "cached_tokens": (int, type(None)),
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
    try:
        phrase = HTTPStatus(status).phrase
    except ValueError:  # a status Python has no name for, such as Anthropic's 529
        return "Error"
    return "".join(phrase.split()) + "Error"


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


# -- turns: answers to tools, stop sequences and tool results --

# A tool parser streams arguments as the model writes them: a piece per word.
_PIECES = re.compile(r"\S+\s*")
# Anthropic's error types by status (its API reference, "Errors"); other 5xx are api_error.
_ANTHROPIC_TYPES = {
    400: "invalid_request_error",
    401: "authentication_error",
    403: "permission_error",
    404: "not_found_error",
    413: "request_too_large",
    429: "rate_limit_error",
    503: "overloaded_error",
    529: "overloaded_error",
}
ANTHROPIC_SHAPES = ("anthropic", "anthropic-vllm")


class _BadTurn(ValueError):
    """A request whose tools cannot be answered as asked (a tool_choice naming no tool)."""


class _Call:
    """One tool call of a turn: its id, the tool's name and the arguments as JSON text."""

    __slots__ = ("arguments", "fragments", "id", "name")

    def __init__(self, call_id: str, name: str, arguments: str) -> None:
        self.id = call_id
        self.name = name
        self.arguments = arguments
        self.fragments: list[str] = _PIECES.findall(arguments) or [arguments]


class _Turn:
    """What the engine answers beyond plain tokens: a text (cut or echoed) or tool calls.

    `finish` is neutral, and each surface names it its own way: "end", "length",
    "stop_sequence" (`stop_sequence` says which) or "tool" (`named` when the request forced one
    tool by name). `generated` counts output tokens, the one that ran into a stop included.
    """

    __slots__ = ("calls", "finish", "generated", "named", "stop_sequence", "texts")

    def __init__(
        self,
        texts: list[str],
        calls: list[_Call],
        finish: str,
        generated: int,
        stop_sequence: str | None = None,
        named: bool = False,
    ) -> None:
        self.texts = texts
        self.calls = calls
        self.finish = finish
        self.generated = generated
        self.stop_sequence = stop_sequence
        self.named = named

    @property
    def text(self) -> str:
        return "".join(self.texts)


def _plan_turn(
    *,
    tokens: int,
    tools: list[tuple[str, Any]],
    mode: str,
    named: str | None,
    tool_result: str | None,
    user_text: str,
    limit: int | None,
    stops: list[str],
    calls: int,
    call_id: Callable[[int], str],
) -> _Turn:
    """The turn a request gets; `mode` is "auto", "required", "none" or "named".

    With tools and a tool result last, the answer echoes the result's words. Otherwise a forced
    choice ("named", "required") calls the named tool or `calls` successive tools; "auto" calls
    only the tools the user text names, as a model decides from the prompt: agents offer tools
    on every turn and a plain question must get a plain answer.
    """
    callable_ = tools
    if mode == "auto":
        callable_ = [t for t in tools if re.search(rf"\b{re.escape(t[0])}\b", user_text)]
    if callable_ and tool_result is None and mode != "none":
        if mode == "named":
            chosen = [tool for tool in tools if tool[0] == named][:1]
            if not chosen:
                raise _BadTurn(f"tool_choice names {named!r}, which is not among the tools")
        else:
            chosen = [callable_[i % len(callable_)] for i in range(max(calls, 1))]
        made = [
            _Call(call_id(i), name, _arguments(schema, user_text))
            for i, (name, schema) in enumerate(chosen)
        ]
        generated = sum(len(call.fragments) for call in made)
        return _Turn([], made, "tool", generated, named=mode == "named")
    if tools and tool_result is not None and tool_result.split():
        texts = [word + " " for word in tool_result.split()]
    else:
        if len(_tok_json) < tokens:
            _tokens(tokens)
        texts = _tok_text[:tokens]
    return _cut(texts, limit, [stop for stop in stops if stop])


def _cut(texts: list[str], limit: int | None, stops: list[str]) -> _Turn:
    """Generate `texts` until the token limit or the first stop sequence, which is not sent."""
    written = ""
    longest = max((len(stop) for stop in stops), default=0)
    for i, text in enumerate(texts):
        if limit is not None and i >= limit:
            return _Turn(texts[:i], [], "length", i)
        # Only a stop that ends in the new token is new.
        start = max(len(written) - longest + 1, 0)
        written += text
        found = ((written.find(stop, start), k) for k, stop in enumerate(stops))
        hits = [(at, k) for at, k in found if at >= 0]
        if hits:
            at, k = min(hits)
            return _Turn(_prefix(texts[: i + 1], at), [], "stop_sequence", i + 1, stops[k])
    return _Turn(list(texts), [], "end", len(texts))


def _prefix(texts: list[str], at: int) -> list[str]:
    """The tokens whose text is the first `at` characters of the whole."""
    kept: list[str] = []
    used = 0
    for text in texts:
        if used + len(text) > at:
            if at > used:
                kept.append(text[: at - used])
            break
        kept.append(text)
        used += len(text)
    return kept


def _arguments(schema: Any, text: str) -> str:
    """Arguments from the prompt: its last user text in the first required string property.

    A schema without properties gets {"query": text}; one without a string property, {}.
    """
    properties = schema.get("properties") if isinstance(schema, dict) else None
    if not isinstance(properties, dict) or not properties:
        return json.dumps({"query": text})
    strings = [
        key
        for key, spec in properties.items()
        if isinstance(spec, dict) and spec.get("type") == "string"
    ]
    required = schema.get("required") if isinstance(schema, dict) else None
    key = next((k for k in required if k in strings), None) if isinstance(required, list) else None
    if key is None and strings:
        key = strings[0]
    return "{}" if key is None else json.dumps({key: text})


def _text_of(content: Any, kinds: tuple[str, ...] = ("text", "input_text")) -> str:
    """The text of a message content: the string, or its text parts joined."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(
            part["text"]
            for part in content
            if isinstance(part, dict)
            and part.get("type") in kinds
            and isinstance(part.get("text"), str)
        )
    return ""


def _last_user_text(messages: list[Any]) -> str:
    for message in reversed(messages):
        if isinstance(message, dict) and message.get("role") == "user":
            text = _text_of(message.get("content"))
            if text:
                return text
    return ""


def _int_or_none(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _stops_of(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, list):
        return [stop for stop in value if isinstance(stop, str)]
    return []


# -- chat completions with a turn (tools or stop): the slow path, encoded generically --


def _turn_of(job: _Job) -> _Turn:
    if job.turn is None:
        raise RuntimeError("only a job with a turn renders on this surface")
    return job.turn


def _chat_finish(turn: _Turn) -> str:
    # OpenAI and vLLM end a call forced by name with "stop" (vLLM chat_completion/serving.py).
    if turn.finish == "tool":
        return "stop" if turn.named else "tool_calls"
    return "length" if turn.finish == "length" else "stop"


def _chat_body(job: _Job, seq: int) -> bytes:
    """A whole chat or text completion with its turn, or plain tokens with cached usage."""
    turn = job.turn
    if turn is None:
        content, finish, calls = "".join(_tok_text[: job.n]), job.finish, []
    else:
        content, finish, calls = turn.text, _chat_finish(turn), turn.calls
    created = int(time.time())
    if job.chat:
        message: dict[str, Any] = {"role": "assistant", "content": None if calls else content}
        if calls:
            message["tool_calls"] = [
                {
                    "id": c.id,
                    "type": "function",
                    "function": {"name": c.name, "arguments": c.arguments},
                }
                for c in calls
            ]
        choice = {"index": 0, "message": message, "logprobs": None, "finish_reason": finish}
        head = {"id": f"chatcmpl-sim{seq}", "object": "chat.completion"}
    else:
        choice = {"index": 0, "text": content, "logprobs": None, "finish_reason": finish}
        head = {"id": f"cmpl-sim{seq}", "object": "text_completion"}
    answer = {
        **head,
        "created": created,
        "model": job.model,
        "choices": [choice],
        "usage": job.usage(),
    }
    return _encode(answer).encode()


def _chat_turn_events(job: _Job, base: dict[str, Any]) -> list[tuple[bytes, bool]]:
    """A streamed turn's chunks, each marked whether the model generated it (paced).

    Tool calls stream as vLLM's tool parsers send them: index, id, type and name first, then
    the arguments in fragments (e.g. vllm tool_parsers/hermes_tool_parser.py).
    """
    turn = _turn_of(job)

    def chunk(delta: dict[str, Any], finish: str | None = None) -> bytes:
        choice = {"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}
        return b"data: " + _encode({**base, "choices": [choice]}).encode() + b"\n\n"

    def text_chunk(text: str, finish: str | None = None) -> bytes:
        choice = {"index": 0, "text": text, "logprobs": None, "finish_reason": finish}
        return b"data: " + _encode({**base, "choices": [choice]}).encode() + b"\n\n"

    finish = _chat_finish(turn)
    if not job.chat:
        events = [(text_chunk(text), True) for text in turn.texts]
        events.append((text_chunk("", finish), False))
    else:
        role: dict[str, Any] = {"role": "assistant"}
        events = [
            (chunk({**role, "content": text} if i == 0 else {"content": text}), True)
            for i, text in enumerate(turn.texts)
        ]
        if turn.texts:
            role = {}
        for index, call in enumerate(turn.calls):
            head = {
                "index": index,
                "id": call.id,
                "type": "function",
                "function": {"name": call.name},
            }
            events.append((chunk({**role, "tool_calls": [head]}), True))
            role = {}
            for piece in call.fragments:
                delta = {"tool_calls": [{"index": index, "function": {"arguments": piece}}]}
                events.append((chunk(delta), True))
        events.append((chunk({}, finish), False))
    if job.usage_chunk:
        events.append((_usage_event(base, job), False))
    return events


# -- Anthropic's Messages API --


def _sse(name: str, data: dict[str, Any]) -> bytes:
    return b"event: " + name.encode() + b"\ndata: " + _encode(data).encode() + b"\n\n"


def _anthropic_error(shape: str, status: int, message: str) -> bytes:
    """Anthropic's envelope; vLLM names the error by its class (anthropic/api_router.py)."""
    if shape == "anthropic-vllm":
        type_ = _vllm_type(status)
    else:
        type_ = _ANTHROPIC_TYPES.get(
            status, "api_error" if status >= 500 else "invalid_request_error"
        )
    return _encode({"type": "error", "error": {"type": type_, "message": message}}).encode()


def _vllm_validation_error(shape: str, message: str) -> bytes:
    """vLLM's handler of a body that does not validate, for every path: 400 "Bad Request"."""
    inner = _error_inner(shape, 400, message, "")
    inner["type"] = HTTPStatus.BAD_REQUEST.phrase
    return _encode({"error": inner} if shape == "vllm" else inner).encode()


def _anthropic_usage(job: _Job, output: int, vllm: bool) -> dict[str, int]:
    # Anthropic's input_tokens leave out what was read from the cache; vLLM reports no cache.
    if vllm:
        return {"input_tokens": job.prompt_tokens, "output_tokens": output}
    cached = job.cached_tokens()
    return {
        "input_tokens": job.prompt_tokens - cached,
        "cache_creation_input_tokens": 0,
        "cache_read_input_tokens": cached,
        "output_tokens": output,
    }


def _anthropic_stop(turn: _Turn, vllm: bool) -> tuple[str, str | None]:
    """stop_reason and stop_sequence; vLLM maps its chat finish_reason (stop_reason_map)."""
    if turn.finish == "tool":
        return ("end_turn" if vllm and turn.named else "tool_use"), None
    if turn.finish == "length":
        return "max_tokens", None
    if turn.finish == "stop_sequence" and not vllm:
        return "stop_sequence", turn.stop_sequence
    return "end_turn", None


def _anthropic_blocks(turn: _Turn, vllm: bool) -> list[dict[str, Any]]:
    blocks: list[dict[str, Any]] = []
    # vLLM leaves out an empty text; Anthropic's answer always has a block.
    if turn.texts or not (turn.calls or vllm):
        blocks.append({"type": "text", "text": turn.text})
    for call in turn.calls:
        blocks.append(
            {
                "type": "tool_use",
                "id": call.id,
                "name": call.name,
                "input": json.loads(call.arguments),
            }
        )
    return blocks


def _message_body(job: _Job, vllm: bool) -> bytes:
    turn = _turn_of(job)
    stop_reason, stop_sequence = _anthropic_stop(turn, vllm)
    message: dict[str, Any] = {
        "id": job.ident,
        "type": "message",
        "role": "assistant",
        "model": job.model,
        "content": _anthropic_blocks(turn, vllm),
        "stop_reason": stop_reason,
        "stop_sequence": stop_sequence,
        "usage": _anthropic_usage(job, turn.generated, vllm),
    }
    if vllm:
        # model_dump(exclude_none=True) drops a stop_sequence of None.
        del message["stop_sequence"]
    return _encode(message).encode()


def _message_events(job: _Job, vllm: bool) -> list[tuple[bytes, bool]]:
    """Anthropic's event sequence, or vLLM's (anthropic/serving.py message_stream_converter)."""
    turn = _turn_of(job)
    if vllm:
        # Built with exclude_unset: the message's type and role are defaults, so left out.
        start: dict[str, Any] = {
            "id": job.ident,
            "content": [],
            "model": job.model,
            "stop_reason": None,
            "stop_sequence": None,
            "usage": {"input_tokens": job.prompt_tokens, "output_tokens": 0},
        }
    else:
        start = {
            "id": job.ident,
            "type": "message",
            "role": "assistant",
            "model": job.model,
            "content": [],
            "stop_reason": None,
            "stop_sequence": None,
            "usage": _anthropic_usage(job, 1, False),
        }
    events = [(_sse("message_start", {"type": "message_start", "message": start}), False)]
    if not vllm:
        events.append((_sse("ping", {"type": "ping"}), False))
    index = 0
    if turn.texts or not (turn.calls or vllm):
        text_block = {"type": "text", "text": ""}
        events.append(
            (
                _sse(
                    "content_block_start",
                    {"type": "content_block_start", "index": 0, "content_block": text_block},
                ),
                False,
            )
        )
        for text in turn.texts:
            delta = {"type": "text_delta", "text": text}
            events.append(
                (
                    _sse(
                        "content_block_delta",
                        {"type": "content_block_delta", "index": 0, "delta": delta},
                    ),
                    True,
                )
            )
        events.append(
            (_sse("content_block_stop", {"type": "content_block_stop", "index": 0}), False)
        )
        index = 1
    for call in turn.calls:
        block = {"type": "tool_use", "id": call.id, "name": call.name, "input": {}}
        events.append(
            (
                _sse(
                    "content_block_start",
                    {"type": "content_block_start", "index": index, "content_block": block},
                ),
                True,
            )
        )
        # Anthropic opens a tool's input with an empty fragment; vLLM's first delta has none.
        pieces = call.fragments if vllm else ["", *call.fragments]
        for piece in pieces:
            delta = {"type": "input_json_delta", "partial_json": piece}
            events.append(
                (
                    _sse(
                        "content_block_delta",
                        {"type": "content_block_delta", "index": index, "delta": delta},
                    ),
                    bool(piece),
                )
            )
        events.append(
            (_sse("content_block_stop", {"type": "content_block_stop", "index": index}), False)
        )
        index += 1
    stop_reason, stop_sequence = _anthropic_stop(turn, vllm)
    if vllm:
        final: dict[str, Any] = {
            "type": "message_delta",
            "delta": {"stop_reason": stop_reason},
            "usage": {"input_tokens": job.prompt_tokens, "output_tokens": turn.generated},
        }
    else:
        final = {
            "type": "message_delta",
            "delta": {"stop_reason": stop_reason, "stop_sequence": stop_sequence},
            "usage": {"output_tokens": turn.generated},
        }
    events.append((_sse("message_delta", final), False))
    events.append((_sse("message_stop", {"type": "message_stop"}), False))
    return events


def _messages_problem(body: dict[str, Any], *, count: bool) -> str | None:
    """Why a Messages (or count_tokens) body does not validate, None when it does."""
    model = body.get("model")
    if not isinstance(model, str) or not model:
        return "model: Field required"
    if not count:
        max_tokens = _int_or_none(body.get("max_tokens"))
        if max_tokens is None:
            return "max_tokens: Field required"
        if max_tokens < 1:
            return "max_tokens: Input should be greater than or equal to 1"
    messages = body.get("messages")
    if not isinstance(messages, list):
        return "messages: Field required"
    for i, message in enumerate(messages):
        if not isinstance(message, dict) or message.get("role") not in ("user", "assistant"):
            return f"messages.{i}.role: Input should be 'user' or 'assistant'"
        if not isinstance(message.get("content"), str | list):
            return f"messages.{i}.content: Input should be a string or a list of content blocks"
    if not isinstance(body.get("system", ""), str | list):
        return "system: Input should be a string or a list of text blocks"
    stops = body.get("stop_sequences")
    if stops is not None and not (
        isinstance(stops, list) and all(isinstance(s, str) for s in stops)
    ):
        return "stop_sequences: Input should be a list of strings"
    tools = body.get("tools")
    if tools is not None and not (
        isinstance(tools, list)
        and all(isinstance(t, dict) and isinstance(t.get("name"), str) for t in tools)
    ):
        return "tools: Input should be a list of tools with a name"
    choice = body.get("tool_choice")
    if choice is not None:
        if not isinstance(choice, dict) or choice.get("type") not in (
            "auto",
            "any",
            "tool",
            "none",
        ):
            return "tool_choice.type: Input should be 'auto', 'any', 'tool' or 'none'"
        if choice["type"] == "tool" and not isinstance(choice.get("name"), str):
            return "tool_choice.name: Field required"
    return None


def _messages_prompt(body: dict[str, Any]) -> int:
    """The sim's count of a Messages prompt: words in the system prompt and the messages."""
    words = _count_words(body.get("system")) + _count_words(body.get("messages"))
    return words if words > 0 else 1


def _anthropic_tool_result(message: Any) -> str | None:
    """The text of the tool results a user message carries, None when it carries none."""
    if not isinstance(message, dict) or message.get("role") != "user":
        return None
    content = message.get("content")
    if not isinstance(content, list):
        return None
    results = [b for b in content if isinstance(b, dict) and b.get("type") == "tool_result"]
    if not results:
        return None
    return " ".join(_text_of(b.get("content"), ("text",)) for b in results)


# -- OpenAI's Responses API --


def _response_items(value: Any) -> list[dict[str, Any]]:
    if isinstance(value, str):
        return [{"type": "message", "role": "user", "content": value}]
    return [item for item in value if isinstance(item, dict)] if isinstance(value, list) else []


def _responses_problem(body: dict[str, Any]) -> str | None:
    model = body.get("model")
    if not isinstance(model, str) or not model:
        return "model: Field required"
    value = body.get("input")
    if not isinstance(value, str | list):
        return "input: Field required"
    if isinstance(value, list) and not all(isinstance(item, dict) for item in value):
        return "input: Input should be a string or a list of items"
    if not isinstance(body.get("instructions", ""), str | type(None)):
        return "instructions: Input should be a string"
    limit = body.get("max_output_tokens")
    if limit is not None and (_int_or_none(limit) is None or limit < 1):
        return "max_output_tokens: Input should be a positive integer"
    tools = body.get("tools")
    if tools is not None and not (
        isinstance(tools, list) and all(isinstance(t, dict) for t in tools)
    ):
        return "tools: Input should be a list of tools"
    for tool in tools or ():
        if tool.get("type") == "function" and not isinstance(tool.get("name"), str):
            return "tools: a function tool needs a name"
    choice = body.get("tool_choice")
    if (
        choice is not None
        and choice not in ("auto", "none", "required")
        and not isinstance(choice, dict)
    ):
        return "tool_choice: Input should be 'auto', 'none', 'required' or a tool"
    previous = body.get("previous_response_id")
    if previous is not None and not isinstance(previous, str):
        return "previous_response_id: Input should be a string"
    for name in ("store", "stream", "parallel_tool_calls"):
        if not isinstance(body.get(name, False), bool | type(None)):
            return f"{name}: Input should be a boolean"
    return None


def _responses_prompt(body: dict[str, Any], items: list[dict[str, Any]]) -> int:
    words = _count_words(body.get("instructions"))
    for item in items:
        kind = item.get("type", "message")
        if kind == "message":
            words += _count_words(item.get("content"))
        elif kind == "function_call_output":
            words += _count_words(item.get("output"))
    return words


def _function_item_id(call: _Call) -> str:
    return "fc_" + call.id.removeprefix("call_")


def _response_output(job: _Job) -> list[dict[str, Any]]:
    turn = _turn_of(job)
    items: list[dict[str, Any]] = []
    if turn.texts or not turn.calls:
        part = {"type": "output_text", "text": turn.text, "annotations": [], "logprobs": []}
        status = "incomplete" if turn.finish == "length" else "completed"
        items.append(
            {
                "id": "msg_" + job.ident.removeprefix("resp_"),
                "type": "message",
                "status": status,
                "role": "assistant",
                "content": [part],
            }
        )
    for call in turn.calls:
        items.append(
            {
                "id": _function_item_id(call),
                "type": "function_call",
                "status": "completed",
                "call_id": call.id,
                "name": call.name,
                "arguments": call.arguments,
            }
        )
    return items


def _response_object(job: _Job, created: int, *, done: bool) -> dict[str, Any]:
    """The Response object, as it stands at the start of a stream or when done."""
    turn, body = _turn_of(job), job.body or {}
    cut = done and turn.finish == "length"
    usage = None
    if done:
        usage = {
            "input_tokens": job.prompt_tokens,
            "input_tokens_details": {"cached_tokens": job.cached_tokens()},
            "output_tokens": turn.generated,
            "output_tokens_details": {"reasoning_tokens": 0},
            "total_tokens": job.prompt_tokens + turn.generated,
        }
    return {
        "id": job.ident,
        "object": "response",
        "created_at": created,
        "status": ("incomplete" if cut else "completed") if done else "in_progress",
        "background": False,
        "error": None,
        "incomplete_details": {"reason": "max_output_tokens"} if cut else None,
        "instructions": body.get("instructions"),
        "max_output_tokens": body.get("max_output_tokens"),
        "max_tool_calls": None,
        "model": job.model,
        "output": _response_output(job) if done else [],
        "parallel_tool_calls": body.get("parallel_tool_calls") is not False,
        "previous_response_id": body.get("previous_response_id"),
        "reasoning": {"effort": None, "summary": None},
        "service_tier": "default",
        "store": job.store,
        "temperature": body.get("temperature", 1.0),
        "text": {"format": {"type": "text"}},
        "tool_choice": body.get("tool_choice", "auto"),
        "tools": body.get("tools") or [],
        "top_logprobs": 0,
        "top_p": body.get("top_p", 1.0),
        "truncation": "disabled",
        "usage": usage,
        "user": None,
        "metadata": body.get("metadata") or {},
    }


def _response_events(job: _Job, created: int, vllm: bool) -> list[tuple[bytes, bool]]:
    """The typed events of a streamed response, numbered from 0.

    vLLM ends every stream with response.completed (responses/serving.py), where OpenAI ends
    a cut one with response.incomplete.
    """
    turn = _turn_of(job)
    pending = _response_object(job, created, done=False)
    done = _response_object(job, created, done=True)
    out: list[tuple[dict[str, Any], bool]] = [
        ({"type": "response.created", "response": pending}, False),
        ({"type": "response.in_progress", "response": pending}, False),
    ]
    items = done["output"]
    for index, item in enumerate(items):
        at = {"item_id": item["id"], "output_index": index}
        if item["type"] == "message":
            part = item["content"][0]
            text = part["text"]
            opened = {**item, "status": "in_progress", "content": []}
            empty = {**part, "text": ""}
            out.append(
                (
                    {"type": "response.output_item.added", "output_index": index, "item": opened},
                    False,
                )
            )
            out.append(
                (
                    {
                        "type": "response.content_part.added",
                        **at,
                        "content_index": 0,
                        "part": empty,
                    },
                    False,
                )
            )
            for piece in turn.texts:
                delta = {
                    "type": "response.output_text.delta",
                    **at,
                    "content_index": 0,
                    "delta": piece,
                }
                out.append(({**delta, "logprobs": []}, True))
            out.append(
                (
                    {
                        "type": "response.output_text.done",
                        **at,
                        "content_index": 0,
                        "text": text,
                        "logprobs": [],
                    },
                    False,
                )
            )
            out.append(
                (
                    {"type": "response.content_part.done", **at, "content_index": 0, "part": part},
                    False,
                )
            )
        else:
            call = turn.calls[index - (len(items) - len(turn.calls))]
            opened = {**item, "status": "in_progress", "arguments": ""}
            out.append(
                (
                    {"type": "response.output_item.added", "output_index": index, "item": opened},
                    True,
                )
            )
            for piece in call.fragments:
                out.append(
                    ({"type": "response.function_call_arguments.delta", **at, "delta": piece}, True)
                )
            out.append(
                (
                    {
                        "type": "response.function_call_arguments.done",
                        **at,
                        "name": call.name,
                        "arguments": call.arguments,
                    },
                    False,
                )
            )
        out.append(
            ({"type": "response.output_item.done", "output_index": index, "item": item}, False)
        )
    last = (
        "response.incomplete"
        if done["status"] == "incomplete" and not vllm
        else "response.completed"
    )
    out.append(({"type": last, "response": done}, False))
    return [
        (_sse(data["type"], {**data, "sequence_number": number}), paced)
        for number, (data, paced) in enumerate(out)
    ]


def _response_error_event(message: str, code: str, number: int) -> bytes:
    data = {
        "type": "error",
        "code": code,
        "message": message,
        "param": None,
        "sequence_number": number,
    }
    return _sse("error", data)


# -- surfaces: one generation, each API's dialect --


class _Surface:
    """How one API renders a generation, its errors and its stream's end (chat: the default)."""

    tail = _DONE
    shapes: tuple[str, ...] = ERROR_SHAPES

    def shape(self, engine: SimEngine) -> str:
        return engine._shape()

    def error(self, shape: str, status: int, message: str, code: str) -> bytes:
        return shaped_error(shape, status, message, code)

    def error_event(self, shape: str, status: int, message: str, code: str, number: int) -> bytes:
        return shaped_error_event(shape, status, message, code)

    def invalid(self, engine: SimEngine, message: str) -> bytes:
        return _error_body(message, "invalid_request_error", "invalid_request")

    def early(self, engine: SimEngine) -> int:
        """How many of a stream's first events go out before its request is admitted."""
        return 0

    def whole(self, engine: SimEngine, job: _Job) -> bytes:
        return engine._whole(job)

    def events(self, engine: SimEngine, job: _Job) -> list[tuple[bytes, bool]]:
        return engine._chat_events(job)

    def sent(self, engine: SimEngine, job: _Job) -> None:
        """Called once a stream's last event went out."""

    def stream(
        self, engine: SimEngine, send: Send, record: _Record, job: _Job, delay: float
    ) -> Coroutine[Any, Any, bytes | None]:
        # Only a plain chat job has no turn; every other streams its surface's events.
        if job.turn is None:
            return engine._stream(send, record, job, delay)
        return engine._stream_events(send, record, job, delay, self)


class _Messages(_Surface):
    tail = b""
    shapes = ANTHROPIC_SHAPES + ERROR_SHAPES

    def shape(self, engine: SimEngine) -> str:
        return "anthropic-vllm" if engine.config.server_info == "vllm" else "anthropic"

    def error(self, shape: str, status: int, message: str, code: str) -> bytes:
        if shape in ANTHROPIC_SHAPES:
            return _anthropic_error(shape, status, message)
        return shaped_error(shape, status, message, code)

    def error_event(self, shape: str, status: int, message: str, code: str, number: int) -> bytes:
        if shape in ANTHROPIC_SHAPES:
            return b"event: error\ndata: " + _anthropic_error(shape, status, message) + b"\n\n"
        return shaped_error_event(shape, status, message, code)

    def invalid(self, engine: SimEngine, message: str) -> bytes:
        if engine.config.server_info == "vllm":
            return _vllm_validation_error(engine._shape(), message)
        return _anthropic_error("anthropic", 400, message)

    def whole(self, engine: SimEngine, job: _Job) -> bytes:
        return _message_body(job, engine.config.server_info == "vllm")

    def events(self, engine: SimEngine, job: _Job) -> list[tuple[bytes, bool]]:
        return _message_events(job, engine.config.server_info == "vllm")


class _Responses(_Surface):
    tail = b""

    def error_event(self, shape: str, status: int, message: str, code: str, number: int) -> bytes:
        return _response_error_event(message, code, number)

    def invalid(self, engine: SimEngine, message: str) -> bytes:
        # vLLM's and SGLang's handlers answer /v1/responses in the nested envelope.
        if engine.config.server_info in ("vllm", "sglang"):
            return _vllm_validation_error("vllm", message)
        return _error_body(message, "invalid_request_error", "invalid_request")

    def early(self, engine: SimEngine) -> int:
        # vLLM yields response.created and .in_progress before it iterates the engine.
        return 2 if engine.config.server_info == "vllm" else 0

    def whole(self, engine: SimEngine, job: _Job) -> bytes:
        engine._keep(job)
        return _encode(_response_object(job, int(time.time()), done=True)).encode()

    def events(self, engine: SimEngine, job: _Job) -> list[tuple[bytes, bool]]:
        return _response_events(job, int(time.time()), engine.config.server_info == "vllm")

    def sent(self, engine: SimEngine, job: _Job) -> None:
        engine._keep(job)


_CHAT = _Surface()
_MESSAGES = _Messages()
_RESPONSES = _Responses()


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
    """What one plain chat or completion request asks the engine to generate: n tokens.

    The class attributes are what a plain job lacks; a _TurnJob has them of its own.
    """

    __slots__ = ("chat", "finish", "model", "n", "priority", "prompt_tokens", "usage_chunk")

    turn: _Turn | None = None
    cached: int | None = None
    body: dict[str, Any] | None = None
    ident = ""
    store = False

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

    def cached_tokens(self) -> int:
        return 0 if self.cached is None else min(self.cached, self.prompt_tokens)

    def usage(self) -> dict[str, Any]:
        usage: dict[str, Any] = {
            "prompt_tokens": self.prompt_tokens,
            "completion_tokens": self.n,
            "total_tokens": self.prompt_tokens + self.n,
        }
        if self.cached is not None:
            usage["prompt_tokens_details"] = {"cached_tokens": self.cached_tokens()}
        return usage


class _TurnJob(_Job):
    """A job that asks for more than plain tokens: a turn (tools, stop sequences, another
    surface), cached usage, or the request echoed and kept (`body`, `ident`, `store`).

    Apart from _Job so that the instant engine's plain requests never pay for these fields.
    """

    __slots__ = ("body", "cached", "ident", "store", "turn")

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
        cached: int | None,
        turn: _Turn | None,
        body: dict[str, Any] | None = None,
        ident: str = "",
        store: bool = False,
    ) -> None:
        super().__init__(
            chat=chat,
            model=model,
            n=n,
            finish=finish,
            prompt_tokens=prompt_tokens,
            priority=priority,
            usage_chunk=usage_chunk,
        )
        self.cached = cached
        self.turn = turn
        self.body = body
        self.ident = ident
        self.store = store


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
    parser.add_argument(
        "--messages", action="store_true", help="serve /v1/messages and its count_tokens"
    )
    parser.add_argument("--responses", action="store_true", help="serve /v1/responses")
    parser.add_argument(
        "--responses-store",
        action="store_true",
        help="keep stored responses in memory for previous_response_id",
    )
    parser.add_argument(
        "--tool-calls", type=int, default=1, help="calls in a tool answer when parallel is allowed"
    )
    parser.add_argument(
        "--cached-tokens", type=int, default=None, help="prompt tokens reported as cached"
    )
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
        messages=args.messages,
        responses=args.responses,
        responses_store=args.responses_store,
        tool_calls=max(args.tool_calls, 1),
        cached_tokens=args.cached_tokens,
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
