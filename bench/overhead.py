"""What aiplane adds on top of the engine: latency at concurrency 1, throughput at 64, TTFT.

Measures, in one run and on this machine, the simulated engine directly (the baseline) and the
same engine through aiplane, then prints the differences and ratios against the targets:

    added latency p50 <= 1.5 ms and p99 <= 4 ms at concurrency 1
    /v1/messages translated to chat: added p50 and TTFT p99 within 0.3 ms of chat's
    >= 1,000 requests/s at concurrency 64 against an instant engine
    added time-to-first-token p99 <= 2 ms
    activity records + metrics cost < 10% of throughput at 64 (--observability both), and
    every request served leaves an activity record
    with allowances configured (--allowances: a token whose owner's group has four generous
    limits, beside one with none, taking turns on the same gateway): at most +0.2 ms added
    p50 at concurrency 1 and at most 10% less throughput at 64
    against the bare-proxy ceiling (bench/bare_proxy.py, FACTS.md) in the same run: gateway
    throughput at 64 >= 0.7x the bare proxy's (aim 0.9x), added p50 at 1 <= 1.8x (aim 1.2x);
    the throughput ratio is the median of --rounds turns of the two (and of --baseline REV's
    gateway, when given, to show what a change since REV costs)

    .venv/bin/python bench/overhead.py [--server uvicorn|daphne] [--seconds 5] [--requests 2000]
                                       [--observability on|off|both] [--pairs 40] [--pair-seconds 1]
                                       [--rounds 8] [--round-seconds 3] [--baseline REV]
                                       [--allowances] [--shared]

--shared compares, in one run, local admission with shared admission on a private redis-server
(added p50 at concurrency 1, target: within 1 ms) and `serve --workers 2` with one worker at
concurrency 64 (target: >= 1.3x).

Throughput uses wrk when installed (Debian package `wrk`), else a Python load generator (which
competes for the same two cores and so understates both sides alike).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import http.client
import json
import os
import shutil
import signal
import socket
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PY = sys.executable

CHAT = {
    "model": "sim-small",
    "messages": [{"role": "user", "content": "hello there"}],
    "max_tokens": 16,
}
STREAM = {**CHAT, "stream": True}
MESSAGES = {
    "model": "sim-small",
    "max_tokens": 16,
    "messages": [{"role": "user", "content": "hello there"}],
}
MESSAGES_STREAM = {**MESSAGES, "stream": True}


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_ready(port: int, path: str, timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            conn = http.client.HTTPConnection("127.0.0.1", port, timeout=1)
            conn.request("GET", path)
            conn.getresponse().read()
            return
        except OSError:
            time.sleep(0.1)
    raise RuntimeError(f"nothing answered on port {port}")


def gateway_env(data_dir: Path, root: Path = ROOT, **extra: str) -> dict[str, str]:
    """The environment of a gateway (and its set-up scripts) on its own SQLite database."""
    return {
        **os.environ,
        "AIPLANE_DATA_DIR": str(data_dir),
        "DATABASE_URL": f"sqlite:///{data_dir}/db",
        "AIPLANE_LOG_LEVEL": "WARNING",
        "PYTHONPATH": str(root),
        "DJANGO_SETTINGS_MODULE": "aiplane.settings",
        **extra,
    }


@contextlib.contextmanager
def process(args: list[str], env: dict[str, str], cwd: Path = ROOT):
    proc = subprocess.Popen(
        args,
        env=env,
        cwd=cwd,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        start_new_session=True,
    )
    try:
        yield proc
    finally:
        with contextlib.suppress(ProcessLookupError):  # it may have been stopped already
            os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)


# Never reached by the run (so nothing is refused), but checked and counted on every request.
GENEROUS = [
    {"measure": "requests", "window": "minute", "limit": 10**12},
    {"measure": "tokens", "window": "minute", "limit": 10**15},
    {"measure": "tokens", "window": "day", "limit": 10**15},
    {"measure": "output_tokens", "window": "month", "limit": 10**15},
]


def prepare_gateway(
    env: dict[str, str],
    sim_port: int,
    extra_settings: dict,
    *,
    allowances: bool = False,
    root: Path = ROOT,
) -> list[str]:
    """Migrate a fresh SQLite database, register the engine, and return a bearer token (and,
    with `allowances`, a second one whose owner's group has the GENEROUS limits). `root` is the
    source tree whose code runs it (another revision's, for --baseline)."""
    subprocess.run(
        [PY, "manage.py", "migrate", "--noinput", "-v", "0"], env=env, cwd=root, check=True
    )
    script = f"""
import django, json
django.setup()
from django.contrib.auth import get_user_model
from accounts.services import token_create
from aiplane.catalog import settings_update
try:
    from gateway.admin import services as topology
except ImportError:  # a --baseline revision from before the packages
    from gateway import topology
user = get_user_model().objects.create_user("bench", password="bench-password-1")
topology.backend_save(data={{"name": "sim", "base_url": "http://127.0.0.1:{sim_port}/v1",
    "max_inflight": 4096, "models": ["sim-small"], "health_path": "/health"}})
topology.pool_save(data={{"name": "chat", "kind": "chat", "backends": ["sim"]}}, known_groups=set())
settings_update(values=json.loads({json.dumps(json.dumps(extra_settings))}))
print(token_create(owner=user, name="bench")[1])
if {allowances!r}:
    from accounts.models import GatewayGroup
    limited = get_user_model().objects.create_user("bench-limited", password="bench-password-1")
    group = GatewayGroup.objects.create(name="bench-limits", allowance={GENEROUS!r})
    group.members.add(limited)
    print(token_create(owner=limited, name="bench-limited")[1])
"""
    out = subprocess.run(
        [PY, "-c", script], env=env, cwd=root, check=True, capture_output=True, text=True
    )
    return out.stdout.strip().splitlines()[-(2 if allowances else 1) :]


# ----- concurrency 1: latency and time to first token --------------------------------------


def latencies(
    port: int,
    body: dict,
    headers: dict,
    n: int,
    *,
    first_byte: bool,
    path: str = "/v1/chat/completions",
) -> list[float]:
    """Sequential requests on one keep-alive connection; seconds to the full answer or 1st byte."""
    payload = json.dumps(body).encode()
    hdrs = {"Content-Type": "application/json", **headers}
    conn = http.client.HTTPConnection("127.0.0.1", port)
    out = []
    for _ in range(n):
        t0 = time.perf_counter()
        conn.request("POST", path, payload, hdrs)
        resp = conn.getresponse()
        if first_byte:
            resp.read1(65536)
            out.append(time.perf_counter() - t0)
            resp.read()
        else:
            resp.read()
            out.append(time.perf_counter() - t0)
        if resp.status != 200:
            raise RuntimeError(f"status {resp.status}")
    conn.close()
    return out


def pct(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(p / 100 * len(ordered)))]


# ----- concurrency 64: throughput ----------------------------------------------------------


@dataclass
class Load:
    rps: float
    served: int  # requests answered during the run


def throughput_wrk(port: int, body: dict, headers: dict, conc: int, seconds: float) -> Load:
    with tempfile.NamedTemporaryFile("w", suffix=".lua", delete=False) as f:
        lines = [
            'wrk.method = "POST"',
            f"wrk.body = {json.dumps(json.dumps(body))}",
            'wrk.headers["Content-Type"] = "application/json"',
        ]
        lines += [f'wrk.headers["{k}"] = "{v}"' for k, v in headers.items()]
        f.write("\n".join(lines) + "\n")
        script = f.name
    try:
        out = subprocess.run(
            [
                shutil.which("wrk") or "wrk",
                "-t",
                "1",
                "-c",
                str(conc),
                "-d",
                f"{int(seconds)}s",
                "-s",
                script,
                f"http://127.0.0.1:{port}/v1/chat/completions",
            ],
            capture_output=True,
            text=True,
            check=True,
        ).stdout
    finally:
        os.unlink(script)
    if "Non-2xx" in out:
        raise RuntimeError("wrk saw errors:\n" + out)
    rps = served = None
    for line in out.splitlines():
        if line.startswith("Requests/sec:"):
            rps = float(line.split()[1])
        elif " requests in " in line:
            served = int(line.split()[0])
    if rps is None or served is None:
        raise RuntimeError(out)
    return Load(rps, served)


async def _py_load(port: int, body: dict, headers: dict, conc: int, seconds: float) -> Load:
    payload = json.dumps(body).encode()
    head = (
        "POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1\r\n"
        "Content-Type: application/json\r\n"
        + "".join(f"{k}: {v}\r\n" for k, v in headers.items())
        + f"Content-Length: {len(payload)}\r\n\r\n"
    ).encode() + payload
    stop = time.perf_counter() + seconds
    done = 0

    async def worker() -> None:
        nonlocal done
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        while time.perf_counter() < stop:
            writer.write(head)
            status = await reader.readline()
            length = 0
            chunked = False
            while True:
                line = await reader.readline()
                if line in (b"\r\n", b""):
                    break
                name, _, value = line.decode().partition(":")
                if name.lower() == "content-length":
                    length = int(value)
                elif name.lower() == "transfer-encoding" and "chunked" in value:
                    chunked = True
            if chunked:
                while True:
                    size = int((await reader.readline()).strip(), 16)
                    await reader.readexactly(size + 2)
                    if size == 0:
                        break
            else:
                await reader.readexactly(length)
            if b" 200 " not in status:
                raise RuntimeError(status)
            done += 1
        writer.close()

    t0 = time.perf_counter()
    await asyncio.gather(*(worker() for _ in range(conc)))
    return Load(done / (time.perf_counter() - t0), done)


def load(port: int, body: dict, headers: dict, conc: int, seconds: float) -> Load:
    if shutil.which("wrk"):
        return throughput_wrk(port, body, headers, conc, seconds)
    return asyncio.run(_py_load(port, body, headers, conc, seconds))


def throughput(port: int, body: dict, headers: dict, conc: int, seconds: float) -> float:
    return load(port, body, headers, conc, seconds).rps


@dataclass
class Turns:
    rps: list[float]
    cpu_us: list[float]  # the server's CPU per request served, µs


def rounds(
    contestants: dict[str, tuple[int, dict, int]], n: int, seconds: float
) -> dict[str, Turns]:
    """Throughput at concurrency 64 of each contestant (port, headers, pid), taking turns: every
    round runs each once, in an order rotated by one each round. On this host the direct engine
    alone measured 7.6k to 11.2k requests/s a few minutes apart, so one run of each, one after
    the other, compares two different machines; within a round they share the same one."""
    names = list(contestants)
    out = {name: Turns([], []) for name in names}
    for r in range(n):
        for name in names[r % len(names) :] + names[: r % len(names)]:
            port, headers, pid = contestants[name]
            cpu = cpu_seconds(pid)
            run = load(port, CHAT, headers, 64, seconds)
            out[name].rps.append(run.rps)
            out[name].cpu_us.append((cpu_seconds(pid) - cpu) / run.served * 1e6)
    return out


def median_ratio(top: list[float], bottom: list[float]) -> float:
    return statistics.median(t / b for t, b in zip(top, bottom, strict=True))


@contextlib.contextmanager
def source_tree(rev: str):
    """The source of another revision of this repository, to run beside this one."""
    tree = Path(tempfile.mkdtemp(prefix="aiplane-baseline-"))
    git, tar = shutil.which("git") or "git", shutil.which("tar") or "tar"
    archive = subprocess.run(
        [git, "-C", str(ROOT), "archive", rev], capture_output=True, check=True
    ).stdout
    subprocess.run([tar, "-x", "-C", str(tree)], input=archive, check=True)
    try:
        yield tree
    finally:
        shutil.rmtree(tree, ignore_errors=True)


def cpu_seconds(pid: int) -> float:
    """User + system CPU of a process and its children (the activity writer), from /proc."""
    tick = os.sysconf("SC_CLK_TCK")
    total = 0.0
    pending = [pid]
    while pending:
        current = pending.pop()
        try:
            with open(f"/proc/{current}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
            # A child belongs to the thread that started it: look under every thread.
            for task in os.listdir(f"/proc/{current}/task"):
                with open(f"/proc/{current}/task/{task}/children") as f:
                    pending += [int(c) for c in f.read().split()]
        except FileNotFoundError:
            continue
        total += (int(fields[11]) + int(fields[12])) / tick  # utime, stime
    return total


def activity_rows(db: Path) -> int:
    with sqlite3.connect(db) as conn:
        return conn.execute("SELECT COUNT(*) FROM gateway_activityrecord").fetchone()[0]


# ----- the run ----------------------------------------------------------------------------


def bare_proxy_cmd(port: int) -> list[str]:
    return [
        PY, "-m", "uvicorn", "bench.bare_proxy:app", "--host", "127.0.0.1", "--port", str(port),
        "--loop", "uvloop", "--http", "httptools", "--no-access-log", "--log-level", "warning",
        "--lifespan", "on",
    ]  # fmt: skip


def gateway_cmd(server: str, port: int) -> list[str]:
    # As `make serve` runs it: the connection bounds, and its protocol's answer writes.
    return [
        PY, "manage.py", "serve", "--host", "127.0.0.1", "--port", str(port), "--server", server,
    ]  # fmt: skip


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--server", choices=("uvicorn", "daphne"), default="uvicorn")
    parser.add_argument("--seconds", type=float, default=5.0, help="per throughput run")
    parser.add_argument("--requests", type=int, default=2000)
    parser.add_argument(
        "--observability",
        choices=("on", "off", "both"),
        default="on",
        help="activity records and queue metrics; 'both' measures their cost",
    )
    parser.add_argument("--pairs", type=int, default=40, help="on/off pairs for 'both'")
    parser.add_argument("--pair-seconds", type=float, default=1.0, help="per run of a pair")
    parser.add_argument("--blocks", type=int, default=10, help="fresh gateway pairs for 'both'")
    parser.add_argument(
        "--rounds", type=int, default=8, help="turns of the bare proxy and the gateway at c64"
    )
    parser.add_argument("--round-seconds", type=float, default=3.0, help="per run of a round")
    parser.add_argument(
        "--baseline",
        metavar="REV",
        help="also run the gateway of another git revision (e.g. the one an issue was filed "
        "at) in the same rounds, and print this one's throughput against it",
    )
    parser.add_argument(
        "--allowances",
        action="store_true",
        help="also measure a token with allowances against one without, taking turns",
    )
    parser.add_argument(
        "--shared",
        action="store_true",
        help="shared admission on a private redis-server: added p50 against local admission, "
        "and 2 workers against 1 at concurrency 64",
    )
    args = parser.parse_args()

    tmp = Path(tempfile.mkdtemp(prefix="aiplane-bench-"))
    env = gateway_env(tmp)
    sim_port = free_port()
    tokens = prepare_gateway(
        env, sim_port, {"gateway.priority_enabled": True}, allowances=args.allowances
    )
    token = tokens[0]
    auth = {"Authorization": f"Bearer {token}"}
    allowance_auth = {
        "without": auth,
        "with": {"Authorization": f"Bearer {tokens[-1]}"},
    }
    allowance_latency: dict[str, list[float]] = {"without": [], "with": []}
    allowance_rps: dict[str, list[float]] = {"without": [], "with": []}
    results: dict[str, float] = {}
    sim_cmd = [
        PY, "-m", "gateway.sim", "--port", str(sim_port), "--token-delay-ms", "0",
        "--tokens", "16", "--slots", "4096",
    ]  # fmt: skip
    if args.shared:
        return shared_run(args, env, sim_cmd, sim_port, auth)
    modes = ["on", "off"] if args.observability == "both" else [args.observability]
    samples: dict[str, list[float]] = {m: [] for m in modes}
    recorded = served = 0
    cpu_per_request: dict[str, list[float]] = {m: [] for m in modes}

    def start(stack: contextlib.ExitStack, mode: str) -> tuple[int, subprocess.Popen]:
        port = free_port()
        proc = stack.enter_context(
            process(gateway_cmd(args.server, port), {**env, "AIPLANE_OBSERVABILITY": mode})
        )
        wait_ready(port, "/api/v0/session/csrf")
        latencies(port, CHAT, auth, 200, first_byte=False)  # warm-up
        return port, proc

    with contextlib.ExitStack() as running:
        running.enter_context(process(sim_cmd, env))
        wait_ready(sim_port, "/health")
        with contextlib.ExitStack() as first:
            gw_port, gw_proc = start(first, modes[0])
            bare_port = free_port()
            bare_env = {**env, "AIPLANE_BARE_UPSTREAM": f"http://127.0.0.1:{sim_port}"}
            bare_proc = first.enter_context(process(bare_proxy_cmd(bare_port), bare_env))
            wait_ready(bare_port, "/")
            latencies(sim_port, CHAT, {}, 200, first_byte=False)
            latencies(bare_port, CHAT, {}, 200, first_byte=False)
            n = args.requests
            d = direct_chat = latencies(sim_port, CHAT, {}, n, first_byte=False)
            b = latencies(bare_port, CHAT, {}, n, first_byte=False)
            g = latencies(gw_port, CHAT, auth, n, first_byte=False)
            results["direct p50 ms"] = pct(d, 50) * 1e3
            results["direct p99 ms"] = pct(d, 99) * 1e3
            results["added p50 ms"] = (pct(g, 50) - pct(d, 50)) * 1e3
            results["added p99 ms"] = (pct(g, 99) - pct(d, 99)) * 1e3
            results["bare proxy added p50 ms"] = (pct(b, 50) - pct(d, 50)) * 1e3
            d = latencies(sim_port, STREAM, {}, n, first_byte=True)
            g = latencies(gw_port, STREAM, auth, n, first_byte=True)
            results["added TTFT p50 ms"] = (pct(g, 50) - pct(d, 50)) * 1e3
            results["added TTFT p99 ms"] = (pct(g, 99) - pct(d, 99)) * 1e3
            # /v1/messages translated to chat (the sim serves chat only), beside plain chat.
            key = {"x-api-key": token}
            m = latencies(gw_port, MESSAGES, key, n, first_byte=False, path="/v1/messages")
            results["messages added p50 ms"] = (pct(m, 50) - pct(direct_chat, 50)) * 1e3
            d = latencies(sim_port, STREAM, {}, n, first_byte=True)
            m = latencies(gw_port, MESSAGES_STREAM, key, n, first_byte=True, path="/v1/messages")
            results["messages added TTFT p99 ms"] = (pct(m, 99) - pct(d, 99)) * 1e3
            results["direct rps c64"] = throughput(sim_port, CHAT, {}, 64, args.seconds)
            results["bare proxy rps c64"] = throughput(bare_port, CHAT, {}, 64, args.seconds)
            results["direct stream rps c64"] = throughput(sim_port, STREAM, {}, 64, args.seconds)
            results["gateway stream rps c64"] = throughput(gw_port, STREAM, auth, 64, args.seconds)
            results[f"gateway rps c64 (obs {modes[0]})"] = throughput(
                gw_port, CHAT, auth, 64, args.seconds
            )
            contestants = {
                "bare": (bare_port, {}, bare_proc.pid),
                "gateway": (gw_port, auth, gw_proc.pid),
            }
            if args.baseline:
                tree = first.enter_context(source_tree(args.baseline))
                base_dir = tmp / "baseline"
                base_dir.mkdir()
                base_env = gateway_env(base_dir, tree, AIPLANE_OBSERVABILITY=modes[0])
                (base_token,) = prepare_gateway(
                    base_env, sim_port, {"gateway.priority_enabled": True}, root=tree
                )
                base_auth = {"Authorization": f"Bearer {base_token}"}
                base_port = free_port()
                base_proc = first.enter_context(
                    process(gateway_cmd(args.server, base_port), base_env, cwd=tree)
                )
                wait_ready(base_port, "/api/v0/session/csrf")
                latencies(base_port, CHAT, base_auth, 200, first_byte=False)  # warm-up
                contestants["baseline"] = (base_port, base_auth, base_proc.pid)
            turns = rounds(contestants, args.rounds, args.round_seconds)
            if args.allowances:
                # The two tokens take turns on the same gateway, in alternating order, so that
                # what else the two cores do falls on both alike.
                latencies(gw_port, CHAT, allowance_auth["with"], 200, first_byte=False)
                for i in range(20):
                    for side in ("without", "with") if i % 2 == 0 else ("with", "without"):
                        allowance_latency[side] += latencies(
                            gw_port, CHAT, allowance_auth[side], max(1, n // 20), first_byte=False
                        )
                for i in range(args.pairs):
                    for side in ("without", "with") if i % 2 == 0 else ("with", "without"):
                        allowance_rps[side].append(
                            throughput(gw_port, CHAT, allowance_auth[side], 64, args.pair_seconds)
                        )
                results["allowances: p50 ms without"] = pct(allowance_latency["without"], 50) * 1e3
                results["allowances: p50 ms with"] = pct(allowance_latency["with"], 50) * 1e3
                results["allowances: rps c64 without"] = statistics.mean(allowance_rps["without"])
                results["allowances: rps c64 with"] = statistics.mean(allowance_rps["with"])
        # With "both", a gateway with observability on and one with it off run side by side
        # (the idle one costs nothing) and take turns under load: pairs in on/off, off/on...
        # order, so a drift in what else the two cores do falls on both sides alike, and the
        # cost is the median of the pairs' costs. The pairs are spread over several blocks of
        # freshly started gateways (started in alternating order), since one process can be a
        # few percent faster than its twin for the whole of its life.
        for block in range(args.blocks if args.observability == "both" else 0):
            with contextlib.ExitStack() as stack:
                order = modes if block % 2 == 0 else modes[::-1]
                gateways = {mode: start(stack, mode) for mode in order}
                rows_before = activity_rows(tmp / "db")
                for i in range(args.pairs // args.blocks):
                    for mode in modes if i % 2 == 0 else modes[::-1]:
                        port, proc = gateways[mode]
                        cpu = cpu_seconds(proc.pid)
                        run = load(port, CHAT, auth, 64, args.pair_seconds)
                        cpu = cpu_seconds(proc.pid) - cpu
                        samples[mode].append(run.rps)
                        cpu_per_request[mode].append(cpu / run.served)
                        if mode == "on":
                            served += run.served
                # Stopping the gateway flushes its last records: every request served left one.
                on = gateways["on"][1]
                on.send_signal(signal.SIGTERM)
                on.wait(30)
                recorded += activity_rows(tmp / "db") - rows_before
        for mode in modes:
            if samples[mode]:
                results[f"gateway rps c64 (obs {mode}, pairs)"] = statistics.mean(samples[mode])

    shutil.rmtree(tmp, ignore_errors=True)
    first = f"gateway rps c64 (obs {modes[0]})"
    print(f"\naiplane overhead ({args.server}; load: {'wrk' if shutil.which('wrk') else 'python'})")
    for key, value in results.items():
        print(f"  {key:36s} {value:10.2f}")
    print("\nratios against the direct engine (same run):")
    print(
        f"  throughput c64 gateway/direct        {results[first] / results['direct rps c64']:.3f}"
    )
    print(
        "  stream throughput c64 gateway/direct "
        f"{results['gateway stream rps c64'] / results['direct stream rps c64']:.3f}"
    )
    bare_rps = median_ratio(turns["gateway"].rps, turns["bare"].rps)
    per_round = (g / b for g, b in zip(turns["gateway"].rps, turns["bare"].rps, strict=True))
    print(f"  per round gateway/bare proxy         {' '.join(f'{r:.3f}' for r in per_round)}")
    for name, turn in turns.items():
        print(
            f"  {name:9s} rps c64 / CPU per request  {statistics.median(turn.rps):8.0f} / "
            f"{statistics.median(turn.cpu_us):.0f} µs   (medians of rounds)"
        )
    if args.baseline:
        base = args.baseline[:12]
        base_bare = median_ratio(turns["baseline"].rps, turns["bare"].rps)
        ours_base = median_ratio(turns["gateway"].rps, turns["baseline"].rps)
        print(f"  throughput c64 {base}/bare proxy  {base_bare:.3f}   (median of rounds)")
        print(f"  throughput c64 gateway/{base}     {ours_base:.3f}   (>= 1: costs nothing)")
    bare_p50 = results["added p50 ms"] / max(results["bare proxy added p50 ms"], 1e-6)
    print(f"  throughput c64 gateway/bare proxy    {bare_rps:.3f}   (>= 0.7, aim 0.9; median)")
    print(f"  added p50 c1 gateway/bare proxy      {bare_p50:.3f}   (<= 1.8, aim 1.2)")
    messages_p50 = results["messages added p50 ms"] - results["added p50 ms"]
    messages_ttft = results["messages added TTFT p99 ms"] - results["added TTFT p99 ms"]
    print(f"  messages vs chat, added p50 c1       {messages_p50:+.3f} ms  (<= +0.3)")
    print(f"  messages vs chat, added TTFT p99     {messages_ttft:+.3f} ms  (<= +0.3)")
    checks = [
        ("/v1/messages added p50 within 0.3 ms of chat's", messages_p50 <= 0.3),
        ("/v1/messages added TTFT p99 within 0.3 ms of chat's", messages_ttft <= 0.3),
        ("throughput c64 >= 0.7x the bare proxy's", bare_rps >= 0.7),
        ("added p50 c1 <= 1.8x the bare proxy's", bare_p50 <= 1.8),
        ("added latency p50 <= 1.5 ms", results["added p50 ms"] <= 1.5),
        ("added latency p99 <= 4 ms", results["added p99 ms"] <= 4.0),
        ("added TTFT p99 <= 2 ms", results["added TTFT p99 ms"] <= 2.0),
        (">= 1000 requests/s at c64", results[first] >= 1000),
    ]
    if args.baseline:
        # "Costs nothing": this revision's ratio to the bare proxy is at least the baseline's,
        # measured in the same rounds (the absolute ratio above depends on the host).
        base = args.baseline[:12]
        checks.append((f"throughput c64 >= {base}'s, same rounds", ours_base >= 1.0))
    if args.allowances:
        added = results["allowances: p50 ms with"] - results["allowances: p50 ms without"]
        ratios = [
            w / wo for w, wo in zip(allowance_rps["with"], allowance_rps["without"], strict=True)
        ]
        ratio = statistics.median(ratios)
        print(f"  allowances: added p50 c1             {added:+.3f} ms  (<= +0.2)")
        print(f"  allowances: rps c64 with/without     {ratio:.3f}   (>= 0.9, median of pairs)")
        checks.append(("allowances add <= 0.2 ms p50 at c1", added <= 0.2))
        checks.append(("allowances cost <= 10% throughput at c64", ratio >= 0.9))
    if args.observability == "both":
        costs = [1 - on / off for on, off in zip(samples["on"], samples["off"], strict=True)]
        cost = statistics.median(costs)
        print(f"  observability cost per pair          {' '.join(f'{c:.3f}' for c in costs)}")
        print(f"  observability cost (median of pairs) {cost:.3f}")
        # Steadier than throughput on a shared machine: the gateway's CPU (and its activity
        # writer's) per request served, with and without observability.
        cpu = [c_on / c_off - 1 for c_on, c_off in zip(*cpu_per_request.values(), strict=True)]
        print(f"  CPU per request on/off - 1 per pair  {' '.join(f'{c:.3f}' for c in cpu)}")
        print(f"  CPU per request on/off - 1 (median)  {statistics.median(cpu):.3f}")
        print(
            "  CPU per request on / off (µs)        "
            f"{statistics.median(cpu_per_request['on']) * 1e6:.0f} / "
            f"{statistics.median(cpu_per_request['off']) * 1e6:.0f}"
        )
        print(f"  activity records / requests served   {recorded} / {served}")
        checks.append(("activity + metrics cost < 10% at c64", cost < 0.10))
        checks.append(("every request served left an activity record", recorded >= served))
    print("\ntargets:")
    for name, ok in checks:
        print(f"  {'met ' if ok else 'MISS'}  {name}")
    return 0


def serve_cmd(port: int, workers: int) -> list[str]:
    return [PY, "manage.py", "serve", "--port", str(port), "--workers", str(workers)]


def shared_run(
    args: argparse.Namespace, env: dict[str, str], sim_cmd: list[str], sim_port: int, auth: dict
) -> int:
    """Local against shared admission in the same run (issue 11's figures)."""
    redis_server = shutil.which("redis-server")
    if redis_server is None:
        print("--shared needs redis-server (apt-get install redis-server)")
        return 2
    redis_port = free_port()
    redis_cmd = [redis_server, "--port", str(redis_port), "--save", "", "--appendonly", "no"]
    shared_env = {**env, "AIPLANE_REDIS_URL": f"redis://127.0.0.1:{redis_port}/0"}
    results: dict[str, float] = {}
    n = args.requests
    with contextlib.ExitStack() as running:
        running.enter_context(process(sim_cmd, env))
        running.enter_context(process(redis_cmd, env))
        wait_ready(sim_port, "/health")
        ports = {}
        for name, cmd_env in (("local", env), ("shared", shared_env)):
            port = free_port()
            running.enter_context(process(serve_cmd(port, 1), cmd_env))
            wait_ready(port, "/api/v0/session/csrf")
            latencies(port, CHAT, auth, 200, first_byte=False)  # warm-up
            ports[name] = port
        latencies(sim_port, CHAT, {}, 200, first_byte=False)
        # Interleaved rounds, so a drift in what else the cores do falls on both alike.
        runs: dict[str, list[float]] = {"direct": [], "local": [], "shared": []}
        for _ in range(4):
            runs["direct"] += latencies(sim_port, CHAT, {}, n // 4, first_byte=False)
            for name in ("local", "shared"):
                runs[name] += latencies(ports[name], CHAT, auth, n // 4, first_byte=False)
        direct = pct(runs["direct"], 50)
        for name in ("local", "shared"):
            results[f"{name} added p50 ms"] = (pct(runs[name], 50) - direct) * 1e3
            results[f"{name} added p99 ms"] = (pct(runs[name], 99) - pct(runs["direct"], 99)) * 1e3
        results["local rps c64 (1 worker)"] = throughput(
            ports["local"], CHAT, auth, 64, args.seconds
        )
        results["shared rps c64 (1 worker)"] = throughput(
            ports["shared"], CHAT, auth, 64, args.seconds
        )
        port = free_port()
        running.enter_context(process(serve_cmd(port, 2), shared_env))
        wait_ready(port, "/api/v0/session/csrf")
        latencies(port, CHAT, auth, 400, first_byte=False)  # warm-up (both workers, likely)
        results["shared rps c64 (2 workers)"] = throughput(port, CHAT, auth, 64, args.seconds)
    added = results["shared added p50 ms"] - results["local added p50 ms"]
    scale = results["shared rps c64 (2 workers)"] / results["shared rps c64 (1 worker)"]
    print(f"\nshared admission ({'wrk' if shutil.which('wrk') else 'python'} load)")
    for key, value in results.items():
        print(f"  {key:36s} {value:10.2f}")
    print(f"  shared - local added p50 c1          {added:+.3f} ms  (<= +1.0)")
    print(f"  2 workers / 1 worker rps c64         {scale:.3f}   (>= 1.3)")
    print("\ntargets:")
    print(f"  {'met ' if added <= 1.0 else 'MISS'}  added p50 with Redis within 1 ms of local")
    print(f"  {'met ' if scale >= 1.3 else 'MISS'}  2 workers >= 1.3x one worker at c64")
    return 0


if __name__ == "__main__":
    sys.exit(main())
