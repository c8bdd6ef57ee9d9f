"""The Anthropic Messages surface in pure functions: its requests checked and turned into chat
completions, chat answers and chunks turned back into its messages and events, its errors.

Where the two APIs mean different things (every choice is tested in
tests/gateway/test_messages_translation.py):

- Usage: Anthropic's `input_tokens` excludes the tokens read from a cache
  (`cache_read_input_tokens`); chat's `prompt_tokens` includes its `cached_tokens`. Answers give
  `input_tokens = prompt_tokens - cached_tokens`; the `Usage` kept for the records is chat's own.
- Stop reasons: `stop` is `end_turn`, or `stop_sequence` when the engine names the stop string
  it matched (vLLM's `choices[0].stop_reason`, SGLang's `matched_stop`) and the client asked for
  it; `length` is `max_tokens`; `content_filter` is `refusal`; an answer with tool calls is
  `tool_use` whatever else the engine says (llama.cpp and older engines say `stop`), because
  agents run tools only on `tool_use`. Anything else is `end_turn`.
- Thinking: the request's `thinking` is checked but not forwarded (chat completions have no
  portable field for it). An engine's reasoning (`reasoning_content` or `reasoning`) becomes
  `thinking` blocks with an empty signature only when the client enabled thinking, since a
  client that did not expects none; otherwise it is dropped. Thinking blocks sent back in
  assistant turns are dropped, as Anthropic itself drops earlier turns' thinking.
- Tool results become `tool` messages, in order, before the rest of their user turn (chat needs
  them right after the assistant's tool calls); their images follow in one user message; an
  `is_error` result reads "Error: ...". Tool inputs become JSON-string arguments written as
  engines' tool parsers write them (`json.dumps`, non-ASCII kept), so a round trip stays close
  to the engine's own text and its prefix cache keeps hitting.
- Streamed tool arguments pass on as they come (never buffered): an engine that streams invalid
  JSON makes the client's SDK fail as Anthropic's own would. A whole answer's invalid or
  non-object arguments become the input `{}`, and the tool reports what is missing.
- A `system` message inside `messages` (mid-conversation instructions, as newer Claude models and
  Claude Code use them) becomes a chat system message at the same place.
- What chat completions cannot carry is refused with a 400 that says so: documents, image files,
  search results, server tools and their blocks, images in assistant turns.
"""

from __future__ import annotations

import json
import math
import uuid
from collections.abc import Collection
from json.encoder import encode_basestring_ascii
from typing import Any, TypeGuard

from gateway.allowances import output_limit
from gateway.chat_answer import first_choice
from gateway.errors import echoed
from gateway.scheduling_fields import refusal, refused_field
from gateway.usage import Usage
from gateway.usage import from_chat as usage_from_chat
from gateway.usage import from_messages as usage_from_messages

ERROR_TYPES: dict[int, str] = {
    400: "invalid_request_error",
    401: "authentication_error",
    403: "permission_error",
    404: "not_found_error",
    413: "request_too_large",
    429: "rate_limit_error",
    500: "api_error",
    502: "api_error",
    503: "overloaded_error",
    # Anthropic's own 504 type (its errors page and the SDK's GatewayTimeoutErrorObject).
    504: "timeout_error",
    529: "overloaded_error",
}
# Encoders made once: json.dumps with options builds a new encoder on every call.
_encode_compact = json.JSONEncoder(separators=(",", ":")).encode
_encode_arguments = json.JSONEncoder(ensure_ascii=False).encode
_encode_compact_text = json.JSONEncoder(separators=(",", ":"), ensure_ascii=False).encode
IMAGE_MEDIA_TYPES = ("image/jpeg", "image/png", "image/gif", "image/webp")
THINKING_TYPES = ("enabled", "disabled", "adaptive")
MIN_THINKING_BUDGET = 1024  # Anthropic's documented minimum for budget_tokens
# Claude Code puts a per-request hash in a system block of this prefix: billing metadata for
# Anthropic, not words for the model, and it would defeat the engine's prefix cache.
BILLING_HEADER = "x-anthropic-billing-header:"
# count_tokens_estimate's rule (its docstring says why these numbers).
CHARS_PER_TOKEN = 4
MESSAGE_TOKENS = 4
IMAGE_TOKENS = 1600


