"""Learned capacity (max_inflight "auto") against every fixed limit, on the simulated GPU.

One run: a mixed open-loop workload (Poisson arrivals, the same seeded arrivals for every
setting) at 1.5x the engine model's capacity, interactive requests (short prompts and outputs,
class high) beside batch ones (long, class low), against the simulated GPU (gateway/sim/gpu.py)
with priority scheduling off, as vLLM's default fcfs. Each setting starts cold (a fresh
gateway database, a fresh engine): fixed max_inflight 1, 2, 4 ... 128, then auto (floor 1,
ceiling 256). Then the mid-run change: auto again, and halfway the engine's capacity halves
(its batch and its KV cache, POST /sim/config, as when another tenant loads the engine).

    .venv/bin/python bench/capacity.py [--seconds 20] [--change-seconds 40] [--processes 3]
                                       [--fixed 1,2,4,...] [--quick] [--seed 7] [--load 1.5]
                                       [--out docs/capacity]

The defaults take about 5 minutes (9 settings of 20 s, the change run of 40 s, the cold starts);
--quick is the smoke run of tests/test_capacity_bench.py (fixed 4 and auto, 2 s each).

Printed for each setting: goodput (output tokens/s of the requests that completed within the
run), the high class's time to first token p50/p99 (a request still without its first token
when the run stops, at most 5 s after the last arrival, counts what it had waited), the engine's own
waiting queue p99 (its /metrics, read every 0.1 s), the share of the low class's requests that
completed within the run, and the mean limit in force (the gateway's /metrics, every 0.25 s).
Then:

    best fixed   the fixed setting with the highest goodput among those whose high-class TTFT
                 p99 is within REACH (2x) of the lowest high-class TTFT p99 of any fixed
                 setting: a limit that keeps the interactive class interactive
    targets      auto goodput / best fixed's >= 0.95; auto high TTFT p99 / best fixed's <= 1.25;
                 after the change, auto settles within 10 s: from then on, every second's
                 median limit is within 15% of the new steady value (the median of the run's
                 last quarter) and the engine's mean waiting in it at most 1 (the one request a
                 probe above the edge puts there)

--processes N serves it with N gateway processes (`serve`, one port each, the load spread over
them in turn) sharing admission on a private redis-server (each process's limit is the
backend's whole limit, the Lua scripts take it per call): the limit shown is their mean, each
process's is printed beside it.

The plots (matplotlib, Agg) go to --out: sweep.png (goodput and high-class TTFT p99 against the
fixed limit, auto as horizontal lines and a point at its mean learned limit) and timeline.png
(the mid-run change: the learned limit and the engine's waiting over time); the table beside
them as capacity.txt.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import math
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from dataclasses import dataclass, field, replace
from pathlib import Path

import aiohttp

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.overhead import free_port, gateway_env, pct, process, serve_cmd, wait_ready

ROOT = Path(__file__).resolve().parent.parent
PY = sys.executable
REACH = 2.0  # a fixed limit whose high-class TTFT p99 is within this of the best one's
GOODPUT_TARGET, TTFT_TARGET, SETTLE_TARGET = 0.95, 1.25, 10.0
SETTLE_BAND = 0.15  # settled: each second's median limit within this of its new steady value...
SETTLED_WAITING = 1.0  # ...and the engine's mean waiting in it at most this
ENGINE_EVERY, GATEWAY_EVERY = 0.1, 0.25  # seconds between two readings of each
WARM = 5.0  # the TTFT ratio is also shown without the requests of a run's first seconds


# ----- the engine and the workload ---------------------------------------------------------


@dataclass(frozen=True)
class Engine:
    """The simulated GPU's shape (gateway/sim/gpu.py): 16 sequences a step, and a KV cache in
    which 16 of the batch class's whole sequences (1,088 tokens each) take 73%, below where the
    controller stops growing (kv_high, 0.85): the batch is what binds."""

    batch: int = 16
    kv_tokens: int = 24_000
    step_ms: float = 6.0
    step_ms_per_seq: float = 1.0
    prefill_ms_per_1k: float = 10.0

    def args(self) -> list[str]:
        return [
            "--gpu-batch", str(self.batch), "--gpu-kv-tokens", str(self.kv_tokens),
            "--gpu-step-ms", str(self.step_ms), "--gpu-step-ms-per-seq", str(self.step_ms_per_seq),
            "--gpu-prefill-ms-per-1k", str(self.prefill_ms_per_1k),
        ]  # fmt: skip

    def halved(self) -> Engine:
        """Another tenant took half of it: half the batch and half the cache."""
        return replace(self, batch=max(1, self.batch // 2), kv_tokens=self.kv_tokens // 2)


@dataclass(frozen=True)
class Kind:
    """A class of request in the mix."""

    name: str
    priority: str  # the group priority of the token that sends it
    share: float  # of the requests
    prompt: int  # words (the sim counts a word as a token)
    output: int  # tokens


INTERACTIVE = Kind("interactive", "high", 0.5, 64, 16)
BATCH = Kind("batch", "low", 0.5, 1024, 64)
MIX = (INTERACTIVE, BATCH)


def capacity_rps(engine: Engine, mix: tuple[Kind, ...] = MIX) -> float:
    """Requests per second the engine completes with its batch full: each request takes its
    share of the full batch's decode steps, and its prefill stalls the whole step."""
    per_token = (engine.step_ms + engine.step_ms_per_seq * engine.batch) / engine.batch
    ms = sum(
        k.share * (k.output * per_token + engine.prefill_ms_per_1k * k.prompt / 1000) for k in mix
    )
    return 1000 / ms


