"""Faults on purpose: the answer a [[sim:...]] directive asks for, one handler per fault.

The table of sim faults is in gateway/sim/engine.py's docstring, their syntax in
gateway/sim/faults.py.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable, Coroutine
from dataclasses import dataclass
from http import HTTPStatus
from typing import Any

from gateway.core.asgi import Receive, Send
from gateway.sim import faults
from gateway.sim.config import EVICTED, QUEUE_FULL
from gateway.sim.errors import Refused, anthropic_error, error_body
from gateway.sim.generation import GeneratingEngine, SlotPace
from gateway.sim.jobs import Job, Record
from gateway.sim.surfaces import CHAT, MESSAGES, Surface
from gateway.sim.wire import (
    GARBAGE,
    HTML_PAGE,
    JSON_TYPE,
    NOT_JSON,
    SSE_HEADERS,
    Drop,
    drop_before_any_byte,
    forever,
    send_more,
)


@dataclass(slots=True)
class Faulted:
    """A request to answer with the fault its directive names: what each fault's handler reads.

    `whole(delay)` waits for a slot and returns the whole answer `delay` later; `job` is what a
    stream would generate (None for embeddings, which never stream).
    """

    receive: Receive
    send: Send
    record: Record
    fault: faults.Directive
    stream: bool
    job: Job | None
    whole: Callable[[float], Coroutine[Any, Any, bytes]]
    surface: Surface


# How a broken stream goes wrong where it breaks: each returns the event to send there (changed
# or not), or never returns. At the stream's end there is no event: it gets b"" and sends nothing.


async def _hang_mid(send: Send, event: bytes) -> bytes:
    await forever()
    return event


async def _cut(send: Send, event: bytes) -> bytes:
    raise Drop


async def _garbage(send: Send, event: bytes) -> bytes:
    await send_more(send, GARBAGE)
    return event


async def _no_blank(send: Send, event: bytes) -> bytes:
    return event[:-1]


_BREAKS: dict[str, Callable[[Send, bytes], Awaitable[bytes]]] = {
    "hang-mid": _hang_mid,
    "cut": _cut,
    "garbage": _garbage,
    "no-blank": _no_blank,
}


class FaultyEngine(GeneratingEngine):
    """The engine that answers a request's [[sim:...]] directive instead of the request."""

    async def _with_fault(
        self,
        receive: Receive,
        send: Send,
        record: Record,
        text: str | None,
        stream: bool,
        job: Job | None,
        whole: Callable[[float], Coroutine[Any, Any, bytes]],
        surface: Surface = CHAT,
    ) -> bool:
        """Answer as the [[sim:...]] directive `text` starts with asks; False when it has none.

        `text` is the request's last user text (faults.directive_text for the OpenAI bodies);
        `whole`, `job`: see Faulted.
        """
        try:
            if text is None or not text.startswith("[["):
                return False
            fault = faults.parse(text).get("sim")
            if fault is None:
                return False
            record.fault = fault.fault
            stream = stream and job is not None
            asked = Faulted(receive, send, record, fault, stream, job, whole, surface)
            await _FAULTS[fault.fault](self, asked)
        except faults.DirectiveError as exc:
            if record.status is not None:
                raise
            if surface is MESSAGES:
                error = anthropic_error(surface.shape(self), 400, str(exc))
            else:
                error = error_body(str(exc), "invalid_request_error", "invalid_sim_directive")
            await self._finish(send, record, 400, error)
        return True

    async def _guard(self, asked: Faulted, run: Coroutine[Any, Any, bytes | None]) -> None:
        await self._guarded(asked.receive, asked.send, asked.record, run, asked.surface)

    # -- one handler per fault --

    async def _status(self, asked: Faulted) -> None:
        fault, surface = asked.fault, asked.surface
        code = fault.integer("code", 500, 400, 599)
        shape = fault.choice("shape", surface.shape(self), surface.shapes)
        message = f"Injected failure {code}"
        body = surface.error(shape, code, message, "sim_fault")
        await self._finish(asked.send, asked.record, code, body)

    async def _html(self, asked: Faulted) -> None:
        code = asked.fault.integer("code", 500, 400, 599)
        page = HTML_PAGE.format(code=code, phrase=HTTPStatus(code).phrase).encode()
        await self._finish(asked.send, asked.record, code, page, b"text/html; charset=utf-8")

    async def _redirect(self, asked: Faulted) -> None:
        fault, send, record = asked.fault, asked.send, asked.record
        code = fault.integer("code", 302, 300, 399)
        location = fault.args.get("location", "/v1/elsewhere").encode()
        headers = [(b"location", location), (b"content-length", b"0")]
        await self._start(send, record, code, headers)
        await send({"type": "http.response.body", "body": b""})
        record.finished = time.time()

    async def _refusal(self, asked: Faulted) -> None:
        """queue-full and evicted: SGLang's refusals, as the bounded queue gives them."""
        fault, send, record, surface = asked.fault, asked.send, asked.record, asked.surface
        shape = fault.choice("shape", surface.shape(self), surface.shapes)
        refused = Refused(QUEUE_FULL if fault.fault == "queue-full" else EVICTED)
        message, error_code = refused.message, refused.code
        if asked.stream:
            await self._start(send, record, 200, SSE_HEADERS)
            event = surface.error_event(shape, 503, message, error_code, 0)
            await send({"type": "http.response.body", "body": event, "more_body": True})
            await send({"type": "http.response.body", "body": surface.tail})
            record.finished = time.time()
        else:
            body = surface.error(shape, 503, message, error_code)
            await self._finish(send, record, 503, body)

    async def _bad_json(self, asked: Faulted) -> None:
        await self._finish(asked.send, asked.record, 200, NOT_JSON)

    async def _reset(self, asked: Faulted) -> None:
        await drop_before_any_byte(asked.send)

    async def _hang(self, asked: Faulted) -> None:
        await self._guard(asked, forever())

    async def _slow(self, asked: Faulted) -> None:
        slow = asked.fault.number("delay", 0.05, 0.0, 60.0)
        if asked.stream and asked.job is not None:
            run = asked.surface.stream(self, asked.send, asked.record, asked.job, slow)
            await self._guard(asked, run)
        else:
            await self._guard(asked, asked.whole(slow))

    async def _broken(self, asked: Faulted) -> None:
        """hang-mid, cut, garbage and no-blank: an answer that goes wrong after `after`."""
        name, stream, job = asked.fault.fault, asked.stream, asked.job
        if not stream and name in ("garbage", "no-blank"):
            raise faults.DirectiveError(f"{name} needs a streaming request")
        # Without `after` a whole answer breaks halfway (-1 tells _broken_whole so).
        after = asked.fault.integer("after", 1 if stream else -1, 0, 1 << 30)
        delay = self.config.token_delay
        if stream and job is not None:
            send, record = asked.send, asked.record
            broken = self._broken_stream(send, record, job, delay, name, after, asked.surface)
            await self._guard(asked, broken)
        else:
            cut = self._broken_whole(asked.send, asked.record, asked.whole(delay), name, after)
            await self._guard(asked, cut)

    async def _broken_stream(
        self,
        send: Send,
        record: Record,
        job: Job,
        delay: float,
        name: str,
        after: int,
        surface: Surface,
    ) -> bytes | None:
        """A stream that goes wrong after `after` token events, as `name` says.

        The events a surface sends before its first token (message_start, response.created,
        ...) always go out: `after` counts from its first generated event.
        """
        marked = surface.events(self, job)
        early = surface.early(self) if self.config.server_info == "vllm" else 0
        # Faults pace on the engine's slots even beside the simulated GPU: they are about the
        # answer's bytes, not the engine's capacity.
        pace = SlotPace(self.slots, job, delay)
        if not await self._stream_admitted(
            send, record, job, pace, surface, [event for event, _ in marked[:early]]
        ):
            return None
        breaking = _BREAKS[name]
        try:
            events = [event for event, _ in marked[early:]]
            lead = next((i for i, (_, paced) in enumerate(marked[early:]) if paced), len(events))
            # An event without its blank line needs a next one to run into.
            after = min(lead + after, len(events) - 1 if name == "no-blank" else len(events))
            if record.status is None:
                await self._start(send, record, 200, SSE_HEADERS)
            for i, event in enumerate(events):
                if i == after:
                    event = await breaking(send, event)
                if delay > 0 and marked[early + i][1]:
                    await asyncio.sleep(delay)
                await send_more(send, event)
            if after == len(events):
                await breaking(send, b"")
        finally:
            await pace.close()
        return None

    async def _broken_whole(
        self,
        send: Send,
        record: Record,
        whole: Coroutine[Any, Any, bytes],
        name: str,
        after: int,
    ) -> bytes | None:
        """A whole answer whose head promises all of it and whose body stops after `after` bytes."""
        payload = await whole
        if not 0 <= after <= len(payload):
            after = len(payload) // 2
        headers = [(b"content-type", JSON_TYPE), (b"content-length", b"%d" % len(payload))]
        await self._start(send, record, 200, headers)
        await send({"type": "http.response.body", "body": payload[:after], "more_body": True})
        if name == "cut":
            raise Drop
        await forever()
        return None


# One handler per sim fault of gateway/sim/faults.py's SIM_FAULTS.
_FAULTS: dict[str, Callable[[FaultyEngine, Faulted], Awaitable[None]]] = {
    "status": FaultyEngine._status,
    "html": FaultyEngine._html,
    "redirect": FaultyEngine._redirect,
    "queue-full": FaultyEngine._refusal,
    "evicted": FaultyEngine._refusal,
    "bad-json": FaultyEngine._bad_json,
    "reset": FaultyEngine._reset,
    "hang": FaultyEngine._hang,
    "slow": FaultyEngine._slow,
    "hang-mid": FaultyEngine._broken,
    "cut": FaultyEngine._broken,
    "garbage": FaultyEngine._broken,
    "no-blank": FaultyEngine._broken,
}
