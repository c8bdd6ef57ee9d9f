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

from typing import Any

from gateway.core.errors import echoed
from gateway.core.output_limits import output_limit
from gateway.dialects.responses.errors import ResponsesError, _wrong_type, _wrong_value
from gateway.dialects.responses.tools import NAMESPACE_SEP, _allowed_tools, _tool_choice, _tools
from gateway.dialects.responses.validate import _NO_STORE, _one_of, state_error, validate

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
