"""OpenAI's own paths on the simulated engine: /v1/chat/completions, /v1/completions and
/v1/embeddings."""

from __future__ import annotations

import asyncio
from typing import Any

from gateway.core.asgi import Receive, Scope, Send
from gateway.sim import faults
from gateway.sim.errors import error_body
from gateway.sim.faulty import FaultyEngine
from gateway.sim.jobs import Job, PlainJob, Record, TurnJob, priority_of
from gateway.sim.surfaces import CHAT
from gateway.sim.text import embeddings_body, grow_tokens, prompt_words, token_json
from gateway.sim.turns import (
    BadTurn,
    Turn,
    int_or_none,
    last_user_text,
    plan_turn,
    stops_of,
    text_of,
)


class OpenAIEngine(FaultyEngine):
    """Chat and text completions (with tools, stop sequences, cached usage) and embeddings."""

    async def _open(
        self, scope: Scope, receive: Receive, send: Send
    ) -> tuple[Record, dict[str, Any], str] | None:
        """Read, record and vet a /v1 POST; answers and returns None when it cannot run.

        The record it returns is open: the caller must _leave it when its answer ends.
        """
        record, body = await self._arrive(scope, receive)
        error = self._check(scope, post=True)
        if error is None:
            if not isinstance(body, dict):
                error = (
                    400,
                    error_body(
                        "The body must be a JSON object", "invalid_request_error", "invalid_json"
                    ),
                )
            else:
                model = body.get("model")
                if isinstance(model, str) and model in self.config.models:
                    return record, body, model
                error = (
                    404,
                    error_body(
                        f"The model '{model}' does not exist",
                        "invalid_request_error",
                        "model_not_found",
                        "model",
                    ),
                )
        await self._refuse(send, record, error)
        return None

    # -- chat and text completions --

    async def _chat(self, scope: Scope, receive: Receive, send: Send) -> None:
        await self._complete(scope, receive, send, chat=True)

    async def _completions(self, scope: Scope, receive: Receive, send: Send) -> None:
        await self._complete(scope, receive, send, chat=False)

    async def _complete(self, scope: Scope, receive: Receive, send: Send, *, chat: bool) -> None:
        opened = await self._open(scope, receive, send)
        if opened is None:
            return
        record, body, model = opened
        try:
            cfg = self.config
            prompt = body.get("messages") if chat else body.get("prompt")
            n = max(cfg.tokens, 0)
            finish = "stop"
            limit = body.get("max_completion_tokens", body.get("max_tokens"))
            if isinstance(limit, int) and not isinstance(limit, bool) and limit < n:
                n = max(limit, 0)
                finish = "length"
            options = body.get("stream_options")
            usage_chunk = (
                cfg.stream_usage
                and isinstance(options, dict)
                and options.get("include_usage") is True
            )
            tools = body.get("tools")
            stop = body.get("stop")
            plain = PlainJob(
                chat=chat,
                model=model,
                n=n,
                finish=finish,
                prompt_tokens=prompt_words(prompt),
                priority=priority_of(body),
                usage_chunk=usage_chunk,
            )
            job: Job
            # Plain requests carry neither and report no cache: only the others pay for more.
            if tools or stop or cfg.cached_tokens is not None:
                try:
                    turn = (
                        self._chat_turn(body, chat, tools, stop, limit) if tools or stop else None
                    )
                except BadTurn as exc:
                    error = error_body(
                        str(exc), "invalid_request_error", "invalid_tool_choice", "tool_choice"
                    )
                    await self._finish(send, record, 400, error)
                    return
                plain["n"] = n if turn is None else turn.generated
                job = TurnJob(cached=cfg.cached_tokens, turn=turn, **plain)
            else:
                job = Job(**plain)
            if len(token_json) < n:
                grow_tokens(n)
            stream = body.get("stream") is True
            delay = cfg.token_delay
            if cfg.directives and await self._with_fault(
                receive,
                send,
                record,
                faults.directive_text(body),
                stream,
                job,
                lambda wait: self._generate(job, wait),
            ):
                return
            # The instant engine's hot path: no waiting, no watcher task, no sleep.
            if not stream and delay <= 0 and self.slots.try_acquire():
                try:
                    payload = self.chat_whole(job)
                finally:
                    self.slots.release()
                await self._finish(send, record, 200, payload)
                return
            if stream:
                run = (
                    self.stream_tokens(send, record, job, delay)
                    if job.turn is None
                    else self.stream_events(send, record, job, delay, CHAT)
                )
                await self._guarded(receive, send, record, run)
            else:
                await self._guarded(receive, send, record, self._generate(job, delay))
        finally:
            self._leave(record)

    def _chat_turn(
        self, body: dict[str, Any], chat: bool, tools: Any, stop: Any, limit: Any
    ) -> Turn:
        """The turn of a chat or text completion that carries tools or stop sequences."""
        specs: list[tuple[str, Any]] = []
        mode, named, tool_result, user_text = "auto", None, None, ""
        if chat and isinstance(tools, list):
            for tool in tools:
                function = tool.get("function") if isinstance(tool, dict) else None
                if isinstance(function, dict) and isinstance(function.get("name"), str):
                    specs.append((function["name"], function.get("parameters")))
            choice = body.get("tool_choice")
            if choice in ("none", "required"):
                mode = choice
            elif isinstance(choice, dict) and isinstance(choice.get("function"), dict):
                mode, named = "named", choice["function"].get("name")
            messages = body.get("messages")
            if isinstance(messages, list) and messages:
                last = messages[-1]
                if isinstance(last, dict) and last.get("role") == "tool":
                    tool_result = text_of(last.get("content"), ("text",))
                user_text = last_user_text(messages)
        self._seq += 1
        prefix = "chatcmpl-tool-sim" if self.config.server_info == "vllm" else "call_sim"
        base = self._seq
        return plan_turn(
            tokens=max(self.config.tokens, 0),
            tools=specs,
            mode=mode,
            named=named,
            tool_result=tool_result,
            user_text=user_text,
            limit=int_or_none(limit),
            stops=stops_of(stop),
            calls=self.config.tool_calls if body.get("parallel_tool_calls") is not False else 1,
            call_id=lambda i: f"{prefix}{base}_{i}",
        )

    # -- embeddings --

    async def _embeddings(self, scope: Scope, receive: Receive, send: Send) -> None:
        opened = await self._open(scope, receive, send)
        if opened is None:
            return
        record, body, model = opened
        try:
            await self._run_embeddings(receive, send, record, body, model)
        finally:
            self._leave(record)

    async def _run_embeddings(
        self, receive: Receive, send: Send, record: Record, body: dict[str, Any], model: str
    ) -> None:
        value = body.get("input")
        items: list[Any]
        if isinstance(value, str):
            items = [value]
        elif (
            isinstance(value, list)
            and value
            and all(isinstance(v, int) and not isinstance(v, bool) for v in value)
        ):
            items = [value]
        elif isinstance(value, list) and value and all(isinstance(v, str | list) for v in value):
            items = value
        else:
            await self._finish(
                send,
                record,
                400,
                error_body(
                    "input must be a string or a list of strings",
                    "invalid_request_error",
                    "invalid_input",
                    "input",
                ),
            )
            return
        priority = priority_of(body)
        if self.config.directives and await self._with_fault(
            receive,
            send,
            record,
            faults.directive_text(body),
            False,
            None,
            lambda wait: self._embed(model, items, priority, wait),
        ):
            return
        if self.slots.try_acquire():
            try:
                payload = embeddings_body(model, items)
            finally:
                self.slots.release()
            await self._finish(send, record, 200, payload)
            return
        await self._guarded(receive, send, record, self._embed(model, items, priority))

    async def _embed(
        self, model: str, items: list[Any], priority: int | None, delay: float = 0.0
    ) -> bytes:
        await self.slots.acquire(priority)
        try:
            if delay > 0:
                await asyncio.sleep(delay)
            return embeddings_body(model, items)
        finally:
            self.slots.release()
