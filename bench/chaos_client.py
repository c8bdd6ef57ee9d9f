"""The chaos run's client: sends one planned request over a raw socket and judges its answer.

A raw HTTP/1.1 client rather than a library one, because the judgement is about framing: whether
a chunked body ended with its last chunk or the connection broke first, whether an event stream
ended with `data: [DONE]`, what exactly the status line and headers said. It also lets a client
misbehave on purpose: leave, stop reading with a tiny receive buffer, send half a body.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import socket
import struct
from dataclasses import dataclass, field
from typing import Any

from bench.chaos_plan import (
    BROKEN,
    EVENT,
    HALF_BODY,
    LEAVE,
    LEAVE_MID,
    LEFT,
    OK,
    SLOW_BODY,
    STALL,
    STALL_FOREVER,
    Call,
)

ENVELOPE_KEYS = {"message", "type", "param", "code"}
INJECTED = "Injected failure"  # the engines' text for a failure asked of them (a replica blip)


@dataclass(frozen=True, slots=True)
class Bounds:
    """The gateway's timeouts, as configured for the run (seconds)."""

    first_byte: float
    idle: float
    budget: float
    stalled_client: float
    deadline: float  # a client waiting longer than this for an answer calls it a hang


@dataclass(slots=True)
class Observation:
    """What the client saw, before any judgement."""

    status: int | None = None
    reason: str = ""
    headers: dict[str, str] = field(default_factory=dict)
    body: bytearray = field(default_factory=bytearray)
    complete: bool = False  # the body's framing ended properly
    left: bool = False  # the client went away on purpose
    hung: bool = False  # nothing (or not all) within the deadline
    failure: str = ""  # how the connection ended when it did not end well
    elapsed: float = 0.0


@dataclass(frozen=True, slots=True)
class Verdict:
    kind: str  # the answer's name (see bench/chaos_plan.py); "hung" or "dropped" are never fine
    tag: str  # "", or why an answer outside the fault's own set is fine: "timing", "blip"
    problems: tuple[str, ...]
    error: dict[str, Any] | None = None  # the envelope's error, when there is one


# ----- sending ---------------------------------------------------------------------------


def request_bytes(call: Call, host: str, port: int, token: str | None) -> tuple[bytes, bytes]:
    """(head, body) of the call's request."""
    body = call.body if call.method == "POST" else b""
    lines = [f"{call.method} {call.path} HTTP/1.1", f"Host: {host}:{port}", "Connection: close"]
    if token is not None:
        lines.append(f"Authorization: Bearer {token}")
    if call.method == "POST":
        lines += ["Content-Type: application/json", f"Content-Length: {len(body)}"]
    lines += [f"{k}: {v}" for k, v in call.headers]
    return ("\r\n".join(lines) + "\r\n\r\n").encode(), body


