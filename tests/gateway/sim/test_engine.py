"""The simulated engine, driven over a real loopback socket.

The tests named `test_row_<n>_...` each prove one row of the fidelity table in
gateway/sim/engine.py's docstring: what the sim imitates, checked against the behaviour of the
engine it imitates.
"""

from __future__ import annotations

import asyncio
import json
import socket
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict
from typing import Any
from urllib.parse import urlsplit

import aiohttp
import httpx
import pytest

from gateway.sim.config import EVICTED, QUEUE_FULL, SimConfig
from gateway.sim.server import SimServer, serve

# Small and instant by default: each test asks for delays only where it observes time.
BASE = SimConfig(tokens=4, token_delay=0.0)
HELLO = [{"role": "user", "content": "hello brave new world"}]


@pytest.fixture(scope="module")
def sim() -> Iterator[SimServer]:
    with SimServer(SimConfig(**asdict(BASE))) as server:
        yield server


@pytest.fixture(scope="module")
def control(sim: SimServer) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=sim.url) as http:
        yield http


@pytest.fixture(autouse=True)
def fresh_engine(control: httpx.Client) -> None:
    control.post("/sim/config", json=asdict(BASE)).raise_for_status()
    control.post("/sim/reset").raise_for_status()


@pytest.fixture
async def client(sim: SimServer) -> AsyncIterator[aiohttp.ClientSession]:
    async with aiohttp.ClientSession(base_url=sim.url) as session:
        yield session


async def configure(client: aiohttp.ClientSession, **changes: Any) -> dict[str, Any]:
    async with client.post("/sim/config", json=changes) as resp:
        assert resp.status == 200, await resp.text()
        state: dict[str, Any] = await resp.json()
        return state


async def stats(client: aiohttp.ClientSession) -> dict[str, int]:
    async with client.get("/sim/stats") as resp:
        result: dict[str, int] = await resp.json()
        return result


async def wait_for_stats(client: aiohttp.ClientSession, **expected: int) -> dict[str, int]:
    deadline = time.monotonic() + 5
    while True:
        current = await stats(client)
        if all(current[k] == v for k, v in expected.items()):
            return current
        assert time.monotonic() < deadline, f"stats stayed {current}, wanted {expected}"
        await asyncio.sleep(0.005)


async def chat(client: aiohttp.ClientSession, **body: Any) -> tuple[int, dict[str, Any]]:
    async with client.post(
        "/v1/chat/completions", json={"model": "sim-small", "messages": HELLO, **body}
    ) as resp:
        return resp.status, await resp.json()


async def raw_post(url: str, body: dict[str, Any]) -> tuple[asyncio.StreamReader, Any]:
    """POST a chat completion on a bare connection and return it unread."""
    parts = urlsplit(url)
    reader, writer = await asyncio.open_connection(parts.hostname, parts.port)
    data = json.dumps({"model": "sim-small", "messages": HELLO, **body}).encode()
    writer.write(
        b"POST /v1/chat/completions HTTP/1.1\r\nHost: sim\r\nContent-Type: application/json\r\n"
        b"Content-Length: %d\r\n\r\n" % len(data) + data
    )
    await writer.drain()
    return reader, writer


async def read_for(reader: asyncio.StreamReader, seconds: float) -> bytes:
    """Whatever arrives within `seconds` (b"" when nothing does)."""
    try:
        return await asyncio.wait_for(reader.read(65536), seconds)
    except TimeoutError:
        return b""


async def sse_events(resp: aiohttp.ClientResponse) -> list[tuple[float, str]]:
    """The `data:` payloads of a stream, each with the time it arrived."""
    events = []
    async for line in resp.content:
        if line.startswith(b"data: "):
            events.append((time.monotonic(), line[6:].decode().strip()))
    return events


def assert_envelope(body: dict[str, Any], code: str) -> None:
    assert set(body) == {"error"}
    assert set(body["error"]) == {"message", "type", "param", "code"}
    assert body["error"]["code"] == code


async def test_the_models_are_listed_in_the_openai_shape(client: aiohttp.ClientSession) -> None:
    for path in ("/v1/models", "/models"):
        async with client.get(path) as resp:
            assert resp.status == 200
            body = await resp.json()
        assert body["object"] == "list"
        assert [m["id"] for m in body["data"]] == ["sim-small", "sim-large"]
        assert {m["owned_by"] for m in body["data"]} == {"aiplane-sim"}
        assert {m["object"] for m in body["data"]} == {"model"}


async def test_health_and_version_answer_without_a_key(client: aiohttp.ClientSession) -> None:
    await configure(client, api_key="secret")
    async with client.get("/health") as resp:
        assert (resp.status, await resp.text()) == (200, "{}")
    async with client.get("/version") as resp:
        assert await resp.json() == {"version": "sim-1.0"}


