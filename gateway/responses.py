"""The OpenAI Responses API on a backend that serves only chat completions: both ways, streamed.

Pure functions and two small state machines, no I/O. The stateless subset is translated: input
items (messages, function calls and their outputs), instructions, function tools and
tool_choice, text.format, sampling and token limits. What needs state kept on a server
(`previous_response_id`, `conversation`, `store: true`, `background`, stored prompts and item
references) is refused with a message that says so (`state_error`), and so is what chat
completions cannot express (hosted tools such as web_search, file inputs, logprobs).

Decisions where the two APIs differ (the tests cite the documents each rests on):

- reasoning items in the input are dropped: chat completions has no field for earlier reasoning
  that engines agree on, reasoning models' chat templates drop earlier turns' thinking anyway,
  and Codex sends them back on every turn with `store: false`, so refusing would break it;
- the engine's `reasoning_content` (SGLang, llama.cpp, older vLLM) or `reasoning` (newer vLLM,
  Ollama) becomes a reasoning item with `reasoning_text` content, as vLLM's own /v1/responses
  emits it and Codex reads it;
- `developer` becomes `system`, and the system messages that open the conversation are joined
  into one, which every chat template accepts;
- one turn's text and function calls are one assistant message, their outputs tool messages
  right after it; images a function returned follow those as the user's (a chat tool message
  holds text only); `allowed_tools` keeps only the allowed tools, with its mode as tool_choice;
  without tools, tool_choice and parallel_tool_calls are left out;
- `max_output_tokens` becomes `max_tokens`, which vLLM, SGLang, llama.cpp and Ollama all read
  (the largest output limit the body names in any field, the one its allowance reserved);
- a stream that fails mid-way ends with `response.failed` alone: it carries the error in the
  response, the SDK folds the output so far into it, and Codex reads its `error`; open items get
  no `.done` event, so that no client runs a half-streamed function call.

Errors are `ResponsesError` (a `BadRequest`, so the OpenAI envelope of /v1). An answer or chunk
that is not a chat completion is the engine's fault: `from_chat` raises ValueError, and
`StreamTranslator` ends the stream with `response.failed` (it never raises).
"""

from __future__ import annotations

import json
import math
import os
import re
import time
from typing import Any

from gateway.allowances import output_limit
from gateway.chat_answer import first_choice
from gateway.errors import BadRequest, echoed
from gateway.scheduling_fields import refusal, refused_field
from gateway.usage import Usage
from gateway.usage import from_chat as _usage_from_chat
from gateway.usage import from_responses as _usage_from_responses

__all__ = [
    "NativeUsage",
    "ResponsesError",
    "StreamTranslator",
    "from_chat",
    "needs_state",
    "state_error",
    "to_chat",
    "usage_of_answer",
    "validate",
]


class ResponsesError(BadRequest):
    """A request the Responses surface refuses (400), with the param it is about."""


# ----- validation ----------------------------------------------------------------------------

ROLES = frozenset({"user", "assistant", "system", "developer"})
TOOL_CHOICES = frozenset({"none", "auto", "required"})
TRUNCATIONS = frozenset({"auto", "disabled"})
_STRING_FIELDS = (
    "instructions", "previous_response_id", "user", "safety_identifier", "prompt_cache_key",
    "service_tier", "prompt_cache_retention",
)  # fmt: skip
_BOOL_FIELDS = ("stream", "store", "background", "parallel_tool_calls")
_OBJECT_FIELDS = ("reasoning", "text", "stream_options", "prompt", "context_management")


def _kind(value: object) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "an array"
    if isinstance(value, dict):
        return "an object"
    return "a value of an unknown type"


def _wrong_type(param: str, expected: str, value: object) -> ResponsesError:
    # OpenAI's own wording, so that a client's error handling reads both alike.
    return ResponsesError(
        f"Invalid type for '{param}': expected {expected}, but got {_kind(value)} instead.",
        param=param,
    )


def _wrong_value(param: str, why: str) -> ResponsesError:
    return ResponsesError(f"Invalid value for '{param}': {why}", param=param)


def _is_number(value: object) -> bool:
    return (
        isinstance(value, int | float)
        and not isinstance(value, bool)
        and math.isfinite(value)  # json.loads reads NaN and Infinity; OpenAI does not
    )


def _is_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _one_of(value: object, names: frozenset[str]) -> bool:
    # Only strings are looked up: a list from the request is unhashable.
    return isinstance(value, str) and value in names


def validate(body: object) -> None:
    """Refuse (ResponsesError, 400) a body that is not a Responses request as the API reference
    types it. Checks what the gateway reads and the documented types and ranges; unknown fields
    and item types pass, for native backends know more than this module does."""
    if not isinstance(body, dict):
        raise ResponsesError("The request body must be a JSON object.")
    model = body.get("model")
    if model is None:
        raise ResponsesError("Missing required parameter: 'model'.", param="model")
    if not isinstance(model, str) or not model:
        raise _wrong_type("model", "a non-empty string", model)
    refused = refused_field(body)
    if refused is not None:
        raise ResponsesError(f"'{refused}' is {refusal(refused)}", param=refused)
    for name in _STRING_FIELDS:
        value = body.get(name)
        if value is not None and not isinstance(value, str):
            raise _wrong_type(name, "a string", value)
    for name in _BOOL_FIELDS:
        value = body.get(name)
        if value is not None and not isinstance(value, bool):
            raise _wrong_type(name, "a boolean", value)
    for name in _OBJECT_FIELDS:
        value = body.get(name)
        if value is not None and not isinstance(value, dict):
            raise _wrong_type(name, "an object", value)
    _check_number(body, "temperature", 0.0, 2.0)
    _check_number(body, "top_p", 0.0, 1.0)
    _check_int(body, "max_output_tokens", 1, None)
    _check_int(body, "max_tool_calls", 0, None)
    _check_int(body, "top_logprobs", 0, 20)
    truncation = body.get("truncation")
    if truncation is not None and not _one_of(truncation, TRUNCATIONS):
        raise _wrong_value("truncation", "expected 'auto' or 'disabled'.")
    metadata = body.get("metadata")
    if metadata is not None:
        if not isinstance(metadata, dict):
            raise _wrong_type("metadata", "an object", metadata)
        for key, value in metadata.items():
            if not isinstance(value, str):
                raise _wrong_type(f"metadata.{key}", "a string", value)
    include = body.get("include")
    if include is not None:
        if not isinstance(include, list):
            raise _wrong_type("include", "an array of strings", include)
        for i, entry in enumerate(include):
            if not isinstance(entry, str):
                raise _wrong_type(f"include[{i}]", "a string", entry)
    conversation = body.get("conversation")
    if conversation is not None and not isinstance(conversation, str | dict):
        raise _wrong_type("conversation", "a string or an object", conversation)
    reasoning = body.get("reasoning")
    if isinstance(reasoning, dict):
        effort = reasoning.get("effort")
        if effort is not None and not isinstance(effort, str):
            raise _wrong_type("reasoning.effort", "a string", effort)
    text = body.get("text")
    if isinstance(text, dict):
        fmt = text.get("format")
        if fmt is not None:
            if not isinstance(fmt, dict):
                raise _wrong_type("text.format", "an object", fmt)
            if not isinstance(fmt.get("type"), str):
                raise _wrong_type("text.format.type", "a string", fmt.get("type"))
    _check_tools(body.get("tools"))
    _check_tool_choice(body.get("tool_choice"))
    _check_input(body.get("input"))


