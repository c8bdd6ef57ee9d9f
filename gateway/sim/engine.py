"""A simulated OpenAI-compatible engine: demo backend, test upstream and benchmark target.

It imitates SGLang (`server_info="sglang"`), vLLM (`"vllm"`) or a plain OpenAI-compatible server
(`"none"`) wherever the gateway's tests lean on an engine's behaviour, and behind flags serves
Anthropic's Messages API and OpenAI's Responses API natively, as the engines that have them do.
Each row below was read in the engine's own source (SGLang and vLLM main, 2026; the versions
named) or in the API's reference, and has a test that names its number: rows 1-11 and 19 in
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
| 19. With `stream_usage` off, a chat or text | llama-cpp-      | llama-cpp-python issues #1082,   |
| stream never ends with a usage chunk,       | python's server | #1640 (its server has no         |
| whatever stream_options.include_usage asks; |                 | stream_options; PR #1552 adding  |
| whole answers still carry usage             |                 | it was never merged)             |
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
is seen, and `max_open_seen` is its maximum since the last reset (see `_count_open` in
gateway/sim/base.py for why it is exact). The priority queue (gateway/sim/slots.py), the records
(/sim/requests, with each request's path), the fault injection (fail_next, x-sim-fail,
directives) and the shutdown cover every surface alike.
"""

from __future__ import annotations

from functools import partial

from gateway.sim.config import SimConfig
from gateway.sim.openai_serving import OpenAIEngine
from gateway.sim.surface_serving import SurfaceEngine
from gateway.sim.surfaces import MESSAGES, RESPONSES


class SimEngine(OpenAIEngine, SurfaceEngine):
    """The engine: configuration, slots, waiting queue, records and counters; `app` is ASGI3.

    Its layers, each in its own module and each seeing only those below it: base.py (state,
    plumbing, the plain endpoints), generation.py (whole answers and streams), faulty.py (faults
    on purpose), then openai_serving.py and surface_serving.py side by side (the /v1 paths).
    """

    def __init__(self, config: SimConfig | None = None) -> None:
        super().__init__(config)
        self._routes = {
            ("GET", "/v1/models"): self._v1_models,
            ("GET", "/models"): self._models,
            ("GET", "/health"): self._health,
            ("GET", "/metrics"): self._metrics,
            ("GET", "/version"): self._version,
            ("GET", "/server_info"): self._server_info,
            ("GET", "/get_server_info"): self._get_server_info,
            ("POST", "/v1/chat/completions"): self._chat,
            ("POST", "/v1/completions"): self._completions,
            ("POST", "/v1/embeddings"): self._embeddings,
            ("POST", "/v1/messages"): partial(self._serve_surface, MESSAGES, self._run_messages),
            ("POST", "/v1/messages/count_tokens"): partial(
                self._serve_surface, MESSAGES, self._run_count_tokens
            ),
            ("POST", "/v1/responses"): partial(self._serve_surface, RESPONSES, self._run_responses),
            ("GET", "/sim/requests"): self._sim_requests,
            ("GET", "/sim/stats"): self._sim_stats,
            ("POST", "/sim/reset"): self._sim_reset,
            ("POST", "/sim/config"): self._sim_config,
        }
