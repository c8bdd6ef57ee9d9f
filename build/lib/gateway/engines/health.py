"""Backend health: one HTTP probe and a pure per-backend tracker with hysteresis."""

from __future__ import annotations

from typing import Final

import httpx

from gateway.core.redaction import Secrets, scrub
from gateway.engines.detection import engine_root

# Health probes run on a timer for every backend; a slow answer counts as a failure rather than
# letting one stuck engine hold up the round.
HEALTH_TIMEOUT: Final = httpx.Timeout(2.0)


def health_url(base_url: str, health_path: str) -> str:
    """The URL to probe: `health_path` under the engine root, or `{base_url}/models` if empty."""
    path = health_path.strip()
    if not path:
        return base_url.rstrip("/") + "/models"
    if not path.startswith("/"):
        path = "/" + path
    return engine_root(base_url) + path


# A health path answering these does not exist there: not a sign the engine is down.
MISSING = frozenset({404, 405, 501})


async def probe_health(
    client: httpx.AsyncClient, base_url: str, api_key: str | None, health_path: str
) -> bool:
    """True when the engine answers its health URL with a 2xx status within the timeout."""
    return await check_health(client, base_url, api_key, health_path) is None


async def check_health(
    client: httpx.AsyncClient, base_url: str, api_key: str | None, health_path: str
) -> str | None:
    """None when the engine answers its health URL with a 2xx status within the timeout, else
    what failed, naming the URL probed.

    Not every engine has the health path (llama-cpp-python's server answers /health with 404,
    a generic OpenAI endpoint may have none): then its models list, which every
    OpenAI-compatible server serves, says whether it is up.
    """
    headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
    url = health_url(base_url, health_path)
    models = health_url(base_url, "")
    try:
        response = await client.get(url, headers=headers, timeout=HEALTH_TIMEOUT)
        if response.status_code in MISSING and url != models:
            url = models
            response = await client.get(models, headers=headers, timeout=HEALTH_TIMEOUT)
    # Whatever goes wrong (refused, reset, timeout, bad URL), the backend is not serving.
    except Exception as err:
        # The transport's words may quote the engine's (a garbled status line echoing the
        # request's Authorization header): they lose the key before anyone reads them.
        detail = scrub(str(err), Secrets.of(api_key))
        return f"GET {url}: {type(err).__name__}" + (f": {detail}" if detail else "")
    if response.is_success:
        return None
    return f"GET {url} answered {response.status_code}"


class _Counts:
    __slots__ = ("failures", "healthy", "successes")

    def __init__(self) -> None:
        self.healthy = True
        self.failures = 0
        self.successes = 0


class HealthTracker:
    """Consecutive probe results per backend, flipping state only after a run of them.

    One failed probe is often a blip (a restart, a GC pause); requiring a run before marking a
    backend down avoids draining it for nothing, while one success usually suffices to return.
    """

    __slots__ = ("_backends", "healthy_after", "unhealthy_after")

    def __init__(self, *, unhealthy_after: int = 2, healthy_after: int = 1) -> None:
        if unhealthy_after < 1 or healthy_after < 1:
            raise ValueError("health thresholds must be at least 1")
        self.unhealthy_after = unhealthy_after
        self.healthy_after = healthy_after
        self._backends: dict[str, _Counts] = {}

    def record(self, name: str, ok: bool) -> bool:
        """Add one probe result; True when it changed the backend's health."""
        counts = self._backends.get(name)
        if counts is None:
            counts = self._backends[name] = _Counts()
        if ok:
            counts.failures = 0
            counts.successes += 1
            if not counts.healthy and counts.successes >= self.healthy_after:
                counts.healthy = True
                return True
        else:
            counts.successes = 0
            counts.failures += 1
            if counts.healthy and counts.failures >= self.unhealthy_after:
                counts.healthy = False
                return True
        return False

    def is_healthy(self, name: str) -> bool:
        """A backend never probed is healthy until proven otherwise."""
        counts = self._backends.get(name)
        return counts is None or counts.healthy

    def forget(self, name: str) -> None:
        """Drop a removed backend so a new one with the same name starts fresh."""
        self._backends.pop(name, None)
