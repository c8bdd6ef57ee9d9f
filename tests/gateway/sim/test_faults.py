"""Faults on purpose: each [[sim:...]] and [[wire:...]] directive does exactly what it says.

Every answer is read off a bare socket (or aiohttp where the client's view is the point), so what
is checked is what a gateway would receive: the bytes, the status line, how the connection ends.
"""

from __future__ import annotations

import asyncio
import json
import socket
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Iterator
from dataclasses import asdict
from typing import Any
from urllib.parse import urlsplit

import aiohttp
import httpx
import pytest

from gateway.sim import faults
from gateway.sim.config import EVICTED, QUEUE_FULL, SimConfig
from gateway.sim.faults import FaultProxy
from gateway.sim.server import SimServer

BASE = SimConfig(tokens=4, token_delay=0.0, directives=True)


@pytest.fixture(scope="module")
def sim() -> Iterator[SimServer]:
    with SimServer(SimConfig(**asdict(BASE))) as server:
        yield server


@pytest.fixture(scope="module")
def proxy(sim: SimServer) -> Iterator[FaultProxy]:
    with FaultProxy(sim.url) as relay:
        yield relay


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


def configure(control: httpx.Client, **changes: Any) -> None:
    control.post("/sim/config", json=changes).raise_for_status()


def stats(control: httpx.Client) -> dict[str, int]:
    result: dict[str, int] = control.get("/sim/stats").json()
    return result


async def settle(control: httpx.Client, **expected: int) -> dict[str, int]:
    """Wait for the engine's stats, letting this test's own loop run (closing its sockets)."""
    deadline = time.monotonic() + 5
    while True:
        current = stats(control)
        if all(current[k] == v for k, v in expected.items()):
            return current
        assert time.monotonic() < deadline, f"stats stayed {current}, wanted {expected}"
        await asyncio.sleep(0.005)


def say(text: str, **body: Any) -> dict[str, Any]:
    """A chat body whose last (only) message is `text` followed by an ordinary prompt."""
    return {"model": "sim-small", "messages": [{"role": "user", "content": f"{text} hi"}], **body}


async def raw(
    url: str, body: dict[str, Any], path: str = "/v1/chat/completions"
) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
    """POST `body` on a bare connection and return it unread."""
    parts = urlsplit(url)
    reader, writer = await asyncio.open_connection(parts.hostname, parts.port)
    data = json.dumps(body).encode()
    writer.write(
        f"POST {path} HTTP/1.1\r\nHost: sim\r\nContent-Type: application/json\r\n".encode()
        + b"Content-Length: %d\r\n\r\n" % len(data)
        + data
    )
    await writer.drain()
    return reader, writer


async def read_to_end(reader: asyncio.StreamReader) -> bytes:
    """Everything until the server closes the connection."""
    return await asyncio.wait_for(reader.read(), 10)


async def read_answer(reader: asyncio.StreamReader) -> bytes:
    """One answer with a content-length: its head and exactly its body."""
    head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), 10)
    length = int(split_head(head)[1][b"content-length"])
    return head + await asyncio.wait_for(reader.readexactly(length), 10)


async def read_for(reader: asyncio.StreamReader, seconds: float) -> bytes:
    """Whatever arrives within `seconds` (b"" when nothing does)."""
    try:
        return await asyncio.wait_for(reader.read(65536), seconds)
    except TimeoutError:
        return b""


def split_head(data: bytes) -> tuple[bytes, dict[bytes, bytes], bytes]:
    head, _, body = data.partition(b"\r\n\r\n")
    line, *lines = head.split(b"\r\n")
    headers = {k.strip().lower(): v.strip() for k, _, v in (h.partition(b":") for h in lines)}
    return line, headers, body


def dechunk(body: bytes) -> tuple[bytes, bool]:
    """The payload of a chunked body, and whether it ended with the terminating chunk."""
    out = b""
    while body:
        size_line, _, body = body.partition(b"\r\n")
        size = int(size_line, 16)
        if size == 0:
            return out, True
        out, body = out + body[:size], body[size + 2 :]
    return out, False


async def chat(
    client: aiohttp.ClientSession, body: dict[str, Any], path: str = "/v1/chat/completions"
) -> tuple[int, Any]:
    async with client.post(path, json=body) as resp:
        text = await resp.text()
        try:
            return resp.status, json.loads(text)
        except ValueError:
            return resp.status, text


# ----- the directive ---------------------------------------------------------------------------


