"""The ASGI vocabulary of the project: scopes, messages and the app's callables."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

Scope = dict[str, Any]
Message = dict[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

# The scope key of a future the connection resolves when the client goes away before its answer
# is complete (gateway/dataplane/server_protocol.py sets it; servers without it get a task).
GONE = "aiplane.gone"
