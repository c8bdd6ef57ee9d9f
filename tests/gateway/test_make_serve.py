"""`make serve` passes its ports through: the gateway's PORT and the demo engine's ENGINE_PORT."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _serve_line(*assignments: str) -> str:
    if shutil.which("make") is None:
        pytest.skip("make is not installed")
    # -n prints the recipe without running it; the venv's stamp may be stale, so -o skips it.
    done = subprocess.run(  # noqa: S603 - a fixed argv, no shell
        ["make", "-n", "-o", ".venv/.installed", "serve", *assignments],  # noqa: S607 - make on PATH
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    )
    return next(line for line in done.stdout.splitlines() if "manage.py serve" in line)


def test_the_demo_engine_listens_on_8100_unless_told():
    assert _serve_line().split()[-2:] == ["--sim-port", "8100"]


def test_engine_port_moves_the_demo_engine_and_port_the_gateway():
    line = _serve_line("ENGINE_PORT=8200", "PORT=9000")
    assert "--sim-port 8200" in line
    assert "--port 9000" in line