def test_directives_are_parsed_from_the_start_of_the_text_only() -> None:
    assert faults.parse("[[sim:cut after=3]] tell me") == {
        "sim": faults.Directive("sim", "cut", {"after": "3"})
    }
    both = faults.parse("[[wire:stall after=9]][[sim:slow delay=0.5]]x")
    assert (both["wire"].fault, both["sim"].args) == ("stall", {"delay": "0.5"})
    assert faults.parse("tell me about [[sim:reset]]") == {}
    assert faults.parse("[[other:thing]] is a prompt") == {}


@pytest.mark.parametrize(
    "text",
    [
        "[[sim:explode]]",
        "[[sim:cut after=3",
        "[[sim:cut when=3]]",
        "[[sim:cut after=1 after=2]]",
        "[[sim:reset]][[sim:hang]]",
        "[[wire:cut]]",
    ],
)
def test_a_malformed_directive_is_refused(text: str) -> None:
    with pytest.raises(faults.DirectiveError):
        faults.parse(text)


def test_the_directive_is_read_from_the_last_message_the_prompt_or_the_first_input() -> None:
    last = {"messages": [{"content": "[[sim:reset]]"}, {"content": "[[sim:hang]] x"}]}
    parts = {"messages": [{"content": [{"type": "text", "text": "[[sim:hang]]"}]}]}
    assert faults.find(last, "sim") == faults.Directive("sim", "hang")
    assert faults.find(parts, "sim") == faults.Directive("sim", "hang")
    assert (
        faults.find({"messages": [{"content": "[[sim:reset]]"}, {"content": "x"}]}, "sim") is None
    )
    assert faults.find({"prompt": ["[[sim:reset]]", "x"]}, "sim") == faults.Directive(
        "sim", "reset"
    )
    assert faults.find({"input": "[[sim:reset]]"}, "sim") == faults.Directive("sim", "reset")
    assert faults.find({"input": "[[sim:reset]]"}, "wire") is None


# ----- faults the sim answers itself -----------------------------------------------------------


async def test_without_directives_on_a_directive_is_just_prompt_text(
    client: aiohttp.ClientSession, control: httpx.Client
) -> None:
    configure(control, directives=False)
    status, body = await chat(client, say("[[sim:reset]]"))
    assert status == 200
    assert body["choices"][0]["message"]["content"] == "tok0 tok1 tok2 tok3 "
    assert control.get("/sim/requests").json()[-1]["fault"] is None


@pytest.mark.parametrize(
    ("shape", "body"),
    [
        (
            "openai",
            {
                "error": {
                    "message": "Injected failure 502",
                    "type": "server_error",
                    "param": None,
                    "code": "sim_fault",
                }
            },
        ),
        (
            "sglang",
            {
                "object": "error",
                "message": "Injected failure 502",
                "type": "502",
                "param": None,
                "code": 502,
            },
        ),
        (
            "vllm-flat",
            {
                "object": "error",
                "message": "Injected failure 502",
                "type": "BadGatewayError",
                "param": None,
                "code": 502,
            },
        ),
        (
            "vllm",
            {
                "error": {
                    "message": "Injected failure 502",
                    "type": "BadGatewayError",
                    "param": None,
                    "code": 502,
                }
            },
        ),
    ],
)
async def test_status_answers_that_status_in_the_shape_asked_for(
    client: aiohttp.ClientSession, shape: str, body: dict[str, Any]
) -> None:
    assert await chat(client, say(f"[[sim:status code=502 shape={shape}]]")) == (502, body)


async def test_status_takes_the_imitated_engines_shape_by_default(
    client: aiohttp.ClientSession, control: httpx.Client
) -> None:
    configure(control, server_info="sglang")
    status, body = await chat(client, say("[[sim:status code=500]]"))
    assert (status, body["object"], body["code"]) == (500, "error", 500)


@pytest.mark.parametrize("code", [401, 403])
async def test_401_and_403_come_before_any_byte_of_a_stream_too(sim: SimServer, code: int) -> None:
    reader, writer = await raw(sim.url, say(f"[[sim:status code={code}]]", stream=True))
    line, headers, body = split_head(await read_answer(reader))
    writer.close()
    assert line.startswith(b"HTTP/1.1 %d " % code)
    assert headers[b"content-type"] == b"application/json"
    assert json.loads(body)["error"]["message"] == f"Injected failure {code}"