async def test_a_chat_completion_returns_the_exact_tokens_and_usage(
    client: aiohttp.ClientSession,
) -> None:
    status, body = await chat(client, model="sim-large")
    assert status == 200
    assert body["object"] == "chat.completion"
    assert body["model"] == "sim-large"
    choice = body["choices"][0]
    assert choice["message"] == {"role": "assistant", "content": "tok0 tok1 tok2 tok3 "}
    assert choice["finish_reason"] == "stop"
    assert body["usage"] == {"prompt_tokens": 4, "completion_tokens": 4, "total_tokens": 8}


async def test_a_smaller_max_tokens_cuts_the_answer_with_length(
    client: aiohttp.ClientSession,
) -> None:
    _, body = await chat(client, max_tokens=2)
    assert body["choices"][0]["message"]["content"] == "tok0 tok1 "
    assert body["choices"][0]["finish_reason"] == "length"
    assert body["usage"]["completion_tokens"] == 2
    _, body = await chat(client, max_completion_tokens=1)
    assert body["choices"][0]["message"]["content"] == "tok0 "


async def test_a_stream_arrives_chunk_by_chunk(client: aiohttp.ClientSession) -> None:
    await configure(client, token_delay=0.05)
    async with client.post(
        "/v1/chat/completions",
        json={
            "model": "sim-small",
            "messages": HELLO,
            "stream": True,
            "stream_options": {"include_usage": True},
        },
    ) as resp:
        assert resp.status == 200
        assert resp.headers["content-type"].startswith("text/event-stream")
        events = await sse_events(resp)
    assert events[-1][1] == "[DONE]"
    chunks = [json.loads(data) for _, data in events[:-1]]
    tokens, final, usage = chunks[:4], chunks[4], chunks[5]
    assert len(chunks) == 6
    assert "".join(c["choices"][0]["delta"]["content"] for c in tokens) == "tok0 tok1 tok2 tok3 "
    assert tokens[0]["choices"][0]["delta"]["role"] == "assistant"
    assert {c["object"] for c in chunks} == {"chat.completion.chunk"}
    assert {c["model"] for c in chunks} == {"sim-small"}
    assert final["choices"][0]["finish_reason"] == "stop"
    assert usage["choices"] == []
    assert usage["usage"] == {"prompt_tokens": 4, "completion_tokens": 4, "total_tokens": 8}
    # Three gaps of 50 ms between the token chunks; even a client that is late by 75 ms for the
    # first one sees them spread out, which one buffered write could not do.
    arrivals = [at for at, _ in events[:4]]
    assert arrivals[-1] - arrivals[0] >= 0.075


async def test_a_stream_without_include_usage_has_no_usage_chunk(
    client: aiohttp.ClientSession,
) -> None:
    async with client.post(
        "/v1/chat/completions",
        json={"model": "sim-small", "messages": HELLO, "stream": True, "max_tokens": 3},
    ) as resp:
        events = await sse_events(resp)
    assert [data for _, data in events][-1] == "[DONE]"
    chunks = [json.loads(data) for _, data in events[:-1]]
    assert len(chunks) == 4
    assert chunks[-1]["choices"][0]["finish_reason"] == "length"
    assert all("usage" not in c for c in chunks)


async def test_completions_answer_plain_and_streamed(client: aiohttp.ClientSession) -> None:
    async with client.post(
        "/v1/completions", json={"model": "sim-small", "prompt": "once upon a time"}
    ) as resp:
        body = await resp.json()
    assert body["object"] == "text_completion"
    assert body["choices"][0]["text"] == "tok0 tok1 tok2 tok3 "
    assert body["usage"] == {"prompt_tokens": 4, "completion_tokens": 4, "total_tokens": 8}
    async with client.post(
        "/v1/completions",
        json={
            "model": "sim-small",
            "prompt": ["a b", "c"],
            "stream": True,
            "stream_options": {"include_usage": True},
        },
    ) as resp:
        events = await sse_events(resp)
    chunks = [json.loads(data) for _, data in events[:-1]]
    assert "".join(c["choices"][0]["text"] for c in chunks[:4]) == "tok0 tok1 tok2 tok3 "
    assert chunks[4]["choices"][0]["finish_reason"] == "stop"
    assert chunks[5]["usage"]["prompt_tokens"] == 3


async def test_embeddings_are_deterministic_vectors_of_eight(
    client: aiohttp.ClientSession,
) -> None:
    async def embed(value: str | list[str]) -> dict[str, Any]:
        async with client.post(
            "/v1/embeddings", json={"model": "sim-large", "input": value}
        ) as resp:
            assert resp.status == 200
            body: dict[str, Any] = await resp.json()
            return body

    both = await embed(["red fox", "blue whale"])
    alone = await embed("red fox")
    assert both["object"] == "list"
    assert both["model"] == "sim-large"
    assert [d["index"] for d in both["data"]] == [0, 1]
    vectors = [d["embedding"] for d in both["data"]]
    assert all(len(v) == 8 and all(-1 <= x <= 1 for x in v) for v in vectors)
    assert vectors[0] != vectors[1]
    assert alone["data"][0]["embedding"] == vectors[0]
    assert both["usage"] == {"prompt_tokens": 4, "total_tokens": 4}