def _check_number(body: dict[str, Any], name: str, low: float, high: float) -> None:
    value = body.get(name)
    if value is None:
        return
    if not _is_number(value):
        raise _wrong_type(name, "a number", value)
    if not low <= value <= high:
        raise _wrong_value(name, f"expected a number from {low:g} to {high:g}.")


def _check_int(body: dict[str, Any], name: str, low: int, high: int | None) -> None:
    value = body.get(name)
    if value is None:
        return
    if not _is_int(value):
        raise _wrong_type(name, "an integer", value)
    if value < low or (high is not None and value > high):
        limit = f"at least {low}" if high is None else f"from {low} to {high}"
        raise _wrong_value(name, f"expected an integer {limit}.")


def _check_tools(tools: object) -> None:
    if tools is None:
        return
    if not isinstance(tools, list):
        raise _wrong_type("tools", "an array", tools)
    for i, tool in enumerate(tools):
        if not isinstance(tool, dict):
            raise _wrong_type(f"tools[{i}]", "an object", tool)
        if not isinstance(tool.get("type"), str):
            raise _wrong_type(f"tools[{i}].type", "a string", tool.get("type"))


def _check_tool_choice(choice: object) -> None:
    if choice is None:
        return
    if isinstance(choice, str):
        if not _one_of(choice, TOOL_CHOICES):
            raise _wrong_value("tool_choice", "expected 'none', 'auto', 'required' or an object.")
        return
    if not isinstance(choice, dict):
        raise _wrong_type("tool_choice", "a string or an object", choice)
    if not isinstance(choice.get("type"), str):
        raise _wrong_type("tool_choice.type", "a string", choice.get("type"))


def _check_input(value: object) -> None:
    if value is None or isinstance(value, str):
        return
    if not isinstance(value, list):
        raise _wrong_type("input", "a string or an array", value)
    for i, item in enumerate(value):
        param = f"input[{i}]"
        if not isinstance(item, dict):
            raise _wrong_type(param, "an object", item)
        kind = item.get("type")
        if kind is not None and not isinstance(kind, str):
            raise _wrong_type(param + ".type", "a string", kind)
        if kind == "message" or (kind is None and "role" in item):
            _check_message(item, param)
        elif kind is None and not isinstance(item.get("id"), str):
            # Without a type an item is a message (it has a role) or a reference (an id).
            raise _wrong_value(param, "an input item needs a 'type', or a 'role' for a message.")


def _check_message(item: dict[str, Any], param: str) -> None:
    role = item.get("role")
    if not _one_of(role, ROLES):
        raise _wrong_value(
            param + ".role", "expected 'user', 'assistant', 'system' or 'developer'."
        )
    content = item.get("content")
    if isinstance(content, str):
        return
    if not isinstance(content, list):
        raise _wrong_type(param + ".content", "a string or an array", content)
    for j, part in enumerate(content):
        if not isinstance(part, dict):
            raise _wrong_type(f"{param}.content[{j}]", "an object", part)
        if not isinstance(part.get("type"), str):
            raise _wrong_type(f"{param}.content[{j}].type", "a string", part.get("type"))


# ----- state a chat completions backend cannot give -----------------------------------------

# Said on a translated backend and on a native one whose operator did not let it keep state
# (gateway/stored_state.py): either way nothing is kept for the caller.
_NO_STORE = "no backend of this model keeps Responses state for callers"


def state_error(body: object) -> ResponsesError | None:
    """The refusal for a request that needs state kept on the server, or None.

    `store` absent is stateless: the SDK leaves it out unless asked, and Codex sends false.
    """
    if not isinstance(body, dict):
        return None
    if _given(body.get("previous_response_id")):
        return ResponsesError(
            "'previous_response_id' continues a conversation stored on the server, but "
            f"{_NO_STORE}. Send the whole conversation in 'input' instead.",
            param="previous_response_id",
        )
    if _given(body.get("conversation")):
        return ResponsesError(
            f"'conversation' refers to a conversation stored on the server, but {_NO_STORE}. "
            "Send the whole conversation in 'input' instead.",
            param="conversation",
        )
    if body.get("store") is True:
        return ResponsesError(
            f"'store: true' asks to keep this response for later retrieval, but {_NO_STORE}. "
            "Set 'store' to false or leave it out.",
            param="store",
        )
    if body.get("background") is True:
        return ResponsesError(
            f"'background: true' asks to keep this response for later retrieval, but "
            f"{_NO_STORE}. Leave 'background' out, and stream the response if it is long.",
            param="background",
        )
    if _given(body.get("prompt")):
        return ResponsesError(
            f"'prompt' refers to a prompt template stored on the server, but {_NO_STORE}. "
            "Send the prompt itself in 'instructions' and 'input' instead.",
            param="prompt",
        )
    items = body.get("input")
    if isinstance(items, list):
        for i, item in enumerate(items):
            if isinstance(item, dict) and (
                item.get("type") == "item_reference"
                or (item.get("type") is None and "role" not in item and "id" in item)
            ):
                return ResponsesError(
                    f"'input[{i}]' refers to an item stored on the server, but {_NO_STORE}. "
                    "Send the item itself instead.",
                    param=f"input[{i}]",
                )
    return None


def needs_state(body: object) -> str | None:
    """Why this request needs server-side state a translating backend cannot give, or None."""
    error = state_error(body)
    return None if error is None else error.message


def _given(value: object) -> bool:
    return value is not None and value != "" and value is not False


# ----- request: Responses -> chat completions ------------------------------------------------

# Chat-only sampling fields a client may add (extra_body) for an engine; copied as they are.
CHAT_PASSTHROUGH = (
    "seed", "stop", "presence_penalty", "frequency_penalty", "top_k", "min_p",
    "repetition_penalty", "chat_template_kwargs",
)  # fmt: skip
REASONING_EFFORTS = frozenset({"low", "medium", "high"})  # what every engine's field takes
IMAGE_DETAILS = frozenset({"auto", "low", "high"})
_LOGPROBS_INCLUDE = "message.output_text.logprobs"


