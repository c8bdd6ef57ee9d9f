"""Every dialect by the /v1 path it serves."""

from __future__ import annotations

from typing import TYPE_CHECKING

from gateway.dialects.anthropic.dialect import MESSAGES
from gateway.dialects.openai.dialect import CHAT, COMPLETIONS, EMBEDDINGS
from gateway.dialects.responses.dialect import RESPONSES

if TYPE_CHECKING:
    from gateway.dialects.openai.dialect import Surface


SURFACES: dict[str, Surface] = {s.path: s for s in (CHAT, COMPLETIONS, EMBEDDINGS)}

SURFACES[MESSAGES.path] = MESSAGES

SURFACES[RESPONSES.path] = RESPONSES
