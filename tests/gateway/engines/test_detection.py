"""Backend identification against imitated engines (httpx.MockTransport) and the simulator."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import httpx
import pytest

from gateway.engines.detection import detect_engine, engine_root, probe_models
from gateway.engines.priority_forwarding import AUTO, Mapping, resolve_mapping
from gateway.engines.profiles import EngineProfile

BASE = "http://engine.test:8000/v1"
NOW = 1_700_000_000.0

Routes = dict[str, Any]


def models(owned_by: str, *ids: str) -> dict[str, Any]:
    return {
        "object": "list",
        "data": [{"id": i, "object": "model", "owned_by": owned_by} for i in ids or ("m",)],
    }


def transport(routes: Routes, seen: list[httpx.Request] | None = None) -> httpx.MockTransport:
    """Answer each known path with its JSON (or an (status, body) pair), everything else 404."""

    def handler(request: httpx.Request) -> httpx.Response:
        if seen is not None:
            seen.append(request)
        answer = routes.get(request.url.path)
        if answer is None:
            return httpx.Response(404, json={"detail": "Not Found"})
        if isinstance(answer, tuple):
            status, body = answer
            return httpx.Response(status, content=body)
        return httpx.Response(200, json=answer)

    return httpx.MockTransport(handler)


async def detect(routes: Routes, api_key: str | None = None) -> EngineProfile:
    async with httpx.AsyncClient(transport=transport(routes)) as client:
        return await detect_engine(client, BASE, api_key, now=NOW)


def sglang_info(**fields: Any) -> dict[str, Any]:
    info: dict[str, Any] = {
        "model_path": "Qwen/Qwen3-8B",
        "tp_size": 1,
        "schedule_policy": "fcfs",
        "enable_priority_scheduling": True,
        "schedule_low_priority_values_first": False,
        "version": "0.5.4",
    }
    info.update(fields)
    return {key: value for key, value in info.items() if value is not ...}


SGLANG_MODELS = models("sglang", "Qwen/Qwen3-8B")
# The mock answers 404 for every path it lacks: no /v1/messages or /v1/responses there.
NO_SURFACES = {"messages": False, "responses": False}


def test_the_engine_root_is_the_base_without_v1() -> None:
    assert engine_root("http://h:1/v1") == "http://h:1"
    assert engine_root("http://h:1/v1/") == "http://h:1"
    assert engine_root("http://h:1/openai") == "http://h:1/openai"


async def test_sglang_with_priority_scheduling_reports_everything_it_needs() -> None:
    profile = await detect({"/server_info": sglang_info(), "/v1/models": SGLANG_MODELS})
    assert profile == EngineProfile(
        kind="sglang",
        version="0.5.4",
        priority_scheduling=True,
        schedule_policy="fcfs",
        low_values_first=False,
        detected_at=NOW,
        **NO_SURFACES,
    )
    assert resolve_mapping(AUTO, profile) == Mapping("priority", (0, 1, 2))


async def test_sglang_with_low_values_first_inverts_the_mapping() -> None:
    info = sglang_info(schedule_policy="lof", schedule_low_priority_values_first=True)
    profile = await detect({"/server_info": info})
    assert (profile.kind, profile.schedule_policy, profile.low_values_first) == (
        "sglang",
        "lof",
        True,
    )
    assert resolve_mapping(AUTO, profile) == Mapping("priority", (2, 1, 0))


async def test_sglang_with_priority_scheduling_disabled_forwards_nothing() -> None:
    profile = await detect({"/server_info": sglang_info(enable_priority_scheduling=False)})
    assert (profile.kind, profile.priority_scheduling) == ("sglang", False)
    assert resolve_mapping(AUTO, profile) is None


@pytest.mark.parametrize(
    "missing",
    ["enable_priority_scheduling", "schedule_policy", "schedule_low_priority_values_first"],
)
async def test_a_missing_sglang_field_stays_unknown_and_keeps_forwarding_off(
    missing: str,
) -> None:
    profile = await detect({"/server_info": sglang_info(**{missing: ...})})
    assert profile.kind == "sglang"
    assert resolve_mapping(AUTO, profile) is None


async def test_a_non_boolean_sglang_flag_is_not_a_report() -> None:
    profile = await detect({"/server_info": sglang_info(enable_priority_scheduling="true")})
    assert profile.priority_scheduling is None


async def test_older_sglang_is_read_from_get_server_info() -> None:
    profile = await detect({"/get_server_info": sglang_info(), "/v1/models": SGLANG_MODELS})
    assert profile.kind == "sglang"
    assert profile.priority_scheduling is True


async def test_sglang_known_only_by_its_models_list_proves_no_scheduling() -> None:
    profile = await detect({"/v1/models": SGLANG_MODELS})
    assert profile == EngineProfile(kind="sglang", detected_at=NOW, **NO_SURFACES)


async def test_vllm_is_identified_but_never_proves_priority_scheduling() -> None:
    profile = await detect(
        {"/version": {"version": "0.11.0"}, "/v1/models": models("vllm", "llama")}
    )
    assert profile == EngineProfile(kind="vllm", version="0.11.0", detected_at=NOW, **NO_SURFACES)
    assert resolve_mapping(AUTO, profile) is None


async def test_a_version_endpoint_alone_is_not_vllm() -> None:
    profile = await detect({"/version": {"version": "1.0"}, "/v1/models": models("acme")})
    assert profile.kind == "generic"


async def test_llamacpp_is_identified_by_its_props() -> None:
    props = {"default_generation_settings": {"n_ctx": 4096}, "build_info": "b6000-abc"}
    profile = await detect({"/props": props, "/v1/models": models("llamacpp", "gguf")})
    assert profile == EngineProfile(
        kind="llamacpp", version="b6000-abc", detected_at=NOW, **NO_SURFACES
    )


async def test_llamacpp_is_identified_by_its_models_owner() -> None:
    profile = await detect({"/v1/models": models("llamacpp", "gguf")})
    assert profile.kind == "llamacpp"


async def test_ollama_is_identified_by_its_api_version() -> None:
    profile = await detect({"/api/version": {"version": "0.12.3"}, "/v1/models": models("library")})
    assert profile == EngineProfile(kind="ollama", version="0.12.3", detected_at=NOW, **NO_SURFACES)
    assert resolve_mapping(AUTO, profile) is None


async def test_any_openai_models_list_is_generic() -> None:
    profile = await detect({"/v1/models": models("openai", "gpt-x")})
    assert profile == EngineProfile(kind="generic", detected_at=NOW, **NO_SURFACES)


async def test_a_server_answering_nothing_useful_is_unknown() -> None:
    profile = await detect({"/v1/models": (200, b"<html>hello</html>")})
    assert profile == EngineProfile(kind="unknown", detected_at=NOW, **NO_SURFACES)


async def test_a_foreign_server_info_is_not_mistaken_for_sglang() -> None:
    profile = await detect({"/server_info": {"uptime": 5}, "/v1/models": models("acme")})
    assert profile.kind == "generic"


@pytest.mark.parametrize(
    ("status", "served"),
    [(400, True), (422, True), (200, True), (404, False), (405, False), (401, None), (500, None)],
)
async def test_whether_an_engine_serves_messages_and_responses_is_what_an_empty_post_says(
    status: int, served: bool | None
) -> None:
    def handler(request: httpx.Request) -> httpx.Response:
        if request.method == "POST":
            return httpx.Response(status, json={"error": "no"})
        if request.url.path == "/v1/models":
            return httpx.Response(200, json=models("vllm", "m"))
        return httpx.Response(404, json={})

    async with httpx.AsyncClient(transport=httpx.MockTransport(handler)) as client:
        profile = await detect_engine(client, BASE, None, now=NOW)
    assert (profile.kind, profile.messages, profile.responses) == ("vllm", served, served)


@pytest.mark.parametrize(
    "error",
    [
        httpx.ConnectError("refused"),
        httpx.ReadTimeout("slow"),
        httpx.RemoteProtocolError("garbage"),
    ],
)
async def test_an_unreachable_engine_is_unknown(error: Exception) -> None:
    def handler(request: httpx.Request) -> httpx.Response:
        raise error

    async with httpx.AsyncClient(transport=httpx.MockTransport(handler)) as client:
        profile = await detect_engine(client, BASE, None, now=NOW)
    # Not even a refusal: whether it serves Messages or Responses is not known either.
    assert profile == EngineProfile(kind="unknown", detected_at=NOW)


async def test_one_failing_probe_does_not_spoil_the_others() -> None:
    routes: Routes = {"/server_info": sglang_info()}

    def handler(request: httpx.Request) -> httpx.Response:
        if request.url.path != "/server_info":
            raise httpx.ConnectError("refused")
        return httpx.Response(200, json=routes["/server_info"])

    async with httpx.AsyncClient(transport=httpx.MockTransport(handler)) as client:
        profile = await detect_engine(client, BASE, None, now=NOW)
    assert profile.priority_scheduling is True


async def test_every_probe_carries_the_backend_key() -> None:
    seen: list[httpx.Request] = []
    routes: Routes = {"/server_info": sglang_info(), "/v1/models": SGLANG_MODELS}
    async with httpx.AsyncClient(transport=transport(routes, seen)) as client:
        await detect_engine(client, BASE, "sk-backend", now=NOW)
    assert seen
    assert {r.headers.get("authorization") for r in seen} == {"Bearer sk-backend"}
    assert {r.url.host for r in seen} == {"engine.test"}


async def test_no_authorization_is_sent_without_a_key() -> None:
    seen: list[httpx.Request] = []
    async with httpx.AsyncClient(transport=transport({}, seen)) as client:
        await detect_engine(client, BASE, None, now=NOW)
    assert seen
    assert all("authorization" not in r.headers for r in seen)


# --- models -------------------------------------------------------------------------------


async def test_probe_models_lists_ids_in_order_without_duplicates() -> None:
    body = models("vllm", "b", "a", "b")
    body["data"].append({"object": "model"})
    body["data"].append("junk")
    seen: list[httpx.Request] = []
    async with httpx.AsyncClient(transport=transport({"/v1/models": body}, seen)) as client:
        ids = await probe_models(client, BASE, "sk-x")
    assert ids == ["b", "a"]
    assert seen[0].headers["authorization"] == "Bearer sk-x"


@pytest.mark.parametrize(
    "handler",
    [
        lambda request: httpx.Response(500, json={"error": "boom"}),
        lambda request: httpx.Response(200, content=b"not json"),
        lambda request: httpx.Response(200, json={"data": "nope"}),
    ],
)
async def test_probe_models_is_empty_when_the_answer_is_unusable(
    handler: Callable[[httpx.Request], httpx.Response],
) -> None:
    async with httpx.AsyncClient(transport=httpx.MockTransport(handler)) as client:
        assert await probe_models(client, BASE, None) == []


async def test_probe_models_is_empty_when_unreachable() -> None:
    def handler(request: httpx.Request) -> httpx.Response:
        raise httpx.ConnectError("refused")

    async with httpx.AsyncClient(transport=httpx.MockTransport(handler)) as client:
        assert await probe_models(client, BASE, None) == []


# --- the simulated engine on loopback -----------------------------------------------------


async def test_a_simulated_sglang_on_loopback_is_detected() -> None:
    sim = pytest.importorskip("gateway.sim.config")
    server = pytest.importorskip("gateway.sim.server")
    config = sim.SimConfig(server_info="sglang", priority_scheduling=True)
    with server.SimServer(config) as server:
        async with httpx.AsyncClient() as client:
            profile = await detect_engine(client, f"{server.url}/v1", None, now=NOW)
    assert (profile.kind, profile.version, profile.detected_at) == ("sglang", "0.5.23", NOW)
    # The simulator reports all three scheduling fields, so auto mode may forward.
    assert (profile.priority_scheduling, profile.schedule_policy, profile.low_values_first) == (
        True,
        "fcfs",
        False,
    )
    assert resolve_mapping(AUTO, profile) == Mapping("priority", (0, 1, 2))


async def test_a_simulated_sglang_before_0_5_6_is_detected_from_get_server_info() -> None:
    sim = pytest.importorskip("gateway.sim.config")
    server = pytest.importorskip("gateway.sim.server")
    config = sim.SimConfig(server_info="sglang", sglang_version="0.5.4", priority_scheduling=True)
    with server.SimServer(config) as server:
        async with httpx.AsyncClient() as client:
            profile = await detect_engine(client, f"{server.url}/v1", None, now=NOW)
    assert (profile.kind, profile.version, profile.priority_scheduling) == ("sglang", "0.5.4", True)


async def test_a_simulated_sglang_before_0_5_3_never_proves_priority_scheduling() -> None:
    sim = pytest.importorskip("gateway.sim.config")
    server = pytest.importorskip("gateway.sim.server")
    config = sim.SimConfig(server_info="sglang", sglang_version="0.5.2", priority_scheduling=True)
    with server.SimServer(config) as server:
        async with httpx.AsyncClient() as client:
            profile = await detect_engine(client, f"{server.url}/v1", None, now=NOW)
    assert (profile.kind, profile.priority_scheduling) == ("sglang", None)
    assert resolve_mapping(AUTO, profile) is None


async def test_a_simulated_vllm_is_detected_with_its_version() -> None:
    sim = pytest.importorskip("gateway.sim.config")
    server = pytest.importorskip("gateway.sim.server")
    with server.SimServer(sim.SimConfig(server_info="vllm")) as server:
        async with httpx.AsyncClient() as client:
            profile = await detect_engine(client, f"{server.url}/v1", None, now=NOW)
    assert profile == EngineProfile(
        kind="vllm", version="0.33.0", detected_at=NOW, messages=False, responses=False
    )
