"""Hypothesis-generated requests on /v1 against the live gateway: never a 500, never a hang.

Requests are written byte for byte on a loopback socket (no client library in between to refuse
or repair them): hostile bodies (deep nesting, NaN and Infinity, huge numbers, unpaired
surrogate escapes, NUL, bodies that are no object, wrong types for model, stream, messages,
nvext, priority, service_tier and the other fields engines read as scheduling or placement,
media parts whose URLs are inside, malformed or huge), hint headers with garbage, bytes that are
not UTF-8, duplicate headers, unknown paths and wrong methods. The gateway serves a simulated
engine with a real token. Every answer must come within the client's timeout, be no 5xx but a
backend's 502/503/504, and carry every error in the OpenAI envelope as application/json; a 200
is JSON, or an event stream when one was asked for. Afterwards no slot is held, nobody waits,
and no body the engine received holds a field that says something about scheduling
(gateway/core/scheduling_fields.py).

A failure shows the smallest request hypothesis found and the gateway's logged traceback.
Short form by default; AIPLANE_FUZZ=long generates far more.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import socket
import time
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from aiplane.catalog import settings_update
from gateway.core.scheduling_fields import NVEXT_KEPT, REFUSED, REMOVED
from tests.support.drive import wait_until
from tests.support.factories import make_group, make_token_with_secret, make_user
from tests.support.live import add_backend

LONG = os.environ.get("AIPLANE_FUZZ", "").lower() == "long"
EXAMPLES = 5000 if LONG else 400
TIMEOUT = 10.0  # seconds for a whole answer; the engine is instant, so anything near is a hang
ENVELOPE_KEYS = {"message", "type", "param", "code"}
BACKEND_FAULTS = {502, 503, 504}
# Anthropic's surface answers in Anthropic's envelope, "not now" as 529 (its overloaded_error).
ANTHROPIC_PATHS = ("/v1/messages", "/v1/messages/count_tokens")
ANTHROPIC_FAULTS = {502, 504, 529}

KNOWN_PATHS = ("/v1/chat/completions", "/v1/completions", "/v1/embeddings", "/v1/models")
ODD_PATHS = (
    "/v1/",
    "/v1/nope",
    "/v1/chat/completions/",
    "/v1/models/sim-small",
    "/v1/chat%2Fcompletions",
    "/v1/%00",
    "/v1/%ff%fe",
    "/v1/" + "x" * 5000,
    "/v1/messages",
    "/v1/responses",
    "/v1/embeddings?x=%00",
    "/v1/chat/completions?" + "a=1&" * 200,
)
CONTROL_BYTES = {*range(32), 127} - {9}
HINT_HEADERS = (
    b"x-aiplane-priority",
    b"x-llamaswap-priority",
    b"x-dynamo-request-priority",
    b"x-dynamo-request-strict-priority",
)

# ----- what goes into a request --------------------------------------------------------------

json_leaf = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.integers(min_value=2**63, max_value=2**70),
    st.floats(allow_nan=False, allow_infinity=False),
    st.text(max_size=12),
    st.sampled_from(["\ud800", "a\udfffb", "\x00", "sim-small\x00", "\u2028", "\ufeff"]),
)
json_value = st.recursive(
    json_leaf,
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3)
    ),
    max_leaves=10,
)
model = st.one_of(
    st.sampled_from(["sim-small", "sim-small", "sim-large", "nope", "", "x" * 10_000]),
    json_value,
)
# Media URLs an engine would fetch (gateway/dialects/media_urls.py): inside, odd, hostile.
media_url = st.one_of(
    st.sampled_from(
        [
            "data:image/png;base64,AAAA",
            "https://example.com/a.png",
            "file:///etc/passwd",
            "http://0x7f.1/",
            "http://2130706433/",
            "http://[::ffff:127.0.0.1]/",
            "http://[::1",
            "http://[v1.x]/",
            "http://\udfff/",
            "http://a@b/",
            "http:\\\\x",
            "http://" + "9" * 5000,
            "http://1." + "0" * 5000 + "/",
            "http://h:" + "9" * 50 + "/",
        ]
    ),
    st.text(max_size=20).map(lambda t: "http://" + t),
    json_value,
)
media_part = st.fixed_dictionaries(
    {},
    optional={
        "type": st.sampled_from(["image_url", "video_url", "audio_url", "input_image", "text"]),
        "image_url": media_url | st.fixed_dictionaries({"url": media_url}),
        "video_url": st.fixed_dictionaries({"url": media_url}),
        "audio_url": media_url,
    },
)
messages = st.one_of(
    st.just([{"role": "user", "content": "hi"}]),
    st.lists(st.fixed_dictionaries({"role": json_value, "content": json_value}), max_size=3),
    st.lists(
        st.fixed_dictionaries({"role": st.just("user"), "content": st.lists(media_part)}),
        max_size=2,
    ),
    json_value,
)
hint_number = st.one_of(
    st.integers(-200, 200), st.integers(), st.integers(min_value=10**20), json_value
)
# Dynamo's nvext as its NvExt struct reads it: hints, pinned workers and the keys that may pass.
agent_hints = st.fixed_dictionaries(
    {},
    optional={
        "priority": hint_number,
        "strict_priority": hint_number,
        "latency_sensitivity": st.one_of(st.floats(), json_value),
        "osl": json_value,
        "speculative_prefill": json_value,
    },
)
nvext = st.one_of(
    json_value,
    st.fixed_dictionaries(
        {"agent_hints": st.one_of(json_value, agent_hints)},
        optional={
            "backend_instance_id": json_value,
            "decode_worker_id": json_value,
            "prefill_worker_id": json_value,
            "dp_rank": json_value,
            "request_timestamp_ms": json_value,
            "session_control": json_value,
            "annotations": json_value,
            "extra_fields": json_value,
            "greed_sampling": json_value,
            "max_thinking_tokens": json_value,
        },
    ),
)
service_tier = st.one_of(
    st.sampled_from(["priority", "auto", "default", "flex", "scale", "standard_only"]), json_value
)
# Other fields engines and routers read as priority, placement or engine state
# (gateway/core/scheduling_fields.py); the last ones are refused with a 400.
SCHEDULING_FIELDS = ("speed", "extra_args", "routed_dp_rank", "data_parallel_rank", "id_slot",
                     "request_id", "rid", "keep_alive", "kv_transfer_params", "session_id",
                     "inference_geo")  # fmt: skip
scheduling = st.dictionaries(st.sampled_from(SCHEDULING_FIELDS), json_value, max_size=3)
chat_body = st.fixed_dictionaries(
    {"model": model},
    optional={
        "messages": messages,
        "prompt": json_value,
        "input": st.one_of(st.just("hello"), st.lists(st.text(max_size=5), max_size=3), json_value),
        "stream": st.one_of(st.booleans(), json_value),
        "stream_options": json_value,
        "nvext": nvext,
        "priority": hint_number,
        "service_tier": service_tier,
        "max_tokens": st.one_of(st.integers(-5, 5), json_value),
        # Every output limit an engine honours, and the choices that multiply it.
        "max_completion_tokens": st.one_of(st.integers(-5, 5), json_value),
        "max_output_tokens": st.one_of(st.integers(-5, 5), json_value),
        "n_predict": st.one_of(st.integers(-5, 5), json_value),
        "n": st.one_of(st.integers(-1, 3), json_value),
    },
)
chat_body = st.builds(lambda body, extra: {**extra, **body}, chat_body, scheduling)
DEEP = "[" * 100_000
HOSTILE_BODIES = (
    b"",
    b"{",
    b"null",
    b"[]",
    b'"sim-small"',
    b"12",
    b"\xff\xfe\x00",
    b"\xef\xbb\xbf{}",
    DEEP.encode(),
    ('{"a":' * 100_000).encode(),
    ('{"model": "sim-small", "messages": ' + DEEP + "}").encode(),
    (
        '{"model": "sim-small", "nvext": {"agent_hints": {"priority": '
        + "[" * 900
        + "]" * 900
        + "}}}"
    ).encode(),
    b'{"model": NaN}',
    b'{"model": "sim-small", "messages": [], "max_tokens": Infinity}',
    b'{"model": "sim-small", "messages": [], "priority": -Infinity}',
    b'{"model": "sim-small", "max_tokens": 1e999}',
    ('{"model": "sim-small", "priority": ' + "9" * 5000 + "}").encode(),
    b'{"model": "\\ud800"}',
    b'{"model": "sim-small", "messages": [{"role": "user", "content": "\\udc00"}]}',
    b'{"model": "sim-small", "\\ud800": 1}',
    b'{"model": "sim-small\\u0000"}',
    b'{"model": "sim-small", "messages": [{"role": "user", "content": "a\\u0000b"}]}',
    b'{"model": "sim-small"} trailing',
    b'{"model": "sim-small", "model": 7}',
    ("[" * 600_000 + "]" * 600_000).encode(),  # past 1 MiB: parsed off the event loop
)
body = st.one_of(
    chat_body.map(lambda b: json.dumps(b).encode()),
    chat_body.map(lambda b: json.dumps(b).encode()),
    st.sampled_from(HOSTILE_BODIES),
    st.binary(max_size=40),
)
header_text = st.one_of(
    st.sampled_from([b"low", b"medium", b"high", b"interactive", b"batch", b"0", b"-100", b"50"]),
    st.sampled_from([b"", b" ", b"HIGH", b"9" * 5000, b"1_0", b"+5", b" 12 ", b"0x10", b"1e3"]),
    st.sampled_from(["\u0661\u0662".encode(), "\u00b2".encode("latin-1"), b"\xff\xfe", b"\x80"]),
    # Control bytes (but tab) are refused by the HTTP server before the app: known_cases().
    st.binary(max_size=12).filter(lambda b: not set(b) & CONTROL_BYTES),
)


@st.composite
def headers(draw: Any, key: str) -> list[tuple[bytes, bytes]]:
    chosen: list[tuple[bytes, bytes]] = []
    auth = draw(
        st.sampled_from(["good", "good", "good", "good", "none", "bad", "basic", "raw", "twice"])
    )
    if auth in ("good", "twice"):
        chosen.append((b"authorization", f"Bearer {key}".encode()))
    if auth == "twice":
        chosen.append((b"authorization", b"Bearer gwk_" + b"0" * 64))
    if auth == "bad":
        chosen.append((b"authorization", b"Bearer " + draw(header_text)))
    if auth == "basic":
        chosen.append((b"authorization", b"Basic YTpi"))
    if auth == "raw":
        chosen.append((b"authorization", draw(header_text)))
    for name in draw(st.lists(st.sampled_from(HINT_HEADERS), max_size=3)):
        chosen.append((name, draw(header_text)))  # a name drawn twice is a duplicate header
    content_type = draw(
        st.sampled_from(
            [
                b"application/json",
                b"application/json",
                b"",
                b"text/plain",
                b"application/json; charset=latin-1",
            ]
        )
        | header_text
    )
    if content_type:
        chosen.append((b"content-type", content_type))
    if draw(st.booleans()):
        chosen.append((b"x-aiplane-session", b"1"))
        chosen.append((b"cookie", b"sessionid=" + draw(header_text)))
    return chosen


class Request:
    """One request as bytes on the wire (a plain class: its repr stays short in reports)."""

    def __init__(
        self, method: str, path: str, headers: list[tuple[bytes, bytes]], body: bytes
    ) -> None:
        self.method, self.path, self.headers, self.body = method, path, headers, body

    def wire(self, host: str) -> bytes:
        lines = [f"{self.method} {self.path} HTTP/1.1".encode(), b"host: " + host.encode()]
        lines += [name + b": " + value for name, value in self.headers]
        lines += [b"connection: close", b"content-length: %d" % len(self.body)]
        return b"\r\n".join(lines) + b"\r\n\r\n" + self.body

    def wants_stream(self) -> bool:
        try:
            parsed = json.loads(self.body)
        except (ValueError, RecursionError):
            return False
        return isinstance(parsed, dict) and parsed.get("stream") is True

    def __repr__(self) -> str:
        def cut(data: bytes) -> bytes:
            return data if len(data) <= 300 else data[:300] + b"...(%d bytes)" % len(data)

        headers = [(name, cut(value)) for name, value in self.headers]
        return f"Request({self.method} {self.path[:200]!r}, {headers!r}, {cut(self.body)!r})"

    def _repr_pretty_(self, printer: Any, cycle: bool) -> None:  # hypothesis's reports
        printer.text(repr(self))


# Valid requests for each path, each to be spoiled in one place only, so that most requests get
# past the token, the JSON and the model to the hints, the queue and the engine.
HI = [{"role": "user", "content": "hi"}]
VALID_BODIES: dict[str, dict[str, Any]] = {
    "/v1/chat/completions": {"model": "sim-small", "messages": HI},
    "/v1/completions": {"model": "sim-small", "prompt": "hi"},
    "/v1/embeddings": {"model": "sim-small", "input": "hi"},
    "/v1/messages": {"model": "sim-small", "max_tokens": 8, "messages": HI},
    "/v1/messages/count_tokens": {"model": "sim-small", "messages": HI},
    "/v1/responses": {"model": "sim-small", "input": "hi", "store": False},
}
UNSTREAMED = ("/v1/embeddings", "/v1/messages/count_tokens")  # JSON whatever `stream` says
FIELDS = ("model", "messages", "prompt", "input", "stream", "stream_options", "nvext", "priority",
          "max_tokens", "max_completion_tokens", "max_output_tokens", "n_predict", "n", "best_of",
          "user", "service_tier", *SCHEDULING_FIELDS)  # fmt: skip
# Raw JSON text put in place of one field: what json.dumps would never write.
RAW_FIELDS = (
    "NaN", "Infinity", "-Infinity", "1e999", "-1e999", "9" * 4000, "[" * 3000 + "]" * 3000,
    '"\\ud800"', '"\\udfff\\ud800"', '"\\u0000"', '{"\\ud800": 1}',
    '{"agent_hints": {"priority": ' + "[" * 990 + "]" * 990 + "}}",
    '{"agent_hints": {"priority": "' + "9" * 3000 + '"}}',
    '{"agent_hints": {"strict_priority": NaN}}',
)  # fmt: skip
PLACEHOLDER = "\u0001spoilt\u0001"


@st.composite
def spoilt(draw: Any, key: str) -> Request:
    """A valid request spoilt once: a field, a header, a duplicate, a stream, or the body."""
    path = draw(st.sampled_from([*KNOWN_PATHS, *ANTHROPIC_PATHS, "/v1/responses"]))
    auth = (b"authorization", f"Bearer {key}".encode())
    if path == "/v1/models":
        extra = draw(st.lists(st.tuples(st.sampled_from(HINT_HEADERS), header_text), max_size=2))
        return Request("GET", path, [auth, *extra], b"")
    body = dict(VALID_BODIES[path])
    headers = [auth, (b"content-type", b"application/json")]
    raw_field: tuple[str, str] | None = None
    how = draw(st.sampled_from(["field", "field", "raw", "hint", "twice", "stream", "body"]))
    if how == "field":
        body[draw(st.sampled_from(FIELDS))] = draw(
            json_value | model | hint_number | nvext | service_tier
        )
    elif how == "raw":
        own = next(iter(set(body) - {"model"}))  # messages, prompt or input
        raw_field = (draw(st.sampled_from([own, own, *FIELDS])), draw(st.sampled_from(RAW_FIELDS)))
    elif how == "hint":
        for name in draw(st.lists(st.sampled_from(HINT_HEADERS), min_size=1, max_size=4)):
            headers.append((name, draw(header_text)))
    elif how == "twice":
        name = draw(st.sampled_from([*HINT_HEADERS, b"authorization", b"content-type"]))
        headers += [(name, draw(header_text)), (name, draw(header_text))]
    elif how == "stream":
        body["stream"] = True
        body["stream_options"] = draw(st.one_of(st.just({"include_usage": True}), json_value))
    else:
        return Request("POST", path, headers, draw(st.sampled_from(HOSTILE_BODIES)))
    text = json.dumps(body)
    if raw_field is not None:
        name, fragment = raw_field
        text = json.dumps({**body, name: PLACEHOLDER}).replace(json.dumps(PLACEHOLDER), fragment)
    return Request("POST", path, headers, text.encode())


def requests(key: str) -> st.SearchStrategy[Request]:
    """Mostly a valid request spoilt once; otherwise anything at all."""
    method = st.sampled_from(["POST"] * 6 + ["GET", "PUT", "DELETE", "PATCH", "OPTIONS", "HEAD"])
    path = st.one_of(
        st.sampled_from(KNOWN_PATHS), st.sampled_from(KNOWN_PATHS), st.sampled_from(ODD_PATHS)
    )
    wild = st.builds(Request, method, path, headers(key), body)
    return st.one_of(spoilt(key), spoilt(key), spoilt(key), wild)


# ----- one exchange on a socket --------------------------------------------------------------


@dataclass
class Answer:
    status: int
    headers: dict[str, list[str]] = field(default_factory=dict)
    body: bytes = b""

    def header(self, name: str) -> str:
        return ",".join(self.headers.get(name, []))


def exchange(url: str, request: Request) -> Answer:
    """Send the request and read the whole answer (the server closes the connection after it)."""
    parts = urlsplit(url)
    deadline = time.monotonic() + TIMEOUT
    with socket.create_connection((parts.hostname, parts.port), timeout=TIMEOUT) as sock:
        try:
            sock.sendall(request.wire(parts.netloc))
        except OSError:
            pass  # the server may answer and close before it has read a large body
        data = bytearray()
        while True:
            sock.settimeout(max(0.01, deadline - time.monotonic()))
            try:
                chunk = sock.recv(65536)
            except TimeoutError:
                raise AssertionError(f"no complete answer within {TIMEOUT} s") from None
            except ConnectionResetError:
                break
            if not chunk:
                break
            data += chunk
    head, _, rest = bytes(data).partition(b"\r\n\r\n")
    assert head, "the connection closed without an answer"
    status_line, *lines = head.split(b"\r\n")
    answer = Answer(status=int(status_line.split(b" ")[1]))
    for line in lines:
        name, _, value = line.partition(b":")
        answer.headers.setdefault(name.decode("latin-1").lower(), []).append(
            value.decode("latin-1").strip()
        )
    answer.body = dechunk(rest) if answer.header("transfer-encoding") == "chunked" else rest
    return answer


def dechunk(data: bytes) -> bytes:
    out = bytearray()
    while data:
        size_line, _, data = data.partition(b"\r\n")
        size = int(size_line.split(b";")[0], 16)
        if size == 0:
            return bytes(out)
        out += data[:size]
        data = data[size + 2 :]
    raise AssertionError("the chunked body ended without its last chunk")


class ServerFault(AssertionError):
    """A 5xx other than a backend's 502/503/504."""