async def test_html_is_an_html_error_page(client: aiohttp.ClientSession) -> None:
    async with client.post("/v1/chat/completions", json=say("[[sim:html code=502]]")) as resp:
        assert resp.status == 502
        assert resp.headers["content-type"] == "text/html; charset=utf-8"
        page = await resp.text()
    assert page.startswith("<html>")
    assert "<h1>502 Bad Gateway</h1>" in page


async def test_redirect_is_a_3xx_with_a_location_and_no_body(
    client: aiohttp.ClientSession,
) -> None:
    body = say("[[sim:redirect code=307 location=http://elsewhere.test/v1]]")
    async with client.post("/v1/chat/completions", json=body, allow_redirects=False) as resp:
        assert resp.status == 307
        assert resp.headers["location"] == "http://elsewhere.test/v1"
        assert await resp.read() == b""


@pytest.mark.parametrize(("fault", "message"), [("queue-full", QUEUE_FULL), ("evicted", EVICTED)])
async def test_queue_full_and_evicted_are_sglangs_refusals(
    client: aiohttp.ClientSession, fault: str, message: str
) -> None:
    status, body = await chat(client, say(f"[[sim:{fault} shape=sglang]]"))
    assert (status, body) == (
        503,
        {"object": "error", "message": message, "type": "503", "param": None, "code": 503},
    )
    async with client.post(
        "/v1/chat/completions", json=say(f"[[sim:{fault} shape=sglang]]", stream=True)
    ) as resp:
        assert resp.status == 200
        assert resp.headers["content-type"] == "text/event-stream"
        text = await resp.text()
    event, done, rest = text.split("\n\n")
    assert json.loads(event.removeprefix("data: "))["error"]["type"] == "SERVICE_UNAVAILABLE"
    assert (done, rest) == ("data: [DONE]", "")


async def test_the_generic_sim_names_its_refusals_in_openais_envelope(
    client: aiohttp.ClientSession,
) -> None:
    for fault, code in (("queue-full", "queue_full"), ("evicted", "evicted")):
        status, body = await chat(client, say(f"[[sim:{fault}]]"))
        assert (status, body["error"]["code"], body["error"]["type"]) == (503, code, "server_error")


@pytest.mark.parametrize("stream", [False, True])
async def test_hang_sends_nothing_until_the_client_leaves(
    sim: SimServer, control: httpx.Client, stream: bool
) -> None:
    reader, writer = await raw(sim.url, say("[[sim:hang]]", stream=stream))
    assert await read_for(reader, 0.3) == b""
    assert stats(control)["open"] == 1
    writer.close()
    await settle(control, open=0, cancelled=1)


async def test_hang_mid_stops_a_stream_after_n_events(
    sim: SimServer, control: httpx.Client
) -> None:
    reader, writer = await raw(sim.url, say("[[sim:hang-mid after=2]]", stream=True))
    data = b""
    while data.count(b"data: ") < 2:
        data += await asyncio.wait_for(reader.read(65536), 5)
    assert await read_for(reader, 0.3) == b""
    _, headers, body = split_head(data)
    events, ended = dechunk(body)
    assert headers[b"transfer-encoding"] == b"chunked"
    assert not ended
    assert [e.count(b"tok") for e in events.split(b"\n\n") if e] == [1, 1]
    writer.close()
    await settle(control, open=0, cancelled=1)


async def test_hang_mid_stops_a_whole_answer_after_n_bytes(
    sim: SimServer, control: httpx.Client
) -> None:
    reader, writer = await raw(sim.url, say("[[sim:hang-mid after=10]]"))
    head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), 5)
    body = await asyncio.wait_for(reader.readexactly(10), 5)
    assert await read_for(reader, 0.3) == b""
    _, headers, _ = split_head(head)
    assert body == b'{"id":"cha'
    assert int(headers[b"content-length"]) > 10
    writer.close()
    await settle(control, open=0, cancelled=1)


async def test_slow_spaces_the_tokens_out(client: aiohttp.ClientSession) -> None:
    arrivals = []
    async with client.post(
        "/v1/chat/completions", json=say("[[sim:slow delay=0.05]]", stream=True)
    ) as resp:
        async for line in resp.content:
            if line.startswith(b"data: "):
                arrivals.append(time.monotonic())
    # Four tokens, three gaps of 50 ms between them: a client late by 50 ms still sees 100.
    assert arrivals[3] - arrivals[0] >= 0.1


