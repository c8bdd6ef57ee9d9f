"""Property-based fuzzing of /api/v0, driven by its own served OpenAPI document, as three personas.

Per operation: schemathesis's cases (valid by the schemas, or each breaking them), with real or
hostile ids in the path, some with a hostile field, body, header or query put in; then a sweep
puts every hostile shape once on the operation, so none depends on luck. Each request goes
through Django's real WSGI handler as carol (administrator), alice (plain user) or nobody, with
a session cookie and the CSRF header as the browser sends them. Every answer must be no 5xx
(the server's log record is shown with the case), a status the document lists for that
operation, in the documented content type and shaped like the documented schema.

Each case runs in a savepoint that is rolled back, so a fuzzed write (deleting carol, changing
her password, signing out) never changes what the next case meets; after a write that was
accepted, its listings are read again inside the savepoint (a stored value that cannot be
rendered fails there). Short form by default; AIPLANE_FUZZ=long generates far more cases.
"""

from __future__ import annotations

import json
import logging
import os
import time
from collections import Counter
from collections.abc import Iterator
from typing import Any

import pytest
import schemathesis
import werkzeug.test
from django.core import signals
from django.core.handlers.wsgi import WSGIHandler, WSGIRequest, get_bytes_from_wsgi
from django.db import close_old_connections, transaction
from django.http import QueryDict
from django.test import Client
from django.utils import timezone
from django.utils.functional import cached_property
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from schemathesis.checks import not_a_server_error
from schemathesis.core import NotSet
from schemathesis.specs.openapi.checks import (
    content_type_conformance,
    response_schema_conformance,
    status_code_conformance,
)

from gateway.admin import services
from gateway.models import ActivityRecord
from tests.support.factories import make_group, make_token, make_user

pytestmark = pytest.mark.django_db

LONG = os.environ.get("AIPLANE_FUZZ", "").lower() == "long"
EXAMPLES = 100 if LONG else 6  # generated cases per operation and persona
CHECKS = [
    not_a_server_error,
    status_code_conformance,
    content_type_conformance,
    response_schema_conformance,
]
# Where what an operation wrote is read back (by the path's first segments).
LISTINGS = {
    "/api/v0/session": ("/api/v0/me",),
    "/api/v0/me": ("/api/v0/me",),
    "/api/v0/tokens": ("/api/v0/tokens/details", "/api/v0/admin/tokens"),
    "/api/v0/admin/groups": ("/api/v0/admin/groups", "/api/v0/admin/users"),
    "/api/v0/admin/users": ("/api/v0/admin/users", "/api/v0/admin/groups"),
    "/api/v0/admin/tokens": ("/api/v0/admin/tokens", "/api/v0/tokens/details"),
    "/api/v0/admin/settings": ("/api/v0/admin/settings", "/api/v0/tokens/details"),
    "/api/v0/admin/backends": ("/api/v0/admin/backends", "/api/v0/admin/pools"),
    "/api/v0/admin/pools": ("/api/v0/admin/pools", "/api/v0/admin/backends"),
}


def listings(path: str) -> tuple[str, ...]:
    for prefix, paths in LISTINGS.items():
        if path.startswith(prefix):
            return paths
    return ()


