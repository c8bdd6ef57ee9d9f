"""count_tokens when no backend can count: the estimate and its rule."""

from __future__ import annotations

import json
import math
from typing import Any

from gateway.dialects.anthropic.to_chat import _system_text

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
