"""A Messages request checked as Anthropic documents it."""

from __future__ import annotations

from typing import Any, TypeGuard

from gateway.core.scheduling_fields import refusal, refused_field
from gateway.dialects.anthropic.errors import _invalid

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
        raise _invalid("The request body must be a JSON object.")
    model = body.get("model")
    if not isinstance(model, str) or not model:
        raise _invalid("model: a model name (a non-empty string) is required.")
    refused = refused_field(body)
    if refused is not None:
        raise _invalid(f"{refused}: {refusal(refused)}")
    if not counting:
        max_tokens = body.get("max_tokens")
        if not _is_int(max_tokens) or max_tokens < 1:
            raise _invalid("max_tokens: an integer of at least 1 is required.")
    messages = body.get("messages")
    if not isinstance(messages, list) or not messages:
        raise _invalid("messages: a non-empty list of messages is required.")
    for i, message in enumerate(messages):
        _check_message(message, f"messages.{i}")
    if all(message["role"] == "system" for message in messages):
        # Instructions alone are no turn to answer; an empty one would leave chat no message.
        raise _invalid("messages: at least one user or assistant message is required.")
    system = body.get("system")
    if system is not None and not isinstance(system, str):
        if not isinstance(system, list):
            raise _invalid("system: must be a string or a list of text blocks.")
        for i, block in enumerate(system):
            if not isinstance(block, dict) or block.get("type") != "text":
                raise _invalid(f"system.{i}: must be a text block.")
            _check_text(block, f"system.{i}")
    _check_optional(body)
    tools = body.get("tools")
    if tools is not None:
        if not isinstance(tools, list):
            raise _invalid("tools: must be a list of tools.")
        for i, tool in enumerate(tools):
            _check_tool(tool, f"tools.{i}")
    _check_tool_choice(body.get("tool_choice"))
    _check_thinking(body.get("thinking"))
    _check_output_config(body.get("output_config"))


def _is_int(value: object) -> TypeGuard[int]:
    return isinstance(value, int) and not isinstance(value, bool)


def _is_number(value: object) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _check_optional(body: dict[str, Any]) -> None:
    stops = body.get("stop_sequences")
    if stops is not None and (
        not isinstance(stops, list) or not all(isinstance(s, str) for s in stops)
    ):
        raise _invalid("stop_sequences: must be a list of strings.")
    for name in ("temperature", "top_p"):
        value = body.get(name)
        if value is not None and not (_is_number(value) and 0 <= value <= 1):
            raise _invalid(f"{name}: must be a number from 0 to 1.")
    top_k = body.get("top_k")
    if top_k is not None and not (_is_int(top_k) and top_k >= 0):
        raise _invalid("top_k: must be an integer of at least 0.")
    stream = body.get("stream")
    if stream is not None and not isinstance(stream, bool):
        raise _invalid("stream: must be true or false.")
    metadata = body.get("metadata")
    if metadata is not None:
        if not isinstance(metadata, dict):
            raise _invalid("metadata: must be an object.")
        user_id = metadata.get("user_id")
        if user_id is not None and not isinstance(user_id, str):
            raise _invalid("metadata.user_id: must be a string.")


def _check_message(message: object, at: str) -> None:
    if not isinstance(message, dict):
        raise _invalid(f"{at}: must be an object with a role and content.")
    role = message.get("role")
    if role != "user" and role != "assistant" and role != "system":
        raise _invalid(f'{at}.role: must be "user", "assistant" or "system".')
    content = message.get("content")
    if isinstance(content, str):
        return
    if not isinstance(content, list):
        raise _invalid(f"{at}.content: must be a string or a list of content blocks.")
    for j, block in enumerate(content):
        if role == "system":
            # Mid-conversation instructions (Claude Code sends them): text only, as `system`.
            inner, kind = _typed_block(block, f"{at}.content.{j}")
            if kind != "text":
                raise _invalid(f"{at}.content.{j}: a system message holds text blocks only.")
            _check_text(inner, f"{at}.content.{j}")
        else:
            _check_block(block, f"{at}.content.{j}", role)


def _typed_block(block: object, at: str) -> tuple[dict[str, Any], str]:
    if not isinstance(block, dict):
        raise _invalid(f"{at}: must be a content block (an object with a type).")
    kind = block.get("type")
    if not isinstance(kind, str) or not kind:
        raise _invalid(f"{at}.type: a block type (a string) is required.")
    return block, kind


