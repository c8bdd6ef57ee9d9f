"""How an admitted request generates: a whole answer after its tokens' time, or a stream paced
token by token; the surfaces render both (gateway/sim/surfaces.py's EngineView is this layer)."""

from __future__ import annotations

import asyncio
import time
from json.encoder import encode_basestring_ascii
from typing import Any

from gateway.core.asgi import Send
from gateway.sim.base import EngineBase
from gateway.sim.chat import chat_body, chat_turn_events
from gateway.sim.errors import Refused
from gateway.sim.gpu import Gpu
from gateway.sim.jobs import Job, Record, chunk_frames, usage_event
from gateway.sim.slots import Slots
from gateway.sim.surfaces import CHAT, Surface
from gateway.sim.text import CHAT_BODY, TEXT_BODY, answer_json, token_json
from gateway.sim.wire import SSE_HEADERS, send_more


class SlotPace:
    """A generation's pace on the engine's slots: a slot for the whole of it, `delay` seconds
    before each token (the instant engine's 0 never sleeps but now and then)."""

    def __init__(self, slots: Slots, job: Job, delay: float) -> None:
        self.slots, self.job, self.delay = slots, job, delay
        self.started = False

    async def start(self) -> None:
        """Wait for a slot (Refused when the engine's bounded queue turns it away)."""
        await self.slots.acquire(self.job.priority, self.job.n)
        self.started = True

    async def whole(self) -> None:
        if self.delay > 0 and self.job.n:
            await asyncio.sleep(self.delay * self.job.n)

    async def token(self, i: int) -> None:
        """Before the i-th generated token."""
        if self.delay > 0:
            await asyncio.sleep(self.delay)
        elif i and not i & 63:
            # An instant stream still lets the loop run now and then, as a real engine's decode
            # steps do: else a long one would hold it (and a client's disconnect unseen) until
            # its last token.
            await asyncio.sleep(0)

    async def close(self) -> None:
        if self.started:
            self.started = False
            self.slots.release()


class GpuPace:
    """A generation's pace on the simulated GPU (gateway/sim/gpu.py): its tokens come as the
    batch's steps make them, after it waited in the engine's own queue."""

    def __init__(self, gpu: Gpu, job: Job) -> None:
        self.tokens = gpu.generate(job.prompt_tokens, job.n)

    async def start(self) -> None:
        return None  # it queues in the GPU's own scheduler, which refuses nothing

    async def whole(self) -> None:
        async for _ in self.tokens:
            pass

    async def token(self, i: int) -> None:
        await anext(self.tokens, None)

    async def close(self) -> None:
        await self.tokens.aclose()  # a client that left takes its sequence out at once