# What no schema describes: JSON values that break parsers, the database or the renderer, put in
# place of one field of a generated body (or of the whole body).
HOSTILE_JSON = (
    "[" * 100_000,
    '{"a":' * 50_000,
    "[" * 33 + "]" * 33,
    '"\\ud800"',
    '"a\\udfffb"',
    '{"\\udbff": 1}',
    '"\\u0000"',
    '"x\\u0000y"',
    '"\\r\\nX-Injected: 1"',
    "NaN",
    "-Infinity",
    "1e999",
    "9" * 5000,
    "-" + "9" * 40,
    "1.5",
    '"' + "x" * 100_000 + '"',
    "[" + ",".join(["1"] * 5000) + "]",
    "null",
    "true",
    "{}",
    '"\u2028\u202e\ufeff"',
)
# The sweep puts each of these in place of a field, and the first few in place of the body.
SWEPT_JSON = (
    "[" * 100_000,
    '"' + "x" * 100_000 + '"',
    "[" + ",".join(["1"] * 5000) + "]",
    "null",
    '{"a":' * 50_000,
    '"\\ud800"',
    '{"\\udbff": 1}',
    '"x\\u0000y"',
    '"\\r\\nX-Injected: 1"',
    "NaN",
    "1e999",
    "9" * 5000,
)
RAW_BODIES = (b"", b"{", b"\xff\xfe", b"\x00", b'{"a": 1} trailing', b"\xef\xbb\xbf{}")
WEIRD_TEXT = st.text(st.characters(categories=["Cs", "Cc", "Zs", "Co", "Lo"]), max_size=6)
# A URL carries UTF-8, which has no unpaired surrogates (Django decodes bad bytes as U+FFFD).
QUERY_TEXT = st.text(st.characters(categories=["Cc", "Zs", "Co", "Lo"]), max_size=6)
MUTATIONS = st.one_of(
    st.none(),
    st.tuples(st.just("field"), st.sampled_from(HOSTILE_JSON), st.integers(0, 50)),
    st.tuples(st.just("field"), WEIRD_TEXT.map(json.dumps), st.integers(0, 50)),
    st.tuples(st.just("body"), st.sampled_from(HOSTILE_JSON), st.just(0)),
    st.tuples(st.just("raw"), st.sampled_from(RAW_BODIES), st.just(0)),
)
HEADER_SETS = (
    {"Accept": "text/html"},
    {"Accept": "*/*"},
    {"Accept": "application/json; q=0"},
    {"Accept": "\u00ff/\u00ff"},
    {"Content-Type": "application/json; charset=rot13"},
    {"Content-Type": "application/json; charset=utf-16"},
    {"Content-Type": "application/json; charset=nope"},
    {"Content-Type": "text/plain"},
    {"Content-Type": "application/x-www-form-urlencoded"},
    {"Content-Type": "multipart/form-data; boundary="},
    {"Content-Type": "garbage"},
    {"X-CSRFToken": "forged"},
    {"X-CSRFToken": ""},
)
HEADERS = st.one_of(st.just({}), st.just({}), st.sampled_from(HEADER_SETS))
FILTERS = ("user", "token", "model", "class", "outcome", "since", "until", "page", "page_size")
HOSTILE_QUERY = (
    "\x00",
    "\u00b2",
    "9" * 5000,
    "2024-13-45T00:00:00",
    "9999-12-31T23:59:59-23:59",
    "0001-01-01T00:00:00+23:59",
    "",
    "x" * 300,
    "\u2028",
    "-1",
    "0",
    "1e3",
    "00001",
)
QUERIES = st.one_of(
    st.just({}),
    st.dictionaries(
        st.sampled_from(FILTERS),
        st.one_of(st.sampled_from(HOSTILE_QUERY), QUERY_TEXT),
        max_size=3,
    ),
)
HOSTILE_NAMES = ("\x00", "a b", "\u00e9", "x" * 300, "..", "%", "\u2028", "-1", "0", "9" * 30)
PLACEHOLDER = "\u0001hostile\u0001"


def hostile_body(case: Any, mutation: tuple[str, Any, int] | None) -> dict[str, Any]:
    """Transport arguments that replace the generated body, or none."""
    if mutation is None or isinstance(case.body, NotSet):
        return {}
    where, value, index = mutation
    if where == "raw":
        return {"data": value}
    body = case.body
    if where == "field" and isinstance(body, dict) and body:
        key = sorted(body, key=str)[index % len(body)]
        text = json.dumps({**body, key: PLACEHOLDER}).replace(json.dumps(PLACEHOLDER), value)
        return {"data": text.encode("utf-8", "surrogatepass")}
    return {"data": value.encode("utf-8", "surrogatepass")}


class ServerLog(logging.Handler):
    """Keeps the django.request records of 5xx answers, tracebacks included."""

    def __init__(self) -> None:
        super().__init__(level=logging.ERROR)
        self.records: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(logging.Formatter().format(record))


@pytest.fixture
def server_log() -> Iterator[ServerLog]:
    handler = ServerLog()
    logger = logging.getLogger("django.request")
    logger.addHandler(handler)
    yield handler
    logger.removeHandler(handler)