async def test_an_unknown_model_is_a_404_envelope(client: aiohttp.ClientSession) -> None:
    status, body = await chat(client, model="gpt-nothing")
    assert status == 404
    assert_envelope(body, "model_not_found")
    assert body["error"]["param"] == "model"


async def test_bad_json_is_a_400_envelope(client: aiohttp.ClientSession) -> None:
    async with client.post("/v1/chat/completions", data=b"{not json") as resp:
        assert resp.status == 400
        assert_envelope(await resp.json(), "invalid_json")


async def test_an_api_key_is_required_once_configured(client: aiohttp.ClientSession) -> None:
    await configure(client, api_key="sk-sim")
    for headers in ({}, {"Authorization": "Bearer wrong"}):
        async with client.post(
            "/v1/chat/completions",
            json={"model": "sim-small", "messages": HELLO},
            headers=headers,
        ) as resp:
            assert resp.status == 401
            assert_envelope(await resp.json(), "invalid_api_key")
    async with client.get("/v1/models") as resp:
        assert resp.status == 401
    async with client.post(
        "/v1/chat/completions",
        json={"model": "sim-small", "messages": HELLO},
        headers={"Authorization": "Bearer sk-sim"},
    ) as resp:
        assert resp.status == 200


async def test_one_slot_runs_one_request_at_a_time(client: aiohttp.ClientSession) -> None:
    await configure(client, slots=1, token_delay=0.01)
    results = await asyncio.gather(chat(client), chat(client))
    assert [status for status, _ in results] == [200, 200]
    current = await stats(client)
    assert current["max_inflight_seen"] == 1
    assert current["total"] == 2
    assert (current["inflight"], current["waiting"]) == (0, 0)


async def test_several_slots_run_requests_side_by_side(client: aiohttp.ClientSession) -> None:
    await configure(client, slots=3, token_delay=0.01)
    await asyncio.gather(*(chat(client) for _ in range(3)))
    assert (await stats(client))["max_inflight_seen"] == 3


async def test_raising_slots_at_run_time_admits_the_waiting_requests(
    client: aiohttp.ClientSession,
) -> None:
    await configure(client, slots=0)
    waiting = asyncio.create_task(chat(client))
    await wait_for_stats(client, waiting=1, inflight=0)
    await configure(client, slots=1)
    status, _ = await waiting
    assert status == 200


async def hold_the_slot(client: aiohttp.ClientSession) -> aiohttp.ClientResponse:
    """Start a stream far longer than any test and return once it is generating."""
    resp = await client.post(
        "/v1/chat/completions",
        json={"model": "sim-small", "messages": HELLO, "stream": True, "max_tokens": 10_000},
    )
    assert (await resp.content.readline()).startswith(b"data: ")
    return resp


async def finish_order(client: aiohttp.ClientSession, queued: list[tuple[str, Any]]) -> list[str]:
    """Queue short requests behind a held slot, one after another, then free the slot.

    A priority of None sends no `priority` field at all.
    """
    holder = await hold_the_slot(client)
    finished: list[str] = []

    async def run(name: str, priority: Any) -> None:
        extra = {} if priority is None else {"priority": priority}
        status, _ = await chat(client, max_tokens=2, **extra)
        assert status == 200
        finished.append(name)

    tasks = []
    for count, (name, priority) in enumerate(queued, start=1):
        tasks.append(asyncio.create_task(run(name, priority)))
        await wait_for_stats(client, waiting=count)
    holder.close()
    await asyncio.gather(*tasks)
    return finished


async def test_a_client_disconnect_mid_stream_is_cancelled_and_frees_the_slot(
    client: aiohttp.ClientSession,
) -> None:
    await configure(client, slots=1, tokens=50, token_delay=0.02)
    resp = await hold_the_slot(client)
    resp.close()
    await wait_for_stats(client, cancelled=1, inflight=0)
    async with client.get("/sim/requests") as listing:
        (record,) = await listing.json()
    assert record["cancelled"] is True
    assert record["finished"] is not None
    # The slot is free again: a fresh request is admitted at once.
    status, _ = await chat(client, max_tokens=1)
    assert status == 200


