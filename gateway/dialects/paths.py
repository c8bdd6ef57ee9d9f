"""Every dialect by the /v1 path it serves."""

from __future__ import annotations

from gateway.dialects.anthropic.dialect import MESSAGES
from gateway.dialects.openai.dialect import CHAT, COMPLETIONS, EMBEDDINGS, Surface
from gateway.dialects.responses.dialect import RESPONSES

SURFACES: dict[str, Surface] = {s.path: s for s in (CHAT, COMPLETIONS, EMBEDDINGS)}

SURFACES[MESSAGES.path] = MESSAGES

SURFACES[RESPONSES.path] = RESPONSES