class ServedRequest(WSGIRequest):
    """A WSGIRequest whose query string is read as the served ASGIRequest reads it.

    WSGIRequest decodes it in the Content-Type's charset while it is built, and a bytes-to-bytes
    codec there (charset=rot13) raises out of Django; the ASGI request the app is served with
    always reads it as UTF-8, so that is no fault of the app.
    """

    @cached_property
    def GET(self) -> QueryDict:  # type: ignore[override]
        return QueryDict(get_bytes_from_wsgi(self.environ, "QUERY_STRING", ""))


@pytest.fixture
def wsgi() -> Iterator[WSGIHandler]:
    """Django's WSGI handler, kept on the test's connection (and so inside its transaction)."""
    handler = WSGIHandler()
    handler.request_class = ServedRequest
    yield handler
    signals.request_started.connect(close_old_connections)
    signals.request_finished.connect(close_old_connections)


def keep_connection() -> None:
    # What Django's test client does around each request: closing the connection at the end of
    # a request would end the test's transaction. (Its client reconnects them after each use.)
    signals.request_started.disconnect(close_old_connections)
    signals.request_finished.disconnect(close_old_connections)


@pytest.fixture
def world(db: None) -> dict[str, list[Any]]:
    """Objects for the path parameters to hit: real ids and names, not only random ones."""
    admins = make_group("administrators", is_admin=True)
    research = make_group("research", priority="high")
    carol = make_user("carol", groups=[admins])
    alice = make_user("alice", groups=[research])
    bob = make_user("bob")
    tokens = [
        make_token(alice, name="laptop"),
        make_token(alice, name="ci", priority="low", revoked=True),
        make_token(carol, name="ops"),
        make_token(bob, name="bobs"),
    ]
    services.backend_save(
        data={"name": "gpu1", "base_url": "http://127.0.0.1:9/v1", "models": ["m"], "api_key": "k"}
    )
    services.pool_save(data={"name": "chat", "backends": ["gpu1"]}, known_groups=set())
    ActivityRecord.objects.create(
        at=timezone.now(), model="m", priority_class="medium", outcome="immediate", status=200
    )
    return {
        "token_id": [t.pk for t in tokens],
        "user_id": [carol.pk, alice.pk, bob.pk],
        "name": ["administrators", "research", "gpu1", "chat"],
        "users": [carol, alice],
    }


def signed_in(user: Any | None) -> dict[str, Any]:
    """Cookies and headers of a browser that fetched its CSRF token (and signed in)."""
    client = Client()
    if user is not None:
        client.force_login(user)
    token = client.get("/api/v0/session/csrf").json()["csrf_token"]
    cookies = {name: morsel.value for name, morsel in client.cookies.items()}
    return {"cookies": cookies, "headers": {"X-CSRFToken": token}}


def strategies(schema: Any, world: dict[str, list[Any]]) -> list[tuple[str, Any]]:
    """Per operation: generated cases, free or with a real or hostile path id."""
    found = []
    for result in schema.get_all_operations():
        operation = result.ok()
        names = [p.name for p in operation.path_parameters]
        options = []
        for mode in (schemathesis.GenerationMode.POSITIVE, schemathesis.GenerationMode.NEGATIVE):
            options.append(operation.as_strategy(generation_mode=mode))
            if names:
                for value in world[names[0]]:
                    options.append(
                        operation.as_strategy(
                            generation_mode=mode, path_parameters={names[0]: value}
                        )
                    )
        found.append((operation.label, st.one_of(options)))
    return found


