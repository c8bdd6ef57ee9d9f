"""The per-request activity record: one per outcome, written off the request path, and its API."""

from __future__ import annotations

import asyncio
import threading
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime, timedelta
from typing import Any

import httpx
import pytest
from django.test import Client
from django.utils import timezone

from accounts.models import ApiToken
from aiplane.catalog import settings_update
from gateway.admin import services
from gateway.admin.activity_store import prune, write_batch
from gateway.models import ActivityRecord
from gateway.observability.activity_writer import ProcessWriter
from tests.support.drive import (
    HTTP,
    chat,
    configure,
    engine_stats,
    key_for,
    open_raw,
    wait_until,
    waiting,
)
from tests.support.errors import NOT_ADMIN, NOT_SIGNED_IN, envelope
from tests.support.factories import make_group, make_token
from tests.support.live import add_backend

ACTIVITY = "/api/v0/admin/activity"
T0 = datetime(2025, 5, 1, 12, 0, tzinfo=UTC)


def records_of(*usernames: str, timeout: float = 15.0) -> dict[str, ActivityRecord]:
    """Wait for the recorder's flush (about a second) until each user has exactly one record."""
    wanted = set(usernames)

    def flushed() -> bool:
        return set(ActivityRecord.objects.values_list("username", flat=True)) >= wanted

    wait_until(flushed, f"records of {sorted(wanted)} are written", timeout)
    rows = list(ActivityRecord.objects.all())
    assert sorted(r.username for r in rows) == sorted(usernames)
    return {r.username: r for r in rows}


def token_id(username: str) -> int:
    return ApiToken.objects.get(name=f"{username}-token").pk


def story(r: ActivityRecord) -> dict[str, Any]:
    """The fields that do not depend on timing."""
    return {
        "token": (r.token_id, r.token_name),
        "user": (r.user_id is not None, r.username),
        "model": r.model,
        "path": r.path,
        "backend": r.backend,
        "class": r.priority_class,
        "hint": r.hint,
        "score": r.score,
        "outcome": r.outcome,
        "status": r.status,
    }


def expected(username: str, **fields: Any) -> dict[str, Any]:
    return {
        "token": (token_id(username), f"{username}-token"),
        "user": (True, username),
        "model": "sim-small",
        "path": "/v1/chat/completions",
        "backend": "solo",
        "class": "medium",
        "hint": "",
        "score": None,
        "outcome": "immediate",
        "status": 200,
        **fields,
    }