async def test_bad_json_is_a_200_whose_body_is_not_json(client: aiohttp.ClientSession) -> None:
    async with client.post("/v1/chat/completions", json=say("[[sim:bad-json]]")) as resp:
        assert resp.status == 200
        assert resp.headers["content-type"] == "application/json"
        text = await resp.text()
    with pytest.raises(ValueError):
        json.loads(text)


async def test_garbage_puts_a_line_that_is_not_sse_into_the_stream(sim: SimServer) -> None:
    reader, writer = await raw(sim.url, say("[[sim:garbage after=1]]", stream=True))
    events, ended = dechunk(split_head(await read_to_end_or_done(reader))[2])
    writer.close()
    first, garbage, *rest = events.split(b"\n\n")
    assert b"tok0" in first
    assert garbage == b"\xfe\xff not an event \xff"
    assert b"tok1" in rest[0]
    assert rest[-2:] == [b"data: [DONE]", b""]
    assert ended


async def read_to_end_or_done(reader: asyncio.StreamReader) -> bytes:
    """A chunked answer up to its terminating chunk (the connection stays open for more)."""
    data = b""
    while not data.endswith(b"0\r\n\r\n"):
        chunk = await asyncio.wait_for(reader.read(65536), 5)
        if not chunk:
            break
        data += chunk
    return data


async def test_no_blank_runs_one_event_into_the_next(sim: SimServer) -> None:
    reader, writer = await raw(sim.url, say("[[sim:no-blank after=1]]", stream=True))
    events, _ = dechunk(split_head(await read_to_end_or_done(reader))[2])
    writer.close()
    blocks = events.split(b"\n\n")
    assert blocks[0].count(b"data: ") == 1
    # The second token's event lost its blank line: it and the third form one SSE event.
    assert blocks[1].count(b"data: ") == 2
    assert b"tok1" in blocks[1] and b"tok2" in blocks[1]
    assert blocks[-2:] == [b"data: [DONE]", b""]


async def test_garbage_and_no_blank_need_a_stream(client: aiohttp.ClientSession) -> None:
    for fault in ("garbage", "no-blank"):
        status, body = await chat(client, say(f"[[sim:{fault}]]"))
        assert (status, body["error"]["code"]) == (400, "invalid_sim_directive")


async def test_cut_drops_a_stream_after_n_events(sim: SimServer, control: httpx.Client) -> None:
    reader, writer = await raw(sim.url, say("[[sim:cut after=2]]", stream=True))
    data = await read_to_end(reader)
    writer.close()
    events, ended = dechunk(split_head(data)[2])
    assert not ended
    assert [e.count(b"tok") for e in events.split(b"\n\n") if e] == [1, 1]
    await settle(control, open=0)


async def test_cut_stream_is_a_broken_payload_to_aiohttp(client: aiohttp.ClientSession) -> None:
    async with client.post(
        "/v1/chat/completions", json=say("[[sim:cut after=1]]", stream=True)
    ) as resp:
        assert resp.status == 200
        with pytest.raises(aiohttp.ClientPayloadError):
            await resp.read()


async def test_cut_drops_a_whole_answer_short_of_its_content_length(
    sim: SimServer, control: httpx.Client
) -> None:
    reader, writer = await raw(sim.url, say("[[sim:cut after=7]]"))
    data = await read_to_end(reader)
    writer.close()
    line, headers, body = split_head(data)
    assert line.startswith(b"HTTP/1.1 200 ")
    assert len(body) == 7
    assert int(headers[b"content-length"]) > 7
    # Without `after`, half of the answer.
    reader, writer = await raw(sim.url, say("[[sim:cut]]"))
    _, headers, body = split_head(await read_to_end(reader))
    writer.close()
    assert len(body) == int(headers[b"content-length"]) // 2
    await settle(control, open=0)


@pytest.mark.parametrize("stream", [False, True])
async def test_reset_drops_the_connection_before_any_byte(
    sim: SimServer, control: httpx.Client, stream: bool
) -> None:
    reader, writer = await raw(sim.url, say("[[sim:reset]]", stream=stream))
    assert await read_to_end(reader) == b""
    writer.close()
    await settle(control, open=0)


async def test_embeddings_take_the_faults_of_a_whole_answer(
    client: aiohttp.ClientSession, sim: SimServer
) -> None:
    body = {"model": "sim-small", "input": "[[sim:status code=429 shape=vllm]] text"}
    status, error = await chat(client, body, "/v1/embeddings")
    assert (status, error["error"]["code"]) == (429, 429)
    reader, writer = await raw(
        sim.url, {"model": "sim-small", "input": ["[[sim:cut after=5]] a", "b"]}, "/v1/embeddings"
    )
    assert len(split_head(await read_to_end(reader))[2]) == 5
    writer.close()


