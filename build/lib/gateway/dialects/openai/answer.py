"""What the Messages and Responses translations read first of a chat completion: its choice."""

from __future__ import annotations

from typing import Any


def first_choice(answer: object) -> tuple[dict[str, Any], dict[str, Any], dict[str, Any]]:
    """`answer` as a JSON object, its first choice and that choice's message; ValueError (the
    engine's fault, a 502) for an answer that is not a chat completion."""
    if not isinstance(answer, dict):
        raise ValueError("the answer is not a JSON object")
    choices = answer.get("choices")
    if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
        raise ValueError("the answer has no choices")
    choice = choices[0]
    message = choice.get("message")
    if not isinstance(message, dict):
        raise ValueError("the answer's choice has no message")
    return answer, choice, message
