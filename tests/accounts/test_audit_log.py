"""The audit log records every administrative change, masked, in the change's own transaction."""

from __future__ import annotations

import io
import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any
from unittest.mock import ANY

import pytest
from django.contrib.auth import get_user_model
from django.core.management import call_command
from django.db import DatabaseError, connection, transaction
from django.test import Client

from accounts import services
from accounts.models import ApiToken, GatewayGroup
from aiplane import audit
from aiplane.catalog import setting, settings_update
from aiplane.models import AuditEntry
from gateway.admin import services as admin_services
from gateway.models import Backend, Pool
from tests.support.factories import PASSWORD, make_group, make_token_with_secret

pytestmark = pytest.mark.django_db

User = get_user_model()
KEY = "sk-backend-7f3a9c-do-not-leak"
OTHER_KEY = "sk-backend-1b2c3d-also-secret"
NEW_PASSWORD = "a brand new passphrase 93"
GPU1 = {"name": "gpu1", "base_url": "http://10.0.0.5:8000/v1", "api_key": KEY}


def send(client: Client, method: str, url: str, body: Any = None) -> Any:
    kwargs: dict[str, Any] = {}
    if body is not None:
        kwargs = {"data": body, "content_type": "application/json"}
    response = getattr(client, method)(url, **kwargs)
    assert response.status_code < 300, response.content
    return response.json() if response.content else None


def only_row() -> AuditEntry:
    """The one row the change wrote."""
    rows = list(AuditEntry.objects.all())
    assert len(rows) == 1, [(r.action, r.target) for r in rows]
    return rows[0]


@dataclass
class World:
    alice: Any
    bob: Any
    carol: Any
    clients: dict[str, Client]
    token: ApiToken


@pytest.fixture
def world(alice: Any, bob: Any, carol: Any, login: Callable[..., Client]) -> World:
    token, _ = make_token_with_secret(alice, name="laptop")
    make_group("research", priority="medium", members=[bob], description="R&D")
    admin_services.backend_save(data=GPU1)
    admin_services.backend_save(data={"name": "gpu2", "base_url": "http://10.0.0.6:8000/v1"})
    admin_services.pool_save(data={"name": "chat", "backends": ["gpu1"]}, known_groups={"research"})
    AuditEntry.objects.all().delete()  # only the change under test leaves a row
    clients = {"alice": login(alice), "carol": login(carol)}
    return World(alice, bob, carol, clients, token)


@dataclass(frozen=True)
class Case:
    id: str
    actor: str
    change: Callable[[World], Any]
    action: str
    target: str
    changes: list[tuple[str, Any, Any]]
    # The accounts that joined or left a group: (username, groups before, groups after).
    members: tuple[tuple[str, list[str], list[str]], ...] = ()


def _as(who: str, method: str, url: Any, body: Any = None) -> Callable[[World], Any]:
    def change(w: World) -> Any:
        path = url(w) if callable(url) else url
        return send(w.clients[who], method, path, body)

    return change


def _token(suffix: str = "") -> Callable[[World], str]:
    return lambda w: f"/api/v0/tokens/{w.token.pk}{suffix}"


def _admin_token(suffix: str = "") -> Callable[[World], str]:
    return lambda w: f"/api/v0/admin/tokens/{w.token.pk}{suffix}"


def _user(name: str) -> Callable[[World], str]:
    return lambda w: f"/api/v0/admin/users/{User.objects.get(username=name).pk}"


GROUP_RESEARCH = {
    "name": "research",
    "description": "R&D",
    "is_admin": False,
    "is_default": False,
    "priority": "medium",
    "allowance": None,
    "members": ["bob"],
}
TOKEN_FIELDS = (
    "id",
    "owner",
    "name",
    "prefix",
    "priority",
    "priority_set_by_admin",
    "model_allowlist",
    "allowance",
    "allowance_set_by_admin",
    "expires_at",
    "revoked_at",
)
BACKEND_FIELDS = (
    "name",
    "base_url",
    "api_key",
    "max_inflight",
    "capacity_floor",
    "capacity_ceiling",
    "weight",
    "enabled",
    "health_path",
    "models",
    "aliases",
    "priority",
    "surfaces",
    "store_responses",
    "headroom",
)