async def test_a_client_that_leaves_the_waiting_queue_is_cancelled(
    client: aiohttp.ClientSession,
) -> None:
    await configure(client, slots=1, tokens=50, token_delay=0.02)
    holder = await hold_the_slot(client)
    # A waiting stream has no answer yet (row 7), so the post itself waits: run it aside.
    waiter = asyncio.create_task(
        client.post(
            "/v1/chat/completions", json={"model": "sim-small", "messages": HELLO, "stream": True}
        )
    )
    await wait_for_stats(client, waiting=1)
    waiter.cancel()
    current = await wait_for_stats(client, waiting=0, cancelled=1)
    # The holder kept its slot: the leaving waiter never ran.
    assert (current["inflight"], current["max_inflight_seen"]) == (1, 1)
    holder.close()
    await wait_for_stats(client, inflight=0, cancelled=2)


async def test_fail_next_fails_that_many_posts_before_any_byte(
    client: aiohttp.ClientSession,
) -> None:
    await configure(client, fail_next=2, fail_status=503)
    async with client.get("/v1/models") as resp:
        assert resp.status == 200  # only POSTs are failed
    for _ in range(2):
        status, body = await chat(client)
        assert status == 503
        assert_envelope(body, "sim_injected_failure")
        assert body["error"]["type"] == "server_error"
    status, _ = await chat(client)
    assert status == 200


async def test_the_x_sim_fail_header_answers_that_status(client: aiohttp.ClientSession) -> None:
    async with client.post(
        "/v1/embeddings",
        json={"model": "sim-small", "input": "x"},
        headers={"x-sim-fail": "502"},
    ) as resp:
        assert resp.status == 502
        assert_envelope(await resp.json(), "sim_injected_failure")


async def test_requests_are_recorded_with_headers_and_body(
    client: aiohttp.ClientSession,
) -> None:
    await chat(client, priority=3)
    async with client.post(
        "/v1/chat/completions", data=b"oops", headers={"X-Trace": "abc"}
    ) as resp:
        assert resp.status == 400
    async with client.get("/sim/requests") as resp:
        first, second = await resp.json()
    assert first["path"] == "/v1/chat/completions"
    assert first["body"]["priority"] == 3
    assert first["headers"]["content-type"] == "application/json"
    assert first["status"] == 200
    assert first["cancelled"] is False
    assert first["fault"] is None
    assert first["started"] <= first["finished"]
    assert second["body"] is None
    assert second["headers"]["x-trace"] == "abc"
    assert second["status"] == 400
    await client.post("/sim/reset")
    async with client.get("/sim/requests") as resp:
        assert await resp.json() == []
    assert (await stats(client))["total"] == 0


async def test_the_config_endpoint_rejects_unknown_or_mistyped_settings(
    client: aiohttp.ClientSession,
) -> None:
    rejected = (
        {"flavour": 1},
        {"slots": "four"},
        {"slots": True},
        {"tokens": -1},
        {"server_info": "x"},
        {"fail_status": 200},
        {"sglang_version": "latest"},
        {"max_queued_requests": -1},
        {"directives": "yes"},
        {"messages": 1},
        {"tool_calls": 0},
        {"cached_tokens": "3"},
        # The flag SGLang reports is the one the sim obeys: there is no second one.
        {"sglang_priority": True},
    )
    for change in rejected:
        async with client.post("/sim/config", json=change) as resp:
            assert resp.status == 400, change
            assert_envelope(await resp.json(), "invalid_setting")
    state = await configure(client, models=["only"], token_delay=1, max_queued_requests=None)
    assert state["models"] == ["only"]
    assert state["token_delay"] == 1.0
    status, _ = await chat(client, model="sim-small")
    assert status == 404


async def test_stopping_the_server_ends_open_streams_and_refuses_waiters() -> None:
    server = SimServer(SimConfig(slots=1, tokens=10_000, token_delay=0.01))
    server.start()
    async with aiohttp.ClientSession(base_url=server.url) as session:
        holder = await hold_the_slot(session)
        waiter = asyncio.create_task(chat(session))
        await wait_for_stats(session, waiting=1)
        stopping = asyncio.create_task(asyncio.to_thread(server.stop))
        rest = [line async for line in holder.content if line.strip()]
        status, body = await waiter
        await stopping
    # Without the abort, uvicorn would wait out its graceful-shutdown timeout and then cut both
    # connections: no [DONE], no answer for the waiter.
    assert rest[-1] == b"data: [DONE]\n"
    assert status == 503
    assert_envelope(body, "sim_shutting_down")


async def test_serve_runs_inside_the_current_event_loop() -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    task = asyncio.create_task(serve(SimConfig(models=["in-loop"]), "127.0.0.1", port))
    try:
        async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{port}") as http:
            for _ in range(200):
                try:
                    resp = await http.get("/v1/models")
                    break
                except httpx.ConnectError:
                    await asyncio.sleep(0.01)
            assert [m["id"] for m in resp.json()["data"]] == ["in-loop"]
    finally:
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task