class Fuzzer:
    """One persona's run: every case in its own rolled-back savepoint, checked, and counted."""

    def __init__(self, user: Any | None, wsgi: WSGIHandler, server_log: ServerLog) -> None:
        document = Client().get("/api/v0/openapi.json").json()
        self.schema = schemathesis.openapi.from_dict(document)
        self.session = signed_in(user)
        self.wsgi, self.server_log = wsgi, server_log
        self.reader = werkzeug.test.Client(wsgi)
        self.cookie = "; ".join(f"{k}={v}" for k, v in self.session["cookies"].items())
        self.counts: Counter[str] = Counter()
        self.first: dict[str, Any] = {}  # a generated case per operation, for the sweep

    def exercise(
        self,
        case: Any,
        mutation: tuple[str, Any, int] | None = None,
        headers: dict[str, str] | None = None,
        query: dict[str, str] | None = None,
        kind: str = "explored",
    ) -> None:
        self.first.setdefault(case.operation.label, case)
        self.server_log.records.clear()
        keep_connection()
        call = {
            "cookies": self.session["cookies"],
            "headers": {**self.session["headers"], **(headers or {})},
            **({"params": query} if query and case.method == "GET" else {}),
            **hostile_body(case, mutation),
        }
        with transaction.atomic():
            try:
                response = case.call(app=self.wsgi, **call)
                self.counts[kind] += 1
                self.counts[case.operation.label] += 1
                try:
                    case.validate_response(response, checks=CHECKS, headers=call["headers"])
                except BaseException as failure:
                    detail = [
                        str(failure),
                        f"mutation: {mutation!r:.300}",
                        *self.server_log.records,
                    ]
                    raise AssertionError("\n".join(detail)) from None
                if case.method != "GET" and response.status_code < 300:
                    for path in listings(case.path):
                        reread = self.reader.get(path, headers={"Cookie": self.cookie})
                        assert reread.status_code < 500, (path, *self.server_log.records)
            finally:
                transaction.set_rollback(True)

    def explore(self, strategy: Any) -> None:
        """Schemathesis's cases, each maybe with a hostile body, header or query."""
        settings(
            max_examples=EXAMPLES,
            deadline=None,
            database=None,
            derandomize=not LONG,
            suppress_health_check=list(HealthCheck),
        )(
            given(case=strategy, mutation=MUTATIONS, headers=HEADERS, query=QUERIES)(self.generated)
        )()

    def generated(
        self, case: Any, mutation: Any, headers: dict[str, str], query: dict[str, str]
    ) -> None:
        self.exercise(case, mutation, headers, query)

    def sweep(self, case: Any) -> None:
        """Every hostile shape once on this operation, so none depends on luck."""
        # Every header on every write (a form body there meets the CSRF check); two on a read.
        n = self.counts["swept"]
        reads = (HEADER_SETS[n % len(HEADER_SETS)], HEADER_SETS[(n + 1) % len(HEADER_SETS)])
        for headers in HEADER_SETS if case.method != "GET" else reads:
            self.exercise(case, headers=headers, kind="swept")
        if not isinstance(case.body, NotSet):
            for i, value in enumerate(SWEPT_JSON):
                self.exercise(case, ("field", value, i), kind="swept")
            for value in SWEPT_JSON[:5]:
                self.exercise(case, ("body", value, 0), kind="swept")
            for raw in RAW_BODIES:
                self.exercise(case, ("raw", raw, 0), kind="swept")
        if case.operation.query:
            for i, value in enumerate(HOSTILE_QUERY):
                self.exercise(case, query={FILTERS[i % len(FILTERS)]: value}, kind="swept")
        names = [p.name for p in case.operation.path_parameters]
        if names:
            saved = dict(case.path_parameters)
            for value in HOSTILE_NAMES:
                case.path_parameters = {**saved, names[0]: value}
                self.exercise(case, kind="swept")
            case.path_parameters = saved


@pytest.mark.timeout(900)  # a failure is shrunk to its smallest case, which takes a while
@pytest.mark.parametrize("persona", ["administrator", "user", "anonymous"])
def test_no_request_makes_api_v0_fail_or_answer_outside_its_document(
    persona: str,
    world: dict[str, list[Any]],
    wsgi: WSGIHandler,
    server_log: ServerLog,
    capsys: pytest.CaptureFixture[str],
) -> None:
    user = {"administrator": world["users"][0], "user": world["users"][1]}.get(persona)
    fuzzer = Fuzzer(user, wsgi, server_log)
    started = time.monotonic()
    operations = strategies(fuzzer.schema, world)
    for label, strategy in operations:
        try:
            fuzzer.explore(strategy)
            fuzzer.sweep(fuzzer.first[label])
        except BaseException as failure:
            raise AssertionError(f"{persona}: {label}: {failure}") from None
    elapsed = time.monotonic() - started
    counts = fuzzer.counts
    reached = [label for label, _ in operations if counts[label]]
    with capsys.disabled():
        print(
            f"\n/api/v0 fuzz as {persona}: {counts['explored'] + counts['swept']} cases"
            f" ({counts['explored']} generated, {counts['swept']} hostile sweep)"
            f" over {len(reached)} of {len(operations)} operations in {elapsed:.1f} s"
        )
    assert len(reached) == len(operations)
