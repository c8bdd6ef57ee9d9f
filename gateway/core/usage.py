"""Token usage as engines report it: one shape for every surface, read from each API's own."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(slots=True)
class Usage:
    """What one request cost: input (prompt) tokens, all of them, cached ones included; output
    (completion) tokens; and how many of the input tokens were served from a cache, where the
    engine says so (else None)."""

    input: int = 0
    output: int = 0
    cached: int | None = None


def prompt_estimate(body_size: int) -> int:
    """The gateway's estimate of a prompt's tokens from its body's size, about 4 bytes a token:
    what an allowance reserves for it and what it is counted when no engine said."""
    return max(1, body_size // 4)


def _count(value: object) -> int | None:
    # bool is an int, and a lying engine's "true" is not a token count.
    if isinstance(value, int) and not isinstance(value, bool) and value >= 0:
        return value
    return None


def from_chat(usage: object) -> Usage | None:
    """From a chat or text completion's `usage` (prompt_tokens, completion_tokens,
    prompt_tokens_details.cached_tokens); None when it is missing or not one."""
    return _openai(usage, "prompt_tokens", "completion_tokens", "prompt_tokens_details")


def from_responses(usage: object) -> Usage | None:
    """From an OpenAI Responses `usage` (input_tokens, output_tokens,
    input_tokens_details.cached_tokens)."""
    return _openai(usage, "input_tokens", "output_tokens", "input_tokens_details")


def _openai(usage: object, input_key: str, output_key: str, details_key: str) -> Usage | None:
    """OpenAI's usage under either API's names: the cached tokens are in the input's details."""
    if not isinstance(usage, dict):
        return None
    read, written = _count(usage.get(input_key)), _count(usage.get(output_key))
    if read is None and written is None:
        return None
    details = usage.get(details_key)
    cached = _count(details.get("cached_tokens")) if isinstance(details, dict) else None
    return Usage(read or 0, written or 0, cached)


def from_messages(usage: object) -> Usage | None:
    """From an Anthropic Messages `usage`. Its input_tokens leaves out what was read from or
    written to the cache; the record's input counts every input token, as chat's does."""
    if not isinstance(usage, dict):
        return None
    read, written = _count(usage.get("input_tokens")), _count(usage.get("output_tokens"))
    if read is None and written is None:
        return None
    cached = _count(usage.get("cache_read_input_tokens"))
    created = _count(usage.get("cache_creation_input_tokens")) or 0
    return Usage((read or 0) + (cached or 0) + created, written or 0, cached)


def as_dict(usage: Any) -> dict[str, int | None]:
    return {"input": usage.input, "output": usage.output, "cached": usage.cached}
