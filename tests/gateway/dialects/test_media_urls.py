"""The media URL rule: data: and public http(s) URLs pass; every other scheme, every inside address
however it is spelled, and every host a parser could read two ways are refused, naming the part."""

from __future__ import annotations

from typing import Any

import pytest

from gateway.core.errors import BadRequest
from gateway.dialects import media_urls
from gateway.dialects.media_urls import ANY, PUBLIC, refusal

PASSING = [
    "data:image/png;base64,iVBORw0KGgo=",
    "DATA:image/png;base64,iVBORw0KGgo=",
    "data:,anything goes \\ here\n",  # inline: nothing is fetched, nothing parsed
    "https://example.com/cat.png",
    "HTTPS://Example.COM/cat.png?size=2#top",
    "http://example.com:8080/cat.png",
    "https://example.com.:443/cat.png",  # the fully qualified spelling of a public name
    "https://xn--bcher-kva.example/cat.png",
    "https://cdn_1.example.com/cat.png",
    "http://8.8.8.8/cat.png",
    "http://134744072/cat.png",  # 8.8.8.8 in decimal: a public address however written
    "http://[2606:4700:4700::1111]/cat.png",
    "http://[::ffff:8.8.8.8]/cat.png",  # IPv4-mapped, of a public address
    "https://example.com:/cat.png",  # an empty port is the default port
]


@pytest.mark.parametrize("url", PASSING)
def test_data_urls_and_public_http_urls_pass(url: str) -> None:
    assert refusal(url) is None


