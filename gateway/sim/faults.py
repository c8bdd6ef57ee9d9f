"""Engine faults on purpose: the directive that asks for one, and a TCP proxy for wire faults.

The gateway forwards a request's body (model rewritten, priority fields stripped) but never the
client's headers, so a fault is asked for inside the body: the text of the last chat message, or
the prompt, or the (first) embedding input, starts with one or more directives::

    [[sim:cut after=3]] the rest is an ordinary prompt
    [[wire:stall after=200]][[sim:slow delay=0.05]] both at once, one of each namespace

`[[sim:...]]` is read by the simulated engine (gateway/sim/faulty.py) when its SimConfig has
`directives=True`; `[[wire:...]]` by a FaultProxy in front of any engine. Each one ignores the
other's namespace, and text that merely looks similar further on in the prompt is prompt. The
grammar: ``[[`` namespace ``:`` fault, then `` key=value`` pairs, then ``]]``; a directive of a
known namespace that does not parse, names an unknown fault or parameter, or repeats a namespace
is refused (the sim answers 400 `invalid_sim_directive`, the proxy 400 `invalid_wire_directive`).

Wire faults are the ones an ASGI app cannot express, because the server frames the answer: the
proxy reads each request, forwards it with `Connection: close` and relays the engine's bytes,
changed as asked. Without a directive it is a transparent relay, one request per connection.

================  =========  =====================================================================
wire fault        params     what the client receives
================  =========  =====================================================================
status            code=999   the engine's answer with its status line replaced (any code 0-999)
chunked           after=1    the head and `after` chunks of the body (a content-length body is
                             re-framed as one chunk), then the chunk-size line ``zz``, then
                             nothing until the client leaves
reset             after=0    the first `after` bytes of the engine's answer, then a TCP reset
stall             after=0    the first `after` bytes, then nothing until the client leaves (the
                             engine's connection stays open, so its stream backs up)
================  =========  =====================================================================

This lives apart from the sim because it speaks raw TCP rather than ASGI and can front a real
engine just as well; the sim imports only the directive parser from here.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import re
import socket
import struct
import sys
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, TypeVar
from urllib.parse import urlsplit

from gateway.core.serving import Background, bound_socket

NAMESPACES = ("sim", "wire")

# Each fault's parameters, for each namespace; the executors check the values.
SIM_FAULTS: dict[str, frozenset[str]] = {
    "status": frozenset({"code", "shape"}),
    "html": frozenset({"code"}),
    "redirect": frozenset({"code", "location"}),
    "queue-full": frozenset({"shape"}),
    "evicted": frozenset({"shape"}),
    "hang": frozenset(),
    "hang-mid": frozenset({"after"}),
    "slow": frozenset({"delay"}),
    "bad-json": frozenset(),
    "garbage": frozenset({"after"}),
    "no-blank": frozenset({"after"}),
    "cut": frozenset({"after"}),
    "reset": frozenset(),
}
WIRE_FAULTS: dict[str, frozenset[str]] = {
    "status": frozenset({"code"}),
    "chunked": frozenset({"after"}),
    "reset": frozenset({"after"}),
    "stall": frozenset({"after"}),
}
_CATALOGS = {"sim": SIM_FAULTS, "wire": WIRE_FAULTS}

_ONE = re.compile(r"\[\[(sim|wire):([a-z][a-z0-9-]*)((?: [a-z]+=[^\s\]]+)*)\]\]\s*")
_OPENING = re.compile(r"\[\[(sim|wire):")


class DirectiveError(ValueError):
    """A directive of a known namespace that cannot be honoured as written."""


class _Unrelayable(Exception):
    """A request the proxy does not relay (it reads bodies by their content-length only)."""


_Num = TypeVar("_Num", int, float)


@dataclass(frozen=True)
class Directive:
    """One parsed ``[[namespace:fault key=value ...]]``."""

    namespace: str
    fault: str
    args: dict[str, str] = field(default_factory=dict)

    def integer(self, name: str, default: int, low: int, high: int) -> int:
        return self._within(name, default, low, high, int, "an integer")

    def number(self, name: str, default: float, low: float, high: float) -> float:
        return self._within(name, default, low, high, float, "a number")

    def _within(
        self,
        name: str,
        default: _Num,
        low: _Num,
        high: _Num,
        kind: Callable[[str], _Num],
        what: str,
    ) -> _Num:
        """Argument `name` read as `kind` (`what` says which), from `low` to `high`."""
        raw = self.args.get(name)
        if raw is None:
            return default
        try:
            value = kind(raw)
        except ValueError:
            raise DirectiveError(f"{self.fault}: {name} must be {what}") from None
        if not low <= value <= high:
            raise DirectiveError(f"{self.fault}: {name} must be between {low} and {high}")
        return value

    def choice(self, name: str, default: str, choices: tuple[str, ...]) -> str:
        value = self.args.get(name, default)
        if value not in choices:
            raise DirectiveError(f"{self.fault}: {name} must be one of {', '.join(choices)}")
        return value


def parse(text: str) -> dict[str, Directive]:
    """The directives at the start of `text`, by namespace; {} when it starts with none."""
    found: dict[str, Directive] = {}
    pos = 0
    while True:
        match = _ONE.match(text, pos)
        if match is None:
            if _OPENING.match(text, pos):
                raise DirectiveError(f"malformed directive at {text[pos : pos + 60]!r}")
            return found
        namespace, fault, params = match.group(1), match.group(2), match.group(3)
        if namespace in found:
            raise DirectiveError(f"more than one {namespace} directive")
        allowed = _CATALOGS[namespace].get(fault)
        if allowed is None:
            raise DirectiveError(f"unknown {namespace} fault {fault!r}")
        args: dict[str, str] = {}
        for pair in params.split():
            key, _, value = pair.partition("=")
            if key not in allowed or key in args:
                raise DirectiveError(f"{fault}: unexpected parameter {key!r}")
            args[key] = value
        found[namespace] = Directive(namespace, fault, args)
        pos = match.end()


def directive_text(body: dict[str, Any]) -> str | None:
    """The text a directive may start: the last message's, else the prompt or the first input."""
    messages = body.get("messages")
    if isinstance(messages, list):
        last = messages[-1] if messages else None
        content = last.get("content") if isinstance(last, dict) else None
        if isinstance(content, str):
            return content
        if isinstance(content, list):
            for part in content:
                if isinstance(part, dict) and part.get("type") == "text":
                    text = part.get("text")
                    return text if isinstance(text, str) else None
        return None
    for name in ("prompt", "input"):
        value = body.get(name)
        if isinstance(value, str):
            return value
        if isinstance(value, list) and value and isinstance(value[0], str):
            first: str = value[0]
            return first
    return None