class NotInEnvelope(AssertionError):
    """An error answer that is not the OpenAI envelope in application/json."""


class WrongSuccess(AssertionError):
    """A 200 in another content type than asked for, or a stream without its end."""


def check(request: Request, answer: Answer) -> None:
    """The answer's faults, each as its own exception type so hypothesis keeps them apart."""
    status = answer.status
    anthropic = request.path in ANTHROPIC_PATHS
    if status >= 500 and status not in (ANTHROPIC_FAULTS if anthropic else BACKEND_FAULTS):
        raise ServerFault(f"a {status} answer")
    content_type = answer.header("content-type")
    if request.method == "HEAD":
        return  # no body to read
    if status >= 400 and anthropic:
        if not content_type.startswith("application/json"):
            raise NotInEnvelope(f"{status} as {content_type!r}")
        try:
            body = json.loads(answer.body)
            assert body["type"] == "error", body
            assert set(body["error"]) == {"type", "message"}, body
            assert isinstance(body["error"]["message"], str) and body["error"]["message"], body
        except (ValueError, KeyError, TypeError, AssertionError) as why:
            raise NotInEnvelope(f"{status}: {why!r:.300}") from None
    elif status >= 400:
        if not content_type.startswith("application/json"):
            raise NotInEnvelope(f"{status} as {content_type!r}")
        try:
            error = json.loads(answer.body)["error"]
            assert set(error) == ENVELOPE_KEYS, error
            assert isinstance(error["message"], str) and error["message"], error
            assert isinstance(error["type"], str), error
            assert error["param"] is None or isinstance(error["param"], str), error
            assert error["code"] is None or isinstance(error["code"], str), error
            if status in (429, 503):
                assert answer.header("retry-after").isdigit(), answer.headers
        except (ValueError, KeyError, TypeError, AssertionError) as why:
            raise NotInEnvelope(f"{status}: {why!r:.300}") from None
    elif status == 200:
        try:
            if request.wants_stream() and request.path not in UNSTREAMED:
                assert content_type.startswith("text/event-stream"), content_type
                # Each surface ends its stream its own way.
                ends = {"/v1/messages": b"event: message_stop", "/v1/responses": b"event: response"}
                last = answer.body.replace(b"\r\n", b"\n").rstrip().rsplit(b"\n\n", 1)[-1]
                assert last.startswith(ends.get(request.path, b"data: [DONE]")), last[:200]
            else:
                assert content_type.startswith("application/json"), content_type
                json.loads(answer.body)
        except (ValueError, AssertionError) as why:
            raise WrongSuccess(f"200: {why!r:.300}") from None


