"""A Messages request checked as Anthropic documents it."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeGuard

from gateway.core.scheduling_fields import refusal, refused_field
from gateway.dialects.anthropic.errors import invalid

IMAGE_MEDIA_TYPES = ("image/jpeg", "image/png", "image/gif", "image/webp")

THINKING_TYPES = ("enabled", "disabled", "adaptive")

MIN_THINKING_BUDGET = 1024  # Anthropic's documented minimum for budget_tokens


# ----- the request ---------------------------------------------------------------------------


def validate(body: object, *, counting: bool = False) -> None:
    """Check a request's shape as Anthropic documents it; raise MessagesError(400) naming the
    field and why. Only MessagesError, whatever the input. A field set to null counts as
    absent. Block types this module does not know pass (a native engine may know them);
    `to_chat` refuses them. `counting`: a count_tokens body, which has no max_tokens."""
    if not isinstance(body, dict):
        raise invalid("The request body must be a JSON object.")
    _check_head(body, counting)
    _check_messages(body.get("messages"))
    _check_system(body.get("system"))
    _check_optional(body)
    _check_tools(body.get("tools"))
    _check_tool_choice(body.get("tool_choice"))
    _check_thinking(body.get("thinking"))
    _check_output_config(body.get("output_config"))


def _check_head(body: dict[str, Any], counting: bool) -> None:
    """The model, the fields a client may not send, and max_tokens (not when counting)."""
    model = body.get("model")
    if not isinstance(model, str) or not model:
        raise invalid("model: a model name (a non-empty string) is required.")
    refused = refused_field(body)
    if refused is not None:
        raise invalid(f"{refused}: {refusal(refused)}")
    if not counting:
        max_tokens = body.get("max_tokens")
        if not _is_int(max_tokens) or max_tokens < 1:
            raise invalid("max_tokens: an integer of at least 1 is required.")


def _check_messages(messages: object) -> None:
    if not isinstance(messages, list) or not messages:
        raise invalid("messages: a non-empty list of messages is required.")
    for i, message in enumerate(messages):
        _check_message(message, f"messages.{i}")
    if all(message["role"] == "system" for message in messages):
        # Instructions alone are no turn to answer; an empty one would leave chat no message.
        raise invalid("messages: at least one user or assistant message is required.")


def _check_system(system: object) -> None:
    if system is None or isinstance(system, str):
        return
    if not isinstance(system, list):
        raise invalid("system: must be a string or a list of text blocks.")
    for i, block in enumerate(system):
        if not isinstance(block, dict) or block.get("type") != "text":
            raise invalid(f"system.{i}: must be a text block.")
        _check_text(block, f"system.{i}")


def _check_tools(tools: object) -> None:
    if tools is None:
        return
    if not isinstance(tools, list):
        raise invalid("tools: must be a list of tools.")
    for i, tool in enumerate(tools):
        _check_tool(tool, f"tools.{i}")


def _is_int(value: object) -> TypeGuard[int]:
    return isinstance(value, int) and not isinstance(value, bool)


def _is_number(value: object) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _check_optional(body: dict[str, Any]) -> None:
    stops = body.get("stop_sequences")
    if stops is not None and (
        not isinstance(stops, list) or not all(isinstance(s, str) for s in stops)
    ):
        raise invalid("stop_sequences: must be a list of strings.")
    for name in ("temperature", "top_p"):
        value = body.get(name)
        if value is not None and not (_is_number(value) and 0 <= value <= 1):
            raise invalid(f"{name}: must be a number from 0 to 1.")
    top_k = body.get("top_k")
    if top_k is not None and not (_is_int(top_k) and top_k >= 0):
        raise invalid("top_k: must be an integer of at least 0.")
    stream = body.get("stream")
    if stream is not None and not isinstance(stream, bool):
        raise invalid("stream: must be true or false.")
    metadata = body.get("metadata")
    if metadata is not None:
        if not isinstance(metadata, dict):
            raise invalid("metadata: must be an object.")
        user_id = metadata.get("user_id")
        if user_id is not None and not isinstance(user_id, str):
            raise invalid("metadata.user_id: must be a string.")


def _check_message(message: object, at: str) -> None:
    if not isinstance(message, dict):
        raise invalid(f"{at}: must be an object with a role and content.")
    role = message.get("role")
    if role != "user" and role != "assistant" and role != "system":
        raise invalid(f'{at}.role: must be "user", "assistant" or "system".')
    content = message.get("content")
    if isinstance(content, str):
        return
    if not isinstance(content, list):
        raise invalid(f"{at}.content: must be a string or a list of content blocks.")
    for j, block in enumerate(content):
        if role == "system":
            # Mid-conversation instructions (Claude Code sends them): text only, as `system`.
            inner, kind = _typed_block(block, f"{at}.content.{j}")
            if kind != "text":
                raise invalid(f"{at}.content.{j}: a system message holds text blocks only.")
            _check_text(inner, f"{at}.content.{j}")
        else:
            _check_block(block, f"{at}.content.{j}", role)


def _typed_block(block: object, at: str) -> tuple[dict[str, Any], str]:
    if not isinstance(block, dict):
        raise invalid(f"{at}: must be a content block (an object with a type).")
    kind = block.get("type")
    if not isinstance(kind, str) or not kind:
        raise invalid(f"{at}.type: a block type (a string) is required.")
    return block, kind


def _check_block(raw: object, at: str, role: str) -> None:
    block, kind = _typed_block(raw, at)
    belongs = _ROLE_OF.get(kind)
    if belongs is not None and role != belongs:
        raise invalid(f"{at}: {kind} blocks belong in {belongs} messages.")
    check = _BLOCK_CHECKS.get(kind)
    if check is not None:  # a type this module does not know passes (see validate)
        check(block, at)


def _check_tool_use(block: dict[str, Any], at: str) -> None:
    if not isinstance(block.get("id"), str) or not block["id"]:
        raise invalid(f"{at}.id: a tool use id (a non-empty string) is required.")
    if not isinstance(block.get("name"), str) or not block["name"]:
        raise invalid(f"{at}.name: a tool name (a non-empty string) is required.")
    if not isinstance(block.get("input"), dict):
        raise invalid(f"{at}.input: must be an object.")


def _check_tool_result(block: dict[str, Any], at: str) -> None:
    if not isinstance(block.get("tool_use_id"), str) or not block["tool_use_id"]:
        raise invalid(f"{at}.tool_use_id: the id of a tool use (a string) is required.")
    is_error = block.get("is_error")
    if is_error is not None and not isinstance(is_error, bool):
        raise invalid(f"{at}.is_error: must be true or false.")
    content = block.get("content")
    if content is None or isinstance(content, str):
        return
    if not isinstance(content, list):
        raise invalid(f"{at}.content: must be a string or a list of content blocks.")
    for k, raw_inner in enumerate(content):
        inner_at = f"{at}.content.{k}"
        inner, inner_kind = _typed_block(raw_inner, inner_at)
        check = _RESULT_CHECKS.get(inner_kind)
        if check is not None:
            check(inner, inner_at)


def _check_thinking_block(block: dict[str, Any], at: str) -> None:
    if not isinstance(block.get("thinking"), str):
        raise invalid(f"{at}.thinking: must be a string.")


def _check_redacted(block: dict[str, Any], at: str) -> None:
    if not isinstance(block.get("data"), str):
        raise invalid(f"{at}.data: must be a string.")


def _check_text(block: dict[str, Any], at: str) -> None:
    if not isinstance(block.get("text"), str):
        raise invalid(f"{at}.text: must be a string.")


def _check_image(block: dict[str, Any], at: str) -> None:
    source = block.get("source")
    if not isinstance(source, dict):
        raise invalid(f"{at}.source: an image source (an object) is required.")
    kind = source.get("type")
    if kind == "base64":
        media_type = source.get("media_type")
        if not isinstance(media_type, str) or media_type not in IMAGE_MEDIA_TYPES:
            raise invalid(f"{at}.source.media_type: must be one of {', '.join(IMAGE_MEDIA_TYPES)}.")
        if not isinstance(source.get("data"), str):
            raise invalid(f"{at}.source.data: base64 image data (a string) is required.")
    elif kind == "url":
        if not isinstance(source.get("url"), str) or not source["url"]:
            raise invalid(f"{at}.source.url: an image URL (a string) is required.")
    elif kind == "file":
        if not isinstance(source.get("file_id"), str):
            raise invalid(f"{at}.source.file_id: a file id (a string) is required.")
    else:
        raise invalid(f'{at}.source.type: must be "base64", "url" or "file".')


# One checker per block type a message may hold; the role a type belongs in, where it has one.
_BLOCK_CHECKS: dict[str, Callable[[dict[str, Any], str], None]] = {
    "text": _check_text,
    "image": _check_image,
    "tool_use": _check_tool_use,
    "tool_result": _check_tool_result,
    "thinking": _check_thinking_block,
    "redacted_thinking": _check_redacted,
}

_ROLE_OF = {"tool_use": "assistant", "tool_result": "user"}

# What a tool result's own blocks are checked for (other types pass).
_RESULT_CHECKS: dict[str, Callable[[dict[str, Any], str], None]] = {
    "text": _check_text,
    "image": _check_image,
}


def _check_tool(tool: object, at: str) -> None:
    if not isinstance(tool, dict):
        raise invalid(f"{at}: must be an object.")
    name = tool.get("name")
    if not isinstance(name, str) or not name:
        raise invalid(f"{at}.name: a tool name (a non-empty string) is required.")
    kind = tool.get("type")
    if kind is not None and not isinstance(kind, str):
        raise invalid(f"{at}.type: must be a string.")
    if kind is None or kind == "custom":
        if not isinstance(tool.get("input_schema"), dict):
            raise invalid(f"{at}.input_schema: a JSON schema (an object) is required.")
        description = tool.get("description")
        if description is not None and not isinstance(description, str):
            raise invalid(f"{at}.description: must be a string.")


def _check_tool_choice(choice: object) -> None:
    if choice is None:
        return
    if not isinstance(choice, dict):
        raise invalid("tool_choice: must be an object with a type.")
    kind = choice.get("type")
    if kind not in ("auto", "any", "tool", "none"):
        raise invalid('tool_choice.type: must be "auto", "any", "tool" or "none".')
    if kind == "tool" and (not isinstance(choice.get("name"), str) or not choice["name"]):
        raise invalid("tool_choice.name: the name of the tool to use is required.")
    parallel = choice.get("disable_parallel_tool_use")
    if parallel is not None and not isinstance(parallel, bool):
        raise invalid("tool_choice.disable_parallel_tool_use: must be true or false.")


def _check_thinking(thinking: object) -> None:
    if thinking is None:
        return
    if not isinstance(thinking, dict) or thinking.get("type") not in THINKING_TYPES:
        raise invalid('thinking.type: must be "enabled", "disabled" or "adaptive".')
    if thinking["type"] == "enabled":
        budget = thinking.get("budget_tokens")
        if not _is_int(budget) or budget < MIN_THINKING_BUDGET:
            raise invalid(
                f"thinking.budget_tokens: an integer of at least {MIN_THINKING_BUDGET} is required."
            )


def _check_output_config(config: object) -> None:
    if config is None:
        return
    if not isinstance(config, dict):
        raise invalid("output_config: must be an object.")
    fmt = config.get("format")
    if fmt is not None and (
        not isinstance(fmt, dict)
        or fmt.get("type") != "json_schema"
        or not isinstance(fmt.get("schema"), dict)
    ):
        raise invalid('output_config.format: must be {"type": "json_schema", "schema": {...}}.')
