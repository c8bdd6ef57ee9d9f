"""Function tools, namespaces and tool_choice, both ways."""

from __future__ import annotations

from typing import Any

from gateway.core.errors import echoed
from gateway.dialects.responses.errors import ResponsesError, _wrong_type, _wrong_value

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