def test_the_command_line_serves_the_given_models() -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    # A fixed argument list of our own module: nothing untrusted reaches the command.
    process = subprocess.Popen(  # noqa: S603
        [
            sys.executable,
            "-m",
            "gateway.sim",
            "--port",
            str(port),
            "--models",
            "a,b",
            "--server-info",
            "sglang",
            "--priority-scheduling",
            "--max-queued-requests",
            "7",
            "--slots",
            "2",
            "--token-delay-ms",
            "0",
        ],
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 10
        while True:
            try:
                models = httpx.get(f"http://127.0.0.1:{port}/v1/models").json()
                break
            except httpx.ConnectError:
                assert time.monotonic() < deadline and process.poll() is None
                time.sleep(0.02)
        assert [m["id"] for m in models["data"]] == ["a", "b"]
        info = httpx.get(f"http://127.0.0.1:{port}/server_info").json()
        assert info["max_running_requests"] == 2
        assert info["max_queued_requests"] == 7
        assert info["enable_priority_scheduling"] is True
    finally:
        process.terminate()
        process.wait(5)


# ----- fidelity: one test (or more) per row of the table in gateway/sim/engine.py -------------


@pytest.mark.parametrize("path", ["/server_info", "/get_server_info"])
async def test_row_1_only_an_sglang_serves_a_server_info(
    client: aiohttp.ClientSession, path: str
) -> None:
    for style in ("none", "vllm"):
        await configure(client, server_info=style)
        async with client.get(path) as resp:
            assert resp.status == 404, style


async def test_row_1_sglang_serves_one_flat_server_info_at_both_paths_from_0_5_6(
    client: aiohttp.ClientSession,
) -> None:
    await configure(
        client,
        server_info="sglang",
        slots=6,
        sglang_schedule_policy="lof",
        sglang_low_first=True,
        priority_scheduling=True,
        max_queued_requests=9,
    )
    async with client.get("/server_info") as resp:
        info = await resp.json()
    async with client.get("/get_server_info") as resp:
        assert await resp.json() == info
    assert info == {
        "model_path": "sim-small",
        "served_model_name": "sim-small",
        "tp_size": 1,
        "schedule_policy": "lof",
        "max_running_requests": 6,
        "max_queued_requests": 9,
        "enable_priority_scheduling": True,
        "schedule_low_priority_values_first": True,
        "version": "0.5.23",
    }


async def test_row_1_an_sglang_before_0_5_6_serves_only_get_server_info(
    client: aiohttp.ClientSession,
) -> None:
    await configure(client, server_info="sglang", sglang_version="0.5.5")
    async with client.get("/server_info") as resp:
        assert resp.status == 404
    async with client.get("/get_server_info") as resp:
        assert resp.status == 200
        assert (await resp.json())["version"] == "0.5.5"


async def test_row_2_an_sglang_before_0_5_3_has_no_priority_flags_and_ignores_priority(
    client: aiohttp.ClientSession,
) -> None:
    await configure(
        client,
        server_info="sglang",
        sglang_version="0.5.2",
        priority_scheduling=True,
        slots=1,
        tokens=20,
        token_delay=0.01,
    )
    async with client.get("/get_server_info") as resp:
        info = await resp.json()
    assert "enable_priority_scheduling" not in info
    assert "schedule_low_priority_values_first" not in info
    assert await finish_order(client, [("low", 1), ("high", 10)]) == ["low", "high"]


async def test_row_2_from_0_5_3_the_flags_report_what_the_sim_does(
    client: aiohttp.ClientSession,
) -> None:
    await configure(client, server_info="sglang", sglang_version="0.5.3")
    async with client.get("/get_server_info") as resp:
        info = await resp.json()
    assert (info["enable_priority_scheduling"], info["schedule_low_priority_values_first"]) == (
        False,
        False,
    )


@pytest.mark.parametrize(
    ("style", "owner", "version"),
    [
        ("none", "aiplane-sim", "sim-1.0"),
        ("sglang", "sglang", "0.5.23"),
        ("vllm", "vllm", "0.33.0"),
    ],
)
async def test_row_3_models_and_version_name_the_imitated_engine(
    client: aiohttp.ClientSession, style: str, owner: str, version: str
) -> None:
    await configure(client, server_info=style)
    async with client.get("/v1/models") as resp:
        assert {m["owned_by"] for m in (await resp.json())["data"]} == {owner}
    async with client.get("/version") as resp:
        assert await resp.json() == {"version": version}


@pytest.mark.parametrize(("style", "first"), [("sglang", "high"), ("vllm", "low")])
async def test_row_4_and_6_priority_scheduling_admits_in_the_engines_direction(
    client: aiohttp.ClientSession, style: str, first: str
) -> None:
    await configure(
        client, slots=1, tokens=20, token_delay=0.01, priority_scheduling=True, server_info=style
    )
    finished = await finish_order(client, [("low", 1), ("high", 10)])
    assert finished == [first, "low" if first == "high" else "high"]


async def test_row_4_sglang_low_first_flips_the_direction(client: aiohttp.ClientSession) -> None:
    await configure(
        client,
        slots=1,
        tokens=20,
        token_delay=0.01,
        priority_scheduling=True,
        server_info="sglang",
        sglang_low_first=True,
    )
    finished = await finish_order(client, [("high", 10), ("low", 1)])
    assert finished == ["low", "high"]


async def test_row_4_without_priority_scheduling_waiters_keep_arrival_order(
    client: aiohttp.ClientSession,
) -> None:
    await configure(client, slots=1, tokens=20, token_delay=0.01, server_info="sglang")
    finished = await finish_order(client, [("low", 1), ("high", 10), ("mid", 5)])
    assert finished == ["low", "high", "mid"]


async def test_row_4_equal_priorities_run_in_arrival_order(client: aiohttp.ClientSession) -> None:
    await configure(
        client, slots=1, tokens=20, token_delay=0.01, priority_scheduling=True, server_info="sglang"
    )
    finished = await finish_order(client, [("a", 5), ("b", 5), ("top", 9), ("c", 5)])
    assert finished == ["top", "a", "b", "c"]


async def test_row_4_sglang_lof_runs_the_longest_output_first_within_a_priority(
    client: aiohttp.ClientSession,
) -> None:
    await configure(
        client,
        slots=1,
        tokens=20,
        token_delay=0.01,
        priority_scheduling=True,
        server_info="sglang",
        sglang_schedule_policy="lof",
    )
    holder = await hold_the_slot(client)
    finished: list[str] = []

    async def run(name: str, priority: int, max_tokens: int) -> None:
        status, _ = await chat(client, priority=priority, max_tokens=max_tokens)
        assert status == 200
        finished.append(name)

    tasks = []
    for count, call in enumerate([("short", 1, 2), ("long", 1, 9), ("urgent", 5, 1)], start=1):
        tasks.append(asyncio.create_task(run(*call)))
        await wait_for_stats(client, waiting=count)
    holder.close()
    await asyncio.gather(*tasks)
    # Arrival order would run "short" before "long".
    assert finished == ["urgent", "long", "short"]


async def test_row_4_a_cache_aware_sglang_policy_ignores_priority(
    client: aiohttp.ClientSession,
) -> None:
    await configure(
        client,
        slots=1,
        tokens=20,
        token_delay=0.01,
        priority_scheduling=True,
        server_info="sglang",
        sglang_schedule_policy="lpm",
    )
    assert await finish_order(client, [("low", 1), ("high", 10)]) == ["low", "high"]


@pytest.mark.parametrize("low_first", [False, True])
async def test_row_5_sglang_runs_requests_without_a_priority_last(
    client: aiohttp.ClientSession, low_first: bool
) -> None:
    await configure(
        client,
        slots=1,
        tokens=20,
        token_delay=0.01,
        priority_scheduling=True,
        server_info="sglang",
        sglang_low_first=low_first,
    )
    worst = 1_000_000 if low_first else -1_000_000
    finished = await finish_order(client, [("none", None), ("worst", worst), ("zero", 0)])
    assert finished == ["zero", "worst", "none"]


async def test_row_6_vllm_counts_a_request_without_a_priority_as_zero(
    client: aiohttp.ClientSession,
) -> None:
    await configure(
        client, slots=1, tokens=20, token_delay=0.01, priority_scheduling=True, server_info="vllm"
    )
    finished = await finish_order(client, [("later", 1), ("none", None), ("sooner", -1)])
    assert finished == ["sooner", "none", "later"]


@pytest.mark.parametrize("style", ["sglang", "none"])
async def test_row_7_a_waiting_stream_has_sent_nothing_until_its_first_chunk(
    client: aiohttp.ClientSession, sim: SimServer, style: str
) -> None:
    await configure(client, server_info=style, slots=0, tokens=3)
    reader, writer = await raw_post(sim.url, {"stream": True})
    try:
        await wait_for_stats(client, waiting=1)
        assert await read_for(reader, 0.3) == b""
        await configure(client, slots=1)
        head = await reader.readuntil(b"\r\n\r\n")
        assert head.startswith(b"HTTP/1.1 200 OK\r\n")
        assert b"content-type: text/event-stream" in head
        assert b'"content":"tok0 "' in await reader.readuntil(b"\n\n")
    finally:
        writer.close()


async def test_row_8_a_vllm_stream_answers_200_before_it_is_admitted(
    client: aiohttp.ClientSession, sim: SimServer
) -> None:
    await configure(client, server_info="vllm", slots=0, tokens=3)
    reader, writer = await raw_post(sim.url, {"stream": True})
    try:
        head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), 5)
        assert head.startswith(b"HTTP/1.1 200 OK\r\n")
        assert (await stats(client))["waiting"] == 1
        await configure(client, slots=1)
        assert b'"content":"tok0 "' in await reader.readuntil(b"\n\n")
    finally:
        writer.close()