REFUSED = [
    # Schemes other than http, https and data, and no scheme at all.
    ("file:///etc/passwd", "file: URLs are not fetched"),
    ("FILE:///etc/passwd", "file: URLs are not fetched"),
    ("gopher://example.com/", "gopher: URLs are not fetched"),
    ("ftp://example.com/cat.png", "ftp: URLs are not fetched"),
    ("/etc/passwd.png", "not a URL with a scheme"),  # SGLang opens a path as a file
    ("iVBORw0KGgoAAAANSUhEUgAAAAEAAAAB", "not a URL with a scheme"),  # raw base64
    (" file:///etc/passwd", "not a URL with a scheme"),
    ("", "not a URL with a scheme"),
    # Loopback, in every spelling inet_aton and URL parsers read.
    ("http://127.0.0.1/", "'127.0.0.1' is a loopback address"),
    ("http://127.0.0.1./", "'127.0.0.1' is a loopback address"),
    ("http://127.9.9.9:8000/x", "'127.9.9.9' is a loopback address"),
    ("http://2130706433/", "'2130706433' (127.0.0.1) is a loopback address"),
    ("http://0177.0.0.1/", "'0177.0.0.1' (127.0.0.1) is a loopback address"),
    ("http://0x7f.1/", "'0x7f.1' (127.0.0.1) is a loopback address"),
    ("http://0X7F.0.0.1/", "'0x7f.0.0.1' (127.0.0.1) is a loopback address"),
    ("http://0x7f000001/", "'0x7f000001' (127.0.0.1) is a loopback address"),
    ("http://127.1/", "'127.1' (127.0.0.1) is a loopback address"),
    ("http://127.0.1/", "'127.0.1' (127.0.0.1) is a loopback address"),
    ("http://017700000001/", "(127.0.0.1) is a loopback address"),
    ("http://[::1]/", "'::1' is a loopback address"),
    ("http://[::1]:8000/", "'::1' is a loopback address"),
    ("http://[0:0:0:0:0:0:0:1]/", "(::1) is a loopback address"),
    ("http://[::ffff:127.0.0.1]/", "(127.0.0.1) is a loopback address"),
    ("http://[::ffff:7f00:1]/", "(127.0.0.1) is a loopback address"),
    ("http://[::127.0.0.1]/", "(127.0.0.1) is a loopback address"),  # IPv4-compatible
    ("http://[64:ff9b::7f00:1]/", "(127.0.0.1) is a loopback address"),  # NAT64
    ("http://[2002:7f00:1::]/", "(127.0.0.1) is a loopback address"),  # 6to4
    ("http://localhost/", "'localhost' is a loopback name"),
    ("http://LOCALHOST.:8000/", "'localhost' is a loopback name"),
    ("http://engine.localhost/", "'engine.localhost' is a loopback name"),
    # The unspecified address reaches the engine's own host.
    ("http://0.0.0.0:8000/", "'0.0.0.0' is the unspecified address"),
    ("http://0/", "'0' (0.0.0.0) is the unspecified address"),
    ("http://0x0/", "(0.0.0.0) is the unspecified address"),
    ("http://[::]/", "'::' is the unspecified address"),
    ("http://0.1.2.3/", "is a reserved address"),
    # Private, carrier-grade NAT, link-local.
    ("http://10.0.0.5/", "is a private address"),
    ("http://172.16.0.1/", "is a private address"),
    ("http://172.31.255.255/", "is a private address"),
    ("http://192.168.1.1/", "is a private address"),
    ("http://0xc0.0xa8.1.1/", "(192.168.1.1) is a private address"),
    ("http://3232235777/", "(192.168.1.1) is a private address"),
    ("http://[::ffff:10.0.0.5]/", "(10.0.0.5) is a private address"),
    ("http://[fc00::1]/", "is a unique-local (private) address"),
    ("http://[fd12:3456::1]/", "is a unique-local (private) address"),
    ("http://100.64.0.1/", "is a carrier-grade NAT address"),
    ("http://100.127.255.255/", "is a carrier-grade NAT address"),
    ("http://169.254.1.1/", "is a link-local address"),
    ("http://[fe80::1]/", "is a link-local address"),
    ("http://[fe80::1%25eth0]/", "is a link-local address"),
    ("http://[fec0::1]/", "is a site-local address"),
    # Multicast and reserved.
    ("http://224.0.0.1/", "is a multicast address"),
    ("http://239.255.255.250/", "is a multicast address"),
    ("http://[ff02::1]/", "is a multicast address"),
    ("http://240.0.0.1/", "is a reserved address"),
    ("http://255.255.255.255/", "is a reserved address"),
    ("http://192.0.2.1/", "is a reserved address"),  # documentation
    ("http://198.18.0.1/", "is a reserved address"),  # benchmarking
    ("http://[2001:db8::1]/", "is a reserved address"),
    # Cloud metadata, by address and by name.
    ("http://169.254.169.254/latest/meta-data/", "'169.254.169.254' is a cloud metadata address"),
    ("http://2852039166/", "(169.254.169.254) is a cloud metadata address"),
    ("http://0xa9fea9fe/", "(169.254.169.254) is a cloud metadata address"),
    ("http://0251.0376.0251.0376/", "(169.254.169.254) is a cloud metadata address"),
    ("http://169.254.43518/", "(169.254.169.254) is a cloud metadata address"),
    ("http://[::ffff:169.254.169.254]/", "(169.254.169.254) is a cloud metadata address"),
    ("http://[fd00:ec2::254]/", "'fd00:ec2::254' is a cloud metadata address"),
    ("http://168.63.129.16/", "is a cloud metadata address"),  # Azure's WireServer
    ("http://100.100.100.200/", "is a cloud metadata address"),  # Alibaba Cloud
    ("http://metadata.google.internal/", "'metadata.google.internal' is a cloud metadata name"),
    ("http://METADATA.GOOGLE.INTERNAL./", "is a cloud metadata name"),
    ("http://metadata/computeMetadata/v1/", "'metadata' is a cloud metadata name"),
    ("http://metadata.goog/", "is a cloud metadata name"),
    ("http://instance-data/latest/", "is a cloud metadata name"),
    # Names that are never public: they resolve inside.
    ("http://vllm-0:8000/", "'vllm-0' is a single-label name"),
    ("http://kubernetes.default.svc/", "is under .svc"),
    ("http://redis.prod.svc.cluster.local/", "is under .local"),
    ("http://printer.local/", "is under .local"),
    ("http://db.internal/", "is under .internal"),
    ("http://router.home.arpa/", "is under .home.arpa"),
    ("http://host.localdomain/", "is under .localdomain"),
    # Hosts a parser could read two ways.
    ("http://user@example.com/", "a user name or password"),
    ("http://example.com@127.0.0.1/", "a user name or password"),
    ("http://127.0.0.1\\@example.com/", "a backslash"),
    ("http:\\\\127.0.0.1/", "needs //host"),
    ("http://127.0.0.1 /", "whitespace"),
    ("http://127.0.0.1\t/", "whitespace"),
    ("http://exa\nmple.com/", "whitespace"),
    ("http://example.com\x00.evil/", "a control character"),
    ("http:127.0.0.1/", "needs //host"),
    ("http:/127.0.0.1/", "needs //host"),
    ("http:///127.0.0.1/", "it has no host"),
    ("http://", "it has no host"),
    ("http://:80/", "it has no host"),
    ("http://%31%32%37.0.0.1/", "not a plain ASCII name"),
    ("http://\uff11\uff12\uff17.0.0.1/", "not a plain ASCII name"),  # fullwidth digits
    ("http://127\u30020\u30020\u30021/", "not a plain ASCII name"),  # ideographic full stops
    ("http://b\u00fccher.example/", "not a plain ASCII name"),
    ("http://" + "a" * 254 + ".com/", "too long for a name"),
    ("http://example..com/", "is not a valid name"),
    ("http://.example.com/", "is not a valid name"),
    ("http://1.2.3.4.5/", "is not a valid IPv4 address"),
    ("http://256.0.0.1/", "is not a valid IPv4 address"),
    ("http://1.2.3.256/", "is not a valid IPv4 address"),
    ("http://1.16777216/", "is not a valid IPv4 address"),
    ("http://4294967296/", "is not a valid IPv4 address"),
    ("http://09.0.0.1/", "is not a valid IPv4 address"),  # 0 makes it octal
    ("http://0x1g.0.0.1/", "is not a valid IPv4 address"),
    ("http://example.123/", "is not a valid IPv4 address"),
    ("http://" + "9" * 5000 + "/", "too long for a name"),
    ("http://1" + "0" * 200 + ".1/", "is not a valid IPv4 address"),
    ("http://[::1/", "not a valid [IPv6 address]"),
    ("http://[::1]x/", "not a valid [IPv6 address]"),
    ("http://[127.0.0.1]/", "not a valid IPv6 address"),
    ("http://[v1.fe80::a]/", "not a valid IPv6 address"),
    ("http://example.com:99999/", "its port is not a number"),
    ("http://example.com:8o/", "its port is not a number"),
    ("http://example.com:80:80/", "its port is not a number"),
]


