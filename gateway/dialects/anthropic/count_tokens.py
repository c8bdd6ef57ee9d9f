"""count_tokens when no backend can count: the estimate and its rule."""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from typing import Any

from gateway.dialects.anthropic.to_chat import system_text

_encode_compact_text = json.JSONEncoder(separators=(",", ":"), ensure_ascii=False).encode

# count_tokens_estimate's rule (its docstring says why these numbers).
CHARS_PER_TOKEN = 4

MESSAGE_TOKENS = 4

IMAGE_TOKENS = 1600


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
    chars = len(system_text(body.get("system")))
    extra = 0
    messages = body.get("messages") or []
    for message in messages:
        extra += MESSAGE_TOKENS
        content = message.get("content")
        if isinstance(content, str):
            chars += len(content)
            continue
        for block in content:
            count = _BLOCK_COUNTS.get(block.get("type"))
            if count is not None:
                block_chars, block_tokens = count(block)
                chars += block_chars
                extra += block_tokens
    for tool in body.get("tools") or []:
        chars += _tool_chars(tool)
    return max(1, math.ceil(chars / CHARS_PER_TOKEN) + extra)


# Each counter: (characters of text, tokens besides) of one block of a message.


def _text_counted(block: dict[str, Any]) -> tuple[int, int]:
    return len(block["text"]), 0


def _thinking_counted(block: dict[str, Any]) -> tuple[int, int]:
    return len(block["thinking"]), 0


def _tool_use_counted(block: dict[str, Any]) -> tuple[int, int]:
    return len(block["name"]) + len(_compact(block.get("input"))), 0


def _tool_result_counted(block: dict[str, Any]) -> tuple[int, int]:
    inner = block.get("content")
    if isinstance(inner, str):
        return len(inner), 0
    chars = tokens = 0
    if isinstance(inner, list):
        for part in inner:
            if part.get("type") == "text":
                chars += len(part["text"])
            elif part.get("type") in ("image", "document"):
                tokens += IMAGE_TOKENS
    return chars, tokens


def _image_counted(block: dict[str, Any]) -> tuple[int, int]:
    return 0, IMAGE_TOKENS


_BLOCK_COUNTS: dict[object, Callable[[dict[str, Any]], tuple[int, int]]] = {
    "text": _text_counted,
    "thinking": _thinking_counted,
    "tool_use": _tool_use_counted,
    "tool_result": _tool_result_counted,
    "image": _image_counted,
    "document": _image_counted,
}


def _tool_chars(tool: dict[str, Any]) -> int:
    """A tool's name, description and input schema (as compact JSON)."""
    chars = len(tool.get("name") or "")
    description = tool.get("description")
    if isinstance(description, str):
        chars += len(description)
    return chars + len(_compact(tool.get("input_schema")))


def _compact(value: object) -> str:
    if value is None:
        return ""
    try:
        return _encode_compact_text(value)
    except (RecursionError, ValueError, TypeError):
        return ""