async def perform(
    call: Call, host: str, port: int, token: str | None, bounds: Bounds
) -> Observation:
    """Send the call as its client behaves and observe the answer."""
    obs = Observation()
    loop = asyncio.get_running_loop()
    started = loop.time()
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    if call.client in (STALL, STALL_FOREVER):
        # A receive window this small fills at once: the gateway's sends then block.
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    sock.setblocking(False)
    writer: asyncio.StreamWriter | None = None
    try:
        await asyncio.wait_for(loop.sock_connect(sock, (host, port)), bounds.deadline)
        reader, writer = await asyncio.open_connection(sock=sock, limit=1 << 20)
        if call.client in (STALL, STALL_FOREVER):
            # Nothing leaves the socket's own buffer either: asyncio would read megabytes ahead.
            writer.transport.pause_reading()
        head, body = request_bytes(call, host, port, token)
        if call.client in (SLOW_BODY, HALF_BODY) and body:
            half = len(body) // 2
            writer.write(head + body[:half])
            await writer.drain()
            await asyncio.sleep(call.pause)
            if call.client == HALF_BODY:
                obs.left = True
                return obs
            writer.write(body[half:])
        else:
            writer.write(head + body)
        await writer.drain()
        if call.client == LEAVE:
            try:
                await asyncio.wait_for(read_response(reader, obs), call.pause)
            except TimeoutError:
                obs.left = True
        elif call.client == STALL:
            await asyncio.sleep(call.pause)
            obs.left = True
        elif call.client == STALL_FOREVER:
            # Past the gateway's stalled-client bound, then read what there is.
            await asyncio.sleep(bounds.stalled_client + 15)
            writer.transport.resume_reading()
            await asyncio.wait_for(read_response(reader, obs), bounds.deadline)
        else:
            stop = call.client == LEAVE_MID
            await asyncio.wait_for(read_response(reader, obs, stop_at_event=stop), bounds.deadline)
            obs.left = stop and obs.status == 200 and not obs.complete and not obs.failure
    except TimeoutError:
        obs.hung = True
    except OSError as err:
        obs.failure = f"{type(err).__name__}: {err}"
    finally:
        obs.elapsed = loop.time() - started
        if writer is None:
            sock.close()
        elif call.client in (LEAVE, LEAVE_MID) and call.index % 2:
            # Half of the leaving clients reset the connection instead of closing it.
            with contextlib.suppress(OSError):
                sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            writer.transport.abort()
        else:
            writer.close()
    return obs


async def read_response(
    reader: asyncio.StreamReader, obs: Observation, *, stop_at_event: bool = False
) -> None:
    """Read one response into `obs`; a connection that ends early leaves `complete` False.

    `stop_at_event` returns once a 200 event stream has sent its first whole event.
    """
    try:
        head = await reader.readuntil(b"\r\n\r\n")
    except asyncio.IncompleteReadError as err:
        obs.failure = f"closed after {len(err.partial)} bytes of the head"
        return
    except (asyncio.LimitOverrunError, ConnectionError) as err:
        obs.failure = f"head: {type(err).__name__}"
        return
    status_line, *lines = head[:-4].decode("latin-1").split("\r\n")
    parts = status_line.split(" ", 2)
    obs.status = int(parts[1])
    obs.reason = parts[2] if len(parts) > 2 else ""
    for line in lines:
        name, _, value = line.partition(":")
        obs.headers[name.strip().lower()] = value.strip()
    stream = obs.status == 200 and obs.headers.get("content-type", "").startswith(
        "text/event-stream"
    )
    stopping = stop_at_event and stream
    try:
        if "chunked" in obs.headers.get("transfer-encoding", ""):
            while True:
                size_line = await reader.readuntil(b"\r\n")
                try:
                    size = int(size_line.split(b";")[0].strip(), 16)
                except ValueError:
                    obs.failure = f"a chunk-size line that is not one: {size_line[:40]!r}"
                    return
                if size == 0:
                    while await reader.readuntil(b"\r\n") != b"\r\n":
                        pass  # trailers
                    obs.complete = True
                    return
                data = await reader.readexactly(size + 2)
                obs.body += data[:-2]
                if stopping and b"\n\n" in obs.body:
                    return
        elif "content-length" in obs.headers:
            obs.body += await reader.readexactly(int(obs.headers["content-length"]))
            obs.complete = True
        else:
            obs.body += await reader.read()
            obs.complete = True
    except asyncio.IncompleteReadError as err:
        obs.body += err.partial
        obs.failure = "the connection closed before the body ended"
    except ConnectionError as err:
        obs.failure = f"{type(err).__name__} before the body ended"


# ----- judging ----------------------------------------------------------------------------


def documented(status: int) -> bool:
    """The statuses /v1 answers with: 200, the caller's faults and the engines' refusals (4xx,
    an engine's own status kept), and the backend's failures (502, 503, 504)."""
    return status == 200 or 400 <= status < 500 or status in (502, 503, 504)


