"""The short chaos run of `make test`: 300 seeded faulty requests against the real app and three
simulated replicas (bench/chaos.py; `make chaos` runs the long one).

The seed fixes the plan (every request, its fault and its client); timing decides only which of
its acceptable answers each request gets, so the run passes or fails on the gateway alone.
"""

from __future__ import annotations

import pytest

from bench.chaos import Options, report, run

SEED = 31  # its 300 requests cover every family of fault at least three times
FAMILIES = {
    "plain", "sim:status", "sim:html", "sim:redirect", "sim:queue-full", "sim:evicted",
    "sim:bad-json", "sim:reset", "sim:hang", "sim:hang-mid", "sim:slow", "sim:garbage",
    "sim:no-blank", "sim:cut", "wire:status", "wire:chunked", "wire:reset", "wire:stall",
    "client:leave", "client:leave-mid", "client:stall", "client:slow-body", "client:half-body",
}  # fmt: skip


@pytest.mark.timeout(400)  # a few hundred requests with hangs and timeouts on purpose
def test_a_short_chaos_run_breaks_no_rule_of_the_gateway() -> None:
    result = run(
        Options(
            seed=SEED,
            duration=None,
            requests=300,
            concurrency=24,
            stall_forever=False,  # its clients outwait the two-minute stalled-client bound
            strict_timing=False,  # no timing thresholds here: the answers must come, that's all
            quiet=True,
        )
    )

    print(report(result))  # the counts, with `pytest -s`
    failed = [name for name, (passed, _) in result.checks.items() if not passed]
    assert not failed, report(result)
    assert len(result.exchanges) == 300
    families = {exchange.call.fault.split()[0] for exchange in result.exchanges}
    assert families >= FAMILIES, sorted(FAMILIES - families)