def arrivals(rate: float, seconds: float, seed: int) -> list[tuple[float, Kind]]:
    """Poisson arrivals at `rate` per second for `seconds`, each of a kind drawn by its share:
    the same list for every setting of one run."""
    rng = random.Random(seed)
    out: list[tuple[float, Kind]] = []
    t = 0.0
    while True:
        t += rng.expovariate(rate)
        if t >= seconds:
            return out
        out.append((t, INTERACTIVE if rng.random() < INTERACTIVE.share else BATCH))


def body(kind: Kind) -> bytes:
    words = " ".join(f"w{i}" for i in range(kind.prompt))
    return json.dumps(
        {
            "model": "sim-small",
            "messages": [{"role": "user", "content": words}],
            "max_tokens": kind.output,
            "stream": True,
        }
    ).encode()


# ----- one request, and a run's records ----------------------------------------------------


@dataclass(slots=True)
class Request:
    kind: Kind
    sent: float  # seconds since the run's start
    first: float | None = None  # the first content token
    tokens: int = 0  # content chunks received
    done: float | None = None  # [DONE]
    status: int | None = None
    error: str | None = None


@dataclass
class Sample:
    at: float  # seconds since the run's start
    values: dict[str, float]


@dataclass
class Run:
    """What one setting measured."""

    setting: str  # "1" ... "128", "auto"
    seconds: float
    requests: list[Request]
    engine: list[Sample]  # running, waiting, kv
    limits: list[Sample]  # the limit in force at each gateway process, "p0", "p1"...
    end: float  # when the run stopped: a request without its first token by then waited so long
    changed_at: float | None = None

    def goodput(self) -> float:
        done = [r for r in self.requests if r.done is not None and r.done <= self.seconds]
        return sum(r.tokens for r in done) / self.seconds

    def ttft(self, kind: Kind, since: float = 0.0) -> list[float]:
        """Each request's time to first token (of those sent from `since` on); one still without
        it when the run stopped counts what it had waited."""
        return [
            (r.first if r.first is not None else self.end) - r.sent
            for r in self.requests
            if r.kind is kind and r.sent >= since
        ]

    def completed(self, kind: Kind) -> float:
        sent = [r for r in self.requests if r.kind is kind]
        done = [r for r in sent if r.done is not None and r.done <= self.seconds]
        return len(done) / max(1, len(sent))

    def waiting_p99(self) -> float:
        return pct([s.values["waiting"] for s in self.engine if s.at <= self.seconds], 99)

    def limit(self, s: Sample, process: str | None = None) -> float:
        """The limit in force: one process's, or the mean of every process's (each is the
        backend's whole limit, in shared admission too: the Lua scripts take it per call)."""
        if process is not None:
            return s.values[process]
        return statistics.mean(v for k, v in s.values.items() if k.startswith("p"))

    def mean_limit(self, process: str | None = None) -> float:
        seen = [self.limit(s, process) for s in self.limits if s.at <= self.seconds]
        return statistics.mean(seen) if seen else math.nan

    def processes(self) -> list[str]:
        return sorted(k for k in self.limits[0].values if k.startswith("p")) if self.limits else []

    def errors(self) -> int:
        return sum(1 for r in self.requests if r.error is not None or r.status not in (None, 200))