def differences(got: dict[str, dict[str, Any]], want: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """Per user, each field that differs as (got, wanted): a readable failure for a wide table."""
    out: dict[str, Any] = {}
    for name in sorted(set(got) | set(want)):
        mine, theirs = got.get(name, {}), want.get(name, {})
        diff = {
            k: (mine.get(k), theirs.get(k))
            for k in sorted(set(mine) | set(theirs))
            if mine.get(k) != theirs.get(k)
        }
        if diff:
            out[name] = diff
    return out


@pytest.fixture
def engine(make_sim: Any) -> Any:
    return make_sim(slots=1, tokens=2, token_delay=0)


@pytest.fixture
def solo(gateway: Any, engine: Any) -> Any:
    """The live gateway with prioritization on and one single-slot backend serving two models."""
    settings_update(values={"gateway.priority_enabled": True})
    add_backend("solo", engine.url, max_inflight=1, models=["sim-small", "sim-large"])
    return gateway


def test_every_outcome_leaves_a_record_of_who_what_where_and_how_long(
    solo: Any, engine: Any
) -> None:
    users = ["ivy", "blake", "walt", "cass", "erin", "ezra", "rita"]
    keys = {name: key_for(name, "high" if name == "ivy" else None) for name in users}
    started = timezone.now()

    assert chat(solo, keys["ivy"], "free slot").status_code == 200
    with ThreadPoolExecutor(max_workers=4) as pool:
        configure(engine, slots=0)
        blocker = pool.submit(chat, solo, keys["blake"], "blocker")
        wait_until(lambda: engine_stats(engine)["waiting"] == 1, "blake holds the slot")

        lowered = pool.submit(
            chat, solo, keys["walt"], "lowered", headers={"X-LlamaSwap-Priority": "batch"}
        )
        wait_until(lambda: waiting(solo) == 1, "walt waits")

        leaver = open_raw(solo, keys["cass"], "leaver")
        wait_until(lambda: waiting(solo) == 2, "cass waits")
        leaver.close()
        wait_until(lambda: waiting(solo) == 1, "cass has left")

        orphan = pool.submit(chat, solo, keys["erin"], "orphan", model="sim-large")
        wait_until(lambda: waiting(solo) == 2, "erin waits")
        services.backend_save(data={"name": "solo", "models": ["sim-small"]})
        gone = orphan.result()
        assert gone.status_code == 503, gone.text
        assert gone.json()["error"]["code"] == "no_backend_available"

        settings_update(values={"gateway.upstream_wait_secs": 1})
        late = chat(solo, keys["ezra"], "too late")
        assert late.status_code == 503, late.text

        settings_update(values={"gateway.max_waiters": 1})
        # Of walt's class: a higher class would take his place instead.
        refused = chat(
            solo, keys["rita"], "one too many", headers={"X-LlamaSwap-Priority": "batch"}
        )
        assert refused.status_code == 429, refused.text

        configure(engine, slots=1)
        assert blocker.result().status_code == 200
        assert lowered.result().status_code == 200
    finished = timezone.now()

    rows = records_of(*users)
    for r in rows.values():
        assert started <= r.at <= finished
        assert r.duration_ms >= r.queue_ms >= 0
    timing = {
        "ivy did not queue": rows["ivy"].queue_ms < 1,
        "rita was refused at once": rows["rita"].queue_ms == 0,
        "walt queued": rows["walt"].queue_ms > 0,
        "cass queued until she left": rows["cass"].queue_ms > 0,
        "erin queued until her model went away": rows["erin"].queue_ms > 0,
        "ezra queued for his whole budget": 1000 <= rows["ezra"].queue_ms < 3000,
    }

    wanted = {
        "ivy": expected("ivy", **{"class": "high"}),
        "blake": expected("blake"),
        "walt": expected(
            "walt",
            outcome="waited",
            hint="x-llamaswap-priority=batch",
            **{"class": "low"},
        ),
        "cass": expected("cass", outcome="cancelled", status=499, backend=""),
        "erin": expected("erin", outcome="unavailable", status=503, backend="", model="sim-large"),
        "ezra": expected("ezra", outcome="expired", status=503, backend=""),
        "rita": expected(
            "rita",
            outcome="rejected",
            status=429,
            backend="",
            hint="x-llamaswap-priority=batch",
            **{"class": "low"},
        ),
    }
    wrong_timing = [fact for fact, true in timing.items() if not true]
    fields = differences({name: story(r) for name, r in rows.items()}, wanted)
    assert {"fields": fields, "timing": wrong_timing} == {"fields": {}, "timing": []}


def test_a_request_that_finds_a_free_slot_is_recorded_as_immediate(solo: Any) -> None:
    key = key_for("ivy")
    assert chat(solo, key).status_code == 200
    record = records_of("ivy")["ivy"]
    assert (record.outcome, record.status, record.backend) == ("immediate", 200, "solo")


def test_under_the_serial_scheduler_a_record_carries_the_score_the_request_won_with(
    solo: Any,
) -> None:
    """llama-swap's score: band anchor + in-band offset + affinity + waited seconds / divisor."""
    settings_update(values={"gateway.scheduler": "serial"})
    assert chat(solo, key_for("hana", "high"), "high").status_code == 200
    lowered = {"X-LlamaSwap-Priority": "-20"}
    assert chat(solo, key_for("mia"), "offset", headers=lowered).status_code == 200
    rows = records_of("hana", "mia")
    assert (rows["mia"].hint, rows["mia"].priority_class) == ("x-llamaswap-priority=-20", "medium")
    assert rows["hana"].score == pytest.approx(100, abs=0.01)
    assert rows["mia"].score == pytest.approx(-20, abs=0.01)


def test_requests_refused_before_admission_leave_a_refused_record(solo: Any) -> None:
    """401 (token), 400 (body, hint), 404 (unknown model) and 403 (model not allowed) are
    answered before the queue, and each still leaves a record saying who tried what."""
    make_group("research")
    engine_url = solo.runtime.snapshot.upstreams["solo"].spec.base_url.removesuffix("/v1")
    add_backend(
        "closed",
        engine_url,
        pool="research-only",
        allowed_groups=["research"],
        models=["sim-closed"],
    )
    key = key_for("ivy")
    assert chat(solo, "gwk_" + "0" * 64).status_code == 401
    bad_json = httpx.post(
        solo.v1 + "/chat/completions",
        content=b"{not json",
        headers={"Authorization": f"Bearer {key}"},
        timeout=10,
    )
    assert bad_json.status_code == 400
    assert chat(solo, key, headers={"X-AIplane-Priority": "urgent"}).status_code == 400
    assert chat(solo, key, model="nope").status_code == 404
    assert chat(solo, key, model="sim-closed").status_code == 403

    def all_five() -> bool:
        return ActivityRecord.objects.count() >= 5

    wait_until(all_five, "the five refusals are written", 15.0)
    rows = ActivityRecord.objects.order_by("at", "id")
    assert [(r.username, r.model, r.status, r.outcome) for r in rows] == [
        ("", "", 401, "refused"),
        ("ivy", "", 400, "refused"),
        ("ivy", "sim-small", 400, "refused"),
        ("ivy", "nope", 404, "refused"),
        ("ivy", "sim-closed", 403, "refused"),
    ]
    assert all(r.backend == "" and r.queue_ms == 0 for r in rows)


def test_a_stuck_database_write_never_holds_up_a_request(solo: Any) -> None:
    """Records go to the database from the recorder's batches, never from the request path."""
    recorder = solo.app.gateway.recorder
    write, entered, release = recorder.writer, threading.Event(), threading.Event()

    async def stuck_writer(rows: list[Any]) -> None:
        entered.set()
        await asyncio.to_thread(release.wait, 10)
        await write(rows)

    recorder.writer = stuck_writer
    key = key_for("ivy")
    try:
        assert chat(solo, key, "first").status_code == 200
        # Generous: the first flush waits for the writer's process to start, which on a busy
        # machine takes seconds; the point is that requests go on while the write is stuck.
        assert entered.wait(30), "the recorder never flushed"
        for label in ("second", "third"):
            assert chat(solo, key, label).status_code == 200
        assert not ActivityRecord.objects.exists()
    finally:
        release.set()
    wait_until(lambda: ActivityRecord.objects.count() == 3, "every record is written")
    assert recorder.dropped == 0


@pytest.fixture(params=["process", "thread"])
def live(
    transactional_db: None,
    request: pytest.FixtureRequest,
    monkeypatch: pytest.MonkeyPatch,
    engine: Any,
) -> Any:
    """The live gateway and one backend, its activity writer in each AIPLANE_ACTIVITY_WRITER
    mode."""
    monkeypatch.setenv("AIPLANE_ACTIVITY_WRITER", request.param)
    gateway = request.getfixturevalue("gateway")
    writer = gateway.app.gateway.recorder.writer
    assert isinstance(writer, ProcessWriter) is (request.param == "process")
    add_backend("solo", engine.url, max_inflight=1, models=["sim-small"])
    return gateway


def test_a_model_name_that_is_not_valid_unicode_holds_up_no_record(live: Any) -> None:
    """JSON's "\\ud800" is a lone surrogate, which UTF-8 cannot encode, and PostgreSQL refuses
    NUL: such a record is cleaned when it is made, and every record after it arrives."""
    mallory = {"Authorization": f"Bearer {key_for('mallory')}"}
    for model in (rb'"\ud800"', rb'"sim\u0000small"'):
        body = b'{"model": ' + model + b', "messages": [{"role": "user", "content": "hi"}]}'
        response = HTTP.post(live.v1 + "/chat/completions", content=body, headers=mallory)
        assert response.status_code == 404, response.text
    for name in ("ann", "bea", "cid"):
        assert chat(live, key_for(name)).status_code == 200
    wait_until(lambda: ActivityRecord.objects.count() >= 5, "every record is written", 15.0)
    rows = ActivityRecord.objects.order_by("at", "id")
    assert [(r.username, r.model, r.status, r.outcome) for r in rows] == [
        ("mallory", "\ufffd", 404, "refused"),
        ("mallory", "simsmall", 404, "refused"),
        ("ann", "sim-small", 200, "immediate"),
        ("bea", "sim-small", 200, "immediate"),
        ("cid", "sim-small", 200, "immediate"),
    ]
    recorder = live.app.gateway.recorder
    assert (recorder.rejected, recorder.dropped, recorder.failures) == (0, 0, 0)


# ----- the admin API ---------------------------------------------------------------------------


def make_record(at: datetime, **fields: Any) -> ActivityRecord:
    values: dict[str, Any] = {
        "username": "alice",
        "model": "sim-small",
        "path": "/v1/chat/completions",
        "backend": "gpu1",
        "priority_class": "medium",
        "outcome": "immediate",
        "status": 200,
        **fields,
    }
    return ActivityRecord.objects.create(at=at, **values)


@pytest.fixture
def history(alice: Any, bob: Any) -> dict[str, Any]:
    """Five records a minute apart, T0 oldest: alice's on two tokens, bob's on one."""
    laptop, ci = make_token(alice, name="laptop"), make_token(bob, name="ci")
    rows = [
        make_record(T0, token_id=laptop.pk, token_name="laptop"),
        make_record(
            T0 + timedelta(minutes=1),
            token_id=laptop.pk,
            token_name="laptop",
            priority_class="high",
            outcome="waited",
            queue_ms=1500.0,
        ),
        make_record(
            T0 + timedelta(minutes=2),
            username="bob",
            token_id=ci.pk,
            token_name="ci",
            model="sim-large",
            priority_class="low",
            outcome="expired",
            status=503,
            backend="",
        ),
        make_record(
            T0 + timedelta(minutes=3),
            username="bob",
            token_id=ci.pk,
            token_name="ci",
            hint="x-llamaswap-priority=batch",
            priority_class="low",
        ),
        make_record(T0 + timedelta(minutes=4), outcome="cancelled", status=499, backend=""),
    ]
    return {"rows": rows, "laptop": laptop, "ci": ci}


def ids(response: Any) -> list[int]:
    assert response.status_code == 200, response.content
    return [row["id"] for row in response.json()["results"]]


def test_an_administrator_lists_records_newest_first_with_every_field(
    carol_client: Client, history: dict[str, Any]
) -> None:
    rows = history["rows"]
    response = carol_client.get(ACTIVITY)
    assert ids(response) == [r.pk for r in reversed(rows)]
    body = response.json()
    assert (body["count"], body["page"], body["page_size"], body["has_next"]) == (5, 1, 50, False)
    assert body["results"][3] == {
        "id": rows[1].pk,
        "at": "2025-05-01T12:01:00+00:00",
        "username": "alice",
        "token_id": history["laptop"].pk,
        "token_name": "laptop",
        "model": "sim-small",
        "path": "/v1/chat/completions",
        "backend": "gpu1",
        "class": "high",
        "hint": "",
        "score": None,
        "queue_ms": 1500.0,
        "first_byte_ms": None,
        "outcome": "waited",
        "status": 200,
        "duration_ms": 0.0,
        "surface": "",
        "input_tokens": None,
        "output_tokens": None,
        "cached_tokens": None,
        "usage_estimated": False,
        "error": "",
    }


@pytest.mark.parametrize(
    ("query", "picked"),
    [
        ({"user": "bob"}, [3, 2]),
        ({"model": "sim-large"}, [2]),
        ({"class": "low"}, [3, 2]),
        ({"class": "high"}, [1]),
        ({"outcome": "cancelled"}, [4]),
        ({"outcome": "expired"}, [2]),
        ({"since": "2025-05-01T12:03:00+00:00"}, [4, 3]),
        ({"until": "2025-05-01T12:01:00+00:00"}, [0]),
        ({"since": "2025-05-01T12:01:00Z", "until": "2025-05-01T12:03:00Z"}, [2, 1]),
        ({"user": "alice", "class": "medium"}, [4, 0]),
        ({"user": "nobody"}, []),
    ],
)
def test_records_filter_by_user_model_class_outcome_and_time(
    carol_client: Client, history: dict[str, Any], query: dict[str, str], picked: list[int]
) -> None:
    rows = history["rows"]
    response = carol_client.get(ACTIVITY, query)
    assert ids(response) == [rows[i].pk for i in picked]
    assert response.json()["count"] == len(picked)


def test_records_filter_by_token_id(carol_client: Client, history: dict[str, Any]) -> None:
    rows = history["rows"]
    assert ids(carol_client.get(ACTIVITY, {"token": history["ci"].pk})) == [rows[3].pk, rows[2].pk]
    laptop = [rows[1].pk, rows[0].pk]
    assert ids(carol_client.get(ACTIVITY, {"token": history["laptop"].pk})) == laptop


def test_records_filter_by_token_name(carol_client: Client, history: dict[str, Any]) -> None:
    rows = history["rows"]
    by_name = ids(carol_client.get(ACTIVITY, {"token": history["laptop"].name}))
    assert by_name == [rows[1].pk, rows[0].pk]


def test_records_come_in_pages(carol_client: Client, history: dict[str, Any]) -> None:
    newest_first = [r.pk for r in reversed(history["rows"])]
    pages = []
    for page in (1, 2, 3, 4):
        body = carol_client.get(ACTIVITY, {"page": page, "page_size": 2}).json()
        pages.append(([r["id"] for r in body["results"]], body["has_next"], body["count"]))
        assert (body["page"], body["page_size"]) == (page, 2)
    assert pages == [
        (newest_first[0:2], True, 5),
        (newest_first[2:4], True, 5),
        (newest_first[4:], False, 5),
        ([], False, 5),
    ]


@pytest.mark.parametrize(
    ("query", "message", "param"),
    [
        ({"class": "urgent"}, "class must be low, medium or high.", "class"),
        ({"since": "yesterday"}, "since must be an ISO 8601 time.", "since"),
        ({"until": "2025-13-45"}, "until must be an ISO 8601 time.", "until"),
        ({"page": "0"}, "page must be from 1 to 1000000000.", "page"),
        ({"page": "two"}, "page must be from 1 to 1000000000.", "page"),
        ({"page_size": "0"}, "page_size must be from 1 to 500.", "page_size"),
        ({"page_size": "501"}, "page_size must be from 1 to 500.", "page_size"),
    ],
)
def test_a_bad_filter_is_a_400_in_the_envelope(
    carol_client: Client,
    history: dict[str, Any],
    query: dict[str, str],
    message: str,
    param: str,
) -> None:
    response = carol_client.get(ACTIVITY, query)
    assert response.status_code == 400
    assert response.json() == envelope(message, "invalid_request_error", "invalid_filter", param)


def test_activity_is_for_administrators_only(
    alice_client: Client, anonymous: Client, carol: Any
) -> None:
    assert alice_client.get(ACTIVITY).json() == NOT_ADMIN
    assert alice_client.get(ACTIVITY).status_code == 403
    assert anonymous.get(ACTIVITY).status_code == 401
    assert anonymous.get(ACTIVITY).json() == NOT_SIGNED_IN


# ----- retention -------------------------------------------------------------------------------


@pytest.mark.django_db
def test_pruning_deletes_only_records_older_than_the_retention() -> None:
    now = timezone.now()
    old = make_record(now - timedelta(days=31))
    kept = [make_record(now - timedelta(days=29)), make_record(now)]
    assert prune(30) == 1
    assert not ActivityRecord.objects.filter(pk=old.pk).exists()
    assert sorted(ActivityRecord.objects.values_list("pk", flat=True)) == sorted(r.pk for r in kept)
    assert prune(30) == 0


@pytest.fixture
def aged_gateway(transactional_db: None, request: pytest.FixtureRequest) -> dict[str, Any]:
    """Records 8 and 6 days old and a 7-day retention, all in place before the gateway starts."""
    settings_update(values={"activity.retention_days": 7})
    now = timezone.now()
    rows = {
        "old": make_record(now - timedelta(days=8)),
        "recent": make_record(now - timedelta(days=6)),
    }
    request.getfixturevalue("gateway")
    return rows


def test_the_gateway_applies_the_retention_setting_when_it_starts(
    aged_gateway: dict[str, Any],
) -> None:
    old = aged_gateway["old"]
    wait_until(
        lambda: not ActivityRecord.objects.filter(pk=old.pk).exists(), "the old record is pruned"
    )
    assert list(ActivityRecord.objects.values_list("pk", flat=True)) == [aged_gateway["recent"].pk]


@pytest.fixture
def aged_audit(transactional_db: None, request: pytest.FixtureRequest) -> dict[str, Any]:
    """Audit rows 11 and 9 days old and a 10-day audit retention, before the gateway starts."""
    from aiplane.models import AuditEntry

    settings_update(values={"audit.retention_days": 10})
    now = timezone.now()
    rows = {
        age: AuditEntry.objects.create(
            at=now - timedelta(days=days),
            actor_name="carol",
            action="setting.update",
            kind="setting",
            target=age,
            before=None,
            after={"value": days},
        )
        for age, days in (("old", 11), ("recent", 9))
    }
    request.getfixturevalue("gateway")
    return rows


def test_the_gateway_applies_the_audit_retention_as_it_does_the_activity_one(
    aged_audit: dict[str, Any],
) -> None:
    from aiplane.models import AuditEntry

    old = aged_audit["old"]
    wait_until(lambda: not AuditEntry.objects.filter(pk=old.pk).exists(), "the old row is pruned")
    assert AuditEntry.objects.filter(pk=aged_audit["recent"].pk).exists()


def test_a_playground_request_is_recorded_under_the_signed_in_user_without_a_token(
    solo: Any, alice: Any, login: Any
) -> None:
    session = login(alice).cookies["sessionid"].value
    response = httpx.post(
        solo.v1 + "/chat/completions",
        json={"model": "sim-small", "messages": [{"role": "user", "content": "hi"}]},
        headers={"X-AIplane-Session": "1", "Cookie": f"sessionid={session}"},
        timeout=10,
    )
    assert response.status_code == 200, response.text
    record = records_of("alice")["alice"]
    assert (record.user_id, record.token_id, record.token_name) == (alice.pk, None, "")


@pytest.mark.django_db
def test_a_large_batch_is_written_whole_in_multi_row_inserts() -> None:
    from gateway.observability.records import Entry

    entries = [
        Entry(
            started=T0.timestamp() + n, token_id=None, token_name=None, user_id=None,
            username=f"u{n % 7}", model="sim-small", cls=n % 3, outcome="immediate", status=200,
        )
        for n in range(1_203)
    ]  # fmt: skip
    write_batch([e.row() for e in entries])
    assert ActivityRecord.objects.count() == 1_203
    last = ActivityRecord.objects.order_by("-at").first()
    assert last is not None
    assert (last.at, last.username, last.priority_class) == (
        T0 + timedelta(seconds=1_202), "u5", "high",
    )  # fmt: skip
