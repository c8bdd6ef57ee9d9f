"""Tool-call turns: what a simulated answer says, and its chat body and events."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any

from gateway.sim.text import _tok_json, _tok_text, _tokens

# -- turns: answers to tools, stop sequences and tool results --

# A tool parser streams arguments as the model writes them: a piece per word.
_PIECES = re.compile(r"\S+\s*")


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