FIVE_A_MINUTE = {"measure": "requests", "window": "minute", "limit": 5, "model": None}

CASES = [
    Case(
        "a setting saved",
        "carol",
        _as("carol", "post", "/api/v0/admin/settings", {"gateway.priority_enabled": True}),
        "setting.update",
        "gateway.priority_enabled",
        [("value", False, True)],
    ),
    Case(
        "a group created with a member",
        "carol",
        _as(
            "carol",
            "put",
            "/api/v0/admin/groups",
            {"name": "ops", "priority": "high", "members": ["alice"]},
        ),
        "group.create",
        "ops",
        [
            ("name", None, "ops"),
            ("allowance", None, None),
            ("description", None, ""),
            ("is_admin", None, False),
            ("is_default", None, False),
            ("priority", None, "high"),
            ("members", None, ["alice"]),
        ],
        members=(("alice", [], ["ops"]),),
    ),
    Case(
        "a member added to a group (her priority)",
        "carol",
        _as(
            "carol",
            "put",
            "/api/v0/admin/groups",
            {"name": "research", "members": ["alice", "bob"]},
        ),
        "group.update",
        "research",
        [("members", ["bob"], ["alice", "bob"])],
        members=(("alice", [], ["research"]),),
    ),
    Case(
        "a group made an administrators' group",
        "carol",
        _as("carol", "put", "/api/v0/admin/groups", {"name": "research", "is_admin": True}),
        "group.update",
        "research",
        [("is_admin", False, True)],
    ),
    Case(
        "a group deleted",
        "carol",
        _as("carol", "delete", "/api/v0/admin/groups/research"),
        "group.delete",
        "research",
        [(k, v, None) for k, v in GROUP_RESEARCH.items()],
        members=(("bob", ["research"], []),),
    ),
    Case(
        "a group renamed",
        "carol",
        _as("carol", "post", "/api/v0/admin/groups/research/rename", {"name": "science"}),
        "group.rename",
        "science",
        [("name", "research", "science")],
    ),
    Case(
        "an account created with a password",
        "carol",
        _as("carol", "post", "/api/v0/admin/users", {"username": "dave", "password": PASSWORD}),
        "user.create",
        "dave",
        [
            ("username", None, "dave"),
            ("email", None, ""),
            ("is_active", None, True),
            ("is_superuser", None, False),
            ("has_password", None, True),
            ("groups", None, []),
        ],
    ),
    Case(
        "an account deactivated",
        "carol",
        _as("carol", "put", _user("alice"), {"is_active": False}),
        "user.update",
        "alice",
        [("is_active", True, False)],
    ),
    Case(
        "a password reset by an administrator",
        "carol",
        _as("carol", "put", _user("alice"), {"password": NEW_PASSWORD}),
        "user.update",
        "alice",
        [("password_replaced", None, True)],
    ),
    Case(
        "an account renamed",
        "carol",
        _as("carol", "put", _user("bob"), {"username": "robert"}),
        "user.update",
        "robert",
        [("username", "bob", "robert")],
    ),
    Case(
        "an account deleted",
        "carol",
        _as("carol", "delete", _user("bob")),
        "user.delete",
        "bob",
        [
            ("username", "bob", None),
            ("email", "bob@example.com", None),
            ("is_active", True, None),
            ("is_superuser", False, None),
            ("has_password", True, None),
            ("groups", ["research"], None),
        ],
    ),
    Case(
        "a token created by its owner",
        "alice",
        _as("alice", "post", "/api/v0/tokens", {"name": "ci", "priority": "low"}),
        "token.create",
        "alice/ci",
        [(f, None, ANY) for f in TOKEN_FIELDS],
    ),
    Case(
        "a token's priority lowered by its owner",
        "alice",
        _as("alice", "put", _token("/priority"), {"priority": "low"}),
        "token.priority",
        "alice/laptop",
        [("priority", None, "low")],
    ),
    Case(
        "a token's priority raised by an administrator",
        "carol",
        _as("carol", "put", _admin_token("/priority"), {"priority": "high"}),
        "token.priority_override",
        "alice/laptop",
        [("priority", None, "high"), ("priority_set_by_admin", False, True)],
    ),
    Case(
        "a token's allowance lowered by its owner",
        "alice",
        _as("alice", "put", _token("/allowance"), {"allowance": [FIVE_A_MINUTE]}),
        "token.allowance",
        "alice/laptop",
        [("allowance", None, [FIVE_A_MINUTE])],
    ),
    Case(
        "a token's allowance set by an administrator",
        "carol",
        _as("carol", "put", _admin_token("/allowance"), {"allowance": [FIVE_A_MINUTE]}),
        "token.allowance_override",
        "alice/laptop",
        [("allowance", None, [FIVE_A_MINUTE]), ("allowance_set_by_admin", False, True)],
    ),
    Case(
        "a token revoked by its owner",
        "alice",
        _as("alice", "post", _token("/revoke")),
        "token.revoke",
        "alice/laptop",
        [("revoked_at", None, ANY)],
    ),
    Case(
        "a token revoked by an administrator",
        "carol",
        _as("carol", "post", _admin_token("/revoke")),
        "token.revoke",
        "alice/laptop",
        [("revoked_at", None, ANY)],
    ),
    Case(
        "a token given a new secret",
        "alice",
        _as("alice", "post", _token("/rotate")),
        "token.rotate",
        "alice/laptop",
        [("prefix", ANY, ANY), ("secret_replaced", None, True)],
    ),
    Case(
        "a token deleted by its owner",
        "alice",
        _as("alice", "delete", _token()),
        "token.delete",
        "alice/laptop",
        [(f, ANY, None) for f in TOKEN_FIELDS],
    ),
    Case(
        "a token deleted by an administrator",
        "carol",
        _as("carol", "delete", _admin_token()),
        "token.delete",
        "alice/laptop",
        [(f, ANY, None) for f in TOKEN_FIELDS],
    ),
    Case(
        "a backend created",
        "carol",
        _as(
            "carol",
            "put",
            "/api/v0/admin/backends",
            {"name": "gpu3", "api_key": OTHER_KEY, "base_url": "http://10.0.0.7:8000/v1"},
        ),
        "backend.create",
        "gpu3",
        [(f, None, ANY) for f in BACKEND_FIELDS],
    ),
    Case(
        "a backend's capacity and key changed",
        "carol",
        _as(
            "carol",
            "put",
            "/api/v0/admin/backends",
            {**GPU1, "api_key": OTHER_KEY, "max_inflight": 4},
        ),
        "backend.update",
        "gpu1",
        [("max_inflight", 16, 4), ("api_key_replaced", None, True)],
    ),
    Case(
        "a backend deleted",
        "carol",
        _as("carol", "delete", "/api/v0/admin/backends/gpu2"),
        "backend.delete",
        "gpu2",
        [(f, ANY, None) for f in BACKEND_FIELDS],
    ),
    Case(
        "a backend renamed",
        "carol",
        _as("carol", "post", "/api/v0/admin/backends/gpu2/rename", {"name": "gpu-two"}),
        "backend.rename",
        "gpu-two",
        [("name", "gpu2", "gpu-two")],
    ),
    Case(
        "a pool created",
        "carol",
        _as(
            "carol",
            "put",
            "/api/v0/admin/pools",
            {"name": "embed", "kind": "embedding", "backends": ["gpu2"]},
        ),
        "pool.create",
        "embed",
        [
            ("name", None, "embed"),
            ("kind", None, "embedding"),
            ("strategy", None, "least_inflight"),
            ("everyone", None, True),
            ("allowed_groups", None, []),
            ("fallback", None, None),
            ("backends", None, ["gpu2"]),
        ],
    ),
    Case(
        "a pool narrowed to a group and given a backend",
        "carol",
        _as(
            "carol",
            "put",
            "/api/v0/admin/pools",
            {"name": "chat", "allowed_groups": ["research"], "backends": ["gpu1", "gpu2"]},
        ),
        "pool.update",
        "chat",
        [
            ("everyone", True, False),
            ("allowed_groups", [], ["research"]),
            ("backends", ["gpu1"], ["gpu1", "gpu2"]),
        ],
    ),
    Case(
        "a pool closed to everyone, with no group named",
        "carol",
        _as("carol", "put", "/api/v0/admin/pools", {"name": "chat", "everyone": False}),
        "pool.update",
        "chat",
        [("everyone", True, False)],
    ),
    Case(
        "a pool deleted",
        "carol",
        _as("carol", "delete", "/api/v0/admin/pools/chat"),
        "pool.delete",
        "chat",
        [
            ("name", "chat", None),
            ("kind", "chat", None),
            ("strategy", "least_inflight", None),
            ("everyone", True, None),
            ("allowed_groups", [], None),
            ("fallback", None, None),
            ("backends", ["gpu1"], None),
        ],
    ),
    Case(
        "a pool renamed",
        "carol",
        _as("carol", "post", "/api/v0/admin/pools/chat/rename", {"name": "talk"}),
        "pool.rename",
        "talk",
        [("name", "chat", "talk")],
    ),
]


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_each_kind_of_change_leaves_one_row_saying_who_what_and_how(
    world: World, case: Case
) -> None:
    case.change(world)
    memberships = AuditEntry.objects.filter(action="user.update").exclude(target=case.target)
    if case.action != "user.update":
        shown = [(e.actor_name, e.target, audit.changes(e.before, e.after)) for e in memberships]
        assert shown == [
            (case.actor, name, [{"field": "groups", "before": old, "after": new}])
            for name, old, new in case.members
        ]
        memberships.delete()
    entry = only_row()
    assert (entry.actor_name, entry.action, entry.kind) == (
        case.actor,
        case.action,
        case.action.split(".")[0],
    )
    assert entry.actor is not None and entry.actor.username == case.actor
    assert entry.target == case.target
    assert [
        (c["field"], c["before"], c["after"]) for c in audit.changes(entry.before, entry.after)
    ] == sorted(case.changes, key=lambda change: change[0])


