"""The scrubber every engine text passes (gateway/core/redaction.py): a backend's own key in any
form it may be quoted, and anything bearer-looking, become "[redacted]"; other text stays."""

from __future__ import annotations

import base64
import json

import pytest

from gateway.core.answers import engine_message
from gateway.core.redaction import NO_SECRETS, Secrets, scrub, scrub_answer, scrub_header
from gateway.runtime.last_errors import LastErrors

# Looks like no secret to the generic patterns: only the exact-key part can find it.
KEY = "correct/horse+battery=staple"
SECRETS = Secrets.of(KEY)
GWK = "gwk_" + "0123456789abcdef" * 4


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # The backend's own key, as an engine may quote it.
        (f"Invalid API key: Bearer {KEY}", "Invalid API key: Bearer [redacted]"),
        (f"key {KEY} was revoked", "key [redacted] was revoked"),
        (
            f"GET /v1/models?key={KEY.replace('/', '%2F').replace('+', '%2B').replace('=', '%3D')}",
            "GET /v1/models?key=[redacted]",
        ),
        (f"token {base64.b64encode(KEY.encode()).decode()} unknown", "token [redacted] unknown"),
        (f"creds {base64.b64encode(f'Bearer {KEY}'.encode()).decode()}", "creds [redacted]"),
        ('{"auth": "correct\\/horse+battery=staple"}', '{"auth": "[redacted]"}'),  # "/" escaped
        # Secrets of any owner, by their look.
        ("Invalid API key: Bearer abc123def456", "Invalid API key: Bearer [redacted]"),
        ("bearer eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.c2ln", "bearer [redacted]"),
        ("Authorization: Basic dXNlcjpwYXNzd29yZA==", "Authorization: Basic [redacted]"),
        ("Bearer abcdefghijklmnopqrstuvwxyzabcd", "Bearer [redacted]"),
        (
            "Incorrect API key provided: sk-proj-AbC123xyz789",
            "Incorrect API key provided: [redacted]",
        ),
        ("sk-ant-api03-abcdefgh is not valid", "[redacted] is not valid"),
        (f"unknown token {GWK}", "unknown token [redacted]"),
        ("x-api-key: hunter2hunter2", "x-api-key: [redacted]"),
        ('{"api_key": "hunter2", "model": "m"}', '{"api_key": "[redacted]", "model": "m"}'),
        # Text without secrets stays as it was, JSON stays JSON.
        ("The model 'sim-small' does not exist.", "The model 'sim-small' does not exist."),
        ("Missing Bearer token.", "Missing Bearer token."),
        ("Basic authentication required", "Basic authentication required"),
        ("use scikit-learn or sk-learn", "use scikit-learn or sk-learn"),
        ("risk-assessment-model failed", "risk-assessment-model failed"),
        ('{"api_key": null}', '{"api_key": null}'),
        ("Invalid API key", "Invalid API key"),
        ("", ""),
    ],
)
def test_engine_text_loses_the_backends_key_and_anything_bearer_looking(
    text: str, expected: str
) -> None:
    assert scrub(text, SECRETS) == expected


def test_a_placeholder_key_is_only_redacted_after_bearer() -> None:
    # "EMPTY" is what vLLM's examples configure: blanking every "EMPTY" in an answer helps no one.
    empty = Secrets.of("EMPTY")
    assert (
        scrub("Invalid key: Bearer EMPTY; EMPTY input", empty)
        == "Invalid key: [redacted]; EMPTY input"
    )
    assert scrub_answer(b'{"content": "EMPTY"}', empty) == b'{"content": "EMPTY"}'


def test_no_key_means_no_secrets() -> None:
    assert Secrets.of("") is NO_SECRETS
    assert Secrets.of(None) is NO_SECRETS
    assert not NO_SECRETS
    assert scrub("plain words", NO_SECRETS) == "plain words"


def test_an_answers_bytes_lose_the_exact_key_and_nothing_else() -> None:
    chunk = f'data: {{"choices":[{{"delta":{{"content":"{KEY} and sk-not-ours-12345"}}}}]}}\n\n'
    assert scrub_answer(chunk.encode(), SECRETS) == (
        b'data: {"choices":[{"delta":{"content":"[redacted] and sk-not-ours-12345"}}]}\n\n'
    )
    plain = b'data: {"choices":[{"delta":{"content":"hello"}}]}\n\n'
    assert scrub_answer(plain, SECRETS) is plain


def test_an_error_inside_an_answer_loses_every_secret_and_stays_json() -> None:
    event = b'data: {"error": {"message": "Bearer abc123def456 refused", "code": 401}}\n\n'
    scrubbed = scrub_answer(event, NO_SECRETS)
    assert scrubbed == b'data: {"error": {"message": "Bearer [redacted] refused", "code": 401}}\n\n'
    json.loads(scrubbed.removeprefix(b"data: "))
    # `"error": null` is in every Responses object: no error, nothing but the key is touched.
    quiet = b'{"error": null, "output_text": "Bearer abc123def456"}'
    assert scrub_answer(quiet, NO_SECRETS) == quiet


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (f"private, key={KEY}".encode(), b"private, key=[redacted]"),
        (b"Bearer abc123def456", b"Bearer [redacted]"),
        (b"application/json", b"application/json"),
        (b"no-cache", b"no-cache"),
        (b"5", b"5"),
    ],
)
def test_a_header_value_loses_the_key_and_secrets(value: bytes, expected: bytes) -> None:
    assert scrub_header(value, SECRETS) == expected


@pytest.mark.parametrize(
    ("body", "content_type"),
    [
        (json.dumps({"error": {"message": f"bad key {KEY}"}}).encode(), "application/json"),
        (json.dumps({"object": "error", "message": f"bad key {KEY}", "code": 401}).encode(), ""),
        (json.dumps({"detail": [{"msg": f"bad key {KEY}"}]}).encode(), "application/json"),
        (f"<html><body><h1>401</h1><p>bad key {KEY}</p></body></html>".encode(), "text/html"),
        (f"bad key {KEY}".encode(), "text/plain"),
    ],
)
def test_every_shape_of_an_engines_error_loses_the_key(body: bytes, content_type: str) -> None:
    message, _, _ = engine_message(body, content_type, SECRETS)
    assert KEY not in message
    assert "bad key [redacted]" in message


def test_a_key_past_the_length_passed_on_is_not_cut_in_half_first() -> None:
    # Trimming first would keep the key's first characters, which no longer look like it.
    body = json.dumps({"error": {"message": "x" * 495 + KEY}}).encode()
    message, _, _ = engine_message(body, "application/json", SECRETS)
    assert "correct" not in message


def test_a_last_error_is_scrubbed_with_its_backends_key_whoever_wrote_it() -> None:
    errors = LastErrors(secrets_of=lambda name: SECRETS if name == "gpu1" else NO_SECRETS)
    errors.note("gpu1", f"refused: {KEY} / Bearer abc123def456", "request")
    failure = errors.get("gpu1")
    assert failure is not None
    assert failure.message == "refused: [redacted] / Bearer [redacted]"