def to_chat(body: dict[str, Any]) -> dict[str, Any]:
    """A stateless Responses request as the chat completions request that asks the same."""
    validate(body)
    error = state_error(body)
    if error is not None:
        raise error
    chat: dict[str, Any] = {"model": body["model"], "messages": _messages(body)}
    tools = _tools(body.get("tools"))
    choice = body.get("tool_choice")
    if isinstance(choice, dict) and choice.get("type") == "allowed_tools":
        tools, choice = _allowed_tools(choice, tools)
    elif choice is not None:
        choice = _tool_choice(choice)
    # Without tools a tool_choice constrains nothing, and vLLM refuses "auto" when it runs
    # without a tool parser: both are left out then.
    if tools:
        chat["tools"] = tools
        if choice is not None:
            chat["tool_choice"] = choice
        if body.get("parallel_tool_calls") is not None:
            chat["parallel_tool_calls"] = body["parallel_tool_calls"]
    for name in ("temperature", "top_p", "user"):
        if body.get(name) is not None:
            chat[name] = body[name]
    limit = output_limit(body)  # whichever field named it: what the allowance reserved
    if limit is not None:
        chat["max_tokens"] = limit
    fmt = _response_format(body.get("text"))
    if fmt is not None:
        chat["response_format"] = fmt
    reasoning = body.get("reasoning")
    if isinstance(reasoning, dict) and _one_of(reasoning.get("effort"), REASONING_EFFORTS):
        chat["reasoning_effort"] = reasoning["effort"]
    if body.get("top_logprobs") or _LOGPROBS_INCLUDE in (body.get("include") or ()):
        raise ResponsesError(
            "Log probabilities are not translated to chat completions, which this model's "
            "backend serves. Leave out 'top_logprobs' and the logprobs 'include'.",
            param="top_logprobs" if body.get("top_logprobs") else "include",
        )
    for name in CHAT_PASSTHROUGH:
        if body.get(name) is not None:
            chat[name] = body[name]
    if body.get("stream") is True:
        chat["stream"] = True
        # The gateway records every request's usage; the Responses stream ends with it anyway.
        chat["stream_options"] = {"include_usage": True}
    return chat


def _messages(body: dict[str, Any]) -> list[dict[str, Any]]:
    messages: list[dict[str, Any]] = []
    instructions = body.get("instructions")
    if instructions:
        messages.append({"role": "system", "content": instructions})
    items = body.get("input")
    if isinstance(items, str):
        messages.append({"role": "user", "content": items})
    elif isinstance(items, list):
        _Conversation(messages).add_all(items)
    if not messages:
        raise ResponsesError("Missing required parameter: 'input'.", param="input")
    return messages


class _Conversation:
    """Input items appended as chat messages, with what chat completions requires of their
    order: the calls of one turn in one assistant message, their outputs right after it."""

    __slots__ = ("images", "messages", "opening")

    def __init__(self, messages: list[dict[str, Any]]) -> None:
        self.messages = messages
        self.opening = True  # only system messages so far: they are joined into one
        self.images: list[dict[str, Any]] = []  # from function outputs, for after the outputs

    def add_all(self, items: list[Any]) -> None:
        for i, item in enumerate(items):
            kind = item.get("type")
            param = f"input[{i}]"
            if kind != "function_call_output":
                self._flush_images()
            if kind == "message" or (kind is None and "role" in item):
                self._message(item, param)
            elif kind == "function_call":
                self._call(item, param)
            elif kind == "function_call_output":
                self._output(item, param)
            elif kind == "reasoning":
                continue  # see the module docstring
            else:
                raise ResponsesError(
                    f"Input items of type '{echoed(str(kind))}' cannot be translated to chat "
                    "completions, which this model's backend serves: only messages, function "
                    "calls, function call outputs and reasoning items can.",
                    param=param,
                )
        self._flush_images()

    def _append(self, message: dict[str, Any]) -> None:
        self.opening = self.opening and message["role"] == "system"
        self.messages.append(message)

    def _message(self, item: dict[str, Any], param: str) -> None:
        role, content = item["role"], item["content"]  # validate() saw both
        if role in ("system", "developer"):
            text = _text(content, param, "a system or developer message")
            last = self.messages[-1] if self.messages else None
            if self.opening and last is not None:
                last["content"] = f"{last['content']}\n\n{text}"
            else:
                self._append({"role": "system", "content": text})
        elif role == "assistant":
            text = _text(content, param, "an assistant message")
            self._append({"role": "assistant", "content": text})
        else:
            self._append({"role": "user", "content": _user_content(content, param)})

    def _call(self, item: dict[str, Any], param: str) -> None:
        name, arguments, call_id = item.get("name"), item.get("arguments"), item.get("call_id")
        if not isinstance(name, str) or not name:
            raise _wrong_type(param + ".name", "a non-empty string", name)
        if not isinstance(arguments, str):
            raise _wrong_type(param + ".arguments", "a string", arguments)
        if not isinstance(call_id, str) or not call_id:
            raise _wrong_type(param + ".call_id", "a non-empty string", call_id)
        namespace = item.get("namespace")
        if isinstance(namespace, str) and namespace:
            name = namespace + NAMESPACE_SEP + name
        function = {"name": name, "arguments": arguments}
        call = {"id": call_id, "type": "function", "function": function}
        last = self.messages[-1] if self.messages else None
        if last is not None and last["role"] == "assistant":
            # One turn's text and calls (or its parallel calls) are one chat message.
            last.setdefault("tool_calls", []).append(call)
        else:
            self._append({"role": "assistant", "content": None, "tool_calls": [call]})

    def _output(self, item: dict[str, Any], param: str) -> None:
        call_id, output = item.get("call_id"), item.get("output")
        if not isinstance(call_id, str) or not call_id:
            raise _wrong_type(param + ".call_id", "a non-empty string", call_id)
        if isinstance(output, str):
            text = output
        elif isinstance(output, list):
            texts: list[str] = []
            for j, part in enumerate(output):
                where = f"{param}.output[{j}]"
                if not isinstance(part, dict):
                    raise _wrong_type(where, "an object", part)
                kind = part.get("type")
                if kind == "input_text" and isinstance(part.get("text"), str):
                    texts.append(part["text"])
                elif kind == "input_image":
                    self.images.append(_image(part, where))
                else:
                    raise ResponsesError(
                        "A function call output can be translated to chat completions, which "
                        "this model's backend serves, with text and images only.",
                        param=where,
                    )
            text = "\n".join(texts)
        else:
            raise _wrong_type(param + ".output", "a string or an array", output)
        self._append({"role": "tool", "tool_call_id": call_id, "content": text})

    def _flush_images(self) -> None:
        # A chat tool message holds text only: a function's images follow its outputs as the
        # user's, where every vision model reads them.
        if self.images:
            self._append({"role": "user", "content": self.images})
            self.images = []