# Actions no person takes, each with its own test below.
WITHOUT_A_PERSON = {"backend.detect"}


def test_every_declared_action_has_a_case() -> None:
    assert {c.action for c in CASES} | WITHOUT_A_PERSON == set(audit.ACTIONS)


def test_a_change_that_changes_nothing_leaves_no_row(world: World) -> None:
    client = world.clients["carol"]
    send(client, "post", "/api/v0/admin/settings", {"gateway.scheduler": "strict"})  # the default
    send(client, "put", "/api/v0/admin/groups", GROUP_RESEARCH)
    send(client, "put", "/api/v0/admin/pools", {"name": "chat", "backends": ["gpu1"]})
    send(client, "post", _admin_token("/revoke")(world))
    assert AuditEntry.objects.count() == 1  # the first revocation
    send(client, "post", _admin_token("/revoke")(world))
    assert AuditEntry.objects.count() == 1


def test_no_secret_reaches_the_audit_log(world: World) -> None:
    carol, alice = world.clients["carol"], world.clients["alice"]
    send(carol, "put", "/api/v0/admin/backends", {**GPU1, "api_key": OTHER_KEY})
    send(
        carol,
        "put",
        "/api/v0/admin/backends",
        {"name": "gpu9", "api_key": KEY, "base_url": "http://10.0.0.9:8000/v1"},
    )
    send(carol, "post", "/api/v0/admin/users", {"username": "dave", "password": PASSWORD})
    created = send(alice, "post", "/api/v0/tokens", {"name": "ci"})
    rotated = send(alice, "post", f"/api/v0/tokens/{created['id']}/rotate")
    send(carol, "put", _user("alice")(world), {"password": NEW_PASSWORD})  # signs her out
    secrets = [KEY, OTHER_KEY, PASSWORD, NEW_PASSWORD, created["plaintext"], rotated["plaintext"]]
    secrets += [t.digest for t in ApiToken.objects.all()]
    secrets += [u.password for u in User.objects.all()]  # the hashes
    secrets += [b.api_key_encrypted for b in Backend.objects.all()]
    stored = json.dumps([[e.target, e.before, e.after] for e in AuditEntry.objects.all()])
    assert AuditEntry.objects.count() == 6
    assert [s for s in secrets if s and s in stored] == []
    gpu9 = AuditEntry.objects.get(target="gpu9")
    assert gpu9.after is not None and gpu9.after["api_key"] == audit.MASKED