async def test_a_completions_prompt_carries_a_directive(client: aiohttp.ClientSession) -> None:
    body = {"model": "sim-small", "prompt": "[[sim:status code=504]] once upon a time"}
    assert (await chat(client, body, "/v1/completions"))[0] == 504


@pytest.mark.parametrize(
    "text",
    [
        "[[sim:explode]]",
        "[[sim:status code=200]]",
        "[[sim:status code=500 shape=tgi]]",
        "[[sim:slow delay=soon]]",
        "[[sim:cut after=-1]]",
    ],
)
async def test_a_bad_directive_is_a_400_and_nothing_else_happens(
    client: aiohttp.ClientSession, control: httpx.Client, text: str
) -> None:
    status, body = await chat(client, say(text))
    assert (status, body["error"]["code"]) == (400, "invalid_sim_directive")
    assert stats(control)["open"] == 0


async def test_every_fault_frees_what_it_held(
    client: aiohttp.ClientSession, control: httpx.Client
) -> None:
    configure(control, slots=1, tokens=3)
    for stream in (False, True):
        for text in ("[[sim:cut after=1]]", "[[sim:reset]]"):
            with pytest.raises(aiohttp.ClientError):
                await chat(client, say(text, stream=stream))
        assert (await chat(client, say("[[sim:status code=503]]", stream=stream)))[0] == 503
    current = await settle(control, open=0, inflight=0, waiting=0)
    assert current["max_inflight_seen"] == 1
    assert (await chat(client, say("plain")))[0] == 200


# ----- faults on the wire: the proxy -----------------------------------------------------------


async def test_without_a_directive_the_proxy_is_a_transparent_relay(
    proxy: FaultProxy, control: httpx.Client
) -> None:
    async with aiohttp.ClientSession(base_url=proxy.url) as session:
        async with session.get("/v1/models") as resp:
            assert resp.status == 200
            assert resp.headers["connection"] == "close"
            assert [m["id"] for m in (await resp.json())["data"]] == ["sim-small", "sim-large"]
        status, body = await chat(session, say("plain"))
        assert (status, body["choices"][0]["message"]["content"]) == (200, "tok0 tok1 tok2 tok3 ")
        async with session.post("/v1/chat/completions", json=say("s", stream=True)) as resp:
            assert (await resp.text()).endswith("data: [DONE]\n\n")
    # The engine saw both posts (its own directives pass through untouched, too).
    assert [r["path"] for r in control.get("/sim/requests").json()][-2:] == [
        "/v1/chat/completions",
        "/v1/chat/completions",
    ]


async def test_a_client_leaving_the_proxy_is_a_disconnect_at_the_engine(
    proxy: FaultProxy, control: httpx.Client
) -> None:
    configure(control, tokens=100_000, token_delay=0.01)
    reader, writer = await raw(proxy.url, say("long", stream=True))
    assert b"data: " in await asyncio.wait_for(reader.readuntil(b"data: "), 5)
    writer.close()
    await settle(control, open=0, cancelled=1)


@pytest.mark.parametrize("code", [999, 0, 600])
async def test_a_wire_status_outside_100_to_599_reaches_the_client(
    proxy: FaultProxy, code: int
) -> None:
    reader, writer = await raw(proxy.url, say(f"[[wire:status code={code}]]"))
    line, _, body = split_head(await read_to_end(reader))
    writer.close()
    assert line == b"HTTP/1.1 %d Unknown" % code
    assert json.loads(body)["choices"][0]["message"]["content"] == "tok0 tok1 tok2 tok3 "


async def test_wire_and_sim_directives_combine(proxy: FaultProxy) -> None:
    reader, writer = await raw(proxy.url, say("[[wire:status code=999]][[sim:status code=503]]"))
    line, _, body = split_head(await read_to_end(reader))
    writer.close()
    assert line == b"HTTP/1.1 999 Unknown"
    assert json.loads(body)["error"]["message"] == "Injected failure 503"