# ----- the load ---------------------------------------------------------------------------


async def send(
    session: aiohttp.ClientSession, url: str, key: str, payload: bytes, req: Request, t0: float
) -> None:
    headers = {"Authorization": f"Bearer {key}", "Content-Type": "application/json"}
    loop = asyncio.get_running_loop()
    try:
        async with session.post(url, data=payload, headers=headers) as resp:
            req.status = resp.status
            if resp.status != 200:
                await resp.read()
                return
            async for line in resp.content:
                if not line.startswith(b"data: "):
                    continue
                if line.startswith(b"data: [DONE]"):
                    req.done = loop.time() - t0
                    return
                if b'"content":"' in line and b'"content":""' not in line:
                    req.tokens += 1
                    if req.first is None:
                        req.first = loop.time() - t0
    except (aiohttp.ClientError, TimeoutError) as err:
        req.error = type(err).__name__


def gauges(text: str, names: dict[str, str]) -> dict[str, float]:
    """The first sample of each named metric family in a Prometheus exposition."""
    out: dict[str, float] = {}
    for line in text.splitlines():
        if line.startswith("#"):
            continue
        name = line.split("{", 1)[0].split(" ", 1)[0]
        if name in names and names[name] not in out:
            out[names[name]] = float(line.rsplit(" ", 1)[1])
    return out


ENGINE_GAUGES = {
    "vllm:num_requests_running": "running",
    "vllm:num_requests_waiting": "waiting",
    "vllm:kv_cache_usage_perc": "kv",
}
GATEWAY_GAUGES = {
    "aiplane_backend_capacity": "limit",
    "aiplane_backend_capacity_from_latency": "latency",
}


async def sample_engine(
    session: aiohttp.ClientSession, sim_port: int, out: list[Sample], t0: float,
    stop: asyncio.Event,
) -> None:  # fmt: skip
    """The engine's own gauges, from its /metrics, every ENGINE_EVERY."""
    loop = asyncio.get_running_loop()
    url = f"http://127.0.0.1:{sim_port}/metrics"
    while not stop.is_set():
        at = loop.time() - t0
        with contextlib.suppress(aiohttp.ClientError, TimeoutError, ValueError, IndexError):
            async with session.get(url) as resp:
                out.append(Sample(at, gauges(await resp.text(), ENGINE_GAUGES)))
        await asyncio.sleep(max(0.0, ENGINE_EVERY - (loop.time() - t0 - at)))


async def sample_limits(
    session: aiohttp.ClientSession, ports: list[int], out: list[Sample], t0: float,
    stop: asyncio.Event,
) -> None:  # fmt: skip
    """Every process's limit in force for the backend, read together every GATEWAY_EVERY."""
    loop = asyncio.get_running_loop()

    async def one(port: int) -> dict[str, float]:
        async with session.get(f"http://127.0.0.1:{port}/metrics") as resp:
            return gauges(await resp.text(), GATEWAY_GAUGES)

    while not stop.is_set():
        at = loop.time() - t0
        with contextlib.suppress(aiohttp.ClientError, TimeoutError, ValueError, IndexError):
            read = await asyncio.gather(*(one(p) for p in ports))
            values = {f"p{i}": g["limit"] for i, g in enumerate(read) if "limit" in g}
            values["latency"] = sum(g.get("latency", 0.0) for g in read)
            if len(values) == len(ports) + 1:
                out.append(Sample(at, values))
        await asyncio.sleep(max(0.0, GATEWAY_EVERY - (loop.time() - t0 - at)))


