"""What a client may say about scheduling: the documented hints (gateway/dataplane/hints.py).

When and where a request runs is the gateway's decision (the caller's class, the backend's own
priority mapping), but engines and routers read many body fields as priority, service tier,
deadline or placement, and every caller reaches them with the backend's one key. So before
dispatch `strip_scheduling` removes every such field, on every surface and path that sends a
client body to an engine, and `nvext` (Dynamo's extensions) is an allowlist. A field whose removal
would change the answer, not only its timing, is refused instead (`refused_field`: a 400 naming
it, before the request waits). What the engines' and routers' own sources read:

| field                                         | read by                        | kind          |
|-----------------------------------------------|--------------------------------|---------------|
| priority                                      | vLLM, SGLang                   | priority      |
| service_tier; speed                           | OpenAI, Anthropic, vLLM        | paid tier     |
| extra_args (priority, ttft_target, itl_target)| Dynamo workers, global router  | priority, pool|
| routed_dp_rank, data_parallel_rank,           | SGLang                         | placement     |
|   disagg_prefill_dp_rank                      |                                |               |
| id_slot                                       | llama.cpp                      | placement     |
| request_id; rid                               | vLLM; SGLang                   | identity      |
| keep_alive                                    | Ollama (native API)            | residency     |
| nvext.agent_hints.* (latency_sensitivity,     | Dynamo router and workers      | priority,     |
|   osl, speculative_prefill, priority),        |                                | deadline,     |
|   nvext.backend_instance_id, prefill_/decode_ |                                | placement     |
|   worker_id, dp_rank, prefill_dp_rank,        |                                |               |
|   request_timestamp_ms, session_control,      |                                |               |
|   cache_control, annotations, token_data,     |                                |               |
|   extra_fields                                |                                |               |
| kv_transfer_params, ec_transfer_params,       | vLLM, SGLang (disaggregated)   | refused       |
|   bootstrap_host, bootstrap_port, bootstrap_  |                                |               |
|   room                                        |                                |               |
| session_id, session_params                    | SGLang sessions, vLLM          | refused       |
| inference_geo                                 | Anthropic (data residency)     | refused       |
| custom_logit_processor                        | SGLang (runs it as code)       | refused       |

Read in: ai-dynamo/dynamo lib/llm/src/protocols/openai/nvext.rs (03f06d19) and
docs/pages/components/frontend/{nvext,extra-args}.md; vllm-project/vllm
vllm/entrypoints/openai/{chat_completion,responses}/protocol.py (002032ee, 010a69ce) and
vllm/entrypoints/anthropic/protocol.py; sgl-project/sglang
python/sglang/srt/entrypoints/openai/protocol.py (004c82e0); ggml-org/llama.cpp
tools/server/server-context.cpp (`task.id_slot = json_value(data, "id_slot", -1)`); ollama
v0.33.0-rc2 openai/openai.go (none) and api/types.go; OpenAI's and Anthropic's API references.
Placement by header (Dynamo's x-worker-instance-id, vLLM's and SGLang's X-data-parallel-rank)
needs nothing here: no client header reaches an engine. Kept on purpose: cache_salt (isolates the
caller's prefix cache), prompt_cache_key (the caller's own cache affinity), t_max_predict_ms
(llama.cpp: bounds only the caller's own generation).
"""

from __future__ import annotations

from typing import Any, Final

# Removed silently: without them the answer is the same, only when or where it runs differs, and
# that is the gateway's to decide. A removal is no error, or clients that set a tier by default
# (an SDK's service_tier, say) would fail for nothing.
REMOVED: Final = (
    "priority",
    "service_tier",
    "speed",
    "extra_args",
    "routed_dp_rank",
    "data_parallel_rank",
    "disagg_prefill_dp_rank",
    "id_slot",
    "request_id",
    "rid",
    "keep_alive",
)

# The nvext keys that reach an engine; everything else in nvext is routing, scheduling or
# placement (Dynamo's NvExt), or unknown, and goes. agent_hints keeps nothing: its priority and
# strict_priority were read as hints before dispatch, the rest (latency_sensitivity moves the
# arrival time earlier in Dynamo's queue; osl and speculative_prefill steer its router) are not
# the caller's to set. extra_fields goes too: its worker_id names the worker that served it.
NVEXT_KEPT: Final = frozenset({"greed_sampling", "use_raw_prompt", "max_thinking_tokens"})

_DISAGGREGATION = (
    "it hands the request to another engine's cache (disaggregated serving), which only the "
    "fleet's own router arranges"
)
_ENGINE_STATE = "it continues state kept at the engine, which every caller of the gateway shares"
_RESIDENCY = "where a request runs is set by its backend's configuration, not by the caller"
# SGLang's custom_logit_processor is a serialized Python callable (dill) that an engine started
# with --enable-custom-logit-processor runs: code on the GPU server, for any caller.
_CODE = "it is code for the engine to run"

# Refused with a 400 naming them: removing them would change what is answered (a prefill-only
# handshake answered in full, a session's context silently lost, a residency requirement silently
# broken), and they name other engines or their state, which a caller has no business reaching.
REFUSED: Final = {
    "kv_transfer_params": _DISAGGREGATION,
    "ec_transfer_params": _DISAGGREGATION,
    "bootstrap_host": _DISAGGREGATION,
    "bootstrap_port": _DISAGGREGATION,
    "bootstrap_room": _DISAGGREGATION,
    "session_id": _ENGINE_STATE,
    "session_params": _ENGINE_STATE,
    "inference_geo": _RESIDENCY,
    "custom_logit_processor": _CODE,
}


def refused_field(body: dict[str, Any]) -> str | None:
    """The first field of `body` the gateway refuses, or None. A null counts as absent."""
    for name in REFUSED:
        if body.get(name) is not None:
            return name
    return None


def refusal(name: str) -> str:
    """Why `name` (a key of REFUSED) is refused: the error message after the field's name."""
    return f"not accepted by this gateway ({REFUSED[name]}). Leave it out."


def strip_scheduling(body: dict[str, Any]) -> None:
    """Remove from `body` every field that would let a client schedule or place its request.

    `body` is the attempt's own shallow copy of the client's body: its top level may change, but
    nothing nested in it is the attempt's, so a changed nvext is a new dict.
    """
    for name in REMOVED:
        body.pop(name, None)
    if "nvext" not in body:
        return
    nvext = body["nvext"]
    kept = _kept_nvext(nvext)
    if kept is None:
        del body["nvext"]  # nothing left to pass, an empty object, or no object at all
    elif kept is not nvext:
        body["nvext"] = kept


def _kept_nvext(nvext: object) -> dict[str, Any] | None:
    if type(nvext) is not dict:
        return None
    if nvext.keys() <= NVEXT_KEPT:
        return nvext or None  # only what may pass: the client's own dict, uncopied
    return {key: value for key, value in nvext.items() if key in NVEXT_KEPT} or None
