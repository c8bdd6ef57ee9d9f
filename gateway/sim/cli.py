"""`python -m gateway.sim`'s arguments."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Iterator

import uvicorn

from gateway.sim.config import METRICS_SHAPES, SERVER_INFO_STYLES, SimConfig
from gateway.sim.engine import SimEngine
from gateway.sim.server import uvicorn_config


def _parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="python -m gateway.sim", description="Run the simulated OpenAI-compatible engine."
    )
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=9100)
    parser.add_argument("--slots", type=int, default=4, help="concurrent generations")
    parser.add_argument("--tokens", type=int, default=16, help="tokens per completion")
    parser.add_argument(
        "--token-delay-ms", type=float, default=20.0, help="delay between tokens; 0 = instant"
    )
    parser.add_argument("--models", default="sim-small,sim-large", help="comma-separated ids")
    parser.add_argument(
        "--server-info", choices=SERVER_INFO_STYLES, default="none", help="the engine imitated"
    )
    parser.add_argument("--sglang-version", default=SimConfig.sglang_version)
    parser.add_argument("--vllm-version", default=SimConfig.vllm_version)
    parser.add_argument("--api-key", default=None)
    parser.add_argument(
        "--priority-scheduling",
        action="store_true",
        help="admit waiting requests by the body's `priority` field",
    )
    parser.add_argument("--sglang-low-first", action="store_true")
    parser.add_argument("--sglang-schedule-policy", default="fcfs")
    parser.add_argument(
        "--max-queued-requests", type=int, default=None, help="refuse waiters beyond this many"
    )
    parser.add_argument(
        "--directives", action="store_true", help="honour [[sim:...]] fault directives"
    )
    parser.add_argument("--record-limit", type=int, default=1000)
    parser.add_argument(
        "--messages", action="store_true", help="serve /v1/messages and its count_tokens"
    )
    parser.add_argument("--responses", action="store_true", help="serve /v1/responses")
    parser.add_argument(
        "--responses-store",
        action="store_true",
        help="keep stored responses in memory for previous_response_id",
    )
    parser.add_argument(
        "--tool-calls", type=int, default=1, help="calls in a tool answer when parallel is allowed"
    )
    parser.add_argument(
        "--cached-tokens", type=int, default=None, help="prompt tokens reported as cached"
    )
    parser.add_argument(
        "--no-stream-usage",
        action="store_true",
        help="end no stream with a usage chunk, include_usage or not (llama-cpp-python's server)",
    )
    gpu = parser.add_argument_group("the simulated GPU (gateway/sim/gpu.py; off by default)")
    gpu.add_argument("--gpu-batch", type=int, default=0, help="running sequences at most (0: off)")
    gpu.add_argument("--gpu-kv-tokens", type=int, default=SimConfig.gpu_kv_tokens)
    gpu.add_argument("--gpu-step-ms", type=float, default=SimConfig.gpu_step_ms)
    gpu.add_argument("--gpu-step-ms-per-seq", type=float, default=SimConfig.gpu_step_ms_per_seq)
    gpu.add_argument(
        "--gpu-prefill-ms-per-1k", type=float, default=SimConfig.gpu_prefill_ms_per_1k
    )
    parser.add_argument(
        "--metrics",
        default="none",
        choices=METRICS_SHAPES,
        help="serve GET /metrics in this engine's shape",
    )
    return parser.parse_args(argv)


def _iter_models(spec: str) -> Iterator[str]:
    for name in spec.split(","):
        if name.strip():
            yield name.strip()


def main(argv: list[str] | None = None) -> None:
    args = _parse_args(argv)
    config = SimConfig(
        models=list(_iter_models(args.models)),
        slots=args.slots,
        tokens=args.tokens,
        token_delay=args.token_delay_ms / 1000.0,
        api_key=args.api_key,
        server_info=args.server_info,
        sglang_version=args.sglang_version,
        sglang_schedule_policy=args.sglang_schedule_policy,
        sglang_low_first=args.sglang_low_first,
        vllm_version=args.vllm_version,
        priority_scheduling=args.priority_scheduling,
        max_queued_requests=args.max_queued_requests,
        directives=args.directives,
        record_limit=args.record_limit,
        messages=args.messages,
        responses=args.responses,
        responses_store=args.responses_store,
        tool_calls=max(args.tool_calls, 1),
        cached_tokens=args.cached_tokens,
        stream_usage=not args.no_stream_usage,
        gpu_batch=args.gpu_batch,
        gpu_kv_tokens=args.gpu_kv_tokens,
        gpu_step_ms=args.gpu_step_ms,
        gpu_step_ms_per_seq=args.gpu_step_ms_per_seq,
        gpu_prefill_ms_per_1k=args.gpu_prefill_ms_per_1k,
        metrics=args.metrics,
    )
    engine = SimEngine(config)
    server = uvicorn.Server(uvicorn_config(engine, args.host, args.port, fast=True))
    print(
        f"aiplane-sim serving {', '.join(config.models)} on http://{args.host}:{args.port}",
        file=sys.stderr,
    )
    server.run()


if __name__ == "__main__":
    main()
