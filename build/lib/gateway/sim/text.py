"""The simulated engine's words, tokens and embeddings."""

from __future__ import annotations

import hashlib
import struct
import threading
from typing import Any

from gateway.sim.config import EMBEDDING_DIMENSION
from gateway.sim.wire import _encode

# Token texts grow on demand and are shared by every engine: they depend on nothing.
_tok_text: list[str] = []

_tok_json: list[bytes] = []

# Whole answers by token count, for the few counts that are actually asked for; every prefix
# up front would cost memory quadratic in the longest answer.
_answers: dict[int, bytes] = {}

_ANSWERS_KEPT = 64

# Whole answers are filled into byte templates: a generic JSON encoder costs several times more,
# and the instant engine is measured by its per-request cost.
_CHAT_BODY = (
    b'{"id":"chatcmpl-sim%d","object":"chat.completion","created":%d,"model":%b,'
    b'"choices":[{"index":0,"message":{"role":"assistant","content":%b},"logprobs":null,'
    b'"finish_reason":"%b"}],'
    b'"usage":{"prompt_tokens":%d,"completion_tokens":%d,"total_tokens":%d}}'
)

_TEXT_BODY = (
    b'{"id":"cmpl-sim%d","object":"text_completion","created":%d,"model":%b,'
    b'"choices":[{"index":0,"text":%b,"logprobs":null,"finish_reason":"%b"}],'
    b'"usage":{"prompt_tokens":%d,"completion_tokens":%d,"total_tokens":%d}}'
)


_tokens_lock = threading.Lock()


def _tokens(n: int) -> None:
    """Make sure the first n token texts exist."""
    # Engines in several threads (one SimServer per fake backend) may grow the lists at once;
    # readers check len(_tok_json) without the lock, so it is appended last.
    with _tokens_lock:
        while len(_tok_json) < n:
            text = f"tok{len(_tok_json)} "
            _tok_text.append(text)
            _tok_json.append(_encode(text).encode())


def _answer(n: int) -> bytes:
    """The JSON string of an answer of n tokens."""
    answer = _answers.get(n)
    if answer is None:
        if len(_answers) >= _ANSWERS_KEPT:
            _answers.clear()
        answer = _answers[n] = _encode("".join(_tok_text[:n])).encode()
    return answer


def _prompt_words(value: object) -> int:
    """Prompt tokens: words in a messages list or prompt, at least one."""
    # The usual shape, a list of messages with string contents, skips the general walk.
    total = 0
    if isinstance(value, list):
        for item in value:
            content = item.get("content") if isinstance(item, dict) else None
            if isinstance(content, str):
                total += len(content.split())
            else:
                total += _count_words(item)
    else:
        total = _count_words(value)
    return total if total > 0 else 1


def _count_words(value: object) -> int:
    """Whitespace-separated words in a prompt, messages list or content parts."""
    if isinstance(value, str):
        return len(value.split())
    if isinstance(value, list):
        return sum(_count_words(item) for item in value)
    if isinstance(value, dict):
        return _count_words(value.get("content")) + _count_words(value.get("text"))
    # A pre-tokenized prompt is a list of token ids: one word each.
    if isinstance(value, int):
        return 1
    return 0


def _embedding(item: object) -> list[float]:
    text = item if isinstance(item, str) else _encode(item)
    digest = hashlib.blake2b(text.encode(), digest_size=2 * EMBEDDING_DIMENSION).digest()
    return [round(v / 32767.5 - 1.0, 6) for v in struct.unpack("<8H", digest)]


def _embeddings_body(model: str, items: list[Any]) -> bytes:
    prompt_tokens = max(_count_words(items), 1)
    data = [
        {"object": "embedding", "index": i, "embedding": _embedding(item)}
        for i, item in enumerate(items)
    ]
    usage = {"prompt_tokens": prompt_tokens, "total_tokens": prompt_tokens}
    return _encode({"object": "list", "data": data, "model": model, "usage": usage}).encode()