# ----- the live gateway ----------------------------------------------------------------------


class GatewayLog(logging.Handler):
    def __init__(self) -> None:
        super().__init__(level=logging.ERROR)
        self.records: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        lines = logging.Formatter().format(record).splitlines()
        # A recursion's traceback repeats one frame a thousand times: its end says enough.
        self.records.append(
            "\n".join(lines if len(lines) < 30 else [lines[0], "...", *lines[-16:]])
        )


@pytest.fixture
def gateway_log() -> Iterator[GatewayLog]:
    handler = GatewayLog()
    root = logging.getLogger()
    root.addHandler(handler)
    yield handler
    root.removeHandler(handler)


@pytest.fixture
def engine(gateway: Any, make_sim: Any) -> Any:
    # Serves every surface itself, so bodies reach it as the gateway passes them on; it keeps
    # every request's body for `forwarded_scheduling`.
    return make_sim(
        tokens=2, token_delay=0, slots=64, messages=True, responses=True, record_limit=4 * EXAMPLES
    )


@pytest.fixture
def key(gateway: Any, engine: Any) -> str:
    research = make_group("research", priority="medium")
    add_backend("sim1", engine.url)
    add_backend("emb1", engine.url, pool="embed", kind="embedding")
    settings_update(values={"gateway.priority_enabled": True, "gateway.upstream_wait_secs": 5})
    alice = make_user("alice", groups=[research])
    return make_token_with_secret(alice, name="fuzz")[1]


