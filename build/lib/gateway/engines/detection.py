"""Backend identification: probe an engine's public endpoints and report an EngineProfile."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import Any, Final

import httpx

from gateway.core.redaction import NO_SECRETS, Secrets, scrub
from gateway.engines.profiles import EngineProfile

# Detection runs when an administrator saves a backend or the registry starts; a dead or
# black-holed host must not stall that for long, and the probes run concurrently.
PROBE_TIMEOUT: Final = httpx.Timeout(3.0)

# Keys of SGLang's server-info report (its ServerArgs); any one of them marks the answer as
# SGLang's rather than some other server's /server_info.
_SGLANG_KEYS: Final = frozenset(
    {
        "enable_priority_scheduling",
        "schedule_policy",
        "schedule_low_priority_values_first",
        "model_path",
        "tp_size",
        "mem_fraction_static",
        "chunked_prefill_size",
    }
)


def engine_root(base_url: str) -> str:
    """The engine's root URL: the OpenAI base ("http://h:p/v1") without its trailing "/v1"."""
    root = base_url.rstrip("/")
    if root.endswith("/v1"):
        root = root[: -len("/v1")]
    return root


def models_url(base_url: str) -> str:
    return base_url.rstrip("/") + "/models"


def _headers(api_key: str | None) -> dict[str, str]:
    return {"Authorization": f"Bearer {api_key}"} if api_key else {}


async def _get_json(
    client: httpx.AsyncClient, url: str, headers: dict[str, str], timeout: httpx.Timeout
) -> Any:
    """The decoded JSON of a 2xx answer, or None for any failure whatsoever."""
    try:
        response = await client.get(url, headers=headers, timeout=timeout)
        if not response.is_success:
            return None
        return response.json()
    # A probe's only job is to tell us what answers; refused connections, timeouts, TLS errors,
    # malformed URLs and non-JSON bodies all mean "this endpoint says nothing".
    except Exception:
        return None


async def _server_info(
    client: httpx.AsyncClient, root: str, headers: dict[str, str]
) -> dict[str, Any] | None:
    # Newer SGLang serves /server_info; older releases only /get_server_info.
    for path in ("/server_info", "/get_server_info"):
        data = await _get_json(client, root + path, headers, PROBE_TIMEOUT)
        if isinstance(data, dict) and not _SGLANG_KEYS.isdisjoint(data):
            return data
    return None


def _model_entries(data: object) -> list[dict[str, Any]] | None:
    """The entries of an OpenAI models list, or None when the answer is not one."""
    if not isinstance(data, dict):
        return None
    entries = data.get("data")
    if not isinstance(entries, list):
        return None
    return [entry for entry in entries if isinstance(entry, dict)]


def _opt_bool(value: object) -> bool | None:
    # Only a real boolean is a report; anything else keeps auto forwarding off.
    return value if isinstance(value, bool) else None


def _opt_str(value: object, secrets: Secrets = NO_SECRETS) -> str | None:
    # What an engine reports is stored in its profile and shown: never with a key in it.
    return scrub(value, secrets) if isinstance(value, str) and value else None


def _version_of(data: object, key: str = "version", secrets: Secrets = NO_SECRETS) -> str | None:
    return _opt_str(data.get(key), secrets) if isinstance(data, dict) else None


async def _serves(client: httpx.AsyncClient, url: str, headers: dict[str, str]) -> bool | None:
    """Does the engine serve this POST path? An empty body is refused by a path that exists
    (400 or 422) and not found by one that does not; anything else says nothing."""
    try:
        response = await client.post(url, headers=headers, json={}, timeout=PROBE_TIMEOUT)
    except Exception:  # unreachable or malformed: not an answer
        return None
    if response.status_code in (404, 405, 501):
        return False
    if response.status_code in (400, 422) or response.is_success:
        return True
    return None  # e.g. 401 from an auth layer in front of every path


