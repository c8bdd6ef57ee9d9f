"""The Anthropic Messages surface in pure functions: its requests checked and turned into chat
completions, chat answers and chunks turned back into its messages and events, its errors.

Where the two APIs mean different things (every choice is tested in
tests/gateway/dialects/test_anthropic.py):

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
from typing import TYPE_CHECKING, Any

from gateway.core.errors import echoed
from gateway.core.output_limits import output_limit
from gateway.dialects.anthropic.errors import _invalid

if TYPE_CHECKING:
    from gateway.dialects.anthropic.errors import MessagesError


_encode_arguments = json.JSONEncoder(ensure_ascii=False).encode

# Claude Code puts a per-request hash in a system block of this prefix: billing metadata for
# Anthropic, not words for the model, and it would defeat the engine's prefix cache.
BILLING_HEADER = "x-anthropic-billing-header:"


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