def find(body: dict[str, Any], namespace: str) -> Directive | None:
    """The body's directive of `namespace`, None without one; DirectiveError when malformed."""
    text = directive_text(body)
    if text is None or not text.startswith("[["):
        return None
    return parse(text).get(namespace)


# -- the wire-level fault proxy --

_BAD_CHUNK_SIZE = b"zz\r\n"
_HOP_HEADERS = frozenset({b"connection", b"keep-alive", b"proxy-connection"})
_MAX_HEAD = 64 * 1024
_MAX_BODY = 64 * 1024 * 1024


def _raw_answer(status: int, reason: str, code: str, message: str) -> bytes:
    error = {"message": message, "type": "invalid_request_error", "param": None, "code": code}
    body = json.dumps({"error": error}).encode()
    return (
        f"HTTP/1.1 {status} {reason}\r\ncontent-type: application/json\r\n"
        f"content-length: {len(body)}\r\nconnection: close\r\n\r\n"
    ).encode() + body


async def _read_request(reader: asyncio.StreamReader) -> tuple[bytes, list[bytes], bytes] | None:
    """(request line, header lines, body) of one request; None when the client sent none."""
    try:
        head = await reader.readuntil(b"\r\n\r\n")
    except (asyncio.IncompleteReadError, asyncio.LimitOverrunError, ConnectionError):
        return None
    line, *headers = head[:-4].split(b"\r\n")
    length = 0
    for header in headers:
        name, _, value = header.partition(b":")
        name = name.strip().lower()
        if name == b"content-length":
            length = int(value.strip() or b"0")
        elif name == b"transfer-encoding":
            raise _Unrelayable("the fault proxy takes request bodies with a content-length only")
    if not 0 <= length <= _MAX_BODY:
        raise _Unrelayable("the request body is too large for the fault proxy")
    body = await reader.readexactly(length) if length else b""
    return line, headers, body