async def drive(
    ports: list[int], sim_port: int, keys: dict[str, str], plan: list[tuple[float, Kind]],
    seconds: float, grace: float, change: tuple[float, Engine] | None,
) -> tuple[list[Request], list[Sample], list[Sample], float]:  # fmt: skip
    """Send the plan open loop, spread over the gateway processes in turn, while reading the
    engine's and the gateways' gauges; at `change` (when given) reshape the engine."""
    loop = asyncio.get_running_loop()
    payloads = {kind.name: body(kind) for kind in MIX}
    connector = aiohttp.TCPConnector(limit=0, force_close=False)
    timeout = aiohttp.ClientTimeout(total=None, sock_connect=10)
    requests: list[Request] = []
    engine: list[Sample] = []
    limits: list[Sample] = []
    stop = asyncio.Event()
    async with aiohttp.ClientSession(connector=connector, timeout=timeout) as session:
        t0 = loop.time()
        samplers = [
            asyncio.create_task(sample_engine(session, sim_port, engine, t0, stop)),
            asyncio.create_task(sample_limits(session, ports, limits, t0, stop)),
        ]
        changer = None
        if change is not None:
            changer = asyncio.create_task(reshape(session, sim_port, change, t0))
        tasks = []
        for i, (at, kind) in enumerate(plan):
            await asyncio.sleep(max(0.0, at - (loop.time() - t0)))
            req = Request(kind, loop.time() - t0)
            requests.append(req)
            url = f"http://127.0.0.1:{ports[i % len(ports)]}/v1/chat/completions"
            tasks.append(
                asyncio.create_task(
                    send(session, url, keys[kind.priority], payloads[kind.name], req, t0)
                )
            )
        await asyncio.sleep(max(0.0, seconds - (loop.time() - t0)))
        # The high class's last first tokens are waited for a little (the low class's work
        # keeps the engine as busy as before meanwhile); what is still open then is cut.
        deadline = loop.time() + grace
        while loop.time() < deadline and any(
            r.first is None and r.error is None and r.status in (None, 200)
            for r in requests
            if r.kind is INTERACTIVE
        ):
            await asyncio.sleep(0.05)
        end = loop.time() - t0
        stop.set()
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, *samplers, return_exceptions=True)
        if changer is not None:
            changer.cancel()
    return requests, engine, limits, end


async def reshape(
    session: aiohttp.ClientSession, sim_port: int, change: tuple[float, Engine], t0: float
) -> None:
    at, shape = change
    loop = asyncio.get_running_loop()
    await asyncio.sleep(max(0.0, at - (loop.time() - t0)))
    config = {"gpu_batch": shape.batch, "gpu_kv_tokens": shape.kv_tokens}
    async with session.post(f"http://127.0.0.1:{sim_port}/sim/config", json=config) as resp:
        assert resp.status == 200, await resp.text()


# ----- the processes ----------------------------------------------------------------------


SETUP = """
import json, sqlite3, sys
import django
django.setup()
from django.contrib.auth import get_user_model
from django.db import connection
from accounts.models import GatewayGroup
from accounts.priority import parse_priority
from accounts.services import token_create
from aiplane.catalog import settings_update
from gateway.admin import services as topology

spec = json.load(sys.stdin)
keys = {}
for priority in ("high", "low"):
    user = get_user_model().objects.create_user(f"bench-{priority}", password="bench-password-1")
    group = GatewayGroup.objects.create(name=f"bench-{priority}", priority=parse_priority(priority))
    group.members.add(user)
    keys[priority] = token_create(owner=user, name=f"bench-{priority}")[1]
settings_update(values={"gateway.priority_enabled": True})
backend = {"name": "sim", "base_url": spec["engine"], "models": ["sim-small"],
           "health_path": "/health", "max_inflight": 1}
topology.backend_save(data=backend)
topology.pool_save(data={"name": "chat", "kind": "chat", "backends": ["sim"]}, known_groups=set())
for setting, path in spec["databases"].items():
    if setting == "auto":
        change = {"max_inflight": "auto", "capacity_floor": 1, "capacity_ceiling": 256}
    else:
        change = {"max_inflight": int(setting)}
    topology.backend_save(data={**backend, **change})
    # One copy per setting, each a cold start: WAL mode, so through SQLite's own backup.
    target = sqlite3.connect(path)
    connection.ensure_connection()
    connection.connection.backup(target)
    target.close()
print(json.dumps(keys))
"""


