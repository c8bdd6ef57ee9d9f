"""The chaos run: thousands of seeded faulty requests against the real app and three replicas.

    .venv/bin/python bench/chaos.py [--seed 1] [--duration 180] [--concurrency 32]
                                    [--requests 20000] [--only 12,345] [--server uvicorn|daphne]
                                    [--keep-log PATH]

It starts the app as `manage.py serve` does (a fresh SQLite database in a temporary directory,
or a fresh database on the PostgreSQL server DATABASE_URL names), three simulated engines as
replicas of one model, each behind a fault proxy, users in low, medium and high priority groups
with one token per request, a short wait budget and short timeouts. It then sends the plan of
bench/chaos_plan.py from a seeded RNG, concurrently, while it disables and re-enables a replica,
changes another's max_inflight and makes replicas fail a few requests (blips), and judges every
answer against what its fault allows (bench/chaos_client.py). Afterwards it checks that no
engine had more requests open than its max_inflight (beyond those the gateway had already let
go, see `_check_engines`), that in-flight counts and queue depth are back to 0, that every
request left exactly one activity record agreeing with its answer (each request has its own
token, and the record names the token), that the process still answers promptly and that its
memory stayed bounded. It prints counts by fault and by answer with the seed: `--seed` replays
the same plan, `--only` single requests of it. Exit status 1 when a check failed.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import httpx
from prometheus_client.parser import text_string_to_metric_families

if __package__ in (None, ""):  # run as a script: the repository's root is the import root
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.chaos_client import Bounds, Observation, Verdict, judge, perform
from bench.chaos_plan import CLASSES, HALF_BODY, LEFT, USERS, Call, make_plan

ROOT = Path(__file__).resolve().parent.parent
PY = sys.executable
STALLED_CLIENT_SECS = 120.0  # gateway/dataplane/relay.py's bound for a client that stopped reading
ADMIN, ADMIN_PASSWORD = "chaos-admin", "chaos-admin-password-1"
PROBE = "chaos-probe"  # the token of the checks before and after the run
# The replicas: one of each engine the sim imitates, so every engine's error shapes occur.
REPLICAS = (("r0", "none", 3), ("r1", "sglang", 2), ("r2", "vllm", 3))
ENGINE_SLOTS = 4


@dataclass(frozen=True, slots=True)
class Event:
    """A topology change at a point of the run (0 to 1 of its length)."""

    at: float
    action: str  # "disable", "enable", "max_inflight", "blip"
    backend: str
    value: int = 0


EVENTS = (
    Event(0.10, "blip", "r0", 502),
    Event(0.20, "disable", "r1"),
    Event(0.35, "enable", "r1"),
    Event(0.45, "max_inflight", "r2", 1),
    Event(0.60, "max_inflight", "r2", 4),
    Event(0.70, "blip", "r1", 503),
    Event(0.80, "max_inflight", "r0", 2),
    Event(0.85, "disable", "r2"),
    Event(0.92, "enable", "r2"),
)
BLIP_REQUESTS = 2  # a blip fails this many of the replica's next requests


@dataclass(slots=True)
class Options:
    seed: int = 1
    duration: float | None = 180.0  # seconds of sending; None: until the plan is sent
    requests: int = 20_000  # the plan's size (one token each)
    concurrency: int = 32
    server: str = "uvicorn"
    first_byte: int = 4
    idle: int = 3
    budget: int = 3
    connect: int = 2
    max_waiters: int | None = None  # default: seven eighths of the concurrency
    stall_forever: bool | None = None  # default: when the run outlasts the stalled-client bound
    only: tuple[int, ...] = ()  # replay these requests of the plan, nothing else
    strict_timing: bool = True  # the prompt-answer check asserts its second (not in unit tests)
    keep_log: str = ""  # where to keep the gateway's log
    quiet: bool = False


@dataclass(slots=True)
class Segment:
    """A stretch of the run in which an engine's concurrency was bounded by `bound`."""

    backend: str
    bound: int
    seen: int
    what: str
    since: float = 0.0  # unix times
    until: float = 0.0


@dataclass(slots=True)
class Exchange:
    """One request of the run: what was planned, what the client saw, and the judgement."""

    call: Call
    obs: Observation
    verdict: Verdict


