"""The simulated GPU's model (gateway/sim/gpu.py): the batch bound, the engine's own FCFS queue,
the KV cache and preemption of the newest sequence, step time growing with the batch, and its
gauges in each engine's /metrics shape, read back by the gateway's own reader."""

from __future__ import annotations

import asyncio
import contextlib
import time
from concurrent.futures import ThreadPoolExecutor

import httpx
import pytest

from gateway.engines.gauges import read
from gateway.sim.config import SimConfig
from gateway.sim.engine import SimEngine
from gateway.sim.gpu import Gpu, GpuConfig, Sequence
from gateway.sim.server import SimServer


async def collect(gpu: Gpu, prompt: int, n: int) -> list[int]:
    return [token async for token in gpu.generate(prompt, n)]


async def test_every_sequence_gets_all_its_tokens_in_order():
    gpu = Gpu(GpuConfig(batch=2, step_ms=0.5, step_ms_per_seq=0.1))
    results = await asyncio.gather(*(collect(gpu, 10, 5) for _ in range(5)))
    assert results == [[0, 1, 2, 3, 4]] * 5
    assert gpu.max_running_seen == 2
    assert gpu.max_waiting_seen >= 3
    assert not gpu.running and not gpu.waiting


def test_at_most_a_batch_runs_and_the_rest_waits_in_arrival_order():
    gpu = Gpu(GpuConfig(batch=3))
    seqs = [_seq(prompt=10, wanted=4) for _ in range(5)]
    gpu.waiting.extend(seqs)
    gpu.schedule()
    assert gpu.running == seqs[:3] and list(gpu.waiting) == seqs[3:]


def test_the_head_of_the_queue_that_does_not_fit_blocks_those_behind_it():
    gpu = Gpu(GpuConfig(batch=8, kv_tokens=100))
    big, small = _seq(prompt=200, wanted=1), _seq(prompt=5, wanted=1)
    gpu.waiting.extend([big, small])
    gpu.schedule()
    assert gpu.running == [] and list(gpu.waiting) == [big, small]


def test_a_cache_too_full_for_the_next_step_preempts_the_newest_running_sequence():
    gpu = Gpu(GpuConfig(batch=4, kv_tokens=40, token_budget=1000))
    first, second = _seq(prompt=15, wanted=100), _seq(prompt=15, wanted=100)
    gpu.waiting.extend([first, second])
    gpu.schedule()
    gpu.advance()
    assert gpu.running == [first, second]
    for _ in range(4):
        gpu.schedule()
        gpu.advance()
    # 2 x (15 + 5) = 40 held: the next step needs 2 more, so the newest goes back, from scratch.
    gpu.schedule()
    assert gpu.running == [first] and list(gpu.waiting) == [second]
    assert (second.prefilled, second.generated, gpu.preemptions) == (0, 0, 1)


async def test_a_preempted_sequences_client_gets_each_token_once():
    gpu = Gpu(GpuConfig(batch=4, kv_tokens=40, token_budget=1000, step_ms=0.1, step_ms_per_seq=0))
    results = await asyncio.gather(collect(gpu, 15, 12), collect(gpu, 15, 12))
    assert gpu.preemptions >= 1  # 2 x (15 + 12) does not fit in 40
    assert results == [list(range(12))] * 2


def test_halving_the_gpu_while_it_runs_preempts_what_no_longer_fits_and_admits_no_more():
    engine = SimEngine(SimConfig(gpu_batch=4, gpu_kv_tokens=400))
    gpu = engine.gpu
    assert gpu is not None
    seqs = [_seq(prompt=50, wanted=100) for _ in range(6)]
    gpu.waiting.extend(seqs)
    gpu.schedule()
    gpu.advance()
    assert gpu.running == seqs[:4]
    # Another tenant takes half: POST /sim/config reshapes the same GPU in place.
    engine.configure(gpu_batch=2, gpu_kv_tokens=120)
    assert engine.gpu is gpu and gpu.config.batch == 2
    gpu.schedule()
    # 4 x 51 held, and 4 more for the step, do not fit in 120: the newest two go back, in order.
    assert gpu.running == seqs[:2]
    assert list(gpu.waiting) == seqs[2:]
    gpu.advance()
    gpu.schedule()
    assert gpu.running == seqs[:2]  # the batch of 2 is full: nothing more is admitted


def test_no_sequence_is_admitted_in_a_step_that_preempted():
    gpu = Gpu(GpuConfig(batch=4, kv_tokens=22, token_budget=1000))
    first = _seq(prompt=20, wanted=100)
    gpu.waiting.append(first)
    gpu.schedule()
    gpu.advance()
    gpu.waiting.append(_seq(prompt=1, wanted=1))
    gpu.schedule()
    gpu.advance()
    gpu.schedule()  # 20 + 2 held: no room for another token; first itself is preempted
    assert gpu.preemptions == 1 and gpu.running == []


