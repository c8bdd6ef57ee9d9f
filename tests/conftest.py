"""Personas shared by every test: alice and bob (plain users), carol (an administrator)."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from django.test import Client

from accounts.caller import invalidate_callers, reset_token_usage
from tests.support.factories import make_group, make_user

# The fixtures through which a test reaches the database (directly or through a live gateway).
_DATABASE_FIXTURES = frozenset({"db", "transactional_db", "live_server"})


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """With AIPLANE_DATABASE_TESTS_ONLY (the PostgreSQL pass of `make test`), run only the tests
    that touch the database: the rest (the queue's pure core, translations, the sim) have
    already run once and would only run again. So would those marked `database_neutral`, which
    need a database only to set up users, tokens and backends, and check what happens on the
    wire (connection bounds, engine faults, waiting and priority order)."""
    if not os.environ.get("AIPLANE_DATABASE_TESTS_ONLY"):
        return
    kept, dropped = [], []
    for item in items:
        names = set(getattr(item, "fixturenames", ()))
        touches = bool(names & _DATABASE_FIXTURES) or item.get_closest_marker("django_db")
        if item.get_closest_marker("database_neutral"):
            touches = False
        (kept if touches else dropped).append(item)
    if dropped:
        config.hook.pytest_deselected(items=dropped)
        items[:] = kept


@pytest.fixture(autouse=True)
def _fresh_caller_cache() -> Iterator[None]:
    # Rolled-back test transactions send no signals, so row ids may repeat with stale answers.
    invalidate_callers()
    reset_token_usage()
    yield
    invalidate_callers()
    reset_token_usage()


@pytest.fixture(autouse=True)
def _fast_password_hashing(settings: Any) -> None:
    # PBKDF2's deliberate slowness would dominate the suite's run time.
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


@pytest.fixture
def alice(db: None) -> Any:
    return make_user("alice", email="alice@example.com")


@pytest.fixture
def bob(db: None) -> Any:
    return make_user("bob", email="bob@example.com")


@pytest.fixture
def administrators(db: None) -> Any:
    return make_group("administrators", is_admin=True)


@pytest.fixture
def carol(administrators: Any) -> Any:
    return make_user("carol", groups=[administrators], email="carol@example.com")


@pytest.fixture
def login() -> Callable[..., Client]:
    """A test client signed in as the given user; pass csrf=True to enforce CSRF checks."""

    def signed_in(user: Any, *, csrf: bool = False) -> Client:
        client = Client(enforce_csrf_checks=csrf)
        client.force_login(user)
        return client

    return signed_in


@pytest.fixture
def anonymous() -> Client:
    return Client()


@pytest.fixture
def alice_client(alice: Any, login: Callable[..., Client]) -> Client:
    return login(alice)


@pytest.fixture
def bob_client(bob: Any, login: Callable[..., Client]) -> Client:
    return login(bob)


@pytest.fixture
def carol_client(carol: Any, login: Callable[..., Client]) -> Client:
    return login(carol)


@pytest.fixture(scope="session")
def redis_server() -> Iterator[Any]:
    """A private redis-server for the session (skips the test where none is installed)."""
    from tests.support.redis_server import RedisServer, redis_or_skip

    redis_or_skip()
    server = RedisServer().start()
    yield server
    server.stop()


@pytest.fixture
def private_redis() -> Iterator[Any]:
    """A Redis of this test alone, which it may stop, pause or start again (empty)."""
    from tests.support.redis_server import RedisServer, redis_or_skip

    redis_or_skip()
    server = RedisServer().start()
    yield server
    server.stop()


@pytest.fixture
def redis_prefix(request: Any) -> str:
    """A key prefix of this test's own, so tests sharing the server never see each other."""
    import uuid

    return f"t{uuid.uuid4().hex[:10]}:"