@pytest.mark.parametrize(("url", "why"), REFUSED)
def test_other_schemes_inside_addresses_and_ambiguous_hosts_are_refused(url: str, why: str) -> None:
    found = refusal(url)
    assert found is not None
    assert why in found


def test_a_refusal_never_echoes_more_than_a_host() -> None:
    for url in ("http://" + "a" * 100_000 + "/", "x" * 100_000 + "://h/", "http://h/" + "x" * 1000):
        assert len(refusal(url) or "") < 400


# ----- where each surface has them -------------------------------------------------------------


def refused(found: Any, policy: str = PUBLIC) -> BadRequest:
    with pytest.raises(BadRequest) as caught:
        media_urls.refuse_inside(found, policy)
    return caught.value


def chat_body(*parts: Any) -> dict[str, Any]:
    text = {"type": "text", "text": "what is this?"}
    return {"model": "m", "messages": [{"role": "user", "content": [text, *parts]}]}


LOCAL = "http://127.0.0.1:8000/secret.png"
PART = "messages[0].content[1]."


@pytest.mark.parametrize(
    ("part", "param"),
    [
        ({"type": "image_url", "image_url": {"url": LOCAL}}, PART + "image_url.url"),
        ({"type": "image_url", "image_url": LOCAL}, PART + "image_url"),
        ({"image_url": LOCAL}, PART + "image_url"),  # vLLM's untyped form
        ({"type": "video_url", "video_url": {"url": LOCAL}}, PART + "video_url.url"),
        ({"type": "audio_url", "audio_url": {"url": LOCAL}}, PART + "audio_url.url"),
        ({"type": "input_image", "image_url": LOCAL}, PART + "image_url"),
    ],
)
def test_a_chat_part_of_any_media_kind_is_named_by_its_param(part: Any, param: str) -> None:
    error = refused(media_urls.in_chat(chat_body(part)))
    assert error.param == param
    assert error.code == "media_url_refused"
    assert error.message.startswith(f"{param}: its host '127.0.0.1' is a loopback address.")


def test_a_tool_result_or_assistant_message_is_walked_as_well() -> None:
    body = chat_body()
    body["messages"].append(
        {"role": "tool", "tool_call_id": "c1", "content": [{"image_url": {"url": "file:///x"}}]}
    )
    assert refused(media_urls.in_chat(body)).param == "messages[1].content[0].image_url.url"


def test_an_embedding_input_names_its_image() -> None:
    body = {"model": "m", "input": ["text", {"text": "a cat", "image": "http://10.0.0.9/c.png"}]}
    error = refused(media_urls.in_chat(body, embedding=True))
    assert error.param == "input[1].image"
    assert list(media_urls.in_chat(body)) == []  # chat's `input` is nothing an engine reads