def _text(content: str | list[Any], param: str, what: str) -> str:
    """The text of a message that chat completions can hold as text only."""
    if isinstance(content, str):
        return content
    texts = []
    for j, part in enumerate(content):
        kind = part.get("type")
        text = part.get("refusal") if kind == "refusal" else part.get("text")
        if kind not in ("input_text", "output_text", "refusal") or not isinstance(text, str):
            raise ResponsesError(
                f"Only text can be translated to chat completions in {what}.",
                param=f"{param}.content[{j}]",
            )
        texts.append(text)
    # vLLM renders the same list of text parts joined by newlines.
    return "\n".join(texts)


def _user_content(content: str | list[Any], param: str) -> str | list[dict[str, Any]]:
    if isinstance(content, str):
        return content
    parts: list[dict[str, Any]] = []
    texts_only = True
    for j, part in enumerate(content):
        where = f"{param}.content[{j}]"
        kind = part.get("type")
        if kind in ("input_text", "output_text"):
            text = part.get("text")
            if not isinstance(text, str):
                raise _wrong_type(where + ".text", "a string", text)
            parts.append({"type": "text", "text": text})
        elif kind == "input_image":
            parts.append(_image(part, where))
            texts_only = False
        elif kind == "input_audio":
            parts.append(_audio(part, where))
            texts_only = False
        elif kind == "input_file":
            raise ResponsesError(
                "File inputs cannot be translated to chat completions, which this model's "
                "backend serves. Send the file's text as input_text instead.",
                param=where,
            )
        else:
            raise ResponsesError(
                f"Content parts of type '{echoed(str(kind))}' cannot be translated to chat "
                "completions.",
                param=where,
            )
    if texts_only:
        return "\n".join(p["text"] for p in parts)  # a string reads in every engine
    return parts


def _image(part: dict[str, Any], where: str) -> dict[str, Any]:
    url = part.get("image_url")
    if not isinstance(url, str) or not url:
        if part.get("file_id") is not None:
            raise ResponsesError(
                f"'file_id' refers to a file stored on the server, but {_NO_STORE}. "
                "Send the image as 'image_url' (a URL or a base64 data URL) instead.",
                param=where + ".file_id",
            )
        raise _wrong_type(where + ".image_url", "a URL or a base64 data URL", url)
    image: dict[str, Any] = {"url": url}
    detail = part.get("detail")
    if detail is not None and not isinstance(detail, str):
        raise _wrong_type(where + ".detail", "a string", detail)
    if _one_of(detail, IMAGE_DETAILS):
        image["detail"] = detail  # a detail engines do not know ("original") is left out
    return {"type": "image_url", "image_url": image}


def _audio(part: dict[str, Any], where: str) -> dict[str, Any]:
    audio = part.get("input_audio")
    if (
        not isinstance(audio, dict)
        or not isinstance(audio.get("data"), str)
        or not isinstance(audio.get("format"), str)
    ):
        raise _wrong_type(where + ".input_audio", "an object with data and format", audio)
    data = {"data": audio["data"], "format": audio["format"]}
    return {"type": "input_audio", "input_audio": data}


# Tools the model cannot call through chat completions, only a hosted service can run: left out
# on a translating backend (Codex sends web_search by default), refused only when forced.
HOSTED_TOOLS = frozenset(
    {
        "web_search", "web_search_preview", "web_search_preview_2025_03_11", "file_search",
        "code_interpreter", "computer_use_preview", "computer", "image_generation", "mcp",
        "local_shell", "tool_search",
    }
)  # fmt: skip
# A namespaced function is one chat function named namespace + NAMESPACE_SEP + name: chat
# function names allow letters, digits, '_' and '-', so the pair survives the engine.
NAMESPACE_SEP = "__"


def _tools(tools: list[dict[str, Any]] | None) -> list[dict[str, Any]]:
    chat: list[dict[str, Any]] = []
    for i, tool in enumerate(tools or ()):
        kind = tool["type"]
        if kind in HOSTED_TOOLS or kind.startswith(("web_search", "computer_use")):
            continue
        if kind == "namespace":
            chat.extend(_namespace_tools(tool, f"tools[{i}]"))
            continue
        if kind != "function":
            raise ResponsesError(
                f"Tools of type '{echoed(kind)}' cannot be translated to chat completions, "
                "which this model's backend serves: it calls function tools only (type "
                "'function'). Remove the tool from 'tools'.",
                param=f"tools[{i}]",
            )
        chat.append(_function_tool(tool, f"tools[{i}]"))
    return chat


def _function_tool(tool: dict[str, Any], param: str, prefix: str = "") -> dict[str, Any]:
    name = tool.get("name")
    if not isinstance(name, str) or not name:
        raise _wrong_type(f"{param}.name", "a non-empty string", name)
    function: dict[str, Any] = {"name": prefix + name}
    for field, expected in (("description", str), ("parameters", dict), ("strict", bool)):
        value = tool.get(field)
        if value is None:
            continue
        if not isinstance(value, expected):
            raise _wrong_type(f"{param}.{field}", _TYPE_NAMES[expected], value)
        function[field] = value
    return {"type": "function", "function": function}


def _namespace_tools(tool: dict[str, Any], param: str) -> list[dict[str, Any]]:
    """A namespace's functions, each a chat function named `<namespace>__<name>`."""
    namespace, inner = tool.get("name"), tool.get("tools")
    if not isinstance(namespace, str) or not namespace:
        raise _wrong_type(f"{param}.name", "a non-empty string", namespace)
    if not isinstance(inner, list):
        raise _wrong_type(f"{param}.tools", "an array", inner)
    out = []
    for j, member in enumerate(inner):
        at = f"{param}.tools[{j}]"
        if not isinstance(member, dict) or member.get("type") != "function":
            raise ResponsesError(
                f"Only function tools inside a namespace can be translated to chat "
                f"completions, which this model's backend serves. Remove '{at}'.",
                param=at,
            )
        out.append(_function_tool(member, at, namespace + NAMESPACE_SEP))
    return out


def namespaces(request: object) -> frozenset[str]:
    """The namespaces a request's tools declare (their calls come back split again)."""
    tools = request.get("tools") if isinstance(request, dict) else None
    if not isinstance(tools, list):
        return frozenset()
    return frozenset(
        t["name"]
        for t in tools
        if isinstance(t, dict) and t.get("type") == "namespace" and isinstance(t.get("name"), str)
    )


