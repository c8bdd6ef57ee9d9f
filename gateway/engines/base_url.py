"""What a backend's base URL may be, checked when it is saved so that no client refuses it later.

The gateway appends paths to the base URL (`/chat/completions`, `/models`, the health path) and
hands the result to yarl/aiohttp on the request path and to httpx for probes. Each of them
refuses, or misreads, URLs the others take, and a refusal on the request path is a 500 long after
the administrator saved the backend. So a base URL is an absolute http(s) URL in plain ASCII:

- scheme http or https, a host (a DNS name, a dotted IPv4 address or a bracketed IPv6
  address), an optional port from 1 to 65535, an optional path, at most MAX_LENGTH characters;
- no whitespace, control or non-ASCII characters (an internationalized host is written in its
  xn-- form), no backslash, no malformed percent escape;
- no user name or password: the backend's key belongs in its API key, which is stored encrypted
  and never returned, while the base URL is shown in every listing;
- no query or fragment: the paths the gateway appends would land inside them.
"""

from __future__ import annotations

import ipaddress
import re
from typing import Final

import httpx
from yarl import URL

MAX_LENGTH: Final = 500  # the column's length (gateway.models.Backend.base_url)

_LABEL: Final = re.compile(r"[A-Za-z0-9_](?:[A-Za-z0-9_-]{0,61}[A-Za-z0-9_])?")
_NUMERIC_HOST: Final = re.compile(r"[0-9.]+")
# RFC 3986 pchar plus "/", with "%" only as the start of an escape (checked separately).
_PATH: Final = re.compile(r"(?:/[A-Za-z0-9\-._~!$&'()*+,;=:@%]*)*")
_ESCAPE: Final = re.compile(r"%(?![0-9A-Fa-f]{2})")


class BadBaseUrl(ValueError):
    """Why a base URL was refused, in a sentence for the administrator."""


def _check_host(host: str) -> None:
    if host.startswith("["):
        if not host.endswith("]") or "%" in host:  # a zone id means nothing to another host
            raise BadBaseUrl("base_url has an invalid IPv6 address.")
        try:
            ipaddress.IPv6Address(host[1:-1])
        except ValueError:
            raise BadBaseUrl("base_url has an invalid IPv6 address.") from None
        return
    if not host:
        raise BadBaseUrl("base_url needs a host.")
    if "%" in host:
        raise BadBaseUrl("base_url has an invalid host name.")
    if _NUMERIC_HOST.fullmatch(host):
        # aiohttp refuses non-canonical IPv4 forms such as 1.2.3 or 010.0.0.1.
        try:
            canonical = str(ipaddress.IPv4Address(host))
        except ValueError:
            raise BadBaseUrl("base_url has an invalid IPv4 address.") from None
        if canonical != host:
            raise BadBaseUrl("base_url has an invalid IPv4 address.")
        return
    name = host[:-1] if host.endswith(".") else host
    if len(name) > 253 or not all(_LABEL.fullmatch(label) for label in name.split(".")):
        raise BadBaseUrl("base_url has an invalid host name.")


def _check_port(port: str) -> None:
    if not port.isascii() or not port.isdigit() or not 1 <= int(port) <= 65535:
        raise BadBaseUrl("base_url has an invalid port: use a number from 1 to 65535.")


def _scheme(value: str) -> None:
    if not value.startswith(("http://", "https://")):
        raise BadBaseUrl("base_url must be an http:// or https:// URL.")


def _length(value: str) -> None:
    if len(value) > MAX_LENGTH:
        raise BadBaseUrl(f"base_url may be at most {MAX_LENGTH} characters.")


def _printable(value: str) -> None:
    if not all("!" <= ch <= "~" for ch in value) or "\\" in value:
        raise BadBaseUrl(
            "base_url may contain only printable ASCII characters, without spaces or backslashes."
        )


def _no_userinfo(value: str) -> None:
    if "@" in value.split("/", 3)[2]:
        raise BadBaseUrl("base_url may not hold a user name or password: use the API key.")


def _no_query(value: str) -> None:
    if "?" in value or "#" in value:
        raise BadBaseUrl("base_url may not have a query or a fragment.")


# The rules of the whole text, in this order: the first one broken is the one named (and the
# user information is looked for only in a URL that has a scheme).
_RULES = (_scheme, _length, _printable, _no_userinfo, _no_query)


def _authority_and_path(url: str) -> tuple[str, str | None, str]:
    """Host (an IPv6 one in its brackets), port (None without one) and path of the URL."""
    _, _, rest = url.partition("://")
    authority, slash, path = rest.partition("/")
    path = slash + path
    if authority.startswith("["):
        host, bracket, tail = authority.partition("]")
        host += bracket
        if tail and not tail.startswith(":"):
            raise BadBaseUrl("base_url has an invalid host.")
        return host, tail[1:] if tail else None, path
    host, colon, port_text = authority.partition(":")
    return host, port_text if colon else None, path


def _check_path(path: str) -> None:
    if not _PATH.fullmatch(path) or _ESCAPE.search(path):
        raise BadBaseUrl("base_url has an invalid path.")


def _check_clients_agree(url: str) -> None:
    """Both clients must read it, and read the same host and port we did."""
    try:
        parsed, probed = URL(url + "/models"), httpx.URL(url + "/models")
    except (ValueError, UnicodeError, httpx.InvalidURL):
        raise BadBaseUrl("base_url is not a URL the gateway's HTTP clients accept.") from None
    default_port = 443 if probed.scheme == "https" else 80
    same_host = (parsed.raw_host or "").lower() == probed.raw_host.decode("ascii").lower()
    if not same_host or parsed.port != (probed.port or default_port):
        raise BadBaseUrl("base_url is not a URL the gateway's HTTP clients accept.")


def check_base_url(value: str) -> str:
    """The base URL as stored (without a trailing slash), or BadBaseUrl saying what is wrong."""
    for rule in _RULES:
        rule(value)
    url = value.rstrip("/")
    host, port, path = _authority_and_path(url)
    _check_host(host)
    if port is not None:
        _check_port(port)
    _check_path(path)
    _check_clients_agree(url)
    return url
