"""The learned-capacity benchmark's smoke run (bench/capacity.py --quick): every part of it runs
against real processes (the simulated GPU, the gateway, the open-loop load, the mid-run change
and the plots), so it cannot rot. Its figures are the long run's; none is checked here."""

from __future__ import annotations

from pathlib import Path

import pytest

from bench.capacity import INTERACTIVE, Options, plot, run

PNG = b"\x89PNG\r\n\x1a\n"


@pytest.mark.timeout(300)  # four cold starts of an engine and a gateway, on two shared cores
def test_a_quick_capacity_run_serves_every_request_and_writes_its_table_and_plots(
    tmp_path: Path,
) -> None:
    opts = Options(seconds=2.0, change_seconds=4.0, fixed=(4,), grace=1.0, quiet=True)
    fig = run(opts)

    assert set(fig.runs) == {"4", "auto"}
    for name, measured in [*fig.runs.items(), ("change", fig.change)]:
        assert measured.requests, name
        assert measured.errors() == 0, name  # every request answered 200 or still running
        assert measured.engine and measured.limits, name
        assert any(r.first is not None for r in measured.requests if r.kind is INTERACTIVE)
    assert {fig.runs["4"].limit(s) for s in fig.runs["4"].limits} == {4}  # the setting applied
    learned = [fig.runs["auto"].limit(s) for s in fig.runs["auto"].limits]
    assert learned[0] == 1  # a cold start, at its floor
    assert all(1 <= limit <= 256 for limit in learned)
    assert fig.change.changed_at == 2.0
    assert fig.best == "4"
    assert any(line.startswith("best fixed: max_inflight 4 ") for line in fig.lines)
    assert len([line for line in fig.lines if line.startswith(("  met ", "  MISS "))]) == 3

    written = plot(fig, tmp_path, opts)
    assert [p.name for p in written] == ["sweep.png", "timeline.png"]
    assert all(p.read_bytes().startswith(PNG) for p in written)
