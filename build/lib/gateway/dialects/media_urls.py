"""The media URLs a request may hand an engine to fetch: the rule, and where each surface has them.

vLLM, SGLang and TensorRT-LLM fetch a request's image, audio and video URLs themselves, from inside
the GPU network. A caller who names a loopback, private, link-local or metadata address would have
an engine fetch for them what only the fleet can reach (request forgery). With the operator
setting `gateway.media_urls` at `public` (the default) such a part is refused with a 400 before
admission: data: URLs pass, and http(s) URLs whose host is a public address or a public-looking
name; every other scheme, a URL without one and any host spelled to confuse a parser are refused.
`any` lets every URL through, as engines take them.

Hosts are judged as written and never resolved. A lookup on the request path would cost a DNS
round trip per part and still prove nothing: the engine resolves the name again, perhaps to
another answer (DNS rebinding). A public name that resolves inside the fleet is the egress
firewall's to stop (README, Security).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from ipaddress import IPv4Address, IPv4Network, IPv6Address, IPv6Network
from typing import Any

from gateway.core.errors import BadRequest

PUBLIC, ANY = "public", "any"  # gateway.media_urls
# URLs for engines to fetch in one request, at most: vLLM's default limit is 999 per modality,
# and the bound keeps the check of a 32 MB body of URLs short.
MAX_FETCHED = 1000

# Where a part carries a URL an engine fetches: OpenAI's image_url and Responses' file_url,
# vLLM's and SGLang's audio_url and video_url (each a string or {"url": ...}, with or without a
# `type`); and the image and video of SGLang's and vLLM's multimodal embedding inputs.
PART_KEYS = frozenset({"image_url", "audio_url", "video_url", "file_url"})
INPUT_KEYS = PART_KEYS | {"image", "video", "audio"}

_SCHEME = re.compile(r"[A-Za-z][A-Za-z0-9+.-]{0,31}")
# Whitespace, controls and backslashes: URL parsers strip, drop or read them differently (a
# WHATWG parser takes `\` for `/`), so the host this module sees might not be the engine's.
_CONFUSING = re.compile(r"[\x00-\x20\x7f\\]")
_AUTHORITY_END = re.compile(r"[/?#]")
_HOST = re.compile(r"[a-z0-9_.-]+")
_NUMBER = re.compile(r"[0-9]+|0x[0-9a-f]*")  # a last label that makes a host an IPv4 literal
# An IPv4 literal's parts, as inet_aton reads them; 12 digits are more than any part needs.
_PARTS = ((re.compile(r"0x([0-9a-f]{0,12})"), 16), (re.compile(r"0([0-7]{1,12})"), 8))
_DECIMAL = re.compile(r"0|[1-9][0-9]{0,11}")  # a leading 0 makes it octal
_PORT = re.compile(r"[0-9]{0,5}")

_METADATA_NAMES = frozenset(
    {"metadata", "metadata.google.internal", "metadata.goog", "instance-data"}
)
# Special-use and private-use domains (RFC 6761, 6762, 8375; ICANN's .internal) and the names of
# a Kubernetes cluster's services: never public, so always inside.
_INSIDE = re.compile(r"(?:^|\.)(local|internal|home\.arpa|localdomain|svc)$")

_METADATA = "a cloud metadata address"
_IPV4: tuple[tuple[IPv4Network, str], ...] = tuple(
    (IPv4Network(net), why)
    for net, why in (
        ("169.254.169.254/32", _METADATA),  # AWS, GCP, Azure, OCI, OpenStack
        ("168.63.129.16/32", _METADATA),  # Azure's WireServer (a public-looking address)
        ("100.100.100.200/32", _METADATA),  # Alibaba Cloud
        ("0.0.0.0/32", "the unspecified address"),
        ("0.0.0.0/8", "a reserved address ('this network')"),
        ("127.0.0.0/8", "a loopback address"),
        ("10.0.0.0/8", "a private address"),
        ("172.16.0.0/12", "a private address"),
        ("192.168.0.0/16", "a private address"),
        ("100.64.0.0/10", "a carrier-grade NAT address"),
        ("169.254.0.0/16", "a link-local address"),
        ("224.0.0.0/4", "a multicast address"),
        ("240.0.0.0/4", "a reserved address"),
    )
)
# Checked before an embedded IPv4 address is looked for (:: and ::1 are in ::/96).
_IPV6_FIRST: tuple[tuple[IPv6Network, str], ...] = tuple(
    (IPv6Network(net), why)
    for net, why in (
        ("fd00:ec2::254/128", _METADATA),  # AWS over IPv6
        ("::/128", "the unspecified address"),
        ("::1/128", "a loopback address"),
    )
)
_IPV6: tuple[tuple[IPv6Network, str], ...] = tuple(
    (IPv6Network(net), why)
    for net, why in (
        ("fc00::/7", "a unique-local (private) address"),
        ("fe80::/10", "a link-local address"),
        ("fec0::/10", "a site-local address"),
        ("ff00::/8", "a multicast address"),
    )
)
# IPv6 spellings of an IPv4 address that a host's stack or a NAT64 gateway turns back into it.
_EMBEDDING = tuple(IPv6Network(net) for net in ("::/96", "::ffff:0:0:0/96", "64:ff9b::/96"))


def refusal(url: str) -> str | None:
    """Why an engine must not be given `url` to fetch, or None when it may be."""
    if _inline(url):
        return None  # nothing to fetch
    head = url[:8].lower()
    if head.startswith("https://"):
        rest = url[8:]
    elif head.startswith("http://"):
        rest = url[7:]
    else:
        return _scheme_refusal(url)
    if _CONFUSING.search(url):
        return "it contains whitespace, a control character or a backslash"
    end = _AUTHORITY_END.search(rest)
    authority = rest[: end.start()] if end is not None else rest
    if "@" in authority:
        return "a URL with a user name or password is refused (parsers disagree on its host)"
    return _host_refusal(authority)


def _inline(url: str) -> bool:
    return url[:5].lower() == "data:"


def _scheme_refusal(url: str) -> str:
    scheme, colon, _ = url.partition(":")
    if not colon or not _SCHEME.fullmatch(scheme):
        return "it is not a URL with a scheme such as https: or data:"
    scheme = scheme.lower()
    if scheme in ("http", "https"):
        return f"an {scheme} URL needs //host after '{scheme}:'"
    return f"{scheme}: URLs are not fetched for callers"


def _host_refusal(authority: str) -> str | None:
    if authority.startswith("["):
        literal, bracket, port = authority[1:].partition("]")
        if not bracket or not _valid_port(port):
            return "its host is not a valid [IPv6 address] with an optional port"
        try:
            return _address_refusal(literal, IPv6Address(literal))
        except ValueError:
            return "its host is not a valid IPv6 address"
    host, colon, port = authority.partition(":")
    if not _valid_port(colon + port):
        return "its port is not a number from 0 to 65535"
    host = host.lower()
    if host.endswith("."):
        host = host[:-1]  # the fully qualified spelling
    if not host:
        return "it has no host"
    if len(host) > 253:
        return "its host is too long for a name"
    if not _HOST.fullmatch(host):
        return "its host is not a plain ASCII name (send a non-ASCII name in its xn-- form)"
    labels = host.split(".")
    if "" in labels:
        return f"its host '{host}' is not a valid name"
    if _NUMBER.fullmatch(labels[-1]):
        # A host whose last label is a number is an IPv4 literal to every URL parser and to
        # inet_aton: 2130706433, 0177.0.0.1, 0x7f.1 and 127.1 all name 127.0.0.1.
        address = _ipv4(labels)
        if address is None:
            return f"its host '{host}' is not a valid IPv4 address"
        return _address_refusal(host, address)
    return _name_refusal(host, labels)


def _valid_port(port: str) -> bool:
    if not port:
        return True
    digits = port[1:]
    return port[0] == ":" and bool(_PORT.fullmatch(digits)) and int(digits or 0) <= 65535


def _ipv4(labels: list[str]) -> IPv4Address | None:
    """The address inet_aton (and the WHATWG URL parser) read in these labels: one to four
    numbers, each decimal, octal (a leading 0) or hex (0x); the last fills the remaining bytes."""
    if len(labels) > 4:
        return None
    numbers = []
    for label in labels:
        number = _ipv4_part(label)
        if number is None:
            return None
        numbers.append(number)
    *head, last = numbers
    if any(n > 255 for n in head) or last >= 256 ** (5 - len(numbers)):
        return None
    value = last
    for i, n in enumerate(head):
        value += n << (24 - 8 * i)
    return IPv4Address(value)


def _ipv4_part(label: str) -> int | None:
    for pattern, base in _PARTS:
        match = pattern.fullmatch(label)
        if match is not None:
            return int(match[1] or "0", base)
    return int(label) if _DECIMAL.fullmatch(label) else None


def _address_refusal(host: str, address: IPv4Address | IPv6Address) -> str | None:
    why, judged = _address_kind(address)
    if why is None:
        return None
    shown = str(judged)
    return f"its host '{host}'{f' ({shown})' if shown != host else ''} is {why}"


def _address_kind(
    address: IPv4Address | IPv6Address,
) -> tuple[str | None, IPv4Address | IPv6Address]:
    """What kind of inside address this is (None: a public one), and the address judged: the
    IPv4 address an IPv6 spelling carries, where it carries one."""
    table: Iterable[tuple[IPv4Network | IPv6Network, str]] = _IPV4
    if isinstance(address, IPv6Address):
        for net6, why in _IPV6_FIRST:
            if address in net6:
                return why, address
        inner = _embedded(address)
        if inner is not None:
            return _address_kind(inner)
        table = _IPV6
    for net, why in table:
        if address in net:
            return why, address
    if not address.is_global:
        # Documentation, benchmarking, protocol assignments and the rest of IANA's registry.
        return "a reserved address", address
    return None, address


def _embedded(address: IPv6Address) -> IPv4Address | None:
    if address.ipv4_mapped is not None:
        return address.ipv4_mapped
    if address.sixtofour is not None:
        return address.sixtofour
    if any(address in net for net in _EMBEDDING):
        return IPv4Address(int(address) & 0xFFFFFFFF)
    return None


def _name_refusal(host: str, labels: list[str]) -> str | None:
    if host in _METADATA_NAMES:
        return f"its host '{host}' is a cloud metadata name"
    if host == "localhost" or host.endswith(".localhost"):
        return f"its host '{host}' is a loopback name"
    if len(labels) == 1:
        return (
            f"its host '{host}' is a single-label name, which an engine resolves through its "
            "own search domains, inside the fleet"
        )
    inside = _INSIDE.search(host)
    if inside is not None:
        return f"its host '{host}' is under .{inside[1]}, which is never a public name"
    return None


# ----- where each surface carries them -----------------------------------------------------


def refuse_inside(found: Iterable[tuple[str, object]], policy: str) -> None:
    """Raise a 400 naming the first part whose URL an engine must not be given (`found`: each
    part's place and URL, as the surface names them); nothing is walked when `policy` is any."""
    if policy == ANY:
        return
    fetched = 0
    for where, url in found:
        if not isinstance(url, str) or _inline(url):
            continue  # inline, or no URL at all (which the engine refuses)
        fetched += 1
        why: str | None
        if fetched > MAX_FETCHED:
            why = f"a request may have engines fetch at most {MAX_FETCHED:,} media URLs"
        else:
            why = refusal(url)
        if why is not None:
            raise BadRequest(
                f"{where}: {why}. Engines fetch media URLs from inside the fleet, so only data: "
                "URLs and http(s) URLs of public hosts are passed on.",
                code="media_url_refused",
                param=where,
            )


def in_chat(body: dict[str, Any], *, embedding: bool = False) -> Iterator[tuple[str, object]]:
    """The URLs of chat messages' content parts (chat, and chat-style embeddings), and of an
    embedding request's multimodal inputs."""
    messages = body.get("messages")
    if isinstance(messages, list):
        for i, message in enumerate(messages):
            content = message.get("content") if isinstance(message, dict) else None
            if isinstance(content, list):
                yield from _in_parts(content, f"messages[{i}].content", PART_KEYS)
    inputs = body.get("input")
    if embedding and isinstance(inputs, list):
        yield from _in_parts(inputs, "input", INPUT_KEYS)


def in_responses(body: dict[str, Any]) -> Iterator[tuple[str, object]]:
    """The URLs of a Responses input's message parts and function call outputs."""
    items = body.get("input")
    if not isinstance(items, list):
        return
    for i, item in enumerate(items):
        if not isinstance(item, dict):
            continue
        for field in ("content", "output"):
            parts = item.get(field)
            if isinstance(parts, list):
                yield from _in_parts(parts, f"input[{i}].{field}", PART_KEYS)


def _in_parts(parts: list[Any], at: str, keys: frozenset[str]) -> Iterator[tuple[str, object]]:
    for j, part in enumerate(parts):
        if not isinstance(part, dict) or part.keys().isdisjoint(keys):
            continue  # a text part, the common case: its two keys looked up, no more
        for key, value in part.items():  # in the client's order: the same URL is named every time
            if key not in keys:
                continue
            if isinstance(value, dict):
                yield f"{at}[{j}].{key}.url", value.get("url")
            elif value is not None:
                yield f"{at}[{j}].{key}", value


def in_messages(body: dict[str, Any]) -> Iterator[tuple[str, object]]:
    """The URL sources of an Anthropic request's image and document blocks, those inside tool
    results and documents' own content included (named as Anthropic names fields: messages.0...)."""
    messages = body.get("messages")
    if not isinstance(messages, list):
        return
    for i, message in enumerate(messages):
        content = message.get("content") if isinstance(message, dict) else None
        if isinstance(content, list):
            yield from _in_blocks(content, f"messages.{i}.content", nested=True)


def _in_blocks(blocks: list[Any], at: str, *, nested: bool) -> Iterator[tuple[str, object]]:
    for j, block in enumerate(blocks):
        if not isinstance(block, dict):
            continue
        source = block.get("source")
        if isinstance(source, dict):
            if source.get("type") == "url":
                yield f"{at}.{j}.source.url", source.get("url")
            inner = source.get("content")  # a document made of blocks
            if nested and isinstance(inner, list):
                yield from _in_blocks(inner, f"{at}.{j}.source.content", nested=False)
        inner = block.get("content")  # a tool result's blocks
        if nested and isinstance(inner, list):
            yield from _in_blocks(inner, f"{at}.{j}.content", nested=False)
