"""Helpers of the browser tests that drive the gateway next to the page: simulated backends, a
streaming call that holds a slot, and polling for a condition.

`wait_until` and `DiesMidStream` are the gateway tests' own (tests.gateway.drive), offered here too.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from typing import Any

from tests.support.drive import DiesMidStream, wait_until

__all__ = ["DiesMidStream", "SimBackend", "StreamingCall", "wait_until"]


@dataclass
class SimBackend:
    """A simulated engine registered as backend `name` in the chat pool `pool`."""

    engine: Any
    name: str
    pool: str

    @property
    def url(self) -> str:
        return str(self.engine.url)

    def records(self) -> list[dict[str, Any]]:
        import httpx

        return list(httpx.get(self.url + "/sim/requests", timeout=10).json())


class StreamingCall:
    """A /v1 chat request streaming in a background thread until `close()`: it holds a slot."""

    def __init__(self, url: str, key: str, text: str = "blocker") -> None:
        self.url = url
        self.key = key
        self.text = text
        self.chunks = 0
        self.status: int | None = None
        self.error: BaseException | None = None
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="streaming-call", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        import httpx

        body = {
            "model": "sim-small",
            "stream": True,
            "messages": [{"role": "user", "content": self.text}],
        }
        try:
            with httpx.stream(
                "POST",
                self.url + "/v1/chat/completions",
                json=body,
                headers={"Authorization": f"Bearer {self.key}"},
                timeout=60,
            ) as response:
                self.status = response.status_code
                for _line in response.iter_lines():
                    self.chunks += 1
                    if self._stop.is_set():
                        return
        except Exception as exc:  # reported through .error; the thread must not die loudly
            self.error = exc

    def close(self) -> None:
        self._stop.set()
        self._thread.join(timeout=10)
