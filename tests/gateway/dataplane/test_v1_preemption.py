"""Preemption before the first byte: a high request that must wait cuts a low stream still in
prefill, which waits again at the head of its class and is answered whole; never a started one."""

from __future__ import annotations

import threading
import time
from typing import Any

import httpx
import pytest

from aiplane.catalog import settings_update
from tests.support.drive import engine_records, engine_stats, key_for, wait_until
from tests.support.live import add_backend

# The engine takes 1.5 s before each token: its first event comes after a "prefill" of 1.5 s.
SLOW = "[[sim:slow delay=1.5]] low"


class Stream(threading.Thread):
    def __init__(self, url: str, key: str, text: str, *, stream: bool = True) -> None:
        super().__init__(daemon=True)
        self.url, self.key, self.text, self.stream = url, key, text, stream
        self.status = 0
        self.body = ""
        self.headers: dict[str, str] = {}
        self.ended_at = 0.0

    def run(self) -> None:
        body = {
            "model": "sim-small",
            "stream": self.stream,
            "max_tokens": 2,
            "messages": [{"role": "user", "content": self.text}],
        }
        auth = {"Authorization": f"Bearer {self.key}"}
        with httpx.stream(
            "POST", self.url + "/chat/completions", json=body, headers=auth, timeout=60
        ) as r:
            self.status, self.headers = r.status_code, dict(r.headers)
            self.body = r.read().decode()
        self.ended_at = time.monotonic()


@pytest.fixture
def engine(gateway: Any, make_sim: Any) -> Any:
    engine = make_sim(slots=8, tokens=2, token_delay=0.01, directives=True)
    add_backend("solo", engine.url, max_inflight=1)
    settings_update(values={"gateway.priority_enabled": True, "gateway.preemption": True})
    return engine


def _texts(engine: Any) -> list[str]:
    return [r["body"]["messages"][-1]["content"] for r in engine_records(engine)]


def test_a_high_request_cuts_a_low_stream_in_prefill_and_the_low_one_is_answered_after(
    gateway: Any, engine: Any
) -> None:
    low, high = key_for("lena", "low"), key_for("hana", "high")
    first = Stream(gateway.v1, low, SLOW)
    first.start()
    wait_until(lambda: engine_stats(engine)["open"] == 1, "the low stream is at the engine")
    second = Stream(gateway.v1, high, "high", stream=False)
    second.start()
    second.join(30)
    first.join(30)
    assert second.status == 200 and first.status == 200
    assert second.ended_at < first.ended_at
    assert "x-aiplane-preempted" not in second.headers
    assert first.headers["x-aiplane-preempted"] == "1"
    assert first.body.count("data: {") >= 3 and first.body.rstrip().endswith("data: [DONE]")
    assert "low" in first.body or "tok" in first.body
    # The engine saw the low one, then the high one in its slot, then the low one again.
    assert _texts(engine) == [SLOW, "high", SLOW]
    assert engine_stats(engine)["max_open_seen"] == 1


def test_a_low_stream_is_cut_at_most_once(gateway: Any, engine: Any) -> None:
    low, high = key_for("lena", "low"), key_for("hana", "high")
    first = Stream(gateway.v1, low, SLOW)
    first.start()
    wait_until(lambda: engine_stats(engine)["open"] == 1, "the low stream is at the engine")
    highs = [Stream(gateway.v1, high, "high-1", stream=False)]
    highs[0].start()
    wait_until(lambda: _texts(engine)[-1:] == ["high-1"], "the first high one runs")
    highs[0].join(30)
    wait_until(lambda: _texts(engine)[-1:] == [SLOW], "the low one is back at the engine")
    highs.append(Stream(gateway.v1, high, "high-2", stream=False))
    highs[1].start()
    first.join(30)
    highs[1].join(30)
    assert [h.status for h in highs] == [200, 200] and first.status == 200
    assert first.ended_at < highs[1].ended_at  # the second high one waited its turn
    assert _texts(engine) == [SLOW, "high-1", SLOW, "high-2"]


def test_a_started_stream_and_a_whole_answer_are_never_cut(gateway: Any, engine: Any) -> None:
    low, high = key_for("lena", "low"), key_for("hana", "high")
    whole = Stream(gateway.v1, low, SLOW, stream=False)
    whole.start()
    wait_until(lambda: engine_stats(engine)["open"] == 1, "the low whole answer is at the engine")
    second = Stream(gateway.v1, high, "high", stream=False)
    second.start()
    whole.join(30)
    second.join(30)
    assert whole.status == second.status == 200
    assert whole.ended_at < second.ended_at
    assert "x-aiplane-preempted" not in whole.headers
    assert _texts(engine) == [SLOW, "high"]


def test_with_preemption_off_the_high_request_waits_for_the_low_stream(
    gateway: Any, engine: Any
) -> None:
    settings_update(values={"gateway.preemption": False})
    low, high = key_for("lena", "low"), key_for("hana", "high")
    first = Stream(gateway.v1, low, SLOW)
    first.start()
    wait_until(lambda: engine_stats(engine)["open"] == 1, "the low stream is at the engine")
    second = Stream(gateway.v1, high, "high", stream=False)
    second.start()
    first.join(30)
    second.join(30)
    assert first.ended_at < second.ended_at
    assert _texts(engine) == [SLOW, "high"]


def test_a_medium_request_does_not_cut_a_medium_stream(gateway: Any, engine: Any) -> None:
    a, b = key_for("mara", "medium"), key_for("milo", "medium")
    first = Stream(gateway.v1, a, SLOW)
    first.start()
    wait_until(lambda: engine_stats(engine)["open"] == 1, "the first stream is at the engine")
    second = Stream(gateway.v1, b, "second", stream=False)
    second.start()
    first.join(30)
    second.join(30)
    assert first.ended_at < second.ended_at
    assert _texts(engine) == [SLOW, "second"]
