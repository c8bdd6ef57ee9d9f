"""Sign-in throttling: repeated failures lock a username from any address and an address for any
username (429 + Retry-After), a success resets, the lockout ends after the cool-off, and an
unknown username is answered exactly like a wrong password."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from axes.models import AccessAttempt
from django.contrib.auth.hashers import MD5PasswordHasher
from django.db.models import F
from django.test import Client, RequestFactory

from accounts.throttle import client_address
from tests.support.errors import envelope
from tests.support.factories import PASSWORD, make_user

pytestmark = pytest.mark.django_db

LIMIT = 3
COOL_OFF = 900
WRONG = envelope("Wrong username or password.", "authentication_error", "invalid_credentials")
LOCKED = envelope(
    "Too many failed sign-in attempts. Try again later.", "rate_limit_error", "too_many_attempts"
)


class CountingHasher(MD5PasswordHasher):
    """Django's MD5 hasher (the suite's fast one) counting how often it hashes."""

    runs = 0

    def encode(self, password: str, salt: str) -> str:
        CountingHasher.runs += 1
        return super().encode(password, salt)


@pytest.fixture(autouse=True)
def _throttle(settings: Any) -> None:
    settings.AXES_FAILURE_LIMIT = LIMIT
    settings.AXES_COOLOFF_TIME = timedelta(seconds=COOL_OFF)
    settings.PASSWORD_HASHERS = [f"{__name__}.CountingHasher"]


def sign_in(username: str, password: str = PASSWORD, address: str = "192.0.2.1") -> Any:
    return Client().post(
        "/api/v0/session/login",
        {"username": username, "password": password},
        "application/json",
        REMOTE_ADDR=address,
    )


def answer(response: Any) -> tuple[int, Any, str | None]:
    return response.status_code, response.json(), response.headers.get("Retry-After")


def fail(times: int, username: str = "alice", address: str = "192.0.2.1") -> list[int]:
    return [sign_in(username, "wrong", address).status_code for _ in range(times)]


def let_time_pass(seconds: int) -> None:
    """Age every stored failure: the clock axes reads is the attempt times it stored."""
    AccessAttempt.objects.update(attempt_time=F("attempt_time") - timedelta(seconds=seconds))


def test_the_limiting_failure_and_every_try_after_it_are_429_with_retry_after(alice: Any) -> None:
    assert fail(LIMIT) == [401] * (LIMIT - 1) + [429]
    status, body, retry_after = answer(sign_in("alice"))  # even the right password
    assert (status, body) == (429, LOCKED)
    assert retry_after is not None and COOL_OFF - 1 <= int(retry_after) <= COOL_OFF


def test_a_locked_username_is_locked_from_any_address(alice: Any) -> None:
    for index in range(LIMIT):
        sign_in("alice", "wrong", address=f"198.51.100.{index + 1}")
    status, body, retry_after = answer(sign_in("alice", address="203.0.113.50"))
    assert (status, body) == (429, LOCKED)
    assert retry_after is not None
    assert sign_in("bob", address="203.0.113.50").status_code == 401  # no such user: still asked


def test_a_locked_address_is_locked_for_any_username(alice: Any, bob: Any) -> None:
    for name in ("mallory", "trent", "victor"):
        sign_in(name, "wrong", address="198.51.100.9")
    status, body, retry_after = answer(sign_in("bob", address="198.51.100.9"))
    assert (status, body) == (429, LOCKED)
    assert retry_after is not None
    assert sign_in("bob", address="198.51.100.10").status_code == 200


def test_a_success_before_the_limit_resets_that_accounts_failures(alice: Any) -> None:
    assert fail(LIMIT - 1) == [401] * (LIMIT - 1)
    assert sign_in("alice").status_code == 200
    assert fail(LIMIT - 1) == [401] * (LIMIT - 1)
    assert sign_in("alice").status_code == 200


def test_a_success_does_not_wipe_failures_against_other_accounts_from_that_address(
    alice: Any, bob: Any
) -> None:
    # mallory, with her own account, cannot reset her count on alice's by signing in herself.
    make_user("mallory")
    assert fail(LIMIT - 1, "alice", "198.51.100.66") == [401] * (LIMIT - 1)
    assert sign_in("mallory", address="198.51.100.66").status_code == 200
    assert sign_in("alice", "wrong", address="198.51.100.66").status_code == 429


def test_the_lockout_ends_once_its_failures_are_older_than_the_cool_off(alice: Any) -> None:
    fail(LIMIT)
    let_time_pass(COOL_OFF - 300)
    status, _body, retry_after = answer(sign_in("alice"))
    assert status == 429
    assert retry_after is not None and 299 <= int(retry_after) <= 300
    let_time_pass(300)
    assert sign_in("alice").status_code == 200


def test_tries_while_locked_out_neither_count_nor_prolong_the_lockout(alice: Any) -> None:
    fail(LIMIT)
    let_time_pass(COOL_OFF - 60)
    assert fail(5) == [429] * 5
    assert AccessAttempt.objects.get().failures_since_start == LIMIT
    let_time_pass(60)
    assert sign_in("alice").status_code == 200


def test_an_unknown_username_is_answered_and_hashed_exactly_like_a_wrong_password(
    alice: Any,
) -> None:
    def attempts(username: str, address: str) -> list[tuple[int, Any, bool, int]]:
        seen = []
        for _ in range(LIMIT + 1):
            before = CountingHasher.runs
            response = sign_in(username, "wrong", address)
            ran = CountingHasher.runs - before
            seen.append((response.status_code, response.json(), "Retry-After" in response, ran))
        return seen

    known = attempts("alice", "198.51.100.1")
    unknown = attempts("nobody", "198.51.100.2")
    assert known == unknown
    # The password hasher runs once per allowed try (Django hashes for unknown users too) and
    # never for a locked-out one, known or not.
    assert [ran for *_rest, ran in known] == [1] * LIMIT + [0]
    assert [(status, body) for status, body, *_ in known] == [(401, WRONG)] * (LIMIT - 1) + [
        (429, LOCKED)
    ] * 2


def test_the_sign_in_page_counts_too_and_says_so_in_the_persons_language(alice: Any) -> None:
    client = Client(HTTP_ACCEPT_LANGUAGE="de")
    for _ in range(LIMIT):
        client.post("/login/", {"username": "alice", "password": "wrong"})
    response = client.post("/login/", {"username": "alice", "password": PASSWORD})
    assert response.status_code == 429
    assert 1 <= int(response.headers["Retry-After"]) <= COOL_OFF
    text = response.content.decode()
    assert "Zu viele fehlgeschlagene Anmeldeversuche." in text
    assert "in 15 Minuten erneut" in text
    assert 'value="alice"' in text  # the form keeps the username
    assert "_auth_user_id" not in client.session


def test_the_api_and_the_page_share_one_count(alice: Any) -> None:
    sign_in("alice", "wrong")
    Client().post("/login/", {"username": "alice", "password": "wrong"}, REMOTE_ADDR="192.0.2.1")
    assert sign_in("alice", "wrong").status_code == 429


def test_a_username_no_account_can_have_is_refused_like_a_wrong_password(alice: Any) -> None:
    # A NUL cannot reach PostgreSQL, a name longer than the column cannot be anyone's.
    for username in ("ali\x00ce", "a" * 300):
        response = Client().post("/login/", {"username": username, "password": PASSWORD})
        assert response.status_code == 400
        assert "The username or password is wrong" in response.content.decode()


# --- the counted address --------------------------------------------------------------------


def request_from(peer: str, forwarded: str | None = None) -> Any:
    headers = {} if forwarded is None else {"HTTP_X_FORWARDED_FOR": forwarded}
    return RequestFactory().post("/login/", REMOTE_ADDR=peer, **headers)


def test_without_trusted_proxies_the_peer_is_the_client(settings: Any) -> None:
    settings.AIPLANE_TRUSTED_PROXIES = []
    assert client_address(request_from("192.0.2.7", "203.0.113.1")) == "192.0.2.7"


def test_behind_a_trusted_proxy_the_forwarded_client_is_counted(settings: Any) -> None:
    settings.AIPLANE_TRUSTED_PROXIES = ["10.0.0.0/8", "192.0.2.7"]
    # The left-most entry is whatever the client claimed; the proxies appended the rest.
    forwarded = "203.0.113.1, 198.51.100.4, 10.1.2.3"
    assert client_address(request_from("192.0.2.7", forwarded)) == "198.51.100.4"
    assert client_address(request_from("192.0.2.7")) == "192.0.2.7"
    assert client_address(request_from("192.0.2.7", "not an address")) == "192.0.2.7"
    assert client_address(request_from("198.51.100.9", "203.0.113.1")) == "198.51.100.9"


def test_a_peer_that_is_not_an_address_counts_as_none() -> None:
    assert client_address(request_from("unix-socket")) is None
