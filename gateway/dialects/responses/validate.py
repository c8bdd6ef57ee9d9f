"""A Responses request checked as the API reference types it; the state it needs."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from gateway.core.scheduling_fields import refusal, refused_field
from gateway.dialects.responses.errors import ResponsesError, wrong_type, wrong_value

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


def _is_number(value: object) -> bool:
    return (
        isinstance(value, int | float)
        and not isinstance(value, bool)
        and math.isfinite(value)  # json.loads reads NaN and Infinity; OpenAI does not
    )


def _is_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def one_of(value: object, names: frozenset[str]) -> bool:
    # Only strings are looked up: a list from the request is unhashable.
    return isinstance(value, str) and value in names


# Each optional top-level field with the one JSON type it has when given.
_TYPED_FIELDS = (
    *((name, str, "a string") for name in _STRING_FIELDS),
    *((name, bool, "a boolean") for name in _BOOL_FIELDS),
    *((name, dict, "an object") for name in _OBJECT_FIELDS),
)


def validate(body: object) -> None:
    """Refuse (ResponsesError, 400) a body that is not a Responses request as the API reference
    types it. Checks what the gateway reads and the documented types and ranges; unknown fields
    and item types pass, for native backends know more than this module does."""
    if not isinstance(body, dict):
        raise ResponsesError("The request body must be a JSON object.")
    _check_model(body.get("model"))
    refused = refused_field(body)
    if refused is not None:
        raise ResponsesError(f"'{refused}' is {refusal(refused)}", param=refused)
    for name, kind, expected in _TYPED_FIELDS:
        value = body.get(name)
        if value is not None and not isinstance(value, kind):
            raise wrong_type(name, expected, value)
    _check_number(body, "temperature", 0.0, 2.0)
    _check_number(body, "top_p", 0.0, 1.0)
    _check_int(body, "max_output_tokens", 1, None)
    _check_int(body, "max_tool_calls", 0, None)
    _check_int(body, "top_logprobs", 0, 20)
    truncation = body.get("truncation")
    if truncation is not None and not one_of(truncation, TRUNCATIONS):
        raise wrong_value("truncation", "expected 'auto' or 'disabled'.")
    _check_metadata(body.get("metadata"))
    _check_include(body.get("include"))
    conversation = body.get("conversation")
    if conversation is not None and not isinstance(conversation, str | dict):
        raise wrong_type("conversation", "a string or an object", conversation)
    _check_reasoning(body.get("reasoning"))
    _check_text_format(body.get("text"))
    _check_tools(body.get("tools"))
    _check_tool_choice(body.get("tool_choice"))
    _check_input(body.get("input"))


def _check_model(model: object) -> None:
    if model is None:
        raise ResponsesError("Missing required parameter: 'model'.", param="model")
    if not isinstance(model, str) or not model:
        raise wrong_type("model", "a non-empty string", model)


def _check_metadata(metadata: object) -> None:
    if metadata is None:
        return
    if not isinstance(metadata, dict):
        raise wrong_type("metadata", "an object", metadata)
    for key, value in metadata.items():
        if not isinstance(value, str):
            raise wrong_type(f"metadata.{key}", "a string", value)


def _entries(value: object, param: str, expected: str) -> list[Any]:
    """The entries of a field that is an array when given (none when it is absent)."""
    if value is None:
        return []
    if not isinstance(value, list):
        raise wrong_type(param, expected, value)
    return value


def _check_include(include: object) -> None:
    for i, entry in enumerate(_entries(include, "include", "an array of strings")):
        if not isinstance(entry, str):
            raise wrong_type(f"include[{i}]", "a string", entry)


def _check_reasoning(reasoning: object) -> None:
    # Its type (an object) is one of _TYPED_FIELDS'.
    if isinstance(reasoning, dict):
        effort = reasoning.get("effort")
        if effort is not None and not isinstance(effort, str):
            raise wrong_type("reasoning.effort", "a string", effort)


def _check_text_format(text: object) -> None:
    fmt = text.get("format") if isinstance(text, dict) else None
    if fmt is None:
        return
    if not isinstance(fmt, dict):
        raise wrong_type("text.format", "an object", fmt)
    if not isinstance(fmt.get("type"), str):
        raise wrong_type("text.format.type", "a string", fmt.get("type"))


def _check_number(body: dict[str, Any], name: str, low: float, high: float) -> None:
    value = body.get(name)
    if value is None:
        return
    if not _is_number(value):
        raise wrong_type(name, "a number", value)
    if not low <= value <= high:
        raise wrong_value(name, f"expected a number from {low:g} to {high:g}.")


def _check_int(body: dict[str, Any], name: str, low: int, high: int | None) -> None:
    value = body.get(name)
    if value is None:
        return
    if not _is_int(value):
        raise wrong_type(name, "an integer", value)
    if value < low or (high is not None and value > high):
        limit = f"at least {low}" if high is None else f"from {low} to {high}"
        raise wrong_value(name, f"expected an integer {limit}.")


def _check_tools(tools: object) -> None:
    for i, tool in enumerate(_entries(tools, "tools", "an array")):
        if not isinstance(tool, dict):
            raise wrong_type(f"tools[{i}]", "an object", tool)
        if not isinstance(tool.get("type"), str):
            raise wrong_type(f"tools[{i}].type", "a string", tool.get("type"))


def _check_tool_choice(choice: object) -> None:
    if choice is None:
        return
    if isinstance(choice, str):
        if not one_of(choice, TOOL_CHOICES):
            raise wrong_value("tool_choice", "expected 'none', 'auto', 'required' or an object.")
        return
    if not isinstance(choice, dict):
        raise wrong_type("tool_choice", "a string or an object", choice)
    if not isinstance(choice.get("type"), str):
        raise wrong_type("tool_choice.type", "a string", choice.get("type"))


def _check_input(value: object) -> None:
    if value is None or isinstance(value, str):
        return
    if not isinstance(value, list):
        raise wrong_type("input", "a string or an array", value)
    for i, item in enumerate(value):
        param = f"input[{i}]"
        if not isinstance(item, dict):
            raise wrong_type(param, "an object", item)
        kind = item.get("type")
        if kind is not None and not isinstance(kind, str):
            raise wrong_type(param + ".type", "a string", kind)
        if kind == "message" or (kind is None and "role" in item):
            _check_message(item, param)
        elif kind is None and not isinstance(item.get("id"), str):
            # Without a type an item is a message (it has a role) or a reference (an id).
            raise wrong_value(param, "an input item needs a 'type', or a 'role' for a message.")


def _check_message(item: dict[str, Any], param: str) -> None:
    role = item.get("role")
    if not one_of(role, ROLES):
        raise wrong_value(param + ".role", "expected 'user', 'assistant', 'system' or 'developer'.")
    content = item.get("content")
    if isinstance(content, str):
        return
    if not isinstance(content, list):
        raise wrong_type(param + ".content", "a string or an array", content)
    for j, part in enumerate(content):
        if not isinstance(part, dict):
            raise wrong_type(f"{param}.content[{j}]", "an object", part)
        if not isinstance(part.get("type"), str):
            raise wrong_type(f"{param}.content[{j}].type", "a string", part.get("type"))


# ----- state a chat completions backend cannot give -----------------------------------------

# Said on a translated backend and on a native one whose operator did not let it keep state
# (gateway/dialects/stored_state.py): either way nothing is kept for the caller.
NO_STORE = "no backend of this model keeps Responses state for callers"


def _given(value: object) -> bool:
    return value is not None and value != "" and value is not False


def _true(value: object) -> bool:
    return value is True


# The fields that ask for state kept on the server, in the order they are refused: when its
# value asks (a test of it), the refusal's message.
_STATEFUL: tuple[tuple[str, Callable[[object], bool], str], ...] = (
    (
        "previous_response_id",
        _given,
        "'previous_response_id' continues a conversation stored on the server, but "
        f"{NO_STORE}. Send the whole conversation in 'input' instead.",
    ),
    (
        "conversation",
        _given,
        f"'conversation' refers to a conversation stored on the server, but {NO_STORE}. "
        "Send the whole conversation in 'input' instead.",
    ),
    (
        "store",
        _true,
        f"'store: true' asks to keep this response for later retrieval, but {NO_STORE}. "
        "Set 'store' to false or leave it out.",
    ),
    (
        "background",
        _true,
        f"'background: true' asks to keep this response for later retrieval, but "
        f"{NO_STORE}. Leave 'background' out, and stream the response if it is long.",
    ),
    (
        "prompt",
        _given,
        f"'prompt' refers to a prompt template stored on the server, but {NO_STORE}. "
        "Send the prompt itself in 'instructions' and 'input' instead.",
    ),
)


def state_error(body: object) -> ResponsesError | None:
    """The refusal for a request that needs state kept on the server, or None.

    `store` absent is stateless: the SDK leaves it out unless asked, and Codex sends false.
    """
    if not isinstance(body, dict):
        return None
    for field, asks, message in _STATEFUL:
        if asks(body.get(field)):
            return ResponsesError(message, param=field)
    items = body.get("input")
    if isinstance(items, list):
        for i, item in enumerate(items):
            if isinstance(item, dict) and (
                item.get("type") == "item_reference"
                or (item.get("type") is None and "role" not in item and "id" in item)
            ):
                return ResponsesError(
                    f"'input[{i}]' refers to an item stored on the server, but {NO_STORE}. "
                    "Send the item itself instead.",
                    param=f"input[{i}]",
                )
    return None


def needs_state(body: object) -> str | None:
    """Why this request needs server-side state a translating backend cannot give, or None."""
    error = state_error(body)
    return None if error is None else error.message