def forwarded_scheduling(engine: Any) -> list[tuple[str, list[str]]]:
    """Each request body the engine received that says something about scheduling: the fields
    the gateway removes or refuses, nvext keys past its allowlist.

    Read on the engine's own loop, not over /sim/requests: a body nested too deep for JSON
    reaches the engine too, and could not come back as JSON."""

    async def records() -> list[dict[str, Any]]:
        return engine.engine.records()

    found = []
    for record in asyncio.run_coroutine_threadsafe(records(), engine.engine.loop).result(10):
        body = record["body"]
        if not isinstance(body, dict):
            continue
        named = sorted(set(body) & {*REMOVED, *REFUSED})
        nvext = body.get("nvext")
        if nvext is not None:
            named += [f"nvext.{k}" for k in (nvext if isinstance(nvext, dict) else {"": 0})
                      if k not in NVEXT_KEPT]  # fmt: skip
        if named:
            found.append((record["path"], named))
    return found


def token_header(key: str) -> tuple[bytes, bytes]:
    return (b"authorization", f"Bearer {key}".encode())


def known_cases() -> list[Any]:
    """The smallest requests earlier runs found failing (see the report in the branch's log)."""
    deep_messages = b'{"model": "sim-small", "messages": ' + b"[" * 500 + b"]" * 500 + b"}"
    return [
        pytest.param("/v1/chat/completions", None, b"[" * 100_000, id="100k-brackets"),
        pytest.param("/v1/embeddings", None, b'{"a":' * 200_000, id="1MB-of-objects"),
        pytest.param("/v1/chat/completions", None, deep_messages, id="engine-500-passed-on"),
        pytest.param(
            "/v1/embeddings",
            None,
            b'{"model": "sim-small", "input": "\\ud800"}',
            id="unpaired-surrogate-to-the-engine",
        ),
        pytest.param(
            "/v1/chat/completions", (b"authorization", b"Bearer \x01"), b"", id="ctl-auth"
        ),
        pytest.param(
            "/v1/chat/completions", (b"x-llamaswap-priority", b"\x1b[1m"), b"", id="ctl-hint"
        ),
    ]