class GeneratingEngine(EngineBase):
    """The generation every path runs once it has a slot (or waits for one)."""

    def pace(self, job: Job, delay: float) -> SlotPace | GpuPace:
        """How this job's tokens come: the simulated GPU's steps when it is on, else a slot
        and `delay` per token."""
        gpu = self.gpu
        return GpuPace(gpu, job) if gpu is not None else SlotPace(self.slots, job, delay)

    async def _generate(self, job: Job, delay: float, surface: Surface | None = None) -> bytes:
        pace = self.pace(job, delay)
        await pace.start()
        try:
            await pace.whole()
            return self.chat_whole(job) if surface is None else surface.whole(self, job)
        finally:
            await pace.close()

    def chat_whole(self, job: Job) -> bytes:
        self._seq += 1
        if job.turn is not None or job.cached is not None:
            return chat_body(job, self._seq)
        n, prompt_tokens = job.n, job.prompt_tokens
        return (CHAT_BODY if job.chat else TEXT_BODY) % (
            self._seq,
            int(time.time()),
            encode_basestring_ascii(job.model).encode(),
            answer_json(n),
            job.finish.encode(),
            prompt_tokens,
            n,
            prompt_tokens + n,
        )

    def _stream_base(self, job: Job) -> dict[str, Any]:
        self._seq += 1
        return {
            "id": f"{'chatcmpl-sim' if job.chat else 'cmpl-sim'}{self._seq}",
            "object": "chat.completion.chunk" if job.chat else "text_completion",
            "created": int(time.time()),
            "model": job.model,
        }

    async def _stream_admitted(
        self,
        send: Send,
        record: Record,
        job: Job,
        pace: SlotPace | GpuPace,
        surface: Surface = CHAT,
        first: list[bytes] | None = None,
    ) -> bool:
        """Take a slot for a stream, answering a refusal as SGLang does: 200, error, [DONE].

        vLLM answers 200 before the request is queued (with the `first` events its surface
        sends before generating); SGLang and the generic sim send the status line with the
        first chunk. Returns False when refused (all but the stream's tail sent).
        """
        early = self.config.server_info == "vllm"
        if early:
            await self._start(send, record, 200, SSE_HEADERS)
            for event in first or ():
                await send_more(send, event)
        try:
            await pace.start()
        except Refused as refused:
            if not early:
                await self._start(send, record, 200, SSE_HEADERS)
            event = surface.error_event(
                surface.shape(self), 503, refused.message, refused.code, len(first or ())
            )
            await send({"type": "http.response.body", "body": event, "more_body": True})
            return False
        return True

    def chat_events(self, job: Job) -> list[tuple[bytes, bool]]:
        """A chat or completion stream's events, each marked whether it is a generated token."""
        base = self._stream_base(job)
        if job.turn is not None:
            return chat_turn_events(job, base)
        first, rest, final = chunk_frames(base, job)
        events = [
            ((first if i == 0 else rest)[0] + token_json[i] + (first if i == 0 else rest)[1], True)
            for i in range(job.n)
        ]
        events.append((final, False))
        if job.usage_chunk:
            events.append((usage_event(base, job), False))
        return events

    async def stream_events(
        self, send: Send, record: Record, job: Job, delay: float, surface: Surface
    ) -> bytes | None:
        """Send a surface's stream events, `delay` before each generated one; not its tail."""
        events = surface.events(self, job)
        early = surface.early(self) if self.config.server_info == "vllm" else 0
        first = [event for event, _ in events[:early]]
        pace = self.pace(job, delay)
        if not await self._stream_admitted(send, record, job, pace, surface, first):
            return None
        try:
            started = record.status is not None
            count = 0
            for event, paced in events[early:]:
                if paced:
                    count += 1
                    await pace.token(count)
                if not started:
                    await self._start(send, record, 200, SSE_HEADERS)
                    started = True
                await send_more(send, event)
            surface.sent(self, job)
        finally:
            await pace.close()
        return None

    async def stream_tokens(
        self, send: Send, record: Record, job: Job, delay: float
    ) -> bytes | None:
        """Send one SSE chunk per token, the finish chunk and the usage chunk; not [DONE]."""
        pace = self.pace(job, delay)
        if not await self._stream_admitted(send, record, job, pace):
            return None
        try:
            base = self._stream_base(job)
            first, rest, final = chunk_frames(base, job)
            started = record.status is not None
            if job.n:
                await pace.token(0)
                if not started:
                    await self._start(send, record, 200, SSE_HEADERS)
                head, tail = first
                await send(
                    {
                        "type": "http.response.body",
                        "body": head + token_json[0] + tail,
                        "more_body": True,
                    }
                )
                head, tail = rest
                for i in range(1, job.n):
                    await pace.token(i)
                    await send(
                        {
                            "type": "http.response.body",
                            "body": head + token_json[i] + tail,
                            "more_body": True,
                        }
                    )
            elif not started:
                await self._start(send, record, 200, SSE_HEADERS)
            await send({"type": "http.response.body", "body": final, "more_body": True})
            if job.usage_chunk:
                await send(
                    {
                        "type": "http.response.body",
                        "body": usage_event(base, job),
                        "more_body": True,
                    }
                )
        finally:
            await pace.close()
        return None