def prepare(env: dict[str, str], sim_port: int, databases: dict[str, Path]) -> dict[str, str]:
    """Migrate once, then write one database per setting (the same users, tokens and pool; the
    backend's max_inflight as the setting says); returns the tokens by priority."""
    subprocess.run(
        [PY, "manage.py", "migrate", "--noinput", "-v", "0"], env=env, cwd=ROOT, check=True
    )
    spec = {
        "engine": f"http://127.0.0.1:{sim_port}/v1",
        "databases": {k: str(v) for k, v in databases.items()},
    }
    out = subprocess.run(
        [PY, "-c", SETUP], env=env, cwd=ROOT, capture_output=True, text=True,
        input=json.dumps(spec),
    )  # fmt: skip
    if out.returncode != 0:
        raise RuntimeError(f"setting up the gateway failed:\n{out.stderr}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def sim_cmd(port: int, engine: Engine) -> list[str]:
    return [
        PY, "-m", "gateway.sim", "--port", str(port), "--server-info", "vllm",
        "--metrics", "vllm", "--models", "sim-small", "--tokens", "100000", *engine.args(),
    ]  # fmt: skip


@dataclass
class Options:
    seconds: float = 20.0
    change_seconds: float = 40.0
    processes: int = 1
    seed: int = 7
    load: float = 1.5  # the arrival rate, in the engine's capacity
    fixed: tuple[int, ...] = (1, 2, 4, 8, 16, 32, 64, 128)
    out: Path | None = ROOT / "docs" / "capacity"
    # After the arrivals: how long the high class's last first tokens are waited for.
    grace: float = 5.0
    quiet: bool = False
    engine: Engine = field(default_factory=Engine)


def one_setting(
    opts: Options, env: dict[str, str], sim_port: int, keys: dict[str, str], db: Path,
    setting: str, seconds: float, change: tuple[float, Engine] | None = None,
) -> Run:  # fmt: skip
    """One setting from a cold start: a fresh engine, fresh gateway processes on their own
    copy of the database (and a fresh redis-server for several)."""
    rate = opts.load * capacity_rps(opts.engine)
    plan = arrivals(rate, seconds, opts.seed)
    run_env = {**env, "DATABASE_URL": f"sqlite:///{db}"}
    with contextlib.ExitStack() as stack:
        stack.enter_context(process(sim_cmd(sim_port, opts.engine), env))
        if opts.processes > 1:
            redis_port = free_port()
            redis = shutil.which("redis-server") or "redis-server"
            stack.enter_context(
                process([redis, "--port", str(redis_port), "--save", "", "--appendonly", "no"], env)
            )
            run_env["AIPLANE_REDIS_URL"] = f"redis://127.0.0.1:{redis_port}/0"
            run_env["AIPLANE_SHARED_PROCESSES"] = str(opts.processes)
        ports = [free_port() for _ in range(opts.processes)]
        for port in ports:
            stack.enter_context(process(serve_cmd(port, 1), run_env))
        wait_ready(sim_port, "/health")
        for port in ports:
            wait_ready(port, "/api/v0/session/csrf")
        wait_healthy(ports)
        if not opts.quiet:
            print(f"  {setting:>4}: {len(plan)} requests over {seconds:.0f} s ...", flush=True)
        requests, engine, limits, end = asyncio.run(
            drive(ports, sim_port, keys, plan, seconds, opts.grace, change)
        )
    return Run(setting, seconds, requests, engine, limits, end, change[0] if change else None)


def wait_healthy(ports: list[int], timeout: float = 30.0) -> None:
    """Until every process has probed the backend healthy (its /metrics says so)."""
    deadline = time.monotonic() + timeout
    pending = set(ports)
    while pending and time.monotonic() < deadline:
        for port in list(pending):
            with contextlib.suppress(OSError):
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=2) as r:
                    text = r.read().decode()
                if 'aiplane_backend_healthy{backend="sim"} 1.0' in text:
                    pending.discard(port)
        time.sleep(0.1)
    if pending:
        raise RuntimeError(f"the backend never became healthy at {sorted(pending)}")


# ----- the figures ------------------------------------------------------------------------


@dataclass
class Figures:
    runs: dict[str, Run]
    change: Run
    best: str
    eligible: list[str]
    settling: Settling
    lines: list[str]


@dataclass
class Settling:
    """How auto followed the mid-run change."""

    before: float  # the median limit over the quarter before the change
    steady: float  # the new steady value: the median limit over the run's last quarter
    reached: float | None  # seconds from the change to the first second that is settled
    settled: float | None  # seconds from the change to the start of settled-from-then-on