def test_an_anthropic_image_is_named_the_way_anthropic_names_fields() -> None:
    image = {"type": "image", "source": {"type": "url", "url": "http://169.254.169.254/"}}
    document = {"type": "document", "source": {"type": "url", "url": "file:///etc/passwd"}}
    result = {"type": "tool_result", "tool_use_id": "t", "content": [image]}
    ok = {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "AA"}}
    for blocks, where in (
        ([ok, image], "messages.0.content.1.source.url"),
        ([document], "messages.0.content.0.source.url"),
        ([ok, result], "messages.0.content.1.content.0.source.url"),
    ):
        body = {"model": "m", "messages": [{"role": "user", "content": blocks}]}
        error = refused(media_urls.in_messages(body))
        assert error.message.startswith(where + ": ")


def test_a_document_made_of_blocks_has_its_images_judged() -> None:
    image = {"type": "image", "source": {"type": "url", "url": "http://localhost/a.png"}}
    document = {"type": "document", "source": {"type": "content", "content": [image]}}
    body = {"model": "m", "messages": [{"role": "user", "content": [document]}]}
    error = refused(media_urls.in_messages(body))
    assert error.param == "messages.0.content.0.source.content.0.source.url"


def test_a_responses_image_file_and_function_output_are_named_by_param() -> None:
    for item, param in (
        (
            {"role": "user", "content": [{"type": "input_image", "image_url": LOCAL}]},
            "input[0].content[0].image_url",
        ),
        (
            {"role": "user", "content": [{"type": "input_file", "file_url": "file:///x.pdf"}]},
            "input[0].content[0].file_url",
        ),
        (
            {
                "type": "function_call_output",
                "call_id": "c",
                "output": [{"type": "input_image", "image_url": LOCAL}],
            },
            "input[0].output[0].image_url",
        ),
    ):
        assert refused(media_urls.in_responses({"model": "m", "input": [item]})).param == param


def test_any_passes_every_url_without_looking() -> None:
    def explode() -> Any:
        raise AssertionError("walked")
        yield

    media_urls.refuse_inside(explode(), ANY)
    media_urls.refuse_inside(media_urls.in_chat(chat_body({"image_url": LOCAL})), ANY)


def test_urls_outside_media_parts_are_not_judged() -> None:
    # Only the places an engine fetches from are walked: text, tools and metadata are words, and
    # a chat part's `image` is no field an engine reads (an embedding input's is).
    body = chat_body({"type": "text", "text": LOCAL}, {"type": "image", "image": LOCAL})
    body["tools"] = [{"type": "function", "function": {"name": "f", "parameters": {"url": LOCAL}}}]
    body["metadata"] = {"image_url": LOCAL}
    body["messages"].append({"role": "user", "content": LOCAL})
    media_urls.refuse_inside(media_urls.in_chat(body), PUBLIC)


def test_ten_thousand_parts_are_judged_and_the_last_one_is_named() -> None:
    public = {"type": "image_url", "image_url": {"url": "https://example.com/a.png"}}
    inline = {"type": "image_url", "image_url": {"url": "data:image/png;base64," + "A" * 1000}}
    text = {"type": "text", "text": "and this?"}
    parts = [public] * 10 + [inline, text] * 4995
    media_urls.refuse_inside(media_urls.in_chat(chat_body(*parts)), PUBLIC)
    body = chat_body(*parts, {"type": "image_url", "image_url": {"url": LOCAL}})
    assert refused(media_urls.in_chat(body)).param == "messages[0].content[10001].image_url.url"


def test_more_urls_to_fetch_than_an_engine_takes_are_refused_at_the_first_past_the_bound() -> None:
    # The bound keeps the check of a body of a million URLs as short as that of a thousand.
    public = {"type": "image_url", "image_url": {"url": "https://example.com/a.png"}}
    inline = {"type": "image_url", "image_url": {"url": "data:image/png;base64,AAAA"}}
    parts = [inline] * 5000 + [public] * media_urls.MAX_FETCHED
    media_urls.refuse_inside(media_urls.in_chat(chat_body(*parts)), PUBLIC)
    error = refused(media_urls.in_chat(chat_body(*parts, public)))
    assert error.param == f"messages[0].content[{len(parts) + 1}].image_url.url"
    assert "at most 1,000 media URLs" in error.message


def test_values_that_are_no_url_are_left_to_the_engine() -> None:
    for value in (None, 5, ["http://127.0.0.1/"], {"url": 7}, {"detail": "low"}):
        media_urls.refuse_inside(media_urls.in_chat(chat_body({"image_url": value})), PUBLIC)