class MessagesError(Exception):
    """A request the Messages surface refuses (400s), in Anthropic's words."""

    def __init__(self, status: int, type_: str, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.type = type_
        self.message = message

    def body(self) -> bytes:
        return error_body(self.type, self.message)


def error_type(status: int) -> str:
    """Anthropic's error type for any status: its table, else (as its errors page says for
    unlisted 4xx) invalid_request_error for a 4xx, else api_error."""
    found = ERROR_TYPES.get(status)
    if found is not None:
        return found
    return "invalid_request_error" if 400 <= status < 500 else "api_error"


def error_body(type_: str, message: str) -> bytes:
    """Anthropic's error envelope: `{"type":"error","error":{"type":...,"message":...}}`."""
    return _encode_compact({"type": "error", "error": {"type": type_, "message": message}}).encode()


def error_event(type_: str, message: str) -> bytes:
    """The same envelope as the `error` event that ends a stream."""
    return b"event: error\ndata: " + error_body(type_, message) + b"\n\n"


def _invalid(message: str) -> MessagesError:
    return MessagesError(400, ERROR_TYPES[400], message)


# ----- the request ---------------------------------------------------------------------------


def validate(body: object, *, counting: bool = False) -> None:
    """Check a request's shape as Anthropic documents it; raise MessagesError(400) naming the
    field and why. Only MessagesError, whatever the input. A field set to null counts as
    absent. Block types this module does not know pass (a native engine may know them);
    `to_chat` refuses them. `counting`: a count_tokens body, which has no max_tokens."""
    if not isinstance(body, dict):
        raise _invalid("The request body must be a JSON object.")
    model = body.get("model")
    if not isinstance(model, str) or not model:
        raise _invalid("model: a model name (a non-empty string) is required.")
    refused = refused_field(body)
    if refused is not None:
        raise _invalid(f"{refused}: {refusal(refused)}")
    if not counting:
        max_tokens = body.get("max_tokens")
        if not _is_int(max_tokens) or max_tokens < 1:
            raise _invalid("max_tokens: an integer of at least 1 is required.")
    messages = body.get("messages")
    if not isinstance(messages, list) or not messages:
        raise _invalid("messages: a non-empty list of messages is required.")
    for i, message in enumerate(messages):
        _check_message(message, f"messages.{i}")
    if all(message["role"] == "system" for message in messages):
        # Instructions alone are no turn to answer; an empty one would leave chat no message.
        raise _invalid("messages: at least one user or assistant message is required.")
    system = body.get("system")
    if system is not None and not isinstance(system, str):
        if not isinstance(system, list):
            raise _invalid("system: must be a string or a list of text blocks.")
        for i, block in enumerate(system):
            if not isinstance(block, dict) or block.get("type") != "text":
                raise _invalid(f"system.{i}: must be a text block.")
            _check_text(block, f"system.{i}")
    _check_optional(body)
    tools = body.get("tools")
    if tools is not None:
        if not isinstance(tools, list):
            raise _invalid("tools: must be a list of tools.")
        for i, tool in enumerate(tools):
            _check_tool(tool, f"tools.{i}")
    _check_tool_choice(body.get("tool_choice"))
    _check_thinking(body.get("thinking"))
    _check_output_config(body.get("output_config"))


def _is_int(value: object) -> TypeGuard[int]:
    return isinstance(value, int) and not isinstance(value, bool)


def _is_number(value: object) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _check_optional(body: dict[str, Any]) -> None:
    stops = body.get("stop_sequences")
    if stops is not None and (
        not isinstance(stops, list) or not all(isinstance(s, str) for s in stops)
    ):
        raise _invalid("stop_sequences: must be a list of strings.")
    for name in ("temperature", "top_p"):
        value = body.get(name)
        if value is not None and not (_is_number(value) and 0 <= value <= 1):
            raise _invalid(f"{name}: must be a number from 0 to 1.")
    top_k = body.get("top_k")
    if top_k is not None and not (_is_int(top_k) and top_k >= 0):
        raise _invalid("top_k: must be an integer of at least 0.")
    stream = body.get("stream")
    if stream is not None and not isinstance(stream, bool):
        raise _invalid("stream: must be true or false.")
    metadata = body.get("metadata")
    if metadata is not None:
        if not isinstance(metadata, dict):
            raise _invalid("metadata: must be an object.")
        user_id = metadata.get("user_id")
        if user_id is not None and not isinstance(user_id, str):
            raise _invalid("metadata.user_id: must be a string.")


def _check_message(message: object, at: str) -> None:
    if not isinstance(message, dict):
        raise _invalid(f"{at}: must be an object with a role and content.")
    role = message.get("role")
    if role != "user" and role != "assistant" and role != "system":
        raise _invalid(f'{at}.role: must be "user", "assistant" or "system".')
    content = message.get("content")
    if isinstance(content, str):
        return
    if not isinstance(content, list):
        raise _invalid(f"{at}.content: must be a string or a list of content blocks.")
    for j, block in enumerate(content):
        if role == "system":
            # Mid-conversation instructions (Claude Code sends them): text only, as `system`.
            inner, kind = _typed_block(block, f"{at}.content.{j}")
            if kind != "text":
                raise _invalid(f"{at}.content.{j}: a system message holds text blocks only.")
            _check_text(inner, f"{at}.content.{j}")
        else:
            _check_block(block, f"{at}.content.{j}", role)


def _typed_block(block: object, at: str) -> tuple[dict[str, Any], str]:
    if not isinstance(block, dict):
        raise _invalid(f"{at}: must be a content block (an object with a type).")
    kind = block.get("type")
    if not isinstance(kind, str) or not kind:
        raise _invalid(f"{at}.type: a block type (a string) is required.")
    return block, kind


def _check_block(raw: object, at: str, role: str) -> None:
    block, kind = _typed_block(raw, at)
    if kind == "text":
        _check_text(block, at)
    elif kind == "image":
        _check_image(block, at)
    elif kind == "tool_use":
        if role != "assistant":
            raise _invalid(f"{at}: tool_use blocks belong in assistant messages.")
        if not isinstance(block.get("id"), str) or not block["id"]:
            raise _invalid(f"{at}.id: a tool use id (a non-empty string) is required.")
        if not isinstance(block.get("name"), str) or not block["name"]:
            raise _invalid(f"{at}.name: a tool name (a non-empty string) is required.")
        if not isinstance(block.get("input"), dict):
            raise _invalid(f"{at}.input: must be an object.")
    elif kind == "tool_result":
        if role != "user":
            raise _invalid(f"{at}: tool_result blocks belong in user messages.")
        if not isinstance(block.get("tool_use_id"), str) or not block["tool_use_id"]:
            raise _invalid(f"{at}.tool_use_id: the id of a tool use (a string) is required.")
        is_error = block.get("is_error")
        if is_error is not None and not isinstance(is_error, bool):
            raise _invalid(f"{at}.is_error: must be true or false.")
        content = block.get("content")
        if content is None or isinstance(content, str):
            return
        if not isinstance(content, list):
            raise _invalid(f"{at}.content: must be a string or a list of content blocks.")
        for k, raw_inner in enumerate(content):
            inner_at = f"{at}.content.{k}"
            inner, inner_kind = _typed_block(raw_inner, inner_at)
            if inner_kind == "text":
                _check_text(inner, inner_at)
            elif inner_kind == "image":
                _check_image(inner, inner_at)
    elif kind == "thinking":
        if not isinstance(block.get("thinking"), str):
            raise _invalid(f"{at}.thinking: must be a string.")
    elif kind == "redacted_thinking" and not isinstance(block.get("data"), str):
        raise _invalid(f"{at}.data: must be a string.")


def _check_text(block: dict[str, Any], at: str) -> None:
    if not isinstance(block.get("text"), str):
        raise _invalid(f"{at}.text: must be a string.")


def _check_image(block: dict[str, Any], at: str) -> None:
    source = block.get("source")
    if not isinstance(source, dict):
        raise _invalid(f"{at}.source: an image source (an object) is required.")
    kind = source.get("type")
    if kind == "base64":
        media_type = source.get("media_type")
        if not isinstance(media_type, str) or media_type not in IMAGE_MEDIA_TYPES:
            raise _invalid(
                f"{at}.source.media_type: must be one of {', '.join(IMAGE_MEDIA_TYPES)}."
            )
        if not isinstance(source.get("data"), str):
            raise _invalid(f"{at}.source.data: base64 image data (a string) is required.")
    elif kind == "url":
        if not isinstance(source.get("url"), str) or not source["url"]:
            raise _invalid(f"{at}.source.url: an image URL (a string) is required.")
    elif kind == "file":
        if not isinstance(source.get("file_id"), str):
            raise _invalid(f"{at}.source.file_id: a file id (a string) is required.")
    else:
        raise _invalid(f'{at}.source.type: must be "base64", "url" or "file".')


def _check_tool(tool: object, at: str) -> None:
    if not isinstance(tool, dict):
        raise _invalid(f"{at}: must be an object.")
    name = tool.get("name")
    if not isinstance(name, str) or not name:
        raise _invalid(f"{at}.name: a tool name (a non-empty string) is required.")
    kind = tool.get("type")
    if kind is not None and not isinstance(kind, str):
        raise _invalid(f"{at}.type: must be a string.")
    if kind is None or kind == "custom":
        if not isinstance(tool.get("input_schema"), dict):
            raise _invalid(f"{at}.input_schema: a JSON schema (an object) is required.")
        description = tool.get("description")
        if description is not None and not isinstance(description, str):
            raise _invalid(f"{at}.description: must be a string.")


def _check_tool_choice(choice: object) -> None:
    if choice is None:
        return
    if not isinstance(choice, dict):
        raise _invalid("tool_choice: must be an object with a type.")
    kind = choice.get("type")
    if kind not in ("auto", "any", "tool", "none"):
        raise _invalid('tool_choice.type: must be "auto", "any", "tool" or "none".')
    if kind == "tool" and (not isinstance(choice.get("name"), str) or not choice["name"]):
        raise _invalid("tool_choice.name: the name of the tool to use is required.")
    parallel = choice.get("disable_parallel_tool_use")
    if parallel is not None and not isinstance(parallel, bool):
        raise _invalid("tool_choice.disable_parallel_tool_use: must be true or false.")


def _check_thinking(thinking: object) -> None:
    if thinking is None:
        return
    if not isinstance(thinking, dict) or thinking.get("type") not in THINKING_TYPES:
        raise _invalid('thinking.type: must be "enabled", "disabled" or "adaptive".')
    if thinking["type"] == "enabled":
        budget = thinking.get("budget_tokens")
        if not _is_int(budget) or budget < MIN_THINKING_BUDGET:
            raise _invalid(
                f"thinking.budget_tokens: an integer of at least {MIN_THINKING_BUDGET} is required."
            )


def _check_output_config(config: object) -> None:
    if config is None:
        return
    if not isinstance(config, dict):
        raise _invalid("output_config: must be an object.")
    fmt = config.get("format")
    if fmt is not None and (
        not isinstance(fmt, dict)
        or fmt.get("type") != "json_schema"
        or not isinstance(fmt.get("schema"), dict)
    ):
        raise _invalid('output_config.format: must be {"type": "json_schema", "schema": {...}}.')


def wants_thinking(body: dict[str, Any]) -> bool:
    """Whether the client enabled thinking, so that reasoning comes back as thinking blocks."""
    thinking = body.get("thinking")
    return isinstance(thinking, dict) and thinking.get("type") in ("enabled", "adaptive")


def reply_options(body: dict[str, Any]) -> dict[str, Any]:
    """The keywords of `from_chat` and `StreamTranslator` for a validated request: the model
    name the client asked for, whether it enabled thinking, the stop sequences it gave."""
    stops = body.get("stop_sequences")
    return {
        "model": body["model"],
        "thinking": wants_thinking(body),
        "stop_sequences": tuple(stops) if isinstance(stops, list) else (),
    }


def to_chat(body: dict[str, Any]) -> dict[str, Any]:
    """A validated Messages request as a chat completions request (see the module docstring).

    Only fields with a chat meaning are carried, so nothing else of the client's body (a
    priority field, say) reaches the engine. Raises MessagesError(400) for what chat
    completions cannot carry, naming it.
    """
    messages: list[dict[str, Any]] = []
    system = _system_text(body.get("system"))
    if system:
        messages.append({"role": "system", "content": system})
    for i, message in enumerate(body["messages"]):
        content = message["content"]
        if message["role"] == "user":
            _user_turn(content, f"messages.{i}", messages)
        elif message["role"] == "system":
            # Updated instructions from here on, where chat puts them too: a system message.
            text = _system_text(content)
            if text:
                messages.append({"role": "system", "content": text})
        else:
            _assistant_turn(content, f"messages.{i}", messages)
    chat: dict[str, Any] = {"model": body["model"], "messages": messages}
    max_tokens = output_limit(body)  # the largest the body names: what its allowance reserved
    if max_tokens is not None:
        chat["max_tokens"] = max_tokens
    for name in ("temperature", "top_p", "top_k"):
        value = body.get(name)
        if value is not None:
            chat[name] = value
    stops = body.get("stop_sequences")
    if stops:
        chat["stop"] = list(stops)
    tools = body.get("tools")
    if tools:
        chat["tools"] = [_chat_tool(tool, f"tools.{i}") for i, tool in enumerate(tools)]
        _tool_choice(body.get("tool_choice"), chat)
    metadata = body.get("metadata")
    if isinstance(metadata, dict) and isinstance(metadata.get("user_id"), str):
        chat["user"] = metadata["user_id"]
    config = body.get("output_config")
    if isinstance(config, dict) and isinstance(config.get("format"), dict):
        chat["response_format"] = {
            "type": "json_schema",
            "json_schema": {"name": "output", "schema": config["format"]["schema"]},
        }
    if body.get("stream") is True:
        chat["stream"] = True
        chat["stream_options"] = {"include_usage": True}
    return chat


def _system_text(system: object) -> str:
    if isinstance(system, str):
        return system
    if not isinstance(system, list):
        return ""
    texts = [
        block["text"]
        for block in system
        if block["text"] and not block["text"].startswith(BILLING_HEADER)
    ]
    # Blocks are paragraphs of one prompt; joined bare, their sentences would run together.
    return "\n\n".join(texts)


def _user_turn(content: str | list[Any], at: str, out: list[dict[str, Any]]) -> None:
    if isinstance(content, str):
        out.append({"role": "user", "content": content})
        return
    parts: list[dict[str, Any]] = []
    result_images: list[dict[str, Any]] = []
    results = 0
    for j, block in enumerate(content):
        kind = block["type"]
        if kind == "text":
            parts.append({"type": "text", "text": block["text"]})
        elif kind == "image":
            parts.append(_image_part(block, f"{at}.content.{j}"))
        elif kind == "tool_result":
            out.append(_tool_message(block, f"{at}.content.{j}", result_images))
            results += 1
        else:
            raise _untranslatable(f"{at}.content.{j}", kind)
    parts = result_images + parts
    if parts or not results:
        if len(parts) == 1 and parts[0]["type"] == "text":
            out.append({"role": "user", "content": parts[0]["text"]})
        else:
            out.append({"role": "user", "content": parts or ""})


def _tool_message(block: dict[str, Any], at: str, images: list[dict[str, Any]]) -> dict[str, Any]:
    content = block.get("content")
    if isinstance(content, str):
        text = content
    elif isinstance(content, list):
        texts = []
        for k, inner in enumerate(content):
            kind = inner["type"]
            if kind == "text":
                texts.append(inner["text"])
            elif kind == "image":
                images.append(_image_part(inner, f"{at}.content.{k}"))
            else:
                raise _untranslatable(f"{at}.content.{k}", kind)
        text = "\n".join(texts)
    else:
        text = ""
    if block.get("is_error") is True:
        # Chat has no error flag on a tool message: the model reads it instead.
        text = f"Error: {text}" if text else "Error"
    return {"role": "tool", "tool_call_id": block["tool_use_id"], "content": text}


def _assistant_turn(content: str | list[Any], at: str, out: list[dict[str, Any]]) -> None:
    if isinstance(content, str):
        out.append({"role": "assistant", "content": content})
        return
    texts: list[str] = []
    calls: list[dict[str, Any]] = []
    for j, block in enumerate(content):
        kind = block["type"]
        if kind == "text":
            texts.append(block["text"])
        elif kind == "tool_use":
            calls.append(
                {
                    "id": block["id"],
                    "type": "function",
                    "function": {"name": block["name"], "arguments": _arguments(block, at, j)},
                }
            )
        elif kind == "thinking" or kind == "redacted_thinking":
            continue
        elif kind == "image":
            raise _invalid(
                f"{at}.content.{j}: chat completions take no images in assistant messages; "
                "use a backend that serves /v1/messages natively."
            )
        else:
            raise _untranslatable(f"{at}.content.{j}", kind)
    # Joined bare: the blocks of an answer this module made were one text from the engine.
    message: dict[str, Any] = {"role": "assistant", "content": "".join(texts) if texts else None}
    if calls:
        message["tool_calls"] = calls
    elif message["content"] is None:
        message["content"] = ""
    out.append(message)


def _arguments(block: dict[str, Any], at: str, j: int) -> str:
    try:
        return _encode_arguments(block["input"])
    except (RecursionError, ValueError, TypeError):
        raise _invalid(f"{at}.content.{j}.input: nested too deeply.") from None


def _image_part(block: dict[str, Any], at: str) -> dict[str, Any]:
    source = block["source"]
    if source["type"] == "base64":
        url = f"data:{source['media_type']};base64,{source['data']}"
    elif source["type"] == "url":
        url = source["url"]
    else:
        raise _invalid(
            f"{at}.source: image files (the Files API) cannot be translated to chat "
            "completions; send the image as base64 or a URL."
        )
    return {"type": "image_url", "image_url": {"url": url}}


def _untranslatable(at: str, kind: str) -> MessagesError:
    return _invalid(
        f"{at}: {echoed(kind)} blocks cannot be translated to chat completions; use a backend that "
        "serves /v1/messages natively."
    )


def _chat_tool(tool: dict[str, Any], at: str) -> dict[str, Any]:
    kind = tool.get("type")
    if kind is not None and kind != "custom":
        raise _invalid(
            f"{at}: the server tool {kind!r} is run by Anthropic and cannot be translated to "
            "chat completions."
        )
    function: dict[str, Any] = {"name": tool["name"], "parameters": tool["input_schema"]}
    description = tool.get("description")
    if description is not None:
        function["description"] = description
    strict = tool.get("strict")
    if isinstance(strict, bool):
        function["strict"] = strict
    return {"type": "function", "function": function}


def _tool_choice(choice: object, chat: dict[str, Any]) -> None:
    if not isinstance(choice, dict):
        return
    kind = choice["type"]
    if kind == "auto":
        chat["tool_choice"] = "auto"
    elif kind == "any":
        chat["tool_choice"] = "required"
    elif kind == "tool":
        chat["tool_choice"] = {"type": "function", "function": {"name": choice["name"]}}
    else:
        chat["tool_choice"] = "none"
        return
    if choice.get("disable_parallel_tool_use") is True:
        chat["parallel_tool_calls"] = False


# ----- the answer ----------------------------------------------------------------------------


def from_chat(
    answer: object,
    *,
    model: str,
    thinking: bool = False,
    stop_sequences: Collection[str] | None = None,
) -> dict[str, Any]:
    """A chat completion as a Messages answer, named `model` (the client's name for it).

    `thinking`: the client enabled thinking (reasoning becomes thinking blocks).
    `stop_sequences`: the client's; a matched stop the engine names counts only if it is one of
    them (None trusts the engine). Raises ValueError for an answer that is not a chat
    completion: the engine's fault, a 502.
    """
    answer, choice, message = first_choice(answer)
    content: list[dict[str, Any]] = []
    if thinking:
        reasoning = message.get("reasoning_content") or message.get("reasoning")
        if isinstance(reasoning, str) and reasoning:
            content.append({"type": "thinking", "thinking": reasoning, "signature": ""})
    text = message.get("content")
    if isinstance(text, list):  # content parts, as a few engines answer
        text = "".join(
            p["text"] for p in text if isinstance(p, dict) and isinstance(p.get("text"), str)
        )
    if isinstance(text, str):
        if text:
            content.append({"type": "text", "text": text})
    elif text is not None:
        raise ValueError("the answer's content is neither text nor null")
    calls = message.get("tool_calls")
    if calls is not None:
        if not isinstance(calls, list):
            raise ValueError("the answer's tool_calls is not a list")
        content.extend(_tool_use(call) for call in calls)
    stop_reason, stop_sequence = _stop(
        choice.get("finish_reason"), _matched(choice), bool(calls), stop_sequences
    )
    return {
        "id": _message_id(answer.get("id")),
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": content,
        "stop_reason": stop_reason,
        "stop_sequence": stop_sequence,
        "usage": _usage_dict(usage_from_chat(answer.get("usage"))),
    }


def _tool_use(call: object) -> dict[str, Any]:
    if not isinstance(call, dict) or not isinstance(call.get("function"), dict):
        raise ValueError("a tool call of the answer is not a function call")
    function = call["function"]
    name = function.get("name")
    if not isinstance(name, str) or not name:
        raise ValueError("a tool call of the answer has no name")
    arguments = function.get("arguments")
    parsed: object = None
    if isinstance(arguments, dict):  # a few engines send the object itself
        parsed = arguments
    elif isinstance(arguments, str) and arguments.strip():
        try:
            parsed = json.loads(arguments)
        except (ValueError, RecursionError):
            parsed = None
    call_id = call.get("id")
    return {
        "type": "tool_use",
        "id": call_id if isinstance(call_id, str) and call_id else _tool_id(),
        "name": name,
        "input": parsed if isinstance(parsed, dict) else {},
    }


def _matched(choice: dict[str, Any]) -> object:
    """The stop string the engine matched: vLLM's `stop_reason`, SGLang's `matched_stop`."""
    matched = choice.get("stop_reason")
    return choice.get("matched_stop") if matched is None else matched


def _stop(
    finish: object, matched: object, has_tools: bool, stops: Collection[str] | None
) -> tuple[str, str | None]:
    if finish == "length":
        return "max_tokens", None
    if finish == "content_filter":
        return "refusal", None
    if has_tools:
        return "tool_use", None
    if (
        finish == "stop"
        and isinstance(matched, str)
        and matched
        and (stops is None or matched in stops)
    ):
        return "stop_sequence", matched
    return "end_turn", None


def _usage_dict(usage: Usage | None) -> dict[str, int]:
    if usage is None:
        return {"input_tokens": 0, "output_tokens": 0}
    cached = usage.cached
    out = {"input_tokens": max(usage.input - (cached or 0), 0), "output_tokens": usage.output}
    if cached is not None:
        out["cache_read_input_tokens"] = cached
    return out


def _message_id(chat_id: object) -> str:
    if isinstance(chat_id, str) and 0 < len(chat_id) <= 200:
        tail = chat_id.removeprefix("chatcmpl-")
        if tail:
            return "msg_" + tail
    return "msg_" + uuid.uuid4().hex


def _tool_id() -> str:
    return "toolu_" + uuid.uuid4().hex


# ----- the stream ----------------------------------------------------------------------------

_START_MESSAGE_HEAD = b'event: message_start\ndata: {"type":"message_start","message":{"id":'
_START_MESSAGE_MODEL = b',"type":"message","role":"assistant","model":'
_START_MESSAGE_USAGE = b',"content":[],"stop_reason":null,"stop_sequence":null,"usage":'
_PING = b'event: ping\ndata: {"type":"ping"}\n\n'
_MESSAGE_STOP = b'event: message_stop\ndata: {"type":"message_stop"}\n\n'
_DELTA_HEAD = b'event: content_block_delta\ndata: {"type":"content_block_delta","index":'
_DELTA_KIND = {
    1: b',"delta":{"type":"text_delta","text":',
    2: b',"delta":{"type":"thinking_delta","thinking":',
    3: b',"delta":{"type":"input_json_delta","partial_json":',
}
_DELTA_END = b"}}\n\n"
_START_HEAD = b'event: content_block_start\ndata: {"type":"content_block_start","index":'
_STOP_HEAD = b'event: content_block_stop\ndata: {"type":"content_block_stop","index":'
_TEXT_START = b',"content_block":{"type":"text","text":""}}\n\n'
_THINKING_START = b',"content_block":{"type":"thinking","thinking":"","signature":""}}\n\n'
_NONE, _TEXT, _THINKING, _TOOL = 0, 1, 2, 3


def _json_str(text: str) -> bytes:
    # ASCII escapes: never fails, even on the lone surrogates a lying engine's JSON can carry.
    return encode_basestring_ascii(text).encode("ascii")


def _dumps(value: object) -> bytes:
    return _encode_compact(value).encode()


class StreamTranslator:
    """Chat completion chunks in, Anthropic stream events out (SSE-framed bytes).

    Event order as Anthropic streams it: message_start and a ping first; then each content
    block opened, given its deltas and closed before the next one opens; at the end
    message_delta (stop reason, usage) and message_stop. `feed` takes any decoded JSON and
    never raises: a chunk that is not an object, or an engine's error chunk
    (`{"error": ...}` or `{"object": "error", ...}`), ends the stream with an `error` event
    and sets `error`; other parts of a chunk that make no sense are ignored. The rare engine
    that interleaves two tool calls' argument fragments gets each fragment sent to its own
    block's index, which the SDKs accumulate correctly.
    """

    __slots__ = (
        "_finish", "_head", "_id", "_kind", "_last_tool", "_matched", "_next", "_open",
        "_started", "_tools", "done", "error", "model", "stop_sequences", "thinking", "usage",
    )  # fmt: skip

    def __init__(
        self,
        *,
        model: str,
        thinking: bool = False,
        stop_sequences: Collection[str] | None = None,
    ) -> None:
        self.model = model
        self.thinking = thinking
        self.stop_sequences = stop_sequences
        self.usage: Usage | None = None  # what the engine reported (None until it does)
        self.done = False  # finished or failed: nothing more is sent
        self.error: str | None = None  # why the stream failed, if it did
        self._started = False
        self._open = -1  # the index of the open content block
        self._kind = _NONE  # and what it is
        self._head = b""  # its delta events' bytes up to the delta's JSON string
        self._next = 0  # the index of the next block
        self._tools: dict[int | str, int] = {}  # the engine's tool call index (or id) -> block
        self._last_tool: int | str | None = None
        self._finish: object = None
        self._matched: object = None
        self._id = ""

    def feed(self, chunk: object) -> bytes:
        """One decoded chat chunk; the events it makes (possibly b"")."""
        if self.done:
            return b""
        if not isinstance(chunk, dict):
            return self._engine_failed("The model server sent a chunk that is not an object.")
        if chunk.get("error") is not None or chunk.get("object") == "error":
            return self._engine_failed(_engine_error(chunk))
        out: list[bytes] = []
        if not self._started:
            out.append(self._start(chunk))
        raw_usage = chunk.get("usage")
        if raw_usage is not None:
            usage = usage_from_chat(raw_usage)
            if usage is not None:
                self.usage = usage
        choices = chunk.get("choices")
        if choices and isinstance(choices, list):
            choice = choices[0]
            if isinstance(choice, dict):
                delta = choice.get("delta")
                if isinstance(delta, dict):
                    self._delta(delta, out)
                finish = choice.get("finish_reason")
                if finish is not None:
                    self._finish = finish
                matched = _matched(choice)
                if matched is not None:
                    self._matched = matched
        if len(out) == 1:
            return out[0]
        return b"".join(out)

    def finish(self) -> bytes:
        """At the engine's [DONE] or clean end: the open block's stop, message_delta with the
        stop reason and usage, message_stop."""
        if self.done:
            return b""
        self.done = True
        out = [] if self._started else [self._start({})]
        if self._open >= 0:
            out.append(_STOP_HEAD + str(self._open).encode() + b"}\n\n")
        stop_reason, stop_sequence = _stop(
            self._finish, self._matched, bool(self._tools), self.stop_sequences
        )
        usage = self.usage
        delta = {
            "type": "message_delta",
            "delta": {"stop_reason": stop_reason, "stop_sequence": stop_sequence},
            # Cumulative totals, as Anthropic's message_delta gives them; the input count is
            # only known now (message_start went out before the engine reported it).
            "usage": _usage_dict(usage) if usage is not None else {"output_tokens": 0},
        }
        out.append(b"event: message_delta\ndata: " + _dumps(delta) + b"\n\n")
        out.append(_MESSAGE_STOP)
        return b"".join(out)

    def fail(self, type_: str, message: str) -> bytes:
        """A failure mid-stream: one `error` event, as Anthropic's own streams end on an error
        (no block or message is closed after it; the SDKs raise on it)."""
        if self.done:
            return b""
        self.done = True
        self.error = message
        return error_event(type_, message)

    # ----- inside -------------------------------------------------------------------------

    def _engine_failed(self, message: str) -> bytes:
        return self.fail("api_error", message)

    def _start(self, chunk: dict[str, Any]) -> bytes:
        self._started = True
        self._id = _message_id(chunk.get("id"))
        usage = _usage_dict(usage_from_chat(chunk.get("usage")))
        usage["output_tokens"] = 0
        return b"".join(
            (
                _START_MESSAGE_HEAD,
                _json_str(self._id),
                _START_MESSAGE_MODEL,
                _json_str(self.model),
                _START_MESSAGE_USAGE,
                _dumps(usage),
                b"}}\n\n",
                _PING,
            )
        )

    def _delta(self, delta: dict[str, Any], out: list[bytes]) -> None:
        if self.thinking:
            reasoning = delta.get("reasoning_content") or delta.get("reasoning")
            if reasoning and isinstance(reasoning, str):
                if self._kind != _THINKING:
                    out.append(self._open_block(_THINKING, _THINKING_START))
                out.append(self._head + _json_str(reasoning) + _DELTA_END)
        text = delta.get("content")
        if text and isinstance(text, str):
            if self._kind != _TEXT:
                out.append(self._open_block(_TEXT, _TEXT_START))
            out.append(self._head + _json_str(text) + _DELTA_END)
        calls = delta.get("tool_calls")
        if calls and isinstance(calls, list):
            for call in calls:
                if isinstance(call, dict):
                    self._tool_delta(call, out)

    def _open_block(self, kind: int, start_tail: bytes) -> bytes:
        index = self._next
        self._next += 1
        head = b""
        if self._open >= 0:
            head = _STOP_HEAD + str(self._open).encode() + b"}\n\n"
        self._open, self._kind = index, kind
        number = str(index).encode()
        self._head = _DELTA_HEAD + number + _DELTA_KIND[kind]
        return head + _START_HEAD + number + start_tail

    def _tool_delta(self, call: dict[str, Any], out: list[bytes]) -> None:
        function = call.get("function")
        if not isinstance(function, dict):
            function = {}
        index = call.get("index")
        call_id = call.get("id")
        key: int | str | None
        if isinstance(index, int) and not isinstance(index, bool):
            key = index
        elif isinstance(call_id, str) and call_id:
            key = call_id
        else:
            key = self._last_tool
        block = self._tools.get(key) if key is not None else None
        if block is None:
            name = function.get("name")
            tool_id = call_id if isinstance(call_id, str) and call_id else _tool_id()
            if key is None:
                key = tool_id
            content_block = {
                "type": "tool_use",
                "id": tool_id,
                "name": name if isinstance(name, str) else "",
                "input": {},
            }
            tail = b',"content_block":' + _dumps(content_block) + b"}\n\n"
            out.append(self._open_block(_TOOL, tail))
            block = self._open
            self._tools[key] = block
        self._last_tool = key
        arguments = function.get("arguments")
        if arguments and isinstance(arguments, str):
            if block == self._open:
                head = self._head
            else:
                head = _DELTA_HEAD + str(block).encode() + _DELTA_KIND[_TOOL]
            out.append(head + _json_str(arguments) + _DELTA_END)


def _engine_error(chunk: dict[str, Any]) -> str:
    inner = chunk.get("error")
    source = inner if isinstance(inner, dict) else chunk
    message = source.get("message")
    if isinstance(message, str) and message:
        return f"The model server failed mid-answer: {message[:500]}"
    if isinstance(inner, str) and inner:
        return f"The model server failed mid-answer: {inner[:500]}"
    return "The model server failed mid-answer."


# ----- native pass-through -------------------------------------------------------------------


class NativeUsage:
    """For native pass-through: reads usage from Anthropic stream events as they pass."""

    __slots__ = ("usage",)

    def __init__(self) -> None:
        self.usage: Usage | None = None

    def feed(self, event: object) -> None:
        """One decoded event: message_start.message.usage, then message_delta.usage (cumulative
        totals; a count it leaves out keeps message_start's)."""
        if not isinstance(event, dict):
            return
        kind = event.get("type")
        if kind == "message_start":
            message = event.get("message")
            if isinstance(message, dict):
                found = usage_from_messages(message.get("usage"))
                if found is not None:
                    self.usage = found
        elif kind == "message_delta":
            raw = event.get("usage")
            found = usage_from_messages(raw)
            if found is None or not isinstance(raw, dict):
                return
            old = self.usage
            if old is None:
                self.usage = found
                return
            self.usage = Usage(
                found.input if _is_count(raw.get("input_tokens")) else old.input,
                found.output if _is_count(raw.get("output_tokens")) else old.output,
                found.cached if found.cached is not None else old.cached,
            )

    def feed_sse(self, data: bytes) -> None:
        """Whole SSE events as the relay passes them (it cuts only at event boundaries): only
        message_start and message_delta are decoded, the text deltas in between are skipped."""
        if b"event: message_" not in data and b"event:message_" not in data:
            return
        for event in data.replace(b"\r\n", b"\n").split(b"\n\n"):
            if not event.startswith(b"event:"):
                continue
            name, _, rest = event.partition(b"\n")
            if name[6:].strip() not in (b"message_start", b"message_delta"):
                continue
            for line in rest.split(b"\n"):
                if line.startswith(b"data:"):
                    try:
                        self.feed(json.loads(line[5:]))
                    except (ValueError, RecursionError):
                        pass


def _is_count(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def usage_of_answer(answer: object) -> Usage | None:
    """The usage of a native non-streaming Messages answer."""
    return usage_from_messages(answer.get("usage")) if isinstance(answer, dict) else None


# ----- count_tokens --------------------------------------------------------------------------


def count_tokens_estimate(body: dict[str, Any]) -> int:
    """The estimate for a validated count_tokens body when no backend can count.

    The rule: every character of text the model reads, divided by 4 and rounded up (4
    characters a token is the usual figure for English with BPE tokenizers); the text is the
    system prompt, every text and thinking block, each tool use's name and its input as compact
    JSON, each tool result's text, and each tool's name, description and input schema as
    compact JSON. Plus 4 tokens per message (its role and turn markers in a chat template) and
    1,600 per image or document block (Anthropic's figure for a full-size image), wherever it
    is. At least 1.
    """
    chars = len(_system_text(body.get("system")))
    extra = 0
    messages = body.get("messages") or []
    for message in messages:
        extra += MESSAGE_TOKENS
        content = message.get("content")
        if isinstance(content, str):
            chars += len(content)
            continue
        for block in content:
            kind = block.get("type")
            if kind == "text":
                chars += len(block["text"])
            elif kind == "thinking":
                chars += len(block["thinking"])
            elif kind == "tool_use":
                chars += len(block["name"]) + len(_compact(block.get("input")))
            elif kind == "tool_result":
                inner = block.get("content")
                if isinstance(inner, str):
                    chars += len(inner)
                elif isinstance(inner, list):
                    for part in inner:
                        if part.get("type") == "text":
                            chars += len(part["text"])
                        elif part.get("type") in ("image", "document"):
                            extra += IMAGE_TOKENS
            elif kind in ("image", "document"):
                extra += IMAGE_TOKENS
    for tool in body.get("tools") or []:
        chars += len(tool.get("name") or "")
        description = tool.get("description")
        if isinstance(description, str):
            chars += len(description)
        chars += len(_compact(tool.get("input_schema")))
    return max(1, math.ceil(chars / CHARS_PER_TOKEN) + extra)


def _compact(value: object) -> str:
    if value is None:
        return ""
    try:
        return _encode_compact_text(value)
    except (RecursionError, ValueError, TypeError):
        return ""