def test_deleting_a_backend_or_a_pool_records_what_it_did_to_other_pools(world: World) -> None:
    admin_services.pool_save(data={"name": "spare", "backends": ["gpu2"]}, known_groups=set())
    admin_services.pool_save(data={"name": "chat", "fallback": "spare"}, known_groups=set())
    AuditEntry.objects.all().delete()
    admin_services.backend_delete(name="gpu1", actor=world.carol)
    admin_services.pool_delete(name="spare", actor=world.carol)
    rows = [
        (e.action, e.target, audit.changes(e.before, e.after))
        for e in AuditEntry.objects.order_by("id")
        if e.action == "pool.update"
    ]
    assert rows == [
        ("pool.update", "chat", [{"field": "backends", "before": ["gpu1"], "after": []}]),
        ("pool.update", "chat", [{"field": "fallback", "before": "spare", "after": None}]),
    ]


def test_deleting_an_account_records_its_tokens_going_with_it(world: World) -> None:
    send(world.clients["carol"], "delete", _user("alice")(world))
    rows = [(e.action, e.target, e.after) for e in AuditEntry.objects.order_by("id")]
    assert rows == [("user.delete", "alice", None), ("token.delete", "alice/laptop", None)]


# ----- the same transaction ---------------------------------------------------------------------