def settling(run: Run) -> Settling:
    """A second is settled when its median limit is within SETTLE_BAND of the steady value and
    the engine's mean waiting in it is at most SETTLED_WAITING (the one request a probe above
    the edge puts there); auto has settled from the first second on which every later one is."""
    assert run.changed_at is not None
    at, quarter = run.changed_at, (run.seconds - run.changed_at) / 4

    def median_limit(lo: float, hi: float) -> float:
        seen = [run.limit(s) for s in run.limits if lo <= s.at < hi]
        return statistics.median(seen) if seen else math.nan

    steady = median_limit(run.seconds - quarter, run.seconds + 1)
    before = median_limit(at - quarter, at)
    good = []
    t = at
    while t + 1.0 <= run.seconds:
        limit = median_limit(t, t + 1.0)
        waiting = [s.values["waiting"] for s in run.engine if t <= s.at < t + 1.0]
        good.append(
            (t, abs(limit - steady) <= SETTLE_BAND * steady
             and (not waiting or statistics.mean(waiting) <= SETTLED_WAITING))
        )  # fmt: skip
        t += 1.0
    reached = next((t - at for t, ok in good if ok), None)
    settled = None
    for t, ok in reversed(good):
        if not ok:
            break
        settled = t - at
    return Settling(before, steady, reached, settled)


def figures(runs: dict[str, Run], change: Run, opts: Options) -> Figures:
    fixed = [str(n) for n in opts.fixed]
    p99 = {name: pct(run.ttft(INTERACTIVE), 99) for name, run in runs.items()}
    lowest = min(p99[name] for name in fixed)
    eligible = [name for name in fixed if p99[name] <= REACH * lowest]
    best = max(eligible, key=lambda name: runs[name].goodput())
    follow = settling(change)
    settle = follow.settled
    lines = []
    cap = capacity_rps(opts.engine)
    e = opts.engine
    lines.append(
        f"engine: batch {e.batch}, KV {e.kv_tokens} tokens, step {e.step_ms} + "
        f"{e.step_ms_per_seq} ms x running, prefill {e.prefill_ms_per_1k} ms per 1k tokens; "
        f"capacity {cap:.1f} requests/s"
    )
    lines.append(
        f"load: {opts.load}x = {opts.load * cap:.1f} requests/s open loop (Poisson, seed "
        f"{opts.seed}): {INTERACTIVE.share:.0%} interactive ({INTERACTIVE.prompt} in, "
        f"{INTERACTIVE.output} out, high), {BATCH.share:.0%} batch ({BATCH.prompt} in, "
        f"{BATCH.output} out, low); engine fcfs; {opts.processes} gateway process(es); "
        f"{opts.seconds:.0f} s per setting, each from a cold start"
    )
    lines.append("")
    head = (
        f"{'max_inflight':>12} {'goodput tok/s':>13} {'high TTFT p50':>13} {'p99 (s)':>8} "
        f"{'engine waiting p99':>18} {'low completed':>13} {'mean limit':>10} {'errors':>6}"
    )
    lines.append(head)
    for name, run in runs.items():
        ttft = run.ttft(INTERACTIVE)
        mark = "  <- best fixed" if name == best else ""
        lines.append(
            f"{name:>12} {run.goodput():13.1f} {pct(ttft, 50):13.3f} {p99[name]:8.3f} "
            f"{run.waiting_p99():18.0f} {run.completed(BATCH):13.1%} {run.mean_limit():10.1f} "
            f"{run.errors():6d}{mark}"
        )
    auto = runs["auto"]
    g_ratio = auto.goodput() / runs[best].goodput()
    t_ratio = p99["auto"] / p99[best]
    warm = min(WARM, opts.seconds / 2)
    warm_ratio = pct(auto.ttft(INTERACTIVE, warm), 99) / pct(runs[best].ttft(INTERACTIVE, warm), 99)
    lines.append("")
    lines.append(
        f"best fixed: max_inflight {best} (highest goodput among {', '.join(eligible)}: the "
        f"fixed limits whose high-class TTFT p99 is within {REACH:g}x of the lowest, "
        f"{lowest:.3f} s)"
    )
    lines.append(f"auto goodput / best fixed's          {g_ratio:.3f}   (>= {GOODPUT_TARGET})")
    lines.append(f"auto high TTFT p99 / best fixed's    {t_ratio:.3f}   (<= {TTFT_TARGET})")
    lines.append(
        f"  the same over the requests sent after {warm:g} s (past the cold start): "
        f"{warm_ratio:.3f}"
    )
    half = opts.engine.halved()

    def secs(value: float | None) -> str:
        return f"{value:.1f} s" if value is not None else "never"

    lines.append(
        f"mid-run change at {change.changed_at:.0f} s of {change.seconds:.0f} (batch "
        f"{opts.engine.batch} -> {half.batch}, KV {opts.engine.kv_tokens} -> {half.kv_tokens}): "
        f"auto's limit {follow.before:g} -> {follow.steady:g}; first settled second after "
        f"{secs(follow.reached)}, settled for good after {secs(settle)} (<= {SETTLE_TARGET:g}); "
        f"goodput {change.goodput():.1f} tok/s, high TTFT p99 "
        f"{pct(change.ttft(INTERACTIVE), 99):.3f} s"
    )
    for name, measured in (("auto", auto), ("mid-run change", change)):
        if opts.processes > 1:
            each = " / ".join(f"{measured.mean_limit(p):.1f}" for p in measured.processes())
            lines.append(f"mean learned limit per process ({name}): {each}")
        latency = [s.values["latency"] > 0 for s in measured.limits]
        if any(latency):
            lines.append(
                f"{name}: a limit followed latency alone (no metrics believed) in "
                f"{sum(latency) / len(latency):.0%} of the readings"
            )
    lines.append("")
    lines.append("targets:")
    checks = [
        (f"auto goodput >= {GOODPUT_TARGET}x best fixed's", g_ratio >= GOODPUT_TARGET),
        (f"auto high TTFT p99 <= {TTFT_TARGET}x best fixed's", t_ratio <= TTFT_TARGET),
        (
            f"auto settles within {SETTLE_TARGET:g} s of the change",
            settle is not None and settle <= SETTLE_TARGET,
        ),
    ]
    lines += [f"  {'met ' if ok else 'MISS'}  {name}" for name, ok in checks]
    return Figures(runs, change, best, eligible, follow, lines)