def _check_block(raw: object, at: str, role: str) -> None:
    block, kind = _typed_block(raw, at)
    if kind == "text":
        _check_text(block, at)
    elif kind == "image":
        _check_image(block, at)
    elif kind == "tool_use":
        if role != "assistant":
            raise _invalid(f"{at}: tool_use blocks belong in assistant messages.")
        if not isinstance(block.get("id"), str) or not block["id"]:
            raise _invalid(f"{at}.id: a tool use id (a non-empty string) is required.")
        if not isinstance(block.get("name"), str) or not block["name"]:
            raise _invalid(f"{at}.name: a tool name (a non-empty string) is required.")
        if not isinstance(block.get("input"), dict):
            raise _invalid(f"{at}.input: must be an object.")
    elif kind == "tool_result":
        if role != "user":
            raise _invalid(f"{at}: tool_result blocks belong in user messages.")
        if not isinstance(block.get("tool_use_id"), str) or not block["tool_use_id"]:
            raise _invalid(f"{at}.tool_use_id: the id of a tool use (a string) is required.")
        is_error = block.get("is_error")
        if is_error is not None and not isinstance(is_error, bool):
            raise _invalid(f"{at}.is_error: must be true or false.")
        content = block.get("content")
        if content is None or isinstance(content, str):
            return
        if not isinstance(content, list):
            raise _invalid(f"{at}.content: must be a string or a list of content blocks.")
        for k, raw_inner in enumerate(content):
            inner_at = f"{at}.content.{k}"
            inner, inner_kind = _typed_block(raw_inner, inner_at)
            if inner_kind == "text":
                _check_text(inner, inner_at)
            elif inner_kind == "image":
                _check_image(inner, inner_at)
    elif kind == "thinking":
        if not isinstance(block.get("thinking"), str):
            raise _invalid(f"{at}.thinking: must be a string.")
    elif kind == "redacted_thinking" and not isinstance(block.get("data"), str):
        raise _invalid(f"{at}.data: must be a string.")


def _check_text(block: dict[str, Any], at: str) -> None:
    if not isinstance(block.get("text"), str):
        raise _invalid(f"{at}.text: must be a string.")


def _check_image(block: dict[str, Any], at: str) -> None:
    source = block.get("source")
    if not isinstance(source, dict):
        raise _invalid(f"{at}.source: an image source (an object) is required.")
    kind = source.get("type")
    if kind == "base64":
        media_type = source.get("media_type")
        if not isinstance(media_type, str) or media_type not in IMAGE_MEDIA_TYPES:
            raise _invalid(
                f"{at}.source.media_type: must be one of {', '.join(IMAGE_MEDIA_TYPES)}."
            )
        if not isinstance(source.get("data"), str):
            raise _invalid(f"{at}.source.data: base64 image data (a string) is required.")
    elif kind == "url":
        if not isinstance(source.get("url"), str) or not source["url"]:
            raise _invalid(f"{at}.source.url: an image URL (a string) is required.")
    elif kind == "file":
        if not isinstance(source.get("file_id"), str):
            raise _invalid(f"{at}.source.file_id: a file id (a string) is required.")
    else:
        raise _invalid(f'{at}.source.type: must be "base64", "url" or "file".')


def _check_tool(tool: object, at: str) -> None:
    if not isinstance(tool, dict):
        raise _invalid(f"{at}: must be an object.")
    name = tool.get("name")
    if not isinstance(name, str) or not name:
        raise _invalid(f"{at}.name: a tool name (a non-empty string) is required.")
    kind = tool.get("type")
    if kind is not None and not isinstance(kind, str):
        raise _invalid(f"{at}.type: must be a string.")
    if kind is None or kind == "custom":
        if not isinstance(tool.get("input_schema"), dict):
            raise _invalid(f"{at}.input_schema: a JSON schema (an object) is required.")
        description = tool.get("description")
        if description is not None and not isinstance(description, str):
            raise _invalid(f"{at}.description: must be a string.")


def _check_tool_choice(choice: object) -> None:
    if choice is None:
        return
    if not isinstance(choice, dict):
        raise _invalid("tool_choice: must be an object with a type.")
    kind = choice.get("type")
    if kind not in ("auto", "any", "tool", "none"):
        raise _invalid('tool_choice.type: must be "auto", "any", "tool" or "none".')
    if kind == "tool" and (not isinstance(choice.get("name"), str) or not choice["name"]):
        raise _invalid("tool_choice.name: the name of the tool to use is required.")
    parallel = choice.get("disable_parallel_tool_use")
    if parallel is not None and not isinstance(parallel, bool):
        raise _invalid("tool_choice.disable_parallel_tool_use: must be true or false.")


def _check_thinking(thinking: object) -> None:
    if thinking is None:
        return
    if not isinstance(thinking, dict) or thinking.get("type") not in THINKING_TYPES:
        raise _invalid('thinking.type: must be "enabled", "disabled" or "adaptive".')
    if thinking["type"] == "enabled":
        budget = thinking.get("budget_tokens")
        if not _is_int(budget) or budget < MIN_THINKING_BUDGET:
            raise _invalid(
                f"thinking.budget_tokens: an integer of at least {MIN_THINKING_BUDGET} is required."
            )


def _check_output_config(config: object) -> None:
    if config is None:
        return
    if not isinstance(config, dict):
        raise _invalid("output_config: must be an object.")
    fmt = config.get("format")
    if fmt is not None and (
        not isinstance(fmt, dict)
        or fmt.get("type") != "json_schema"
        or not isinstance(fmt.get("schema"), dict)
    ):
        raise _invalid('output_config.format: must be {"type": "json_schema", "schema": {...}}.')