SGLANG_QUEUE_FULL = {
    "object": "error",
    "message": QUEUE_FULL,
    "type": "503",
    "param": None,
    "code": 503,
}


async def test_row_9_a_full_queue_refuses_the_arrival_with_sglangs_503(
    client: aiohttp.ClientSession,
) -> None:
    await configure(client, server_info="sglang", slots=0, max_queued_requests=1)
    first = asyncio.create_task(chat(client))
    await wait_for_stats(client, waiting=1)

    assert await chat(client) == (503, SGLANG_QUEUE_FULL)

    current = await stats(client)
    assert (current["waiting"], current["rejected"]) == (1, 1)
    await configure(client, slots=1)
    assert (await first)[0] == 200


async def test_row_9_a_better_arrival_evicts_the_newest_of_the_lowest_waiters(
    client: aiohttp.ClientSession,
) -> None:
    await configure(
        client, server_info="sglang", slots=0, max_queued_requests=2, priority_scheduling=True
    )
    old_low = asyncio.create_task(chat(client, priority=1, max_tokens=1))
    await wait_for_stats(client, waiting=1)
    new_low = asyncio.create_task(chat(client, priority=1, max_tokens=1))
    await wait_for_stats(client, waiting=2)

    high = asyncio.create_task(chat(client, priority=5, max_tokens=1))

    status, body = await new_low
    assert (status, body["message"], body["code"]) == (503, EVICTED, 503)
    await wait_for_stats(client, waiting=2, evicted=1)
    # Only a strictly better arrival evicts: an equal one, or one without a priority, is refused.
    assert await chat(client, priority=1) == (503, SGLANG_QUEUE_FULL)
    assert await chat(client) == (503, SGLANG_QUEUE_FULL)
    await configure(client, slots=1)
    assert [(await task)[0] for task in (high, old_low)] == [200, 200]
    async with client.get("/sim/requests") as resp:
        records = await resp.json()
    finished = sorted((r for r in records if r["status"] == 200), key=lambda r: r["finished"])
    assert [r["body"]["priority"] for r in finished] == [5, 1]