def plot(fig: Figures, out: Path, opts: Options) -> list[Path]:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    out.mkdir(parents=True, exist_ok=True)
    fixed = [n for n in opts.fixed]
    runs, auto = fig.runs, fig.runs["auto"]
    goodput = [runs[str(n)].goodput() for n in fixed]
    p99 = [pct(runs[str(n)].ttft(INTERACTIVE), 99) for n in fixed]
    auto_p99 = pct(auto.ttft(INTERACTIVE), 99)

    f, ax = plt.subplots(figsize=(8, 4.5), dpi=110)
    ax.set_xscale("log", base=2)
    ax.set_xticks(fixed, [str(n) for n in fixed])
    ax.plot(fixed, goodput, "o-", color="tab:blue", label="goodput, fixed")
    ax.axhline(auto.goodput(), color="tab:blue", ls="--", lw=1, label="goodput, auto")
    ax.plot([auto.mean_limit()], [auto.goodput()], "*", ms=14, color="tab:blue")
    ax.set_xlabel("max_inflight (fixed); the stars: auto at its mean learned limit")
    ax.set_ylabel("goodput (output tokens/s)", color="tab:blue")
    ax.set_ylim(bottom=0)
    ax2 = ax.twinx()
    ax2.set_yscale("log")
    ax2.plot(fixed, p99, "s-", color="tab:red", label="high TTFT p99, fixed")
    ax2.axhline(auto_p99, color="tab:red", ls="--", lw=1, label="high TTFT p99, auto")
    ax2.plot([auto.mean_limit()], [auto_p99], "*", ms=14, color="tab:red")
    ax2.set_ylabel("high-class time to first token p99 (s)", color="tab:red")
    ax.axvline(int(fig.best), color="grey", ls=":", lw=1)
    ax.text(int(fig.best), 0, f" best fixed ({fig.best})", color="grey", va="bottom")
    handles = ax.get_legend_handles_labels()[0] + ax2.get_legend_handles_labels()[0]
    ax.legend(handles=handles, loc="center left", fontsize=8)
    procs = f", {opts.processes} gateway processes" if opts.processes > 1 else ""
    ax.set_title(f"fixed max_inflight against auto, {opts.load}x the engine's capacity{procs}")
    f.tight_layout()
    sweep = out / "sweep.png"
    f.savefig(sweep)
    plt.close(f)

    run = fig.change
    f, ax = plt.subplots(figsize=(8, 4), dpi=110)
    at = [s.at for s in run.limits]
    label = "learned limit" if len(run.processes()) == 1 else "learned limit, mean of processes"
    ax.step(at, [run.limit(s) for s in run.limits], where="post", color="tab:green", label=label)
    if len(run.processes()) > 1:
        for p in run.processes():
            ax.step(at, [run.limit(s, p) for s in run.limits], where="post", lw=0.6,
                    color="tab:green", alpha=0.5)  # fmt: skip
    ax.plot([s.at for s in run.engine], [s.values["waiting"] for s in run.engine], lw=0.8,
            color="tab:orange", label="engine waiting")  # fmt: skip
    ax.plot([s.at for s in run.engine], [s.values["running"] for s in run.engine], lw=0.8,
            color="tab:purple", alpha=0.6, label="engine running")  # fmt: skip
    assert run.changed_at is not None
    ax.axvline(run.changed_at, color="grey", ls=":")
    ax.text(
        run.changed_at, ax.get_ylim()[1] * 0.6, " capacity halves ", color="grey", va="top",
        ha="left", bbox={"facecolor": "white", "edgecolor": "none", "alpha": 0.8},
    )  # fmt: skip
    settle = fig.settling.settled
    if settle is not None:
        ax.axvspan(run.changed_at, run.changed_at + settle, color="grey", alpha=0.12)
    ax.set_xlim(0, run.seconds)
    ax.set_xlabel("seconds")
    ax.set_ylabel("requests")
    ax.legend(loc="upper right", fontsize=8)
    settled = f"settled after {settle:.1f} s" if settle is not None else "never settled"
    ax.set_title(f"auto when the engine's capacity halves mid-run ({settled})")
    f.tight_layout()
    timeline = out / "timeline.png"
    f.savefig(timeline)
    plt.close(f)
    return [sweep, timeline]


