"""The last failure seen of each backend (a health probe or a request), kept in memory only."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Final, Literal

from gateway.core.redaction import NO_SECRETS, Secrets, scrub

Source = Literal["health", "request"]

# An engine's error text can be long (a stack trace in an HTML page): the page needs a line.
MAX_MESSAGE: Final = 500


@dataclass(frozen=True, slots=True)
class Failure:
    at: float  # unix time
    message: str
    source: Source


def _none(_: str) -> Secrets:
    return NO_SECRETS


class LastErrors:
    """One `Failure` per backend name, overwritten by the next: a dict write, so the request
    path may note one without touching the database.

    What is noted is scrubbed once more (the sources scrub the engine's words already): an
    administrator's page must never show a backend's key, whoever wrote the message.
    `secrets_of` gives a backend's key forms (the running snapshot's).
    """

    __slots__ = ("_by_backend", "clock", "secrets_of")

    def __init__(
        self,
        clock: Callable[[], float] = time.time,
        secrets_of: Callable[[str], Secrets] = _none,
    ) -> None:
        self.clock = clock
        self.secrets_of = secrets_of
        self._by_backend: dict[str, Failure] = {}

    def note(self, backend: str, message: str, source: Source) -> None:
        text = scrub(message, self.secrets_of(backend)).strip() or "failed"
        if len(text) > MAX_MESSAGE:
            text = text[: MAX_MESSAGE - 1] + "…"
        self._by_backend[backend] = Failure(self.clock(), text, source)

    def get(self, backend: str) -> Failure | None:
        return self._by_backend.get(backend)

    def forget(self, backend: str) -> None:
        """A backend removed, or pointed at another server: its old failures are not its own."""
        self._by_backend.pop(backend, None)