@pytest.mark.parametrize(
    ("style", "version", "body"),
    [
        (
            "none",
            "0.33.0",
            {
                "error": {
                    "message": "Injected failure 503",
                    "type": "server_error",
                    "param": None,
                    "code": "sim_injected_failure",
                }
            },
        ),
        (
            "sglang",
            "0.33.0",
            {
                "object": "error",
                "message": "Injected failure 503",
                "type": "503",
                "param": None,
                "code": 503,
            },
        ),
        (
            "vllm",
            "0.33.0",
            {
                "error": {
                    "message": "Injected failure 503",
                    "type": "ServiceUnavailableError",
                    "param": None,
                    "code": 503,
                }
            },
        ),
        (
            "vllm",
            "0.10.0",
            {
                "object": "error",
                "message": "Injected failure 503",
                "type": "ServiceUnavailableError",
                "param": None,
                "code": 503,
            },
        ),
    ],
)
async def test_row_10_an_error_body_takes_the_imitated_engines_shape(
    client: aiohttp.ClientSession, style: str, version: str, body: dict[str, Any]
) -> None:
    await configure(client, server_info=style, vllm_version=version, fail_next=1)
    assert await chat(client) == (503, body)


async def stream_events(client: aiohttp.ClientSession, **body: Any) -> tuple[int, list[str]]:
    async with client.post(
        "/v1/chat/completions",
        json={"model": "sim-small", "messages": HELLO, "stream": True, **body},
    ) as resp:
        return resp.status, [data for _, data in await sse_events(resp)]


async def test_row_11_a_refused_stream_is_200_one_error_event_then_done(
    client: aiohttp.ClientSession,
) -> None:
    await configure(client, server_info="sglang", slots=0, max_queued_requests=0)
    status, events = await stream_events(client)
    assert status == 200
    assert [json.loads(events[0]), events[1:]] == [
        {
            "error": {
                "object": "error",
                "message": QUEUE_FULL,
                "type": "SERVICE_UNAVAILABLE",
                "param": None,
                "code": 503,
            }
        },
        ["[DONE]"],
    ]


async def test_row_11_an_evicted_stream_ends_the_same_way(client: aiohttp.ClientSession) -> None:
    await configure(
        client, server_info="sglang", slots=0, max_queued_requests=1, priority_scheduling=True
    )
    low = asyncio.create_task(stream_events(client, priority=1))
    await wait_for_stats(client, waiting=1)
    high = asyncio.create_task(chat(client, priority=2, max_tokens=1))
    status, events = await low
    assert status == 200
    assert json.loads(events[0])["error"]["message"] == EVICTED
    assert events[1:] == ["[DONE]"]
    await configure(client, slots=1)
    assert (await high)[0] == 200