def envelope_error(data: Any) -> tuple[dict[str, Any] | None, str]:
    """The error of an OpenAI envelope, or None and what is wrong with it."""
    if not isinstance(data, dict) or set(data) != {"error"}:
        return None, f"not an error envelope: {str(data)[:120]}"
    error = data["error"]
    if not isinstance(error, dict) or set(error) != ENVELOPE_KEYS:
        return None, f"the envelope's error has the wrong fields: {str(error)[:120]}"
    if not isinstance(error["message"], str) or not error["message"]:
        return None, "the envelope's message is empty"
    if not isinstance(error["type"], str) or not isinstance(error["code"], str):
        return None, f"the envelope's type or code is not a string: {error}"
    if error["param"] is not None and not isinstance(error["param"], str):
        return None, f"the envelope's param is neither null nor a string: {error}"
    return error, ""


def _events(text: str) -> list[str]:
    return [e for e in text.replace("\r\n", "\n").split("\n\n") if e.strip()]


def judge_stream(call: Call, obs: Observation, problems: list[str]) -> tuple[str, Any]:
    """An event stream's kind (ok, error-event or broken) and its error event, if any."""
    try:
        text = bytes(obs.body).decode("utf-8")
    except UnicodeDecodeError:
        problems.append("the event stream is not UTF-8")
        text = bytes(obs.body).decode("utf-8", "replace")
    events = _events(text)
    if not obs.complete:
        if BROKEN not in call.expect:
            problems.append(f"the event stream broke off ({obs.failure}) instead of ending")
        return BROKEN, None
    chunks: list[Any] = []
    done_at = None
    for i, event in enumerate(events):
        lines = event.split("\n")
        if len(lines) != 1 or not lines[0].startswith("data: "):
            problems.append(f"event {i} is not one data line: {event[:160]!r}")
            continue
        data = lines[0][6:]
        if data == "[DONE]":
            if done_at is not None:
                problems.append("[DONE] twice")
            done_at = i
            continue
        if done_at is not None:
            problems.append(f"an event after [DONE]: {data[:160]!r}")
        try:
            chunks.append(json.loads(data))
        except ValueError:
            problems.append(f"event {i} is not JSON: {data[:160]!r}")
    if done_at is None or done_at != len(events) - 1:
        problems.append("the event stream did not end with data: [DONE]")
    errors = [c for c in chunks if isinstance(c, dict) and "error" in c]
    if errors:
        error, wrong = envelope_error(errors[-1])
        if wrong:
            problems.append(f"error event: {wrong}")
        if len(errors) > 1 or not (chunks and chunks[-1] is errors[-1]):
            problems.append("an error event that is not the last event before [DONE]")
        return EVENT, error
    finished = any(
        isinstance(c, dict)
        and any(isinstance(ch, dict) and ch.get("finish_reason") for ch in c.get("choices") or [])
        for c in chunks
    )
    if not finished:
        problems.append("a stream that ended with [DONE] without a finish_reason")
    asked = b'"include_usage": true' in call.body
    usage_only = [c for c in chunks if isinstance(c, dict) and c.get("choices") == []]
    if asked and not usage_only:
        problems.append("include_usage was asked for, but no usage chunk came")
    if not asked and usage_only:
        problems.append("a usage chunk the client did not ask for (the gateway's own request)")
    return OK, None


def judge_json(call: Call, obs: Observation, problems: list[str]) -> str:
    if not obs.complete:
        return BROKEN
    if not obs.headers.get("content-type", "").startswith("application/json"):
        problems.append(f"a 200 of content-type {obs.headers.get('content-type')!r}")
    try:
        data = json.loads(bytes(obs.body))
    except ValueError:
        problems.append(f"a 200 whose body is not JSON: {bytes(obs.body)[:120]!r}")
        return OK
    key = "data" if call.surface == "embeddings" else "choices"
    if not isinstance(data, dict) or not isinstance(data.get(key), list) or not data[key]:
        problems.append(f"a 200 without {key}: {bytes(obs.body)[:120]!r}")
    return OK


