"""The live view's dispatch order: per route, the waiters in the order the queue admits them."""

from __future__ import annotations

import pytest

from gateway.admission.queue import AdmissionQueue
from gateway.admission.schedulers import SchedulerConfig
from gateway.admission.types import Slot
from gateway.core.classes import HIGH, LOW, MEDIUM
from tests.support.admission import FakeClock, Recorder, drain, enter, hold, route


def busy_queue(clock: FakeClock, rec: Recorder, **config: object) -> AdmissionQueue:
    return AdmissionQueue(clock=clock, config=SchedulerConfig(**config), observer=rec)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    "config",
    [
        {"name": "strict"},
        {"name": "strict", "fair_share": True},
        {"name": "serial", "aging_divisor": 1.0},
        {"name": "fcfs"},
        {"name": "wspt"},
    ],
    ids=["strict", "fair-share", "serial-aging", "fcfs", "wspt"],
)
def test_the_shown_dispatch_order_is_the_order_the_queue_then_admits(config: dict) -> None:
    clock, rec = FakeClock(), Recorder()
    q = busy_queue(clock, rec, **config)
    r = route("chat", Slot("one", max_inflight=1))
    (running,) = hold(q, r)
    # Classes, offsets, owners, costs and arrival times that each scheduler orders differently.
    arrivals = [
        ("low-early", LOW, 0, "bob", 50),
        ("medium-a", MEDIUM, 0, "alice", 400),
        ("medium-a2", MEDIUM, 0, "alice", 10),
        ("medium-b", MEDIUM, 20, "bob", 100),
        ("high-late", HIGH, -10, "carol", 1000),
        ("medium-b2", MEDIUM, 0, "bob", 5),
    ]
    for tag, cls, offset, owner, cost in arrivals:
        enter(q, r, tag, cls=cls, offset=offset, owner=owner, cost=cost)
        clock.t += 30.0

    ((backends, shown),) = q.dispatch_order()
    assert backends == ("one",)
    predicted = [w.tag for w in shown]
    drain(q, rec, running)
    assert rec.order == predicted
    assert predicted != [tag for tag, *_ in arrivals]  # not merely arrival order


def test_routes_on_the_same_backends_share_one_line_and_other_backends_have_their_own() -> None:
    clock, rec = FakeClock(), Recorder()
    q = busy_queue(clock, rec)
    one, two = Slot("one", max_inflight=1), Slot("two", max_inflight=1)
    # Two callers with different groups get two routes to the same model: they still compete.
    chat_bob, chat_dave = route("chat-bob", one, two), route("chat-dave", one, two)
    embed = route("embed", two)
    held = hold(q, chat_bob, 2)
    enter(q, chat_bob, "bob-medium")
    enter(q, embed, "embed-low", cls=LOW)
    enter(q, chat_dave, "dave-high", cls=HIGH)

    lines = {backends: [w.tag for w in ws] for backends, ws in q.dispatch_order()}
    assert lines == {("one", "two"): ["dave-high", "bob-medium"], ("two",): ["embed-low"]}
    waits = {w.tag: q.waits_for(w) for _, ws in q.dispatch_order() for w in ws}
    assert waits == {
        "dave-high": ["one", "two"],
        "bob-medium": ["one", "two"],
        "embed-low": ["two"],
    }
    held[0].release()  # "one" frees: the first of its line goes
    assert rec.order == ["dave-high"]


def test_a_waiting_requests_serial_score_grows_with_its_age() -> None:
    clock, rec = FakeClock(), Recorder()
    q = busy_queue(clock, rec, name="serial", aging_divisor=10.0)
    r = route("chat", Slot("one", max_inflight=1))
    hold(q, r)
    w = enter(q, r, "waiting", cls=HIGH, offset=5)
    assert q.score(w) == 105.0
    clock.t += 20.0
    assert q.score(w) == 107.0
    assert busy_queue(clock, rec).score(w) is None  # only serial has a score