async def test_row_19_without_stream_usage_no_stream_ends_with_usage_whatever_it_asks(
    client: aiohttp.ClientSession,
) -> None:
    await configure(client, stream_usage=False, token_delay=0)
    asked = {"stream": True, "stream_options": {"include_usage": True}}
    for path, body in (
        ("/v1/chat/completions", {"messages": HELLO}),
        ("/v1/completions", {"prompt": "once upon a time"}),
    ):
        async with client.post(path, json={"model": "sim-small", **body, **asked}) as resp:
            events = [data for _, data in await sse_events(resp)]
        assert events[-1] == "[DONE]"
        chunks = [json.loads(data) for data in events[:-1]]
        assert len(chunks) == 5  # four tokens and the finish
        assert all(c["choices"] and "usage" not in c for c in chunks)
    # A whole answer still says what it used, as llama-cpp-python's does.
    status, answer = await chat(client)
    assert (status, answer["usage"]["completion_tokens"]) == (200, 4)


# ----- what the engine has open ----------------------------------------------------------------


async def test_open_counts_generation_requests_from_their_body_to_their_last_byte(
    client: aiohttp.ClientSession,
) -> None:
    await configure(client, slots=0)
    waiters = [asyncio.create_task(chat(client)) for _ in range(2)]
    current = await wait_for_stats(client, waiting=2)
    assert (current["open"], current["max_open_seen"]) == (2, 2)
    # A refused request is open until its answer went too; listing models is not generation.
    assert (await chat(client, model="nope"))[0] == 404
    async with client.get("/v1/models") as resp:
        assert resp.status == 200
    assert ((await stats(client))["open"], (await stats(client))["max_open_seen"]) == (2, 3)

    await configure(client, slots=2)
    assert [(await w)[0] for w in waiters] == [200, 200]
    current = await wait_for_stats(client, open=0)
    assert current["max_open_seen"] == 3
    async with client.post("/sim/reset") as resp:
        assert (await resp.json())["max_open_seen"] == 0


def request_bytes(body: dict[str, Any]) -> bytes:
    data = json.dumps({"model": "sim-small", **body}).encode()
    return (
        b"POST /v1/chat/completions HTTP/1.1\r\nHost: sim\r\nContent-Type: application/json\r\n"
        b"Content-Length: %d\r\n\r\n" % len(data)
    ) + data


def test_a_client_that_leaves_is_not_counted_with_the_request_sent_right_after_it(
    sim: SimServer, control: httpx.Client
) -> None:
    control.post("/sim/config", json={"slots": 4, "tokens": 100_000, "token_delay": 0.001})
    leaving = request_bytes({"messages": HELLO, "stream": True})
    arriving = request_bytes({"messages": HELLO, "max_tokens": 1})
    address = (sim.host, sim.port)
    for _ in range(200):
        first = socket.create_connection(address)
        # Connected before the first one leaves, so only its request bytes follow the FIN.
        second = socket.create_connection(address)
        first.sendall(leaving)
        seen = b""
        while b"data: " not in seen:
            seen += first.recv(65536)
        control.post("/sim/reset").raise_for_status()
        first.close()
        second.sendall(arriving)
        answer = b""
        while b'"usage"' not in answer:
            answer += second.recv(65536)
        second.close()
        current = control.get("/sim/stats").json()
        assert current["max_open_seen"] == 1, current
        deadline = time.monotonic() + 5
        while control.get("/sim/stats").json()["open"]:
            assert time.monotonic() < deadline
            time.sleep(0.001)


def test_behind_a_one_slot_gateway_the_engine_never_sees_two_requests_at_once(
    gateway: Any, make_sim: Any
) -> None:
    from tests.support.drive import HTTP, chat, open_raw, wait_idle, wait_until
    from tests.support.factories import make_token_with_secret, make_user
    from tests.support.live import add_backend

    key = make_token_with_secret(make_user("alice"), name="laptop")[1]
    engine = make_sim(slots=4, tokens=100_000, token_delay=0.001)
    add_backend("solo", engine.url, max_inflight=1)
    with ThreadPoolExecutor(max_workers=1) as pool:
        for i in range(300):
            leaver = open_raw(gateway, key, f"leaver-{i}", stream=True)
            seen = b""
            while b"data: " not in seen:
                seen += leaver.recv(65536)
            waiter = pool.submit(chat, gateway, key, f"waiter-{i}", max_tokens=1)
            wait_until(lambda: gateway.runtime.queue.waiting == 1, "the next request waits")
            leaver.close()  # frees the gateway's only slot for the waiter at once
            assert waiter.result().status_code == 200
            wait_idle(gateway, "solo")
    current = HTTP.get(engine.url + "/sim/stats").json()
    assert current["max_open_seen"] == 1, current
    assert current["cancelled"] == 300