# ----- the run ----------------------------------------------------------------------------


def run(opts: Options) -> Figures:
    tmp = Path(tempfile.mkdtemp(prefix="aiplane-capacity-"))
    try:
        env = gateway_env(tmp, AIPLANE_OBSERVABILITY="on")
        sim_port = free_port()
        settings = [str(n) for n in opts.fixed] + ["auto"]
        databases = {s: tmp / f"db-{s}" for s in settings}
        keys = prepare(env, sim_port, databases)
        half = opts.change_seconds / 2
        # The mid-run change starts from its own copy of the auto database.
        shutil.copyfile(databases["auto"], tmp / "db-change")
        runs = {
            s: one_setting(opts, env, sim_port, keys, databases[s], s, opts.seconds)
            for s in settings
        }
        change = one_setting(
            opts, env, sim_port, keys, tmp / "db-change", "auto", opts.change_seconds,
            (half, opts.engine.halved()),
        )  # fmt: skip
        return figures(runs, change, opts)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=20.0, help="per setting")
    parser.add_argument("--change-seconds", type=float, default=40.0, help="the mid-run change")
    parser.add_argument("--processes", type=int, default=1, help="gateway processes on Redis")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--load", type=float, default=1.5, help="in the engine's capacity")
    parser.add_argument(
        "--fixed", default="1,2,4,8,16,32,64,128", help="the fixed max_inflight settings"
    )
    parser.add_argument(
        "--out", type=Path, default=None, help="for the plots and the table (default "
        "docs/capacity; with --quick, none unless given)",
    )  # fmt: skip
    parser.add_argument(
        "--quick", action="store_true", help="a smoke run: fixed 4 and auto, 2 s each"
    )
    args = parser.parse_args()
    opts = Options(
        seconds=args.seconds, change_seconds=args.change_seconds, processes=args.processes,
        seed=args.seed, load=args.load, out=args.out or ROOT / "docs" / "capacity",
        fixed=tuple(int(n) for n in args.fixed.split(",")),
    )  # fmt: skip
    if args.quick:
        # A smoke run's figures mean nothing: they do not replace the plots in docs/.
        opts = replace(opts, seconds=2.0, change_seconds=4.0, fixed=(4,), grace=1.0, out=args.out)
    if opts.processes > 1 and shutil.which("redis-server") is None:
        print("--processes above 1 needs redis-server (apt-get install redis-server)")
        return 2
    started = time.monotonic()
    fig = run(opts)
    text = "\n".join(fig.lines)
    print(f"\nlearned capacity ({time.monotonic() - started:.0f} s)\n{text}")
    if opts.out is not None:
        written = plot(fig, opts.out, opts)
        (opts.out / "capacity.txt").write_text(text + "\n")
        written.append(opts.out / "capacity.txt")
        print("\nwritten: " + ", ".join(os.path.relpath(p, ROOT) for p in written))
    return 0


if __name__ == "__main__":
    sys.exit(main())