def test_a_long_prompt_is_prefilled_in_chunks_of_the_token_budget():
    gpu = Gpu(GpuConfig(batch=4, token_budget=100))
    seq = _seq(prompt=250, wanted=2)
    gpu.waiting.append(seq)
    prefills = []
    for _ in range(3):
        prefills.append(gpu.schedule())
        gpu.advance()
    assert prefills == [100, 100, 50]
    assert seq.generated == 1  # the first token comes with the last chunk


async def test_a_step_takes_longer_the_more_sequences_run():
    async def timed(batch: int) -> float:
        gpu = Gpu(GpuConfig(batch=batch, step_ms=2, step_ms_per_seq=2, prefill_ms_per_1k=0))
        start = time.monotonic()
        await asyncio.gather(*(collect(gpu, 1, 10) for _ in range(batch)))
        return (time.monotonic() - start) / 10  # seconds per step (one token each)

    one, eight = await timed(1), await timed(8)
    assert eight > 2.5 * one  # 2 + 2 x 8 = 18 ms against 4 ms


async def test_a_client_that_leaves_takes_its_sequence_out_at_once():
    gpu = Gpu(GpuConfig(batch=1, step_ms=1))
    stream = gpu.generate(5, 1000)
    async with contextlib.aclosing(stream):
        await anext(stream)
        assert len(gpu.running) == 1
    assert gpu.running == []
    waiting = gpu.generate(5, 10)
    task = asyncio.ensure_future(anext(waiting))
    await asyncio.sleep(0.01)
    task.cancel()
    with contextlib.suppress(asyncio.CancelledError):
        await task
    await waiting.aclose()
    assert not gpu.waiting and not gpu.running


@pytest.mark.parametrize("kind", ["vllm", "sglang", "llamacpp"])
def test_its_gauges_read_back_through_the_gateways_reader_in_each_engines_shape(kind):
    gpu = Gpu(GpuConfig(batch=2, kv_tokens=1000))
    gpu.waiting.extend(_seq(prompt=100, wanted=10) for _ in range(5))
    gpu.schedule()
    gpu.advance()
    gauges = read(gpu.metrics(kind), kind)
    assert (gauges.running, gauges.waiting) == (2, 3)
    if kind != "llamacpp":
        assert gauges.kv_usage == pytest.approx(0.202, abs=0.01)


def _seq(*, prompt: int, wanted: int) -> Sequence:
    return Sequence(prompt=prompt, wanted=wanted)


# ----- in the sim: every generation through the GPU, its gauges on /metrics -----------------


def test_the_sim_with_the_gpu_on_answers_through_its_batch_and_shows_its_queue_on_metrics():
    config = SimConfig(
        tokens=40, gpu_batch=2, gpu_step_ms=5, gpu_step_ms_per_seq=0, metrics="vllm"
    )
    with SimServer(config) as sim, httpx.Client(timeout=30) as http:

        def chat(stream: bool) -> int:
            body = {"model": "sim-small", "messages": [{"role": "user", "content": "hi"}]}
            answer = http.post(sim.url + "/v1/chat/completions", json={**body, "stream": stream})
            return answer.status_code

        with ThreadPoolExecutor(6) as pool:
            answers = [pool.submit(chat, i % 2 == 0) for i in range(6)]
            seen = []
            while not all(a.done() for a in answers):
                seen.append(read(http.get(sim.url + "/metrics").content, "vllm"))
        assert [a.result() for a in answers] == [200] * 6
        assert max(g.running for g in seen) == 2  # the batch bound
        assert max(g.waiting for g in seen) >= 1  # the engine's own queue
        assert read(http.get(sim.url + "/metrics").content, "vllm").running == 0


def test_the_sims_metrics_answer_404_unless_asked_for_and_follow_the_slots_without_a_gpu():
    with SimServer(SimConfig()) as plain, httpx.Client() as http:
        assert http.get(plain.url + "/metrics").status_code == 404
        http.post(plain.url + "/sim/config", json={"metrics": "llamacpp"})
        text = http.get(plain.url + "/metrics").text
        assert read(text, "llamacpp").running == 0
        refused = http.post(plain.url + "/sim/config", json={"metrics": "tgi"})
        assert refused.status_code == 400


def test_the_gpus_batch_can_shrink_while_it_runs():
    with SimServer(SimConfig(gpu_batch=8)) as sim, httpx.Client() as http:
        state = http.post(sim.url + "/sim/config", json={"gpu_batch": 4}).json()
        assert state["gpu_batch"] == 4
        assert http.post(sim.url + "/sim/config", json={"gpu_batch": -1}).status_code == 400