@dataclass(slots=True)
class ChaosResult:
    seed: int
    options: Options
    seconds: float = 0.0
    exchanges: list[Exchange] = field(default_factory=list)
    checks: dict[str, tuple[bool, str]] = field(default_factory=dict)
    segments: list[Segment] = field(default_factory=list)
    records: Counter[str] = field(default_factory=Counter)
    record_outcomes: dict[str, Counter[str]] = field(default_factory=dict)  # by fault
    # For each stretch in which an engine had more open than its bound: what it had open.
    peaks: list[tuple[Segment, list[dict[str, Any]]]] = field(default_factory=list)
    rss_before: int = 0
    rss_after: int = 0
    log_excerpt: str = ""

    @property
    def ok(self) -> bool:
        return all(passed for passed, _ in self.checks.values())

    @property
    def problems(self) -> list[str]:
        out = []
        for o in self.exchanges:
            seen = f"{o.obs.elapsed:.2f} s, {len(o.obs.body)} bytes"
            for problem in o.verdict.problems:
                out.append(f"{o.call.name} [{o.call.fault} {o.call.detail}] ({seen}): {problem}")
        return out

    def by_answer(self) -> Counter[str]:
        return Counter(o.verdict.kind for o in self.exchanges)

    def by_fault(self) -> dict[str, Counter[str]]:
        table: dict[str, Counter[str]] = {}
        for o in self.exchanges:
            kind = o.verdict.kind + (f" ({o.verdict.tag})" if o.verdict.tag else "")
            table.setdefault(o.call.fault, Counter())[kind] += 1
        return table


# ----- processes ---------------------------------------------------------------------------


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


@contextlib.contextmanager
def process(
    args: list[str], env: dict[str, str], *, stdout: Any = subprocess.DEVNULL, stderr: Any = None
) -> Iterator[subprocess.Popen[bytes]]:
    proc = subprocess.Popen(
        args, env=env, cwd=ROOT, stdout=stdout, stderr=stderr, start_new_session=True
    )
    try:
        yield proc
    finally:
        stop(proc)


def stop(proc: subprocess.Popen[bytes], timeout: float = 20) -> None:
    if proc.poll() is not None:
        return
    with contextlib.suppress(ProcessLookupError):
        os.killpg(proc.pid, signal.SIGTERM)
    try:
        proc.wait(timeout)
    except subprocess.TimeoutExpired:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(5)


def rss_kib(pid: int) -> int:
    """Resident memory of a process, from /proc."""
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
    except FileNotFoundError:
        pass
    return 0


def children(pid: int) -> list[int]:
    found = []
    with contextlib.suppress(FileNotFoundError):
        for task in os.listdir(f"/proc/{pid}/task"):
            with open(f"/proc/{pid}/task/{task}/children") as f:
                found += [int(c) for c in f.read().split()]
    return found


