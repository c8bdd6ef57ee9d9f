"""A streaming client that stops reading does not keep its backend slot forever."""

from __future__ import annotations

import dataclasses
import json
import socket

from tests.support.drive import wait_until
from tests.support.factories import make_token_with_secret, make_user
from tests.support.live import add_backend


def test_a_client_that_stops_reading_its_stream_gives_the_slot_back(gateway, make_sim):
    rt = gateway.runtime
    rt.timeouts = dataclasses.replace(rt.timeouts, stalled_client=0.5)
    key = make_token_with_secret(make_user("alice"))[1]
    # Far more than the socket buffers between the gateway and the client can hold.
    engine = make_sim(tokens=400_000, token_delay=0)
    add_backend("big", engine.url, max_inflight=1)
    body = json.dumps(
        {"model": "sim-small", "stream": True, "messages": [{"role": "user", "content": "x"}]}
    ).encode()
    host, port = gateway.url.removeprefix("http://").split(":")
    sock = socket.create_connection((host, int(port)))
    try:
        sock.sendall(
            b"POST /v1/chat/completions HTTP/1.1\r\nHost: gateway\r\n"
            b"Content-Type: application/json\r\n"
            + f"Authorization: Bearer {key}\r\nContent-Length: {len(body)}\r\n\r\n".encode()
            + body
        )
        slot = gateway.runtime.slots["big"]
        wait_until(lambda: slot.inflight == 1, "the stream holds the slot", 10)
        # The client never reads: once the gateway's sends stay blocked, the slot comes back
        # while the client's socket is still open.
        wait_until(lambda: slot.inflight == 0, "the stalled stream gives its slot back", 30)
    finally:
        sock.close()