async def test_wire_chunked_breaks_the_framing_after_the_first_chunk_and_holds_on(
    proxy: FaultProxy,
) -> None:
    reader, writer = await raw(proxy.url, say("[[wire:chunked]]", stream=True))
    data = b""
    while not data.endswith(b"zz\r\n"):
        data += await asyncio.wait_for(reader.read(65536), 5)
    assert await read_for(reader, 0.3) == b""
    writer.close()
    _, headers, body = split_head(data)
    assert headers[b"transfer-encoding"] == b"chunked"
    size, _, rest = body.partition(b"\r\n")
    assert rest[int(size, 16) :] == b"\r\nzz\r\n"
    assert rest.startswith(b"data: ") and b"tok0" in rest


async def test_wire_chunked_reframes_a_json_answer_to_break_it(proxy: FaultProxy) -> None:
    reader, writer = await raw(proxy.url, say("[[wire:chunked after=1]]"))
    data = b""
    while not data.endswith(b"zz\r\n"):
        data += await asyncio.wait_for(reader.read(65536), 5)
    writer.close()
    _, headers, body = split_head(data)
    assert b"content-length" not in headers
    assert headers[b"transfer-encoding"] == b"chunked"
    size, _, rest = body.partition(b"\r\n")
    assert json.loads(rest[: int(size, 16)])["object"] == "chat.completion"


def test_wire_reset_sends_n_bytes_then_a_tcp_reset(proxy: FaultProxy) -> None:
    data = json.dumps(say("[[wire:reset after=20]]")).encode()
    with socket.create_connection((proxy.host, proxy.port), timeout=5) as sock:
        sock.sendall(
            b"POST /v1/chat/completions HTTP/1.1\r\nHost: p\r\nContent-Type: application/json\r\n"
            b"Content-Length: %d\r\n\r\n" % len(data) + data
        )
        got = b""
        with pytest.raises(ConnectionResetError):
            while chunk := sock.recv(65536):
                got += chunk
    assert got == b"HTTP/1.1 200 OK\r\ndat"  # uvicorn's head starts with its date header


async def test_wire_stall_sends_n_bytes_then_nothing_while_the_engine_stays_connected(
    proxy: FaultProxy, control: httpx.Client
) -> None:
    configure(control, tokens=100_000, token_delay=0.001)
    reader, writer = await raw(proxy.url, say("[[wire:stall after=12]]", stream=True))
    data = b""
    while len(data) < 12:
        data += await asyncio.wait_for(reader.read(65536), 5)
    assert await read_for(reader, 0.3) == b""
    assert data == b"HTTP/1.1 200"
    assert stats(control)["open"] == 1  # the engine is still streaming into the stall
    writer.close()
    await settle(control, open=0, cancelled=1)


async def test_a_bad_wire_directive_is_a_400_from_the_proxy(
    proxy: FaultProxy, control: httpx.Client
) -> None:
    async with aiohttp.ClientSession(base_url=proxy.url) as session:
        status, body = await chat(session, say("[[wire:status code=lots]]"))
        assert (status, body["error"]["code"]) == (400, "invalid_wire_directive")
        status, body = await chat(session, say("[[wire:teleport]]"))
        assert (status, body["error"]["code"]) == (400, "invalid_wire_directive")
    assert stats(control)["total"] == 0  # refused before anything was forwarded


def test_a_chunked_request_body_is_not_relayed(proxy: FaultProxy, control: httpx.Client) -> None:
    with socket.create_connection((proxy.host, proxy.port), timeout=5) as sock:
        sock.sendall(
            b"POST /v1/chat/completions HTTP/1.1\r\nHost: p\r\nTransfer-Encoding: chunked\r\n\r\n"
            b"2\r\n{}\r\n0\r\n\r\n"
        )
        answer = b""
        while chunk := sock.recv(65536):
            answer += chunk
    line, _, body = split_head(answer)
    assert line == b"HTTP/1.1 501 Not Implemented"
    assert json.loads(body)["error"]["code"] == "not_relayed"
    assert stats(control)["total"] == 0


def test_the_proxy_runs_from_the_command_line(sim: SimServer) -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    # A fixed argument list of our own module: nothing untrusted reaches the command.
    process = subprocess.Popen(  # noqa: S603
        [sys.executable, "-m", "gateway.sim.faults", "--upstream", sim.url, "--port", str(port)],
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 10
        while True:
            try:
                response = httpx.get(f"http://127.0.0.1:{port}/health")
                break
            except httpx.ConnectError:
                assert time.monotonic() < deadline and process.poll() is None
                time.sleep(0.02)
        assert (response.status_code, response.text) == (200, "{}")
    finally:
        process.terminate()
        process.wait(5)