@contextlib.contextmanager
def database(tmp: Path) -> Iterator[str]:
    """A fresh database for the run: SQLite in `tmp`, or a new one beside DATABASE_URL's."""
    url = os.environ.get("DATABASE_URL", "")
    if not url.startswith(("postgres://", "postgresql://")):
        yield f"sqlite:///{tmp}/db.sqlite3"
        return
    import psycopg

    parts = urlsplit(url)
    name = f"{parts.path.lstrip('/') or 'aiplane'}_chaos_{os.getpid()}"
    admin = urlunsplit(parts._replace(path="/postgres"))
    with psycopg.connect(admin, autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    try:
        yield urlunsplit(parts._replace(path=f"/{name}"))
    finally:
        with psycopg.connect(admin, autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


SETUP = """
import json, sys
import django
django.setup()
from django.contrib.auth import get_user_model
from django.core.management import call_command
from django.db import transaction
from accounts.models import ApiToken, GatewayGroup
from accounts.priority import Priority
from accounts.tokens import new_secret
from aiplane.catalog import settings_update
from gateway.admin import services as topology

spec = json.load(sys.stdin)
call_command("migrate", interactive=False, verbosity=0)
User = get_user_model()
out = {}
with transaction.atomic():
    admins = GatewayGroup.objects.create(name="chaos-admins", is_admin=True)
    admin = User.objects.create_user(spec["admin"], password=spec["password"])
    admins.members.add(admin)
    users = {}
    for cls, names in spec["users"].items():
        group = GatewayGroup.objects.create(name=f"chaos-{cls}", priority=Priority[cls.upper()])
        for name in names:
            users[name] = User.objects.create_user(name, password=spec["password"])
            group.members.add(users[name])
    rows = []
    for name, owner in spec["tokens"]:
        secret = new_secret()
        rows.append(ApiToken(owner=users.get(owner, admin), name=name, prefix=secret.prefix,
                             digest=secret.digest))
        out[name] = secret.plaintext
    ApiToken.objects.bulk_create(rows, batch_size=1000)
for backend in spec["backends"]:
    topology.backend_save(data=backend)
names = [b["name"] for b in spec["backends"]]
topology.pool_save(data={"name": "chaos-chat", "kind": "chat", "backends": names},
                   known_groups=set())
topology.pool_save(data={"name": "chaos-embeddings", "kind": "embedding", "backends": names},
                   known_groups=set())
settings_update(values=spec["settings"])
json.dump(out, sys.stdout)
"""

RECORD_COLUMNS = (
    "token_name, username, status, outcome, priority_class, backend, error, at, duration_ms"
)


def read_records(url: str) -> list[tuple[Any, ...]]:
    """Every activity record of the run, straight from its database."""
    query = f"SELECT {RECORD_COLUMNS} FROM gateway_activityrecord"  # noqa: S608 - our constant
    if url.startswith("sqlite:///"):
        import sqlite3

        with contextlib.closing(sqlite3.connect(url.removeprefix("sqlite:///"))) as conn:
            return list(conn.execute(query))
    import psycopg

    with psycopg.connect(url) as conn:
        return list(conn.execute(query))


def django_script(script: str, env: dict[str, str], stdin: Any = None) -> Any:
    done = subprocess.run(
        [PY, "-c", script],
        env=env,
        cwd=ROOT,
        input=json.dumps(stdin) if stdin is not None else None,
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode != 0:
        raise RuntimeError(f"a setup script failed:\n{done.stderr[-3000:]}")
    return json.loads(done.stdout)


def gateway_cmd(server: str, port: int) -> list[str]:
    return [
        PY,
        "manage.py",
        "serve",
        "--host",
        "127.0.0.1",
        "--port",
        str(port),
        "--server",
        server,
    ]


# ----- the admin API and the engines' counters ------------------------------------------


class Control:
    """The run's hands on the topology (the admin API) and eyes on the engines (/sim/stats)."""

    def __init__(self, base: str, sims: dict[str, int], caps: dict[str, int]) -> None:
        self.base = base
        self.sims = sims
        self.caps = dict(caps)
        self.segments: list[Segment] = []
        self.since = dict.fromkeys(sims, time.time())
        self.client = httpx.AsyncClient(base_url=base, timeout=30)
        self.engines = httpx.AsyncClient(timeout=30)
        self.log: list[str] = []

    async def login(self) -> None:
        await self.client.get("/api/v0/session/csrf")
        r = await self.client.post(
            "/api/v0/session/login",
            json={"username": ADMIN, "password": ADMIN_PASSWORD},
            headers=self._csrf(),
        )
        r.raise_for_status()

    def _csrf(self) -> dict[str, str]:
        return {"X-CSRFToken": self.client.cookies.get("csrftoken", "")}

    async def put_backend(self, name: str, **changes: Any) -> None:
        r = await self.client.put(
            "/api/v0/admin/backends", json={"name": name, **changes}, headers=self._csrf()
        )
        if r.status_code != 200:
            raise RuntimeError(f"PUT backend {name} {changes}: {r.status_code} {r.text}")

    async def stats(self, name: str) -> dict[str, int]:
        r = await self.engines.get(f"http://127.0.0.1:{self.sims[name]}/sim/stats")
        return r.json()  # type: ignore[no-any-return]

    async def sim_config(self, name: str, **changes: Any) -> dict[str, Any]:
        r = await self.engines.post(f"http://127.0.0.1:{self.sims[name]}/sim/config", json=changes)
        r.raise_for_status()
        return r.json()  # type: ignore[no-any-return]

    async def close_segment(self, name: str, bound: int, what: str) -> None:
        """Note the engine's most open requests since the last reset against `bound`; restart
        the count from what is open now."""
        stats = await self.stats(name)
        now = time.time()
        segment = Segment(name, bound, stats["max_open_seen"], what, self.since[name], now)
        self.segments.append(segment)
        await self.reset(name)

    async def reset(self, name: str) -> None:
        self.since[name] = time.time()
        await self.engines.post(f"http://127.0.0.1:{self.sims[name]}/sim/reset")

    async def peaks(self, segment: Segment) -> list[dict[str, Any]]:
        """The engine's open requests each time it went over the segment's bound."""
        r = await self.engines.get(f"http://127.0.0.1:{self.sims[segment.backend]}/chaos/peaks")
        return [
            p
            for p in r.json()
            if segment.since <= p["at"] <= segment.until and len(p["open"]) > segment.bound
        ]

    async def metrics(self) -> dict[str, dict[tuple[tuple[str, str], ...], float]]:
        r = await self.client.get("/metrics")
        out: dict[str, dict[tuple[tuple[str, str], ...], float]] = {}
        for family in text_string_to_metric_families(r.text):
            for sample in family.samples:
                out.setdefault(sample.name, {})[tuple(sorted(sample.labels.items()))] = sample.value
        return out

    async def inflight(self, name: str) -> float:
        values = (await self.metrics()).get("aiplane_backend_inflight", {})
        return values.get((("backend", name),), 0.0)

    async def apply(self, event: Event, stamp: str) -> None:
        name = event.backend
        self.log.append(f"{stamp} {event.action} {name} {event.value or ''}".rstrip())
        if event.action == "disable":
            await self.put_backend(name, enabled=False)
        elif event.action == "enable":
            await self.put_backend(name, enabled=True)
        elif event.action == "blip":
            await self.sim_config(name, fail_next=BLIP_REQUESTS, fail_status=event.value)
        elif event.action == "max_inflight":
            await self.change_cap(name, event.value)

    async def change_cap(self, name: str, new: int) -> None:
        """Change a backend's max_inflight; the engine's count is bounded by the old cap until
        the gateway and the engine both hold no more than the new one."""
        old = self.caps[name]
        await self.close_segment(name, old, f"until max_inflight {old}->{new}")
        await self.put_backend(name, max_inflight=new)
        self.caps[name] = new
        if new < old:
            deadline = time.monotonic() + 60
            while time.monotonic() < deadline:
                if await self.inflight(name) <= new and (await self.stats(name))["open"] <= new:
                    break
                await asyncio.sleep(0.05)
            await self.close_segment(name, old, f"draining to max_inflight {new}")

    async def aclose(self) -> None:
        await self.client.aclose()
        await self.engines.aclose()


# ----- the run ---------------------------------------------------------------------------


def run(options: Options) -> ChaosResult:
    """One chaos run; never raises for what it finds (see `ChaosResult.checks`)."""
    result = ChaosResult(options.seed, options)
    tmp = Path(tempfile.mkdtemp(prefix="aiplane-chaos-"))
    try:
        with database(tmp) as url:
            _run(options, result, tmp, url)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return result


def _plan(options: Options) -> list[Call]:
    stall_at: tuple[int, ...] = ()
    lasting = options.duration is not None and options.duration >= STALLED_CLIENT_SECS + 30
    if options.stall_forever if options.stall_forever is not None else lasting:
        stall_at = (3, 40, 90)
    size = max(options.requests, max(options.only, default=-1) + 1)
    calls = make_plan(options.seed, size, stall_forever_at=stall_at).calls
    if options.only:
        calls = [calls[i] for i in options.only]
    return calls


def _run(options: Options, result: ChaosResult, tmp: Path, url: str) -> None:
    say = (lambda *a: None) if options.quiet else (lambda *a: print(*a, flush=True))
    env = {
        **os.environ,
        "AIPLANE_DATA_DIR": str(tmp),
        "DATABASE_URL": url,
        "AIPLANE_LOG_LEVEL": "WARNING",
        "PYTHONPATH": str(ROOT),
        "DJANGO_SETTINGS_MODULE": "aiplane.settings",
    }
    t0 = time.monotonic()
    calls = _plan(options)
    say(f"chaos: seed {options.seed}, {len(calls)} requests planned, database {url.split(':')[0]}")
    with contextlib.ExitStack() as stack:
        sims = {name: free_port() for name, _, _ in REPLICAS}
        proxies = {name: free_port() for name, _, _ in REPLICAS}
        engines = [
            stack.enter_context(
                process(
                    [PY, "-m", "bench.chaos_engine", "--server-info", style,
                     "--slots", str(ENGINE_SLOTS), "--sim-port", str(sims[name]),
                     "--proxy-port", str(proxies[name])],
                    env, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                )
            )
            for name, style, _ in REPLICAS
        ]  # fmt: skip
        # The database is made while the engines start.
        tokens = django_script(
            SETUP,
            env,
            {
                "admin": ADMIN,
                "password": ADMIN_PASSWORD,
                "users": {cls: list(USERS[cls]) for cls in CLASSES},
                "tokens": [(c.name, c.user) for c in calls] + [(PROBE, USERS["medium"][0])],
                "backends": [
                    {
                        "name": name,
                        "base_url": f"http://127.0.0.1:{proxies[name]}/v1",
                        "max_inflight": cap,
                        "models": ["sim-small"],
                        "health_path": "/health",
                        "priority": {"mode": "auto"},
                    }
                    for name, _, cap in REPLICAS
                ],
                "settings": {
                    "gateway.priority_enabled": True,
                    "gateway.upstream_wait_secs": options.budget,
                    "gateway.connect_timeout_secs": options.connect,
                    "gateway.first_byte_timeout_secs": options.first_byte,
                    "gateway.idle_timeout_secs": options.idle,
                    "gateway.max_waiters": options.max_waiters
                    if options.max_waiters is not None
                    else max(1, options.concurrency * 7 // 8),
                },
            },
        )
        for engine in engines:
            assert engine.stdout is not None
            if not engine.stdout.readline():
                raise RuntimeError("a chaos engine did not start")
        say(f"chaos: {time.monotonic() - t0:.1f} s: engines up, database ready")
        port = free_port()
        log_path = tmp / "gateway.log"
        log = stack.enter_context(open(log_path, "wb"))
        gateway = stack.enter_context(
            process(gateway_cmd(options.server, port), env, stdout=log, stderr=log)
        )
        base = f"http://127.0.0.1:{port}"
        _wait_ready(base + "/api/v0/session/csrf", gateway)
        caps = {name: cap for name, _, cap in REPLICAS}
        control = Control(base, sims, caps)
        bounds = Bounds(
            first_byte=options.first_byte,
            idle=options.idle,
            budget=options.budget,
            stalled_client=STALLED_CLIENT_SECS,
            deadline=60.0,
        )
        say(f"chaos: {time.monotonic() - t0:.1f} s: the gateway is up")
        started = time.monotonic()
        asyncio.run(_drive(options, result, control, calls, tokens, bounds, port, gateway.pid, say))
        result.seconds = time.monotonic() - started
        # Stopping the gateway flushes its last activity records.
        stop(gateway, timeout=30)
        log.flush()
        text = log_path.read_text(errors="replace")
        if options.keep_log:
            shutil.copyfile(log_path, options.keep_log)
        tracebacks = text.count("Traceback")
        result.log_excerpt = _first_traceback(text)
        result.checks["no tracebacks in the gateway's log"] = (
            tracebacks == 0,
            f"{tracebacks} tracebacks"
            + (f"; the first:\n{result.log_excerpt}" if tracebacks else ""),
        )
        records = read_records(url)
        say(f"chaos: {time.monotonic() - t0:.1f} s: {len(records)} records read")
    _check_records(result, calls, records)
    _check_engines(result, records)


def _wait_ready(url: str, proc: subprocess.Popen[bytes], timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"the gateway exited with {proc.returncode}")
        try:
            if httpx.get(url, timeout=2).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        time.sleep(0.2)
    raise RuntimeError(f"nothing answered at {url}")


def _first_traceback(text: str) -> str:
    at = text.find("Traceback")
    if at < 0:
        return ""
    start = text.rfind("\n", 0, max(0, at - 300)) + 1
    return text[start : at + 3000]


async def _drive(
    options: Options,
    result: ChaosResult,
    control: Control,
    calls: list[Call],
    tokens: dict[str, str],
    bounds: Bounds,
    port: int,
    pid: int,
    say: Callable[..., None],
) -> None:
    try:
        import uvloop

        uvloop.install()
    except ImportError:
        pass
    await control.login()
    probe = tokens[PROBE]
    await _until_healthy(control)
    # Warm up (the caller cache, the engines' connections), then start the counts afresh.
    async with httpx.AsyncClient(base_url=control.base, timeout=30) as http:
        for _ in range(5):
            await _plain(http, probe)
        for name in control.sims:
            await control.reset(name)
        result.rss_before = rss_kib(pid)
        say(f"chaos: gateway RSS {result.rss_before / 1024:.0f} MiB before the run")
        result.exchanges = await _load(options, control, calls, tokens, bounds, port, say)
        say(f"chaos: {len(result.exchanges)} requests answered")
        await _settle(result, control, http, probe, pid, options)
    result.segments = control.segments
    for segment in control.segments:
        if segment.seen > segment.bound:
            result.peaks.append((segment, await control.peaks(segment)))
    await control.aclose()


async def _until_healthy(control: Control, timeout: float = 30) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        healthy = (await control.metrics()).get("aiplane_backend_healthy", {})
        if healthy and all(v == 1 for v in healthy.values()) and len(healthy) == len(REPLICAS):
            return
        await asyncio.sleep(0.2)
    raise RuntimeError("the replicas never all became healthy")


async def _plain(http: httpx.AsyncClient, token: str) -> httpx.Response:
    r = await http.post(
        "/v1/chat/completions",
        json={
            "model": "sim-small",
            "messages": [{"role": "user", "content": "hi"}],
            "max_tokens": 4,
        },
        headers={"Authorization": f"Bearer {token}"},
    )
    return r


async def _load(
    options: Options,
    control: Control,
    calls: list[Call],
    tokens: dict[str, str],
    bounds: Bounds,
    port: int,
    say: Callable[..., None],
) -> list[Exchange]:
    loop = asyncio.get_running_loop()
    start = loop.time()
    issued = 0
    exchanges: list[Exchange] = []
    sending = True

    def progress() -> float:
        done = issued / len(calls)
        if options.duration and not options.only:
            done = max(done, (loop.time() - start) / options.duration)
        return done

    def token_of(call: Call) -> str | None:
        if call.auth == "own":
            return tokens[call.name]
        return "gwk_" + "0" * 64 if call.auth == "made-up" else None

    async def worker() -> None:
        nonlocal issued
        while sending and issued < len(calls) and progress() < 1:
            call = calls[issued]
            issued += 1
            obs = await perform(call, "127.0.0.1", port, token_of(call), bounds)
            exchanges.append(Exchange(call, obs, judge(call, obs, bounds)))

    async def changes() -> None:
        pending = list(EVENTS)
        last_report = 0.0
        while pending or sending:
            now = progress()
            while pending and (pending[0].at <= now or not sending):
                event = pending.pop(0)
                await control.apply(event, f"{loop.time() - start:6.1f}s")
            if loop.time() - last_report > 15 and not options.quiet:
                last_report = loop.time()
                say(f"chaos: {loop.time() - start:6.1f}s {issued} sent, {len(exchanges)} answered")
            if not pending and not sending:
                break
            await asyncio.sleep(0.05)

    changing = asyncio.ensure_future(changes())
    try:
        await asyncio.gather(*(worker() for _ in range(options.concurrency)))
    finally:
        sending = False
        await changing
    return exchanges


async def _settle(
    result: ChaosResult,
    control: Control,
    http: httpx.AsyncClient,
    probe: str,
    pid: int,
    options: Options,
) -> None:
    """The state after the run: slots, queue, engines, promptness, memory."""
    deadline = time.monotonic() + 15
    while True:
        m = await control.metrics()
        inflight = m.get("aiplane_backend_inflight", {})
        depth = m.get("aiplane_queue_depth", {})
        engines = {name: await control.stats(name) for name in control.sims}
        idle = all(s["open"] == 0 and s["inflight"] == 0 for s in engines.values())
        if (not any(inflight.values()) and not any(depth.values()) and idle) or (
            time.monotonic() > deadline
        ):
            break
        await asyncio.sleep(0.2)
    result.checks["in-flight and queue depth back to 0"] = (
        not any(inflight.values()) and not any(depth.values()),
        f"aiplane_backend_inflight {dict((k[0][1], v) for k, v in inflight.items())}, "
        f"aiplane_queue_depth {sum(depth.values()):g}",
    )
    result.checks["no engine still working on a request"] = (
        idle,
        ", ".join(f"{n} open {s['open']} inflight {s['inflight']}" for n, s in engines.items()),
    )
    lost = sum(m.get(k, {}).get((), 0) for k in (
        "aiplane_activity_records_dropped_total", "aiplane_activity_records_rejected_total"
    ))  # fmt: skip
    result.checks["the activity writer lost no record"] = (lost == 0, f"{lost:g} dropped")
    for name in control.sims:
        await control.close_segment(name, control.caps[name], "to the end")
    injected = 0
    for name in control.sims:
        left = (await control.sim_config(name))["fail_next"]
        fired = sum(1 for e in EVENTS if e.action == "blip" and e.backend == name)
        injected += fired * BLIP_REQUESTS - left
    victims = sum(1 for o in result.exchanges if o.verdict.tag == "blip")
    result.checks["blips explain every injected failure a request ended with"] = (
        victims <= injected,
        f"{victims} requests ended with an injected failure, {injected} were injected",
    )
    t0 = time.monotonic()
    models = await http.get("/v1/models", headers={"Authorization": f"Bearer {probe}"})
    models_secs = time.monotonic() - t0
    t0 = time.monotonic()
    answer = await _plain(http, probe)
    chat_secs = time.monotonic() - t0
    prompt = models.status_code == 200 and answer.status_code == 200
    if options.strict_timing:
        prompt = prompt and models_secs < 1.0
    result.checks["the gateway answers promptly after the run"] = (
        prompt,
        f"/v1/models {models.status_code} in {models_secs * 1000:.0f} ms, "
        f"a chat {answer.status_code} in {chat_secs * 1000:.0f} ms",
    )
    result.rss_after = rss_kib(pid)
    writer = [rss_kib(child) for child in children(pid)]
    bound = result.rss_before + max(200 * 1024, result.rss_before)
    result.checks["memory stayed bounded"] = (
        0 < result.rss_after <= bound,
        f"RSS {result.rss_before / 1024:.0f} MiB before, {result.rss_after / 1024:.0f} MiB "
        f"after (bound {bound / 1024:.0f} MiB); children {[f'{k / 1024:.0f} MiB' for k in writer]}",
    )


# ----- the records --------------------------------------------------------------------------

# The outcomes an activity record may have for each kind of answer the client saw.
_ANSWERED = {"immediate", "waited"}
_BY_CODE = {
    "capacity_timeout": {"expired"},
    "queue_full": {"rejected"},
    "no_healthy_backend": {"unavailable"},
    "no_backend_available": {"unavailable"},
    "upstream_error": {"upstream_error"},
    "backend_auth_failed": {"upstream_error"},
    "backend_overloaded": {"upstream_error"},
    "upstream_timeout": {"upstream_error"},
}


# The gateway's own refusals of a caller's request (gateway/core/errors.py).
_REFUSALS = {
    "invalid_request", "invalid_priority_hint", "invalid_api_key", "model_not_allowed",
    "model_not_found", "not_found", "method_not_allowed", "request_too_large",
}  # fmt: skip


def _record_outcomes(verdict: Verdict) -> set[str] | None:
    """The record outcomes that agree with the answer; None: anything goes."""
    kind = verdict.kind
    if kind == "ok":
        return _ANSWERED
    if kind == "error-event":
        return {"upstream_error"}
    if kind == "broken":
        return {"upstream_error", "client_closed"}
    status, _, code = kind.partition(":")
    if not code:
        return None
    if code in _BY_CODE:
        return _BY_CODE[code]
    if code in _REFUSALS:
        return {"refused"}
    # Any other code is an engine's own refusal, passed on after it was admitted.
    return _ANSWERED if status.startswith("4") else None


def _check_records(result: ChaosResult, calls: list[Call], records: list[tuple[Any, ...]]) -> None:
    by_name: dict[str, list[tuple[Any, ...]]] = {}
    for row in records:
        by_name.setdefault(row[0] or "", []).append(row)
    sent = {o.call.name: o for o in result.exchanges}
    result.records = Counter(row[3] for row in records if row[0] != PROBE)
    wrong_count: list[str] = []
    disagree: list[str] = []
    anonymous = 0
    for o in result.exchanges:
        call = o.call
        if call.auth != "own":
            anonymous += call.recorded
            continue
        rows = by_name.get(call.name, [])
        expected = 1 if call.recorded else 0
        if call.client == HALF_BODY and result.options.server == "daphne":
            expected = 0  # daphne starts the application only once the whole body is in
        if len(rows) != expected:
            wrong_count.append(f"{call.name} [{call.fault}] has {len(rows)} records")
            continue
        for row in rows:
            result.record_outcomes.setdefault(call.fault, Counter())[row[3]] += 1
        if not rows or o.verdict.kind in (LEFT, "hung", "dropped"):
            continue
        _, username, status, outcome, cls, *_ = rows[0]
        said = []
        if o.obs.status is not None and status != o.obs.status:
            said.append(f"status {status} (the client saw {o.obs.status})")
        allowed = _record_outcomes(o.verdict)
        if allowed is not None and outcome not in allowed:
            said.append(f"outcome {outcome} for {o.verdict.kind}")
        if o.verdict.kind == "ok" and cls != call.cls:
            said.append(f"class {cls}, not {call.cls}")
        if username != call.user:
            said.append(f"user {username}, not {call.user}")
        if said:
            disagree.append(f"{call.name} [{call.fault} {call.detail}]: " + ", ".join(said))
    strays = [n for n in by_name if n and n != PROBE and n not in sent]
    nameless = len(by_name.get("", []))
    if nameless != anonymous:
        wrong_count.append(f"{nameless} records without a token, {anonymous} such requests")
    if strays:
        wrong_count.append(f"{len(strays)} records of requests never sent, e.g. {strays[:3]}")
    result.checks["every request left exactly one activity record"] = (
        not wrong_count,
        f"{len(records)} records for {len(result.exchanges)} requests"
        + ("; " + "; ".join(wrong_count[:10]) if wrong_count else ""),
    )
    result.checks["every record agrees with its answer"] = (
        not disagree,
        "; ".join(disagree[:10]) if disagree else "status, outcome, class and user match",
    )
    answers = result.by_answer()
    result.checks["no 500"] = (
        not any(o.obs.status == 500 for o in result.exchanges),
        f"{sum(1 for o in result.exchanges if o.obs.status == 500)} answers were 500",
    )
    problems = result.problems
    result.checks["every answer is one its fault allows, well-formed"] = (
        not problems,
        f"{len(problems)} problems" + ("; first: " + " | ".join(problems[:5]) if problems else ""),
    )
    hung = answers.get("hung", 0)
    result.checks["no request hung"] = (hung == 0, f"{hung} hung")


def _ended(records: list[tuple[Any, ...]]) -> dict[str, float]:
    """When the gateway was done with each request (unix time): its record's start plus its
    duration, measured after the relay released its slot."""
    out = {}
    for row in records:
        at = row[7]
        if isinstance(at, str):  # SQLite: naive UTC text
            at = datetime.fromisoformat(at).replace(tzinfo=UTC)
        if row[0]:
            out[row[0]] = at.timestamp() + row[8] / 1000
    return out


def _check_engines(result: ChaosResult, records: list[tuple[Any, ...]]) -> None:
    """No engine had more requests open than its max_inflight that the gateway still held.

    An engine learns that the gateway let a request go (a timeout, a client that left) when the
    connection's end reaches it; here it reaches it through the fault proxy, one hop later, and
    the gateway may already have given the slot to the next request. So each time an engine
    went over its bound, the requests it had open are matched with the gateway's records: those
    the gateway had finished before that moment are the engine's lag, the rest the gateway's.
    """
    ended = _ended(records)
    by_name = {o.call.name: o for o in result.exchanges}
    held_over: list[str] = []
    lag: list[str] = []
    for segment, peaks in result.peaks:
        for peak in peaks:
            held = [n for _, n in peak["open"] if ended.get(n, float("inf")) > peak["at"]]
            opened = []
            for at, name in peak["open"]:
                o = by_name.get(name)
                what = f" {o.call.fault} {o.call.detail} -> {o.verdict.kind}" if o else ""
                done = ended.get(name)
                gone = f", the gateway done {done - peak['at']:+.3f} s" if done else ""
                opened.append(f"{name} opened {at - peak['at']:+.3f} s{gone}{what}")
            line = (
                f"{segment.backend} ({segment.what}) had {len(peak['open'])} open, the gateway "
                f"held {len(held)} of them (bound {segment.bound}): " + "; ".join(opened)
            )
            (held_over if len(held) > segment.bound else lag).append(line)
    detail = "; ".join(f"{s.backend} {s.seen}/{s.bound} {s.what}" for s in result.segments)
    if lag:
        detail += f"; over its bound only with requests the gateway had let go: {len(lag)} times"
    result.checks["no engine had more requests open than its max_inflight"] = (
        not held_over,
        detail + "".join(f"\n      {e}" for e in held_over + lag[:3]),
    )


# ----- the report ---------------------------------------------------------------------------


def report(result: ChaosResult) -> str:
    o = result.options
    lines = [
        "",
        f"chaos run: seed {result.seed}, {len(result.exchanges)} requests in "
        f"{result.seconds:.0f} s, concurrency {o.concurrency}, server {o.server}",
        f"  bounds: first byte {o.first_byte} s, idle {o.idle} s, wait budget {o.budget} s",
        "",
        "answers by fault:",
    ]
    table = result.by_fault()
    width = max((len(f) for f in table), default=10) + 2
    for fault in sorted(table):
        counts = table[fault]
        cells = ", ".join(f"{kind} {n}" for kind, n in counts.most_common())
        lines.append(f"  {fault:<{width}}{sum(counts.values()):>6}  {cells}")
    lines += ["", "activity records by fault:"]
    for fault in sorted(result.record_outcomes):
        counts = result.record_outcomes[fault]
        cells = ", ".join(f"{outcome} {n}" for outcome, n in counts.most_common())
        lines.append(f"  {fault:<{width}}{sum(counts.values()):>6}  {cells}")
    lines += ["", "answers:"]
    for kind, n in result.by_answer().most_common():
        lines.append(f"  {kind:<32}{n:>6}")
    lines += ["", "activity records by outcome:"]
    for outcome, n in result.records.most_common():
        lines.append(f"  {outcome:<32}{n:>6}")
    lines += ["", "checks:"]
    for name, (passed, detail) in result.checks.items():
        lines.append(f"  {'PASS' if passed else 'FAIL'}  {name}: {detail}")
    problems = result.problems
    if problems:
        lines += ["", f"problems ({len(problems)}; replay one with --seed {result.seed} --only N):"]
        lines += [f"  {p}" for p in problems[:40]]
    lines.append("")
    lines.append(
        f"replay: bench/chaos.py --seed {result.seed} --concurrency {o.concurrency}"
        + (f" --duration {o.duration:g}" if o.duration else " --duration 0")
        + f" --requests {o.requests}"
        + (f" --server {o.server}" if o.server != "uvicorn" else "")
        + (f" --only {','.join(map(str, o.only))}" if o.only else "")
    )
    return "\n".join(lines)


def _indices(text: str) -> tuple[int, ...]:
    return tuple(int(part) for part in re.split(r"[,\s]+", text.strip()) if part)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=int, default=int(time.time()) % 100_000)
    parser.add_argument("--duration", type=float, default=180.0, help="seconds; 0: the plan")
    parser.add_argument("--requests", type=int, default=20_000, help="the plan's size")
    parser.add_argument("--concurrency", type=int, default=32)
    parser.add_argument("--server", choices=("uvicorn", "daphne"), default="uvicorn")
    parser.add_argument("--only", type=_indices, default=(), help="replay these requests")
    parser.add_argument("--keep-log", default="", metavar="PATH", help="keep the gateway's log")
    args = parser.parse_args(argv)
    options = Options(
        seed=args.seed,
        duration=args.duration or None,
        requests=args.requests,
        concurrency=args.concurrency,
        server=args.server,
        only=args.only,
        keep_log=args.keep_log,
    )
    if args.only:  # the same plan (the duration decides its stalled clients), these of it
        options.concurrency = min(options.concurrency, len(args.only))
    result = run(options)
    print(report(result))
    return 0 if result.ok else 1


if __name__ == "__main__":
    sys.exit(main())