def _split(name: str, known: frozenset[str]) -> tuple[str | None, str]:
    """A chat function's name as (namespace, name) when it is a namespaced one."""
    if known and NAMESPACE_SEP in name:
        namespace, _, base = name.partition(NAMESPACE_SEP)
        if namespace in known and base:
            return namespace, base
    return None, name


_TYPE_NAMES: dict[type, str] = {str: "a string", dict: "an object", bool: "a boolean"}


def _tool_choice(choice: str | dict[str, Any]) -> str | dict[str, Any]:
    if isinstance(choice, str):
        return choice
    if choice["type"] == "function":
        name = choice.get("name")
        if not isinstance(name, str) or not name:
            raise _wrong_type("tool_choice.name", "a non-empty string", name)
        return {"type": "function", "function": {"name": name}}
    raise ResponsesError(
        f"A tool_choice of type '{echoed(str(choice['type']))}' cannot be translated to chat "
        "completions, which this model's backend serves: it chooses among function tools only.",
        param="tool_choice",
    )


def _allowed_tools(
    choice: dict[str, Any], tools: list[dict[str, Any]]
) -> tuple[list[dict[str, Any]], str]:
    """`allowed_tools` as chat completions can say it: only those tools, and its mode."""
    mode, allowed = choice.get("mode"), choice.get("tools")
    if mode not in ("auto", "required"):
        raise _wrong_value("tool_choice.mode", "expected 'auto' or 'required'.")
    if not isinstance(allowed, list):
        raise _wrong_type("tool_choice.tools", "an array", allowed)
    names: set[str] = set()
    for i, entry in enumerate(allowed):
        if not isinstance(entry, dict) or entry.get("type") != "function":
            raise ResponsesError(
                "Only function tools can be allowed on chat completions, which this model's "
                "backend serves.",
                param=f"tool_choice.tools[{i}]",
            )
        name = entry.get("name")
        if not isinstance(name, str):
            raise _wrong_type(f"tool_choice.tools[{i}].name", "a string", name)
        if not any(tool["function"]["name"] == name for tool in tools):
            raise _wrong_value(
                f"tool_choice.tools[{i}].name", f"no tool in 'tools' is named '{echoed(name)}'."
            )
        names.add(name)
    return [t for t in tools if t["function"]["name"] in names], mode


def _response_format(text: object) -> dict[str, Any] | None:
    fmt = text.get("format") if isinstance(text, dict) else None
    if fmt is None or fmt["type"] == "text":
        return None
    if fmt["type"] == "json_object":
        return {"type": "json_object"}
    if fmt["type"] != "json_schema":
        raise _wrong_value("text.format.type", "expected 'text', 'json_object' or 'json_schema'.")
    name, schema = fmt.get("name"), fmt.get("schema")
    if not isinstance(name, str) or not name:
        raise _wrong_type("text.format.name", "a non-empty string", name)
    if not isinstance(schema, dict):
        raise _wrong_type("text.format.schema", "an object", schema)
    spec: dict[str, Any] = {"name": name, "schema": schema}
    if isinstance(fmt.get("strict"), bool):
        spec["strict"] = fmt["strict"]
    if isinstance(fmt.get("description"), str):
        spec["description"] = fmt["description"]
    return {"type": "json_schema", "json_schema": spec}


# ----- answer: chat completion -> Response ---------------------------------------------------

INCOMPLETE_REASONS = {"length": "max_output_tokens", "content_filter": "content_filter"}


def _new_id(prefix: str) -> str:
    return prefix + os.urandom(16).hex()


def _echo(request: object) -> dict[str, Any]:
    """The request's fields a Response repeats, as the API reference lists them."""
    req = request if isinstance(request, dict) else {}

    def pick(name: str, default: Any = None) -> Any:
        value = req.get(name)
        return default if value is None else value

    return {
        "background": False,
        "instructions": pick("instructions"),
        "max_output_tokens": pick("max_output_tokens"),
        "metadata": pick("metadata", {}),
        "parallel_tool_calls": pick("parallel_tool_calls", True),
        "previous_response_id": None,
        "reasoning": pick("reasoning"),
        "store": False,
        "temperature": pick("temperature"),
        "text": pick("text", {"format": {"type": "text"}}),
        "tool_choice": pick("tool_choice", "auto"),
        "tools": pick("tools", []),
        "top_p": pick("top_p"),
        "truncation": pick("truncation", "disabled"),
        "user": pick("user"),
    }


def _response(
    echo: dict[str, Any],
    *,
    rid: str,
    created: int,
    model: str,
    status: str,
    output: list[dict[str, Any]],
    usage: dict[str, Any] | None = None,
    incomplete: str | None = None,
    error: dict[str, Any] | None = None,
) -> dict[str, Any]:
    response = {
        "id": rid,
        "object": "response",
        "created_at": created,
        "status": status,
        "model": model,
        "output": output,
        "usage": usage,
        "error": error,
        "incomplete_details": None if incomplete is None else {"reason": incomplete},
        "completed_at": int(time.time()) if status == "completed" else None,
    }
    response.update(echo)
    return response


def _usage(usage: Usage | None, reasoning: int) -> dict[str, Any] | None:
    if usage is None:
        return None
    return {
        "input_tokens": usage.input,
        "input_tokens_details": {"cached_tokens": usage.cached or 0, "cache_write_tokens": 0},
        "output_tokens": usage.output,
        "output_tokens_details": {"reasoning_tokens": reasoning},
        "total_tokens": usage.input + usage.output,
    }


def _reasoning_tokens(usage: object) -> int:
    details = usage.get("completion_tokens_details") if isinstance(usage, dict) else None
    value = details.get("reasoning_tokens") if isinstance(details, dict) else None
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else 0


def _message_item(mid: str, text: str, status: str) -> dict[str, Any]:
    return {
        "id": mid,
        "type": "message",
        "status": status,
        "role": "assistant",
        "content": [{"type": "output_text", "text": text, "annotations": [], "logprobs": []}],
    }


def _reasoning_item(rid: str, text: str, status: str) -> dict[str, Any]:
    content = [{"type": "reasoning_text", "text": text}] if text else []
    return {"id": rid, "type": "reasoning", "status": status, "summary": [], "content": content}


def _call_item(
    fid: str,
    call_id: str,
    name: str,
    arguments: str,
    status: str,
    known: frozenset[str] = frozenset(),
) -> dict[str, Any]:
    """A function_call item; `known` are the request's namespaces, so that a namespaced
    function's call names its namespace and its own name again."""
    namespace, name = _split(name, known)
    item = {
        "id": fid,
        "type": "function_call",
        "status": status,
        "call_id": call_id,
        "name": name,
        "arguments": arguments,
    }
    if namespace is not None:
        item["namespace"] = namespace
    return item


