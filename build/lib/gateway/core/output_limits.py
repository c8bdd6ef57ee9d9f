"""What a request body says of its output's size: the fields every engine reads, and their one
value."""

from __future__ import annotations

from typing import Any

from gateway.core.errors import BadRequest

# Every field an engine reads as the most a request may generate, on every generating surface:
# a native backend gets the client's body whole, and each engine honours its own.
OUTPUT_LIMITS = (
    "max_tokens",  # chat and completions everywhere; Anthropic's Messages
    "max_completion_tokens",  # chat: vLLM and SGLang read it before max_tokens
    "max_output_tokens",  # OpenAI's Responses (vLLM's and SGLang's /v1/responses)
    "n_predict",  # llama.cpp's server reads it before max_tokens, on its OpenAI paths too
)

# Fields that multiply it: the choices (or candidates) generated for one request.
CHOICES = ("n", "best_of")


def output_limit(body: dict[str, Any]) -> int | None:
    """The largest output limit a body names in any of OUTPUT_LIMITS, None when it names none;
    400 for one that is not a whole number (engines read "1000" and 1000.0 as 1000)."""
    largest = None
    for name in OUTPUT_LIMITS:
        value = _whole(body, name, 0)
        if value is not None and (largest is None or value > largest):
            largest = value
    return largest


def one_output_limit(body: dict[str, Any]) -> None:
    """Make every output limit the body names the largest of them, before it is reserved or
    sent: whichever field an engine honours, it then generates at most what was reserved."""
    largest = output_limit(body)
    if largest is None:
        return
    for name in OUTPUT_LIMITS:
        if name in body:
            body[name] = largest
    for name in CHOICES:
        _whole(body, name, 1)  # refused before it waits, as the limits are


def _whole(body: dict[str, Any], name: str, least: int) -> int | None:
    value = body.get(name)
    if value is None:
        return None
    if isinstance(value, int) and not isinstance(value, bool) and value >= least:
        return value
    raise BadRequest(f"'{name}' must be an integer of at least {least}.", param=name)