def test_a_change_that_rolls_back_leaves_no_row(world: World) -> None:
    carol = world.clients["carol"]
    # Emptying the only administrators' group is refused after the write, so it rolls back.
    answer = carol.put(
        "/api/v0/admin/groups",
        {"name": "administrators", "members": []},
        content_type="application/json",
    )
    assert answer.status_code == 409
    answer = carol.put(
        f"/api/v0/admin/users/{world.carol.pk}", {"is_active": False}, "application/json"
    )
    assert answer.status_code == 409
    assert AuditEntry.objects.count() == 0
    assert list(GatewayGroup.objects.get(name="administrators").members.all()) == [world.carol]


def _refuse_audit_rows() -> None:
    """A database trigger that refuses every audit row, as a full disk or a lost lock would."""
    table = AuditEntry._meta.db_table
    with connection.cursor() as cursor:
        if connection.vendor == "postgresql":
            cursor.execute(
                "CREATE FUNCTION audit_refused() RETURNS trigger AS $$ BEGIN "
                "RAISE EXCEPTION 'audit row refused'; END $$ LANGUAGE plpgsql"
            )
            cursor.execute(
                f"CREATE TRIGGER audit_refused BEFORE INSERT ON {table} "
                "FOR EACH ROW EXECUTE FUNCTION audit_refused()"
            )
        else:
            cursor.execute(
                f"CREATE TRIGGER audit_refused BEFORE INSERT ON {table} "
                "BEGIN SELECT RAISE(ABORT, 'audit row refused'); END"
            )


