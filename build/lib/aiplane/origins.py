"""Which pages may open a websocket with the visitor's session: our own origin or a trusted one.

A browser sends its session cookie with a websocket handshake whatever page opened it, and the
CSRF middleware never sees websockets, so the Origin header is the only thing that tells our own
page from another site's (cross-site websocket hijacking). channels' AllowedHostsOriginValidator
compares only the host name, which lets any other service on the same host (another port, or
plain http next to https) read the live queue as the signed-in administrator. Here scheme, host
and port must all match: the origin the request itself was served at (its scheme and Host
header, the host being one of ALLOWED_HOSTS), or one of CSRF_TRUSTED_ORIGINS, which already names
the origins allowed to send the session's writes (a `*.` host there covers its subdomains, as it
does for CSRF).

A handshake without an Origin is refused: every browser sends one on websockets, so a missing
one is never our page, and programs read the same picture from GET /api/v0/admin/queue.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterable
from typing import Any, NamedTuple
from urllib.parse import urlsplit

from channels.security.websocket import WebsocketDenier
from django.conf import settings
from django.http.request import split_domain_port, validate_host

ASGIApp = Callable[[dict[str, Any], Any, Any], Awaitable[None]]

DEFAULT_PORTS = {"http": 80, "https": 443}
# The page that opens ws:// is served over http://, the one that opens wss:// over https://.
PAGE_SCHEME = {"ws": "http", "wss": "https", "http": "http", "https": "https"}


class Origin(NamedTuple):
    scheme: str
    host: str  # lower case; an IPv6 address without its brackets
    port: int


def parse_origin(text: str) -> Origin | None:
    """`scheme://host[:port]` as a comparable triple (default ports filled in); None if not one."""
    try:
        parts = urlsplit(text.strip())
        port = parts.port
    except ValueError:  # a port that is not a number, or out of range
        return None
    scheme = parts.scheme.lower()
    if scheme not in DEFAULT_PORTS or not parts.hostname or parts.path not in ("", "/"):
        return None
    if parts.username is not None or parts.query or parts.fragment:
        return None
    return Origin(scheme, parts.hostname, DEFAULT_PORTS[scheme] if port is None else port)


def _allowed_hosts() -> list[str]:
    hosts = list(settings.ALLOWED_HOSTS)
    if settings.DEBUG and not hosts:
        hosts = [".localhost", "127.0.0.1", "[::1]"]  # what Django's get_host allows then
    return hosts


def served_origin(scope: dict[str, Any]) -> Origin | None:
    """The origin this request was sent to: its scheme and Host header, if the host is ours."""
    scheme = PAGE_SCHEME.get(str(scope.get("scheme", "ws")))
    host = _header(scope, b"host")
    if scheme is None or not host:
        return None
    domain, _port = split_domain_port(host)
    if not domain or not validate_host(domain, _allowed_hosts()):
        return None
    return parse_origin(f"{scheme}://{host}")


def _header(scope: dict[str, Any], name: bytes) -> str | None:
    for key, value in scope.get("headers", ()):
        if key == name:
            try:
                return bytes(value).decode("latin-1")
            except (TypeError, ValueError):
                return None
    return None


def _matches_trusted(origin: Origin, trusted: str) -> bool:
    wildcard = "://*." in trusted
    pattern = parse_origin(trusted.replace("://*.", "://", 1) if wildcard else trusted)
    if pattern is None or (pattern.scheme, pattern.port) != (origin.scheme, origin.port):
        return False
    if wildcard:
        return origin.host == pattern.host or origin.host.endswith("." + pattern.host)
    return origin.host == pattern.host


def origin_allowed(scope: dict[str, Any], trusted: Iterable[str] | None = None) -> bool:
    """Whether the handshake's Origin is exactly the served origin or a trusted one."""
    raw = _header(scope, b"origin")
    origin = parse_origin(raw) if raw else None
    if origin is None:
        return False
    if origin == served_origin(scope):
        return True
    patterns = settings.CSRF_TRUSTED_ORIGINS if trusted is None else trusted
    return any(_matches_trusted(origin, pattern) for pattern in patterns)


class SameOriginWebsockets:
    """ASGI middleware for websockets: refuses (403) a handshake from any other origin."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if origin_allowed(scope):
            await self.app(scope, receive, send)
        else:
            await WebsocketDenier()(scope, receive, send)