def _reasoning_of(message: dict[str, Any]) -> object:
    # SGLang, llama.cpp and older vLLM say reasoning_content; newer vLLM and Ollama reasoning.
    text = message.get("reasoning_content")
    return text if text else message.get("reasoning")


def from_chat(answer: object, *, model: str, request: object) -> dict[str, Any]:
    """A chat completion as the Response the client asked for (ValueError if it is none)."""
    answer, choice, message = first_choice(answer)
    content, reasoning = message.get("content"), _reasoning_of(message)
    if content is not None and not isinstance(content, str):
        raise ValueError("the answer's content is not a string")
    if reasoning is not None and not isinstance(reasoning, str):
        raise ValueError("the answer's reasoning is not a string")
    raw_calls = message.get("tool_calls") or []
    if not isinstance(raw_calls, list):
        raise ValueError("the answer's tool_calls is not a list")
    finish = choice.get("finish_reason")
    incomplete = INCOMPLETE_REASONS.get(finish) if isinstance(finish, str) else None
    output: list[dict[str, Any]] = []
    if reasoning:
        output.append(_reasoning_item(_new_id("rs_"), reasoning, "completed"))
    known = namespaces(request)
    calls = [_answer_call(call, known) for call in raw_calls]
    if content and not (calls and content.isspace()):
        output.append(_message_item(_new_id("msg_"), content, "completed"))
    output.extend(calls)
    if not output:
        output.append(_message_item(_new_id("msg_"), "", "completed"))
    if incomplete is not None:
        output[-1]["status"] = "incomplete"  # what was cut short is the last item
    raw_usage = answer.get("usage")
    return _response(
        _echo(request),
        rid=_new_id("resp_"),
        created=int(time.time()),
        model=model,
        status="completed" if incomplete is None else "incomplete",
        output=output,
        usage=_usage(_usage_from_chat(raw_usage), _reasoning_tokens(raw_usage)),
        incomplete=incomplete,
    )


def _answer_call(call: object, known: frozenset[str] = frozenset()) -> dict[str, Any]:
    if not isinstance(call, dict):
        raise ValueError("a tool call of the answer is not an object")
    function = call.get("function")
    if not isinstance(function, dict):
        raise ValueError("a tool call of the answer has no function")
    name, arguments = function.get("name"), function.get("arguments")
    if not isinstance(name, str) or not name:
        raise ValueError("a tool call of the answer has no name")
    if isinstance(arguments, dict):
        arguments = json.dumps(arguments)  # an engine that forgot to encode them
    elif arguments is None:
        arguments = ""
    elif not isinstance(arguments, str):
        raise ValueError("a tool call's arguments are not a string")
    call_id = call.get("id")
    if not isinstance(call_id, str) or not call_id:
        call_id = _new_id("call_")
    return _call_item(_new_id("fc_"), call_id, name, arguments, "completed", known)


# ----- streams -------------------------------------------------------------------------------

_encode = json.JSONEncoder(separators=(",", ":"), check_circular=False).encode
_quote: Any = getattr(json.encoder, "c_encode_basestring_ascii", None) or (
    json.encoder.encode_basestring_ascii
)
# The code of a response that failed mid-stream: of the codes the SDK's ResponseError allows,
# OpenAI's own for a failure on the server's side. A value of OpenAI's stream, not one of the
# gateway's error codes (those are GatewayError.code, each with its Fluent message).
FAILED_CODE = "server_error"
TERMINAL_EVENTS = frozenset({"response.completed", "response.incomplete", "response.failed"})
_TERMINAL_TYPE = re.compile(rb'"response\.(?:completed|incomplete|failed)"').search


def _sse(kind: str, payload: dict[str, Any]) -> bytes:
    return b"event: " + kind.encode() + b"\ndata: " + _encode(payload).encode() + b"\n\n"


class _Item:
    """One output item being streamed: a message, a reasoning item or a function call."""

    __slots__ = (
        "call_id", "closed", "id", "index", "kind", "known", "name", "parts", "prefix", "status",
    )  # fmt: skip

    def __init__(
        self, kind: str, item_id: str, index: int, known: frozenset[str] = frozenset()
    ) -> None:
        self.kind = kind
        self.known = known  # the request's namespaces
        self.id = item_id
        self.index = index  # its output_index
        self.parts: list[str] = []  # text, reasoning or arguments, as streamed
        self.closed = False
        self.status = "in_progress"  # as its output_item.done said, once closed
        self.name = ""
        self.call_id = ""
        self.prefix = b""  # the start of its delta events, encoded once

    def text(self) -> str:
        if len(self.parts) > 1:
            self.parts = ["".join(self.parts)]
        return self.parts[0] if self.parts else ""

    def item(self, status: str) -> dict[str, Any]:
        if self.kind == "message":
            return _message_item(self.id, self.text(), status)
        if self.kind == "reasoning":
            return _reasoning_item(self.id, self.text(), status)
        return _call_item(self.id, self.call_id, self.name, self.text(), status, self.known)


class _Call:
    """A chat tool call by its index, until its name is known and its item can be added."""

    __slots__ = ("call_id", "item", "name", "pending")

    def __init__(self) -> None:
        self.call_id: str | None = None
        self.name: str | None = None
        self.pending: list[str] = []  # arguments that came before the name
        self.item: _Item | None = None