@pytest.mark.parametrize(("path", "header", "body"), known_cases())
def test_a_request_an_earlier_fuzz_run_broke_gets_a_proper_answer(
    gateway: Any, key: str, gateway_log: GatewayLog, path: str, header: Any, body: bytes
) -> None:
    headers = [token_header(key)] if header is None or header[0] != b"authorization" else []
    request = Request("POST", path, [*headers, *([header] if header else [])], body)
    answer = exchange(gateway.url, request)
    try:
        check(request, answer)
    except AssertionError as failure:
        raise AssertionError("\n".join([repr(failure), *gateway_log.records])) from None


@pytest.mark.timeout(900)  # the long form shrinks a failure to its smallest request
def test_no_request_on_v1_gets_a_500_a_malformed_answer_or_a_hang(
    gateway: Any,
    engine: Any,
    key: str,
    gateway_log: GatewayLog,
    capsys: pytest.CaptureFixture[str],
) -> None:
    counts: Counter[int] = Counter()
    started = time.monotonic()

    def exchange_and_check(request: Request) -> None:
        gateway_log.records.clear()
        answer = exchange(gateway.url, request)
        counts[answer.status] += 1
        try:
            check(request, answer)
        except AssertionError as failure:
            lines = [
                f"{failure}",
                f"request: {request!r}",
                f"answer: {answer.status} {answer.headers} {answer.body[:500]!r}",
                *gateway_log.records,
            ]
            raise type(failure)("\n".join(lines)) from None

    # The short form does not shrink: known_cases() holds what shrinking found.
    phases = list(Phase) if LONG else [Phase.explicit, Phase.generate]
    settings(
        max_examples=EXAMPLES,
        deadline=None,
        database=None,
        derandomize=not LONG,
        phases=phases,
        suppress_health_check=list(HealthCheck),
    )(given(request=requests(key))(exchange_and_check))()
    elapsed = time.monotonic() - started
    with capsys.disabled():
        by_status = ", ".join(f"{s}: {n}" for s, n in sorted(counts.items()))
        print(f"\n/v1 fuzz: {sum(counts.values())} requests in {elapsed:.1f} s ({by_status})")
    rt = gateway.runtime
    wait_until(lambda: all(s.inflight == 0 for s in rt.slots.values()), "every slot is free")
    assert rt.queue.waiting == 0
    # Nothing a client said about scheduling reached the engine, whatever else the body held.
    assert forwarded_scheduling(engine) == []