WRITES: list[tuple[str, Callable[[World], Any], Callable[[], Any]]] = [
    (
        "a group",
        lambda w: services.group_put(name="ops", fields={}, members=["alice"], actor=w.carol),
        lambda: GatewayGroup.objects.filter(name="ops").exists(),
    ),
    (
        "a user",
        lambda w: services.user_update(user=w.alice, is_active=False, actor=w.carol),
        lambda: not User.objects.get(username="alice").is_active,
    ),
    (
        "a token",
        lambda w: services.token_revoke(token=w.token, actor=w.carol),
        lambda: ApiToken.objects.get(name="laptop").revoked_at is not None,
    ),
    (
        "a setting",
        lambda w: settings_update(values={"gateway.max_waiters": 5}, actor=w.carol),
        lambda: setting("gateway.max_waiters") == 5,
    ),
    (
        "a backend",
        lambda w: admin_services.backend_delete(name="gpu2", actor=w.carol),
        lambda: not Backend.objects.filter(name="gpu2").exists(),
    ),
    (
        "a pool",
        lambda w: admin_services.pool_delete(name="chat", actor=w.carol),
        lambda: not Pool.objects.filter(name="chat").exists(),
    ),
]


@pytest.mark.parametrize(("what", "write", "happened"), WRITES, ids=[w[0] for w in WRITES])
def test_when_the_audit_row_cannot_be_written_the_change_rolls_back(
    world: World, what: str, write: Callable[[World], Any], happened: Callable[[], Any]
) -> None:
    _refuse_audit_rows()
    with pytest.raises(DatabaseError, match="audit row refused"):
        write(world)
    assert not happened()
    assert AuditEntry.objects.count() == 0


@pytest.mark.django_db(transaction=True)
def test_a_row_outside_a_transaction_is_refused(alice: Any) -> None:
    with pytest.raises(audit.NotInTransaction):
        audit.record(alice, "group.delete", "ops", {"name": "ops"}, None)
    assert AuditEntry.objects.count() == 0
    with transaction.atomic():
        audit.record(alice, "group.delete", "ops", {"name": "ops"}, None)
    assert AuditEntry.objects.count() == 1


def test_an_undeclared_action_is_refused(alice: Any) -> None:
    with pytest.raises(ValueError, match="undeclared audit action"):
        audit.record(alice, "group.explode", "ops", None, {"name": "ops"})


# ----- paths without a person ----------------------------------------------------------------


