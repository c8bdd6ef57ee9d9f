"""Anthropic's /v1/messages (and its count_tokens) and OpenAI's /v1/responses, served natively
as the engines that have them do (rows 14-18 of the fidelity table in gateway/sim/engine.py)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Coroutine
from typing import Any

from gateway.core.asgi import Receive, Scope, Send
from gateway.sim import faults
from gateway.sim.errors import anthropic_error, error_body, error_inner
from gateway.sim.faulty import FaultyEngine
from gateway.sim.jobs import Job, Record, TurnJob, priority_of
from gateway.sim.messages import anthropic_tool_result, messages_problem, messages_prompt
from gateway.sim.responses import response_items, responses_problem, responses_prompt
from gateway.sim.surfaces import MESSAGES, RESPONSES, Surface
from gateway.sim.turns import BadTurn, Turn, last_user_text, plan_turn, text_of
from gateway.sim.wire import delayed, encode, send_bytes


class SurfaceEngine(FaultyEngine):
    """The Messages and Responses paths, each off (404) unless its flag is on."""

    async def _not_served(self, send: Send) -> None:
        """What an engine without the surface answers: 404, as for any unknown path."""
        await send_bytes(send, 404, error_body("Not found", "invalid_request_error", "not_found"))

    async def _open_surface(
        self, scope: Scope, receive: Receive, send: Send, surface: Surface
    ) -> tuple[Record, dict[str, Any]] | None:
        """Read, record and vet a POST to a surface that checks its own body and answers in its
        own envelope (OpenAIEngine._open for the others); None when it answered already.

        The record it returns is open: the caller must _leave it when its answer ends.
        """
        record, body = await self._arrive(scope, receive)
        error = self._check(scope, post=True, surface=surface)
        if error is None:
            if isinstance(body, dict):
                return record, body
            error = 400, surface.invalid(self, "The body must be a JSON object")
        await self._refuse(send, record, error)
        return None

    def _unknown_model(self, surface: Surface, model: str) -> tuple[int, bytes] | None:
        if model in self.config.models:
            return None
        if surface is MESSAGES:
            if self.config.server_info == "vllm":
                message = f"The model `{model}` does not exist."
                return 404, anthropic_error("anthropic-vllm", 404, message)
            return 404, anthropic_error("anthropic", 404, f"model: {model}")
        message = f"The model '{model}' does not exist"
        return 404, error_body(message, "invalid_request_error", "model_not_found", "model")

    async def _refused(
        self,
        send: Send,
        record: Record,
        surface: Surface,
        problem: str | None,
        body: dict[str, Any],
    ) -> bool:
        """Answer a body that `problem` finds malformed, or one that names a model not served
        here, as the surface does; True when it answered."""
        if problem is not None:
            await self._finish(send, record, 400, surface.invalid(self, problem))
            return True
        unknown = self._unknown_model(surface, body["model"])
        if unknown is not None:
            await self._finish(send, record, *unknown)
            return True
        return False

    def _turn_job(
        self,
        body: dict[str, Any],
        turn: Turn,
        *,
        prompt_tokens: int,
        priority: int | None,
        ident: str,
        store: bool = False,
    ) -> TurnJob:
        """The job of a Messages or Responses request: its turn, its body kept for the answer
        to echo, and the configured cached tokens."""
        return TurnJob(
            chat=True,
            model=body["model"],
            n=turn.generated,
            finish=turn.finish,
            prompt_tokens=prompt_tokens,
            priority=priority,
            usage_chunk=False,
            cached=self.config.cached_tokens,
            turn=turn,
            body=body,
            ident=ident,
            store=store,
        )

    async def _generation(
        self,
        receive: Receive,
        send: Send,
        record: Record,
        job: Job,
        stream: bool,
        text: str | None,
        surface: Surface,
    ) -> None:
        """Run a surface's generation: its fault if `text` asks for one, else its answer."""
        delay = self.config.token_delay
        if self.config.directives and await self._with_fault(
            receive,
            send,
            record,
            text,
            stream,
            job,
            lambda wait: self._generate(job, wait, surface),
            surface,
        ):
            return
        run: Coroutine[Any, Any, bytes | None]
        if stream:
            run = self.stream_events(send, record, job, delay, surface)
        else:
            run = self._generate(job, delay, surface)
        await self._guarded(receive, send, record, run, surface)

    async def _serve_surface(
        self,
        surface: Surface,
        run: Callable[[Receive, Send, Record, dict[str, Any]], Awaitable[None]],
        scope: Scope,
        receive: Receive,
        send: Send,
    ) -> None:
        """A request to Messages (or its count_tokens) or Responses: a 404 where the engine
        does not serve it, else `run` on its open record, closed whichever way `run` ends."""
        if not surface.served(self):
            await self._not_served(send)
            return
        opened = await self._open_surface(scope, receive, send, surface)
        if opened is None:
            return
        record, body = opened
        try:
            await run(receive, send, record, body)
        finally:
            self._leave(record)

    # -- Anthropic's /v1/messages --

    async def _run_messages(
        self, receive: Receive, send: Send, record: Record, body: dict[str, Any]
    ) -> None:
        vllm = self.config.server_info == "vllm"
        if await self._refused(send, record, MESSAGES, messages_problem(body, count=False), body):
            return
        try:
            turn = self._messages_turn(body)
        except BadTurn as exc:
            await self._finish(send, record, 400, MESSAGES.invalid(self, str(exc)))
            return
        self._seq += 1
        job = self._turn_job(
            body,
            turn,
            prompt_tokens=messages_prompt(body),
            # vLLM's Anthropic request has no priority: the chat request it becomes runs at 0.
            priority=None if vllm else priority_of(body),
            ident=f"chatcmpl-sim{self._seq}" if vllm else f"msg_sim{self._seq}",
        )
        stream = body.get("stream") is True
        await self._generation(
            receive, send, record, job, stream, faults.directive_text(body), MESSAGES
        )

    def _messages_turn(self, body: dict[str, Any]) -> Turn:
        cfg = self.config
        tools = [(tool["name"], tool.get("input_schema")) for tool in body.get("tools") or ()]
        choice = body.get("tool_choice") or {"type": "auto"}
        mode = {"auto": "auto", "any": "required", "none": "none", "tool": "named"}[choice["type"]]
        messages = body["messages"]
        self._seq += 1
        base = self._seq
        prefix = "chatcmpl-tool-sim" if cfg.server_info == "vllm" else "toolu_sim"
        return plan_turn(
            tokens=max(cfg.tokens, 0),
            tools=tools,
            mode=mode,
            named=choice.get("name"),
            tool_result=anthropic_tool_result(messages[-1]) if messages else None,
            user_text=last_user_text(messages),
            limit=body["max_tokens"],
            stops=body.get("stop_sequences") or [],
            calls=1 if choice.get("disable_parallel_tool_use") is True else cfg.tool_calls,
            call_id=lambda i: f"{prefix}{base}_{i}",
        )

    async def _run_count_tokens(
        self, receive: Receive, send: Send, record: Record, body: dict[str, Any]
    ) -> None:
        if await self._refused(send, record, MESSAGES, messages_problem(body, count=True), body):
            return
        count = messages_prompt(body)
        answer: dict[str, Any] = {"input_tokens": count}
        if self.config.server_info == "vllm":
            answer["context_management"] = {"original_input_tokens": count}
        payload = encode(answer).encode()
        # Counting runs no generation, so it takes no slot, even under a fault.
        if self.config.directives and await self._with_fault(
            receive,
            send,
            record,
            faults.directive_text(body),
            False,
            None,
            lambda wait: delayed(wait, payload),
            MESSAGES,
        ):
            return
        await self._finish(send, record, 200, payload)

    # -- OpenAI's /v1/responses --

    async def _run_responses(
        self, receive: Receive, send: Send, record: Record, body: dict[str, Any]
    ) -> None:
        if await self._refused(send, record, RESPONSES, responses_problem(body), body):
            return
        earlier = 0
        previous = body.get("previous_response_id")
        if previous is not None:
            stored = self._stored.get(previous)
            if stored is None:
                await self._finish(send, record, *self._no_previous(previous))
                return
            earlier = stored
        items = response_items(body["input"])
        try:
            turn = self._responses_turn(body, items)
        except BadTurn as exc:
            await self._finish(send, record, 400, RESPONSES.invalid(self, str(exc)))
            return
        self._seq += 1
        job = self._turn_job(
            body,
            turn,
            prompt_tokens=max(earlier + responses_prompt(body, items), 1),
            priority=priority_of(body),
            ident=f"resp_sim{self._seq}",
            store=self.config.responses_store and body.get("store") is not False,
        )
        last = items[-1] if items else None
        text = None
        if last is not None and last.get("role") == "user":
            text = text_of(last.get("content"))
        await self._generation(
            receive, send, record, job, body.get("stream") is True, text, RESPONSES
        )

    def _responses_turn(self, body: dict[str, Any], items: list[dict[str, Any]]) -> Turn:
        cfg = self.config
        tools = [
            (tool["name"], tool.get("parameters"))
            for tool in body.get("tools") or ()
            if tool.get("type") == "function"
        ]
        choice = body.get("tool_choice")
        mode, named = "auto", None
        if choice in ("none", "required"):
            mode = choice
        elif isinstance(choice, dict) and choice.get("type") == "function":
            mode, named = "named", choice.get("name")
        last = items[-1] if items else None
        tool_result = None
        if last is not None and last.get("type") == "function_call_output":
            tool_result = text_of(last.get("output"), ("input_text", "output_text", "text"))
        self._seq += 1
        base = self._seq
        return plan_turn(
            tokens=max(cfg.tokens, 0),
            tools=tools,
            mode=mode,
            named=named,
            tool_result=tool_result,
            user_text=last_user_text(items),
            limit=body.get("max_output_tokens"),
            stops=[],
            calls=cfg.tool_calls if body.get("parallel_tool_calls") is not False else 1,
            call_id=lambda i: f"call_sim{base}_{i}",
        )

    def _no_previous(self, previous: str) -> tuple[int, bytes]:
        """An unknown previous_response_id: vLLM's 404 (responses/serving.py), OpenAI's 400."""
        shape = self.error_shape()
        if shape == "openai":
            message = f"Previous response with id '{previous}' not found."
            return 400, error_body(
                message,
                "invalid_request_error",
                "previous_response_not_found",
                "previous_response_id",
            )
        inner = error_inner(shape, 404, f"Response with id '{previous}' not found.", "")
        inner["type"], inner["param"] = "invalid_request_error", "response_id"
        return 404, encode({"error": inner} if shape == "vllm" else inner).encode()