def _wire_directive(line: bytes, body: bytes) -> Directive | None:
    if not line.startswith(b"POST ") or not body.lstrip().startswith(b"{"):
        return None
    try:
        parsed = json.loads(body)
    except ValueError:
        return None
    return find(parsed, "wire") if isinstance(parsed, dict) else None


@dataclass(frozen=True)
class _Plan:
    """A wire fault with its parameters checked, decided before anything is forwarded."""

    fault: str
    value: int


def _plan(fault: Directive) -> _Plan:
    if fault.fault == "status":
        return _Plan("status", fault.integer("code", 999, 0, 999))
    if fault.fault == "chunked":
        return _Plan("chunked", fault.integer("after", 1, 0, 1_000_000))
    return _Plan(fault.fault, fault.integer("after", 0, 0, _MAX_BODY))


def _reset(writer: asyncio.StreamWriter) -> None:
    """Abort with a TCP RST rather than a FIN: linger on, timeout zero."""
    sock = writer.get_extra_info("socket")
    if sock is not None:
        with contextlib.suppress(OSError):
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    writer.transport.abort()


async def _pump(up: asyncio.StreamReader, out: asyncio.StreamWriter, limit: int | None) -> int:
    """Relay bytes until the engine ends its answer or `limit` bytes went; returns the count."""
    sent = 0
    while limit is None or sent < limit:
        chunk = await up.read(65536 if limit is None else min(65536, limit - sent))
        if not chunk:
            break
        out.write(chunk)
        await out.drain()
        sent += len(chunk)
    return sent


async def _until_eof(reader: asyncio.StreamReader) -> None:
    """Resolves when the client closes its side; bytes it sends meanwhile are ignored."""
    with contextlib.suppress(ConnectionError):
        while await reader.read(65536):
            pass