class StreamTranslator:
    """Chat completion chunks in, Responses stream events out (SSE-framed bytes,
    `event: <type>\\ndata: {...}\\n\\n`, each with its sequence_number).

    `feed` once per chunk, then `finish` when the engine's stream ended ([DONE] or its end), or
    `fail` when it broke. None of them raises: a chunk that is not a chat completion chunk, an
    engine's error chunk or a tool call without a name ends the stream with `response.failed`
    (`failure` says why). After the terminal event every call returns b"". `status` is None
    until then, then "completed", "incomplete" or "failed"; `usage` is the engine's last.
    """

    __slots__ = (
        "_calls", "_created", "_echo", "_echo_json", "_finish", "_held", "_namespaces", "_open",
        "_output", "_rid", "_seq", "_started", "failure", "model", "reasoning_tokens", "status",
        "usage",
    )  # fmt: skip

    def __init__(self, *, model: str, request: object) -> None:
        self.model = model
        self._echo = _echo(request)
        self._echo_json: str | None = None
        self._namespaces = namespaces(request)
        self._rid = _new_id("resp_")
        self._created = int(time.time())
        self._seq = 0
        self._started = False
        self._output: list[_Item] = []
        self._open: _Item | None = None
        self._calls: dict[int, _Call] = {}
        self._held = ""  # whitespace before any item: kept only if no call follows
        self._finish: str | None = None
        self.usage: Usage | None = None
        self.reasoning_tokens = 0
        self.status: str | None = None
        self.failure: str | None = None

    @property
    def done(self) -> bool:
        return self.status is not None

    # ----- the public steps --------------------------------------------------------------

    def feed(self, chunk: object) -> bytes:
        if self.status is not None:
            return b""
        out: list[bytes] = [] if self._started else self._start()
        if not isinstance(chunk, dict):
            return self._join(out, self._broken("a stream chunk that is not a JSON object"))
        usage = chunk.get("usage")
        if usage is not None:
            read = _usage_from_chat(usage)
            if read is not None:
                self.usage = read
                self.reasoning_tokens = _reasoning_tokens(usage)
        failure = _engine_error(chunk)
        if failure is not None:
            return self._join(out, self.fail(failure))
        choices = chunk.get("choices")
        if choices is None:
            return self._join(out, b"")
        if not isinstance(choices, list):
            return self._join(out, self._broken("a stream chunk whose choices are not a list"))
        for choice in choices:
            if not isinstance(choice, dict):
                return self._join(out, self._broken("a stream choice that is not an object"))
            if choice.get("index") not in (0, None) or self._finish is not None:
                continue  # one choice is asked for; nothing counts after its finish
            broken = self._delta(choice.get("delta"), out)
            if broken is not None:
                return self._join(out, self._broken(broken))
            finish = choice.get("finish_reason")
            if isinstance(finish, str) and finish:
                self._finish = finish
                broken = self._close_all(out)
                if broken is not None:
                    return self._join(out, self._broken(broken))
        return b"".join(out)

    def finish(self) -> bytes:
        if self.status is not None:
            return b""
        out = [] if self._started else self._start()
        if self._finish is None:
            broken = self._close_all(out)  # an engine that ended without a finish_reason
            if broken is not None:
                return self._join(out, self._broken(broken))
        incomplete = INCOMPLETE_REASONS.get(self._finish or "")
        self.status = "completed" if incomplete is None else "incomplete"
        response = self._response(self.status, incomplete=incomplete)
        out.append(self._lifecycle("response." + self.status, response))
        return b"".join(out)

    def fail(self, message: str) -> bytes:
        if self.status is not None:
            return b""
        out = [] if self._started else self._start()
        self.status, self.failure = "failed", message
        error = {"code": FAILED_CODE, "message": message}
        out.append(self._lifecycle("response.failed", self._response("failed", error=error)))
        return b"".join(out)

    # ----- the machinery -----------------------------------------------------------------

    def _event(self, kind: str, payload: dict[str, Any]) -> bytes:
        payload["type"] = kind
        payload["sequence_number"] = self._seq
        self._seq += 1
        return _sse(kind, payload)

    def _join(self, out: list[bytes], last: bytes) -> bytes:
        out.append(last)
        return b"".join(out)

    def _broken(self, what: str) -> bytes:
        return self.fail(f"The model server sent {what}.")

    def _start(self) -> list[bytes]:
        self._started = True
        response = self._response("in_progress")  # the same object in both events
        return [
            self._lifecycle("response.created", response),
            self._lifecycle("response.in_progress", response),
        ]

    def _lifecycle(self, kind: str, response: str) -> bytes:
        """An event that carries the whole response (as JSON)."""
        seq = self._seq
        self._seq = seq + 1
        head = f'event: {kind}\ndata: {{"type":"{kind}","sequence_number":{seq},"response":'
        return (head + response + "}\n\n").encode()

    def _response(
        self, status: str, *, incomplete: str | None = None, error: dict[str, Any] | None = None
    ) -> str:
        """The response as JSON. The request's fields it repeats (Codex's tools run to tens of
        kilobytes) are encoded once per stream, not in each of its three or four events."""
        if self._echo_json is None:
            self._echo_json = "," + _encode(self._echo)[1:]
        # An item still open when the stream failed was cut short.
        output = [item.item(item.status if item.closed else "incomplete") for item in self._output]
        usage = _usage(self.usage, self.reasoning_tokens) if status != "in_progress" else None
        head = _response(
            {},
            rid=self._rid,
            created=self._created,
            model=self.model,
            status=status,
            output=output,
            usage=usage,
            incomplete=incomplete,
            error=error,
        )
        return _encode(head)[:-1] + self._echo_json

    def _delta(self, delta: object, out: list[bytes]) -> str | None:
        """Events for one delta into `out`; what is wrong with it, if something is."""
        if delta is None:
            return None
        if not isinstance(delta, dict):
            return "a stream delta that is not an object"
        reasoning = _reasoning_of(delta)
        content = delta.get("content")
        calls = delta.get("tool_calls")
        if reasoning is not None and not isinstance(reasoning, str):
            return "reasoning that is not a string"
        if content is not None and not isinstance(content, str):
            return "content that is not a string"
        if calls is not None and not isinstance(calls, list):
            return "tool calls that are not a list"
        if reasoning:
            self._stream("reasoning", reasoning, out)
        if content:
            if self._open is not None and self._open.kind == "message":
                out.append(self._text_delta(self._open, content))
            elif content.isspace():
                self._held += content  # vLLM's parsers emit "\n\n" before a tool call
            else:
                content, self._held = self._held + content, ""
                self._stream("message", content, out)
        for call in calls or ():
            broken = self._call_delta(call, out)
            if broken is not None:
                return broken
        return None

    def _stream(self, kind: str, text: str, out: list[bytes]) -> None:
        """Text for a message or reasoning item, opening one if that kind is not open."""
        item = self._open
        if item is None or item.kind != kind:
            if item is not None:
                self._close(item, "completed", out)
            item = self._add(kind, "msg_" if kind == "message" else "rs_", out)
        out.append(self._text_delta(item, text))

    def _add(self, kind: str, prefix: str, out: list[bytes], call: _Call | None = None) -> _Item:
        item = _Item(kind, _new_id(prefix), len(self._output), self._namespaces)
        if call is not None:
            item.name, item.call_id = call.name or "", call.call_id or _new_id("call_")
        self._output.append(item)
        self._open = item
        head = item.item("in_progress")
        if kind == "message":
            head["content"] = []  # its part is added by the next event
        added = {"output_index": item.index, "item": head}
        out.append(self._event("response.output_item.added", added))
        ids = f'"item_id":"{item.id}","output_index":{item.index}'
        if kind == "message":
            part = {"type": "output_text", "text": "", "annotations": [], "logprobs": []}
            kinds = "response.output_text.delta"
            item.prefix = f',"content_index":0,"logprobs":[],{ids},"delta":'.encode()
        elif kind == "reasoning":
            part = {"type": "reasoning_text", "text": ""}
            kinds = "response.reasoning_text.delta"
            item.prefix = f',"content_index":0,{ids},"delta":'.encode()
        else:
            kinds = "response.function_call_arguments.delta"
            item.prefix = f',{ids},"delta":'.encode()
        item.prefix = (
            b"event: " + kinds.encode() + b'\ndata: {"type":"' + kinds.encode() + b'"' + item.prefix
        )
        if kind != "function_call":
            added = {"item_id": item.id, "output_index": item.index, "content_index": 0}
            out.append(self._event("response.content_part.added", {**added, "part": part}))
        return item

    def _text_delta(self, item: _Item, text: str) -> bytes:
        # The hot path: one event per token, built from bytes encoded when the item opened.
        item.parts.append(text)
        seq = self._seq
        self._seq = seq + 1
        return b'%b%b,"sequence_number":%d}\n\n' % (item.prefix, _quote(text).encode(), seq)

    def _call_delta(self, raw: object, out: list[bytes]) -> str | None:
        if not isinstance(raw, dict):
            return "a tool call delta that is not an object"
        function = raw.get("function")
        if function is None:
            function = {}
        if not isinstance(function, dict):
            return "a tool call delta whose function is not an object"
        name, arguments, call_id = function.get("name"), function.get("arguments"), raw.get("id")
        if isinstance(arguments, dict):
            arguments = json.dumps(arguments)
        if (
            (name is not None and not isinstance(name, str))
            or (arguments is not None and not isinstance(arguments, str))
            or (call_id is not None and not isinstance(call_id, str))
        ):
            return "a tool call delta with a name, arguments or id that is not a string"
        index = raw.get("index")
        if not isinstance(index, int) or isinstance(index, bool):
            index = self._index_of(call_id)
        call = self._calls.get(index)
        if call is None:
            call = self._calls[index] = _Call()
            self._held = ""  # whitespace before a call is the parser's, not the model's
            if self._open is not None:
                self._close(self._open, "completed", out)
        elif call.item is not None and call.item.closed:
            return "a tool call that went on after the next one had started"
        if call_id and call.call_id is None:
            call.call_id = call_id
        if name and call.name is None:
            call.name = name
        if arguments:
            call.pending.append(arguments)
        if call.item is None and call.name:
            call.item = self._add("function_call", "fc_", out, call)
        if call.item is not None and call.pending:
            out.append(self._text_delta(call.item, "".join(call.pending)))
            call.pending = []
        return None

    def _index_of(self, call_id: str | None) -> int:
        """The index of a tool call delta without one: engines that leave it out stream one
        call at a time, so a new id starts the next call and no id continues the last."""
        if not self._calls:
            return 0
        last = max(self._calls)
        if call_id is None or any(c.call_id == call_id for c in self._calls.values()):
            return last
        return last + 1

    def _close(self, item: _Item, status: str, out: list[bytes]) -> None:
        self._open = None
        item.closed, item.status = True, status
        text = item.text()
        where = {"item_id": item.id, "output_index": item.index}
        if item.kind == "message":
            out.append(self._event("response.output_text.done", {
                **where, "content_index": 0, "text": text, "logprobs": []
            }))  # fmt: skip
            part = {"type": "output_text", "text": text, "annotations": [], "logprobs": []}
            out.append(self._event("response.content_part.done", {
                **where, "content_index": 0, "part": part
            }))  # fmt: skip
        elif item.kind == "reasoning":
            out.append(self._event("response.reasoning_text.done", {
                **where, "content_index": 0, "text": text
            }))  # fmt: skip
            part = {"type": "reasoning_text", "text": text}
            out.append(self._event("response.content_part.done", {
                **where, "content_index": 0, "part": part
            }))  # fmt: skip
        else:
            out.append(self._event("response.function_call_arguments.done", {
                **where, "arguments": text
            }))  # fmt: skip
        out.append(self._event("response.output_item.done", {
            "output_index": item.index, "item": item.item(status)
        }))  # fmt: skip

    def _close_all(self, out: list[bytes]) -> str | None:
        """Every item done, at the finish: the last one incomplete if the answer was cut."""
        for call in self._calls.values():
            if call.item is None:
                return "a tool call without a name"
        status = "incomplete" if self._finish in INCOMPLETE_REASONS else "completed"
        if self._held and not self._calls:
            # Whitespace alone, no call after it: it was the model's answer after all.
            text, self._held = self._held, ""
            self._stream("message", text, out)
        if not self._output:
            self._add("message", "msg_", out)  # an empty answer is still a message
        if self._open is not None:  # every stream has its last item open until now
            self._close(self._open, status, out)
        return None