async def detect_engine(
    client: httpx.AsyncClient, base_url: str, api_key: str | None, *, now: float
) -> EngineProfile:
    """Identify the engine behind `base_url`; scheduling fields stay None unless reported."""
    root = engine_root(base_url)
    headers = _headers(api_key)
    secrets = Secrets.of(api_key)
    base = base_url.rstrip("/")
    (
        server_info,
        models,
        vllm_version,
        props,
        ollama_version,
        messages,
        responses,
    ) = await asyncio.gather(
        _server_info(client, root, headers),
        _get_json(client, models_url(base_url), headers, PROBE_TIMEOUT),
        _get_json(client, f"{root}/version", headers, PROBE_TIMEOUT),
        _get_json(client, f"{root}/props", headers, PROBE_TIMEOUT),
        _get_json(client, f"{root}/api/version", headers, PROBE_TIMEOUT),
        _serves(client, f"{base}/messages", headers),
        _serves(client, f"{base}/responses", headers),
    )
    surfaces = {"messages": messages, "responses": responses}
    entries = _model_entries(models)
    owners = {entry.get("owned_by") for entry in entries or ()}

    if server_info is not None:
        return EngineProfile(
            kind="sglang",
            version=_version_of(server_info, secrets=secrets),
            priority_scheduling=_opt_bool(server_info.get("enable_priority_scheduling")),
            schedule_policy=_opt_str(server_info.get("schedule_policy"), secrets),
            low_values_first=_opt_bool(server_info.get("schedule_low_priority_values_first")),
            detected_at=now,
            **surfaces,
        )
    if "sglang" in owners:
        # SGLang without a readable server-info report: known software, unknown scheduling.
        return EngineProfile(kind="sglang", detected_at=now, **surfaces)
    # vLLM's scheduling policy is not reported anywhere, so it never proves priority scheduling.
    if "vllm" in owners:
        return EngineProfile(
            kind="vllm",
            version=_version_of(vllm_version, secrets=secrets),
            detected_at=now,
            **surfaces,
        )
    if (isinstance(props, dict) and "default_generation_settings" in props) or (
        "llamacpp" in owners
    ):
        return EngineProfile(
            kind="llamacpp",
            version=_version_of(props, "build_info", secrets),
            detected_at=now,
            **surfaces,
        )
    if _version_of(ollama_version) is not None or "ollama" in owners:
        return EngineProfile(
            kind="ollama",
            version=_version_of(ollama_version, secrets=secrets),
            detected_at=now,
            **surfaces,
        )
    if entries is not None:
        return EngineProfile(kind="generic", detected_at=now, **surfaces)
    return EngineProfile(kind="unknown", detected_at=now, **surfaces)


@dataclass(frozen=True, slots=True)
class ProbeFailure:
    """Why a backend's models list could not be read: the URL asked and what went wrong.

    `reason` is one of "unreachable" (no answer: refused, timed out, bad TLS), "status" (an
    answer that is not a success; `status` says which) or "not_models" (a success whose body
    is not an OpenAI models list); `error` is the transport's or the engine's own words, less
    any key they quote (gateway/core/redaction.py).
    """

    url: str
    reason: str
    error: str
    status: int | None = None

    def to_json(self) -> dict[str, Any]:
        return {"url": self.url, "reason": self.reason, "error": self.error, "status": self.status}


async def check_models(
    client: httpx.AsyncClient, base_url: str, api_key: str | None
) -> tuple[list[str], ProbeFailure | None]:
    """Model ids served at `{base_url}/models`, in order, or why they could not be read."""
    url = models_url(base_url)
    secrets = Secrets.of(api_key)
    try:
        response = await client.get(url, headers=_headers(api_key), timeout=PROBE_TIMEOUT)
    except Exception as exc:  # whatever the transport raised is the reason to show
        said = scrub(f"{type(exc).__name__}: {exc}", secrets).rstrip(": ")
        return [], ProbeFailure(url, "unreachable", said)
    if not response.is_success:
        body = _excerpt(response.text, secrets)
        # Its reason phrase is the engine's words too (one may echo the request's header).
        error = scrub(f"HTTP {response.status_code} {response.reason_phrase}", secrets).strip()
        return [], ProbeFailure(
            url, "status", f"{error}: {body}" if body else error, response.status_code
        )
    try:
        entries = _model_entries(response.json())
    except ValueError:
        entries = None
    if entries is None:
        return [], ProbeFailure(url, "not_models", _excerpt(response.text, secrets))
    ids: list[str] = []
    seen: set[str] = set()
    for entry in entries:
        model_id = entry.get("id")
        if isinstance(model_id, str) and model_id and model_id not in seen:
            seen.add(model_id)
            ids.append(model_id)
    return ids, None


def _excerpt(text: str, secrets: Secrets) -> str:
    """The start of an engine's answer, to show: scrubbed before it is cut (half a key cut off
    would no longer be found)."""
    return scrub(text[:4096], secrets)[:300].strip()


async def probe_models(client: httpx.AsyncClient, base_url: str, api_key: str | None) -> list[str]:
    """Model ids served at `{base_url}/models`, in order; [] when unreachable or malformed.

    An empty list cannot tell "down" from "serves nothing", so a caller refreshing a known
    backend should keep its previous list on [].
    """
    ids, _ = await check_models(client, base_url, api_key)
    return ids