def test_a_command_is_named_as_the_actor(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AIPLANE_ADMIN_PASSWORD", PASSWORD)
    call_command("ensure_admin", stdout=io.StringIO())
    rows = {(e.actor_name, e.action, e.target) for e in AuditEntry.objects.all()}
    assert rows == {
        ("manage.py ensure_admin", "group.create", "everyone"),
        ("manage.py ensure_admin", "user.create", "admin"),
        ("manage.py ensure_admin", "group.create", "administrators"),
    }
    assert AuditEntry.objects.get(target="administrators").after["members"] == ["admin"]
    assert all(e.actor is None for e in AuditEntry.objects.all())


def test_what_detection_finds_is_recorded_by_the_system_and_finding_it_again_is_not(
    carol: Any, login: Callable[..., Client]
) -> None:
    from gateway.sim.config import SimConfig
    from gateway.sim.server import SimServer

    client = login(carol)
    with SimServer(SimConfig(server_info="sglang", priority_scheduling=True)) as engine:
        admin_services.backend_save(data={"name": "sg", "base_url": f"{engine.url}/v1"})
        AuditEntry.objects.all().delete()
        send(client, "post", "/api/v0/admin/backends/sg/detect")
        entry = only_row()
        assert (entry.actor, entry.actor_name, entry.action, entry.target) == (
            None,
            audit.SYSTEM,
            "backend.detect",
            "sg",
        )
        changes = audit.changes(entry.before, entry.after)
        changed = {c["field"]: (c["before"], c["after"]) for c in changes}
        assert changed["discovered_models"] == ([], ["sim-small", "sim-large"])
        before, after = changed["engine"]
        assert before is None
        assert (after["kind"], after["priority_scheduling"]) == ("sglang", True)
        assert "detected_at" not in after  # the time it looked is no change

        send(client, "post", "/api/v0/admin/backends/sg/detect")  # the same answer again
        assert AuditEntry.objects.count() == 1


def test_the_demo_moving_its_engine_is_recorded_by_the_command(transactional_db: None) -> None:
    import socket

    from gateway.management.commands.serve import Command

    with socket.socket() as one, socket.socket() as two:  # both held: two different ports
        one.bind(("127.0.0.1", 0))
        two.bind(("127.0.0.1", 0))
        first, second = one.getsockname()[1], two.getsockname()[1]
    command = Command(stdout=io.StringIO())
    command._start_demo("127.0.0.1", 8000, first).stop()
    AuditEntry.objects.all().delete()
    command._start_demo("127.0.0.1", 8000, first).stop()  # the same port: nothing to record
    assert AuditEntry.objects.count() == 0

    command._start_demo("127.0.0.1", 8000, second).stop()
    entry = only_row()
    assert (entry.actor, entry.actor_name, entry.action, entry.target) == (
        None,
        "manage.py serve",
        "backend.update",
        "sim",
    )
    changes = audit.changes(entry.before, entry.after)
    assert [(c["field"], c["before"], c["after"]) for c in changes] == [
        ("base_url", f"http://127.0.0.1:{first}/v1", f"http://127.0.0.1:{second}/v1")
    ]
    assert Backend.objects.get(name="sim").base_url == f"http://127.0.0.1:{second}/v1"


def test_a_deleted_actor_is_still_named(carol: Any, alice: Any) -> None:
    group, _ = services.group_put(name="ops", fields={}, actor=alice)
    alice.delete()
    entry = AuditEntry.objects.get(target="ops")
    assert (entry.actor, entry.actor_name) == (None, "alice")
    assert group.pk is not None


# ----- retention -------------------------------------------------------------------------------


def _row_at(at: Any, target: str) -> AuditEntry:
    return AuditEntry.objects.create(
        at=at,
        actor_name="carol",
        action="setting.update",
        kind="setting",
        target=target,
        before={"value": 1},
        after={"value": 2},
    )


def test_pruning_deletes_only_rows_older_than_the_audit_retention() -> None:
    from datetime import UTC, datetime, timedelta

    now = datetime(2026, 6, 1, 12, 0, tzinfo=UTC)  # a fixed clock: nothing depends on today
    _row_at(now - timedelta(days=365, seconds=1), "a year and a second ago")
    _row_at(now - timedelta(days=364), "a day within the year")
    _row_at(now, "now")
    assert audit.prune(365, now=now) == 1
    assert sorted(AuditEntry.objects.values_list("target", flat=True)) == [
        "a day within the year",
        "now",
    ]
    assert audit.prune(365, now=now) == 0
    assert audit.prune(1, now=now + timedelta(days=2)) == 2
    assert AuditEntry.objects.count() == 0


def test_the_audit_retention_is_a_setting_with_a_year_by_default(
    login: Callable[..., Client], carol: Any
) -> None:
    assert setting("audit.retention_days") == 365
    client = login(carol)
    refused = client.post(
        "/api/v0/admin/settings", {"audit.retention_days": 0}, content_type="application/json"
    )
    assert (refused.status_code, refused.json()["error"]["param"]) == (400, "audit.retention_days")
    send(client, "post", "/api/v0/admin/settings", {"audit.retention_days": 30})
    assert setting("audit.retention_days") == 30