class FaultProxy(Background):
    """A TCP relay in front of one engine that applies `[[wire:...]]` directives.

    In a test: `with FaultProxy(sim.url) as proxy:` and point the backend at `proxy.url`. In a
    running event loop: `await proxy.serve()`. From a shell: `python -m gateway.sim.faults`.
    """

    def __init__(self, upstream: str, *, host: str = "127.0.0.1", port: int = 0) -> None:
        parts = urlsplit(upstream)
        if parts.scheme != "http" or not parts.hostname or parts.port is None:
            raise ValueError("the upstream must be http://host:port")
        self.upstream_host, self.upstream_port = parts.hostname, parts.port
        self.host, self.port = host, port
        self.relayed = 0
        self.faults: dict[str, int] = {}
        self._clients: set[asyncio.StreamWriter] = set()
        self._thread: threading.Thread | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._stopping: asyncio.Event | None = None
        self._started = threading.Event()

    @property
    def url(self) -> str:
        return f"http://{self.host}:{self.port}"

    async def serve(self, sock: socket.socket | None = None) -> None:
        """Serve on the running loop until cancelled (or stop() from another thread)."""
        if sock is None:
            sock = bound_socket(self.host, self.port)
        self.port = sock.getsockname()[1]
        self._loop = asyncio.get_running_loop()
        self._stopping = asyncio.Event()
        server = await asyncio.start_server(self._handle, sock=sock, limit=_MAX_HEAD)
        self._started.set()
        try:
            await self._stopping.wait()
        finally:
            server.close()
            for writer in list(self._clients):
                writer.transport.abort()
            await server.wait_closed()

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self._clients.add(writer)
        up_writer: asyncio.StreamWriter | None = None
        tasks: list[asyncio.Task[Any]] = []
        try:
            try:
                request = await _read_request(reader)
                if request is None:
                    return
                line, headers, body = request
                fault = _wire_directive(line, body)
                plan = _plan(fault) if fault is not None else None
            except DirectiveError as exc:
                writer.write(_raw_answer(400, "Bad Request", "invalid_wire_directive", str(exc)))
                await writer.drain()
                return
            except _Unrelayable as exc:
                writer.write(_raw_answer(501, "Not Implemented", "not_relayed", str(exc)))
                await writer.drain()
                return
            try:
                up_reader, up_writer = await asyncio.open_connection(
                    self.upstream_host, self.upstream_port, limit=_MAX_HEAD
                )
            except OSError as exc:
                writer.write(_raw_answer(502, "Bad Gateway", "upstream_unreachable", str(exc)))
                await writer.drain()
                return
            kept = [h for h in headers if h.partition(b":")[0].strip().lower() not in _HOP_HEADERS]
            up_writer.write(b"\r\n".join([line, *kept, b"Connection: close", b"", b""]) + body)
            await up_writer.drain()
            self.relayed += 1
            if plan is not None:
                self.faults[plan.fault] = self.faults.get(plan.fault, 0) + 1
            gone = asyncio.ensure_future(_until_eof(reader))
            relay = asyncio.ensure_future(self._relay(up_reader, writer, plan, gone))
            tasks = [gone, relay]
            # The client leaving ends the relay, so the engine sees the disconnect at once.
            await asyncio.wait(tasks, return_when=asyncio.FIRST_COMPLETED)
            if relay.done() and not relay.cancelled():
                relay.result()
        # The engine or the client went away, or the engine broke its own framing: either
        # way this one connection is over.
        except (OSError, asyncio.IncompleteReadError, asyncio.LimitOverrunError, ValueError):
            pass
        finally:
            for task in tasks:
                task.cancel()
            if up_writer is not None:
                up_writer.transport.abort()
            if not writer.transport.is_closing():
                writer.transport.close()
            self._clients.discard(writer)

    async def _relay(
        self,
        up: asyncio.StreamReader,
        out: asyncio.StreamWriter,
        plan: _Plan | None,
        gone: asyncio.Future[None],
    ) -> None:
        if plan is None:
            await _pump(up, out, None)
        elif plan.fault == "status":
            head = await up.readuntil(b"\r\n\r\n")
            _, _, rest = head.partition(b"\r\n")
            out.write(b"HTTP/1.1 %d Unknown\r\n" % plan.value + rest)
            await _pump(up, out, None)
        elif plan.fault == "reset":
            await _pump(up, out, plan.value)
            _reset(out)
        elif plan.fault == "stall":
            await _pump(up, out, plan.value)
            await gone
        elif plan.fault == "chunked":
            await self._broken_chunks(up, out, plan.value)
            await gone

    async def _broken_chunks(
        self, up: asyncio.StreamReader, out: asyncio.StreamWriter, after: int
    ) -> None:
        head = await up.readuntil(b"\r\n\r\n")
        lines = head[:-4].split(b"\r\n")
        names = [h.partition(b":")[0].strip().lower() for h in lines[1:]]
        if b"content-length" in names:
            # Re-framed as one chunk, so a JSON answer can break its framing too.
            index = names.index(b"content-length") + 1
            length = int(lines[index].partition(b":")[2].strip())
            lines[index] = b"transfer-encoding: chunked"
            body = await up.readexactly(length)
            out.write(b"\r\n".join([*lines, b"", b""]))
            if after and body:
                out.write(b"%x\r\n" % len(body) + body + b"\r\n")
        else:
            out.write(head)
            for _ in range(after):
                size_line = await up.readuntil(b"\r\n")
                size = int(size_line.split(b";")[0], 16)
                if size == 0:
                    break  # the end: the broken line takes the terminating chunk's place
                out.write(size_line + await up.readexactly(size + 2))
        out.write(_BAD_CHUNK_SIZE)
        await out.drain()

    # -- in a thread, for tests --

    def start(self, timeout: float = 10.0) -> None:
        sock = bound_socket(self.host, self.port)
        self.port = sock.getsockname()[1]
        self._started.clear()
        self._thread = threading.Thread(
            target=lambda: asyncio.run(self.serve(sock)), name=f"faults:{self.port}", daemon=True
        )
        self._thread.start()
        if not self._started.wait(timeout):
            raise RuntimeError(f"the fault proxy did not start on {self.url}")

    def stop(self, timeout: float = 5.0) -> None:
        loop, stopping, thread = self._loop, self._stopping, self._thread
        if loop is not None and stopping is not None:
            with contextlib.suppress(RuntimeError):  # the loop may be gone already
                loop.call_soon_threadsafe(stopping.set)
        if thread is not None:
            thread.join(timeout)
        self._thread = None


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        prog="python -m gateway.sim.faults",
        description="Relay to an engine, applying [[wire:...]] fault directives.",
    )
    parser.add_argument("--upstream", required=True, help="the engine, http://host:port")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=9200)
    args = parser.parse_args(argv)
    proxy = FaultProxy(args.upstream, host=args.host, port=args.port)
    print(f"aiplane fault proxy on {proxy.url} -> {args.upstream}", file=sys.stderr)
    with contextlib.suppress(KeyboardInterrupt):
        asyncio.run(proxy.serve())


if __name__ == "__main__":
    main()
