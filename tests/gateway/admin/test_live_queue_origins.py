"""Which pages may open the live queue's websocket: exactly our origin or a trusted one."""

from __future__ import annotations

from typing import Any
from urllib.parse import urlsplit

import pytest
from websockets.exceptions import InvalidStatus
from websockets.sync.client import ClientConnection, connect

from aiplane.origins import origin_allowed, parse_origin


def open_socket(gateway: Any, client: Any, origin: str | None) -> ClientConnection:
    """Connect to /ws/queue with the administrator's session, sending `origin` (or none)."""
    return connect(
        gateway.url.replace("http://", "ws://") + "/ws/queue",
        additional_headers={"Cookie": f"sessionid={client.cookies['sessionid'].value}"},
        origin=origin,  # type: ignore[arg-type]  # None sends no Origin header at all
        open_timeout=5,
    )


def assert_refused(gateway: Any, client: Any, origin: str | None) -> None:
    with pytest.raises(InvalidStatus) as refused:
        open_socket(gateway, client, origin).close()
    assert refused.value.response.status_code == 403


def port_of(gateway: Any) -> int:
    port = urlsplit(gateway.url).port
    assert port is not None
    return port


def test_the_pages_own_origin_is_accepted(gateway: Any, carol: Any, login: Any) -> None:
    with open_socket(gateway, login(carol), gateway.url) as ws:
        assert "waiters" in ws.recv(timeout=5)


def test_the_same_host_on_another_port_is_refused(gateway: Any, carol: Any, login: Any) -> None:
    other = port_of(gateway) + 1
    assert_refused(gateway, login(carol), f"http://127.0.0.1:{other}")


def test_the_same_host_and_port_under_another_scheme_is_refused(
    gateway: Any, carol: Any, login: Any
) -> None:
    assert_refused(gateway, login(carol), gateway.url.replace("http://", "https://"))


def test_another_allowed_host_name_is_not_our_origin(gateway: Any, carol: Any, login: Any) -> None:
    # localhost is in ALLOWED_HOSTS, but the page was served as 127.0.0.1: a different origin.
    assert_refused(gateway, login(carol), f"http://localhost:{port_of(gateway)}")


def test_a_handshake_without_an_origin_is_refused(gateway: Any, carol: Any, login: Any) -> None:
    assert_refused(gateway, login(carol), None)


def test_a_trusted_origin_is_accepted(gateway: Any, carol: Any, login: Any, settings: Any) -> None:
    settings.CSRF_TRUSTED_ORIGINS = ["https://aiplane.example.com"]
    with open_socket(gateway, login(carol), "https://aiplane.example.com") as ws:
        assert "waiters" in ws.recv(timeout=5)
    assert_refused(gateway, login(carol), "https://aiplane.example.com:8443")
    assert_refused(gateway, login(carol), "http://aiplane.example.com")


# --- the rule itself, on handshake scopes -------------------------------------------------------


def handshake(origin: str | None, host: str = "gw.example.com:8000", scheme: str = "ws") -> Any:
    headers = [(b"host", host.encode())]
    if origin is not None:
        headers.append((b"origin", origin.encode()))
    return {"type": "websocket", "scheme": scheme, "headers": headers}


@pytest.fixture
def served_as_gw(settings: Any) -> None:
    settings.ALLOWED_HOSTS = ["gw.example.com", "[::1]"]
    settings.CSRF_TRUSTED_ORIGINS = []


@pytest.mark.parametrize(
    ("origin", "host", "scheme", "allowed"),
    [
        ("http://gw.example.com:8000", "gw.example.com:8000", "ws", True),
        ("HTTP://GW.example.com:8000", "gw.example.com:8000", "ws", True),
        ("https://gw.example.com", "gw.example.com", "wss", True),
        ("https://gw.example.com:443", "gw.example.com", "wss", True),
        ("http://gw.example.com", "gw.example.com:80", "ws", True),
        ("http://[::1]:8000", "[::1]:8000", "ws", True),
        ("http://gw.example.com:8001", "gw.example.com:8000", "ws", False),
        ("https://gw.example.com:8000", "gw.example.com:8000", "ws", False),
        ("http://gw.example.com:8000", "gw.example.com:8000", "wss", False),
        ("http://evil.example.com:8000", "gw.example.com:8000", "ws", False),
        # DNS rebinding: our address under the attacker's name; Origin and Host agree.
        ("http://rebound.example.net:8000", "rebound.example.net:8000", "ws", False),
        ("null", "gw.example.com:8000", "ws", False),
        ("http://gw.example.com:8000/page", "gw.example.com:8000", "ws", False),
        ("http://gw.example.com:99999", "gw.example.com:99999", "ws", False),
        ("http://gw.example.com:x", "gw.example.com:x", "ws", False),
    ],
)
def test_only_the_exact_served_origin_is_ours(
    served_as_gw: None, origin: str, host: str, scheme: str, allowed: bool
) -> None:
    assert origin_allowed(handshake(origin, host, scheme)) is allowed


@pytest.mark.parametrize(
    ("origin", "allowed"),
    [
        ("https://ui.example.org", True),
        ("https://ui.example.org:443", True),
        ("https://ui.example.org:444", False),
        ("http://ui.example.org", False),
        ("https://eu.apps.example.org", True),
        ("https://apps.example.org", True),
        ("https://evilapps.example.org", False),
        ("https://apps.example.org.evil.net", False),
        ("http://eu.apps.example.org", False),
    ],
)
def test_trusted_origins_match_scheme_host_and_port_with_csrfs_subdomain_wildcard(
    served_as_gw: None, settings: Any, origin: str, allowed: bool
) -> None:
    settings.CSRF_TRUSTED_ORIGINS = ["https://ui.example.org", "https://*.apps.example.org"]
    assert origin_allowed(handshake(origin)) is allowed


def test_a_missing_origin_is_refused_even_with_trusted_origins(
    served_as_gw: None, settings: Any
) -> None:
    settings.CSRF_TRUSTED_ORIGINS = ["https://ui.example.org"]
    assert origin_allowed(handshake(None)) is False


def test_a_missing_host_leaves_only_the_trusted_origins(served_as_gw: None, settings: Any) -> None:
    settings.CSRF_TRUSTED_ORIGINS = ["https://ui.example.org"]
    scope = {
        "type": "websocket",
        "scheme": "wss",
        "headers": [(b"origin", b"https://ui.example.org")],
    }
    assert origin_allowed(scope) is True
    scope["headers"] = [(b"origin", b"https://gw.example.com")]
    assert origin_allowed(scope) is False


def test_origins_compare_as_scheme_host_and_port() -> None:
    assert parse_origin("https://Example.COM") == ("https", "example.com", 443)
    assert parse_origin("http://[::1]:8000") == ("http", "::1", 8000)
    assert parse_origin("ftp://example.com") is None
    assert parse_origin("https://user@example.com") is None
    assert parse_origin("https://example.com?x=1") is None