def _engine_error(chunk: dict[str, Any]) -> str | None:
    """The message of an engine's error event: vLLM's and OpenAI's nested `error`, SGLang's
    flat `{"object": "error", "message"}`."""
    error = chunk.get("error")
    if isinstance(error, dict):
        message = error.get("message")
        return message if isinstance(message, str) and message else "The model server failed."
    if isinstance(error, str) and error:
        return error
    if chunk.get("object") == "error":
        message = chunk.get("message")
        return message if isinstance(message, str) and message else "The model server failed."
    return None


# ----- native pass-through -------------------------------------------------------------------


class NativeUsage:
    """For native pass-through: reads usage from Responses stream events as they pass."""

    __slots__ = ("usage",)

    def __init__(self) -> None:
        self.usage: Usage | None = None

    def feed(self, event: object) -> None:
        """One parsed event; only the terminal ones carry the usage."""
        if isinstance(event, dict) and _one_of(event.get("type"), TERMINAL_EVENTS):
            response = event.get("response")
            if isinstance(response, dict):
                usage = _usage_from_responses(response.get("usage"))
                if usage is not None:
                    self.usage = usage

    def feed_sse(self, data: bytes) -> None:
        """Whole SSE events as the relay passes them (it cuts only at event boundaries): each
        event's `data:` payload, decoded only when it may be a terminal event."""
        if _TERMINAL_TYPE(data) is None:
            return
        for event in data.replace(b"\r\n", b"\n").split(b"\n\n"):
            payload = b"\n".join(
                line[5:].lstrip() for line in event.split(b"\n") if line.startswith(b"data:")
            )
            if payload:
                self.feed_data(payload)

    def feed_data(self, data: bytes) -> None:
        """One event's `data:` payload, parsed only if it may be a terminal event: the
        hot path of a native stream must not decode every delta."""
        if _TERMINAL_TYPE(data) is not None:
            try:
                self.feed(json.loads(data))
            except (ValueError, RecursionError):
                return


def usage_of_answer(answer: object) -> Usage | None:
    """The usage of a native non-streaming Response."""
    return _usage_from_responses(answer.get("usage")) if isinstance(answer, dict) else None