def judge(call: Call, obs: Observation, bounds: Bounds) -> Verdict:
    """Name the answer and list what is wrong with it (nothing, for an acceptable answer)."""
    problems: list[str] = []
    if obs.left:
        return Verdict(LEFT, "", ())
    if obs.hung:
        return Verdict("hung", "", (f"no answer within {bounds.deadline:g} s: a hang",))
    if obs.status is None:
        return Verdict("dropped", "", (f"no answer at all ({obs.failure or 'closed'})",))
    status = obs.status
    error: dict[str, Any] | None = None
    if status == 500:
        problems.append("a 500")
    if not documented(status):
        problems.append(f"status {status}, which /v1 never answers")
    ctype = obs.headers.get("content-type", "")
    if status != 200:
        if not obs.complete:
            problems.append(f"an error answer cut short ({obs.failure})")
        if not ctype.startswith("application/json"):
            problems.append(f"an error of content-type {ctype!r}")
        try:
            data = json.loads(bytes(obs.body))
        except ValueError:
            data = bytes(obs.body)[:120]
        error, wrong = envelope_error(data)
        if wrong:
            problems.append(wrong)
        code = error["code"] if error else "?"
        kind = f"{status}:{code}"
        if (status == 503 or code == "queue_full") and "retry-after" not in obs.headers:
            problems.append(f"a {status} {code} without Retry-After")
    elif ctype.startswith("text/event-stream"):
        kind, error = judge_stream(call, obs, problems)
    else:
        kind = judge_json(call, obs, problems)
        if kind == BROKEN and BROKEN not in call.expect:
            problems.append(f"a 200 body cut short ({obs.failure})")
    tag = ""
    if not _accepted(kind, call.expect):
        tag = _excused(call, kind, error, obs, bounds, problems)
        if not tag:
            problems.append(
                f"{kind} is not an answer to {call.fault} {call.detail}".rstrip()
                + f" (expected {' or '.join(sorted(call.expect))})"
            )
    return Verdict(kind, tag, tuple(problems), error)


def _accepted(kind: str, expect: frozenset[str]) -> bool:
    if kind in expect:
        return True
    status, _, _ = kind.partition(":")
    return f"{status}:*" in expect


def _excused(
    call: Call,
    kind: str,
    error: dict[str, Any] | None,
    obs: Observation,
    bounds: Bounds,
    problems: list[str],
) -> str:
    """Why an answer outside the fault's own set is still fine, or "".

    Any request may find the queue full or its budget spent, and a busy machine may make any
    engine slower than a bound; none of those may come before its bound. A replica asked to fail
    its next requests (a blip) may fail any request on every replica it tries.
    """
    message = error["message"] if error else ""
    slack = 0.95  # the client's clock starts a little before the gateway's
    if kind == "503:capacity_timeout":
        if obs.elapsed < bounds.budget * slack:
            problems.append(f"expired after {obs.elapsed:.2f} s, before its {bounds.budget:g} s")
        return "timing"
    if kind in ("429:queue_full", "503:no_healthy_backend"):
        return "timing"
    if kind == "504:upstream_timeout" and "sent nothing within" in message:
        if obs.elapsed < bounds.first_byte * slack:
            problems.append(f"timed out after {obs.elapsed:.2f} s, before {bounds.first_byte:g} s")
        return "timing"
    if kind == EVENT and "idle timeout" in message:
        if obs.elapsed < bounds.idle * slack:
            problems.append(f"idle after {obs.elapsed:.2f} s, before {bounds.idle:g} s")
        return "timing"
    own = call.fault.removeprefix("sim:status ") if call.fault.startswith("sim:status") else ""
    if INJECTED in message and not message.endswith(f"{INJECTED} {own}"):
        return "blip"
    return ""
