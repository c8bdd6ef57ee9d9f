"""The README's "Connecting agents" commands, run as they are written against the live gateway:
the anthropic and openai SDK snippets always, Claude Code and Codex CLI where they are installed
(`.ci/run` installs both into var/agents with npm; AIPLANE_AGENTS_DIR points elsewhere)."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from gateway.models import ActivityRecord
from tests.support.drive import wait_until
from tests.support.factories import make_token_with_secret, make_user
from tests.support.live import add_backend

ROOT = Path(__file__).resolve().parents[2]
README = (ROOT / "README.md").read_text(encoding="utf-8")
SECTION = README.split("## Connecting agents", 1)[1].split("\n## ", 1)[0]
AGENTS = Path(os.environ.get("AIPLANE_AGENTS_DIR", ROOT / "var" / "agents")) / "node_modules"


def blocks(language: str) -> list[str]:
    return re.findall(rf"```{language}\n(.*?)```", SECTION, re.DOTALL)


def as_written(text: str, gateway: Any, key: str) -> str:
    """The README's text for this gateway: its address and a real token."""
    return text.replace("http://127.0.0.1:8000", gateway.url).replace("gwk_...", key)


@pytest.fixture
def key(transactional_db: None) -> str:
    return make_token_with_secret(make_user("alice"), name="agent")[1]


@pytest.fixture
def engine(make_sim: Any) -> Any:
    server = make_sim(tokens=3, token_delay=0)
    add_backend("solo", server.url)
    return server


def surfaces_recorded() -> list[str]:
    return list(ActivityRecord.objects.order_by("id").values_list("surface", flat=True))


@pytest.mark.parametrize("snippet", range(len(blocks("python"))))
def test_each_python_snippet_of_the_readme_runs_against_the_gateway(gateway, engine, key, snippet):
    code = as_written(blocks("python")[snippet], gateway, key)
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=False
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "tok0 tok1 tok2"


def agent(name: str) -> Path:
    binary = AGENTS / ".bin" / name
    found = binary if binary.exists() else shutil.which(name)
    if found is None:
        pytest.skip(f"{name} is not installed (npm install --prefix var/agents; see .ci/run)")
    return Path(found)


def test_claude_code_works_through_the_gateway_as_the_readme_says(gateway, engine, key, tmp_path):
    claude = agent("claude")
    (command,) = [b for b in blocks("sh") if "claude " in b]
    env = {
        "PATH": f"{claude.parent}:{os.environ['PATH']}",
        "HOME": str(tmp_path),
        # Nothing but the gateway: no telemetry or update checks on a closed network.
        "DISABLE_TELEMETRY": "1",
        "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
    }
    script = as_written(command, gateway, key)
    done = subprocess.run(
        ["bash", "-c", script], env=env, capture_output=True, text=True, timeout=180, check=False
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "tok0 tok1 tok2" in done.stdout
    wait_until(lambda: "messages" in surfaces_recorded(), "a messages record", 15)


def test_codex_cli_works_through_the_gateway_as_the_readme_says(gateway, engine, key, tmp_path):
    codex = agent("codex")
    (config,) = blocks("toml")
    (tmp_path / ".codex").mkdir()
    (tmp_path / ".codex" / "config.toml").write_text(as_written(config, gateway, key))
    (command,) = [b for b in blocks("sh") if "codex " in b]
    env = {
        "PATH": f"{codex.parent}:{os.environ['PATH']}",
        "HOME": str(tmp_path),
        "AIPLANE_API_KEY": key,
    }
    done = subprocess.run(
        ["bash", "-c", command], env=env, capture_output=True, text=True, timeout=180,
        cwd=tmp_path, stdin=subprocess.DEVNULL, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    assert "tok0 tok1 tok2" in done.stdout
    wait_until(lambda: "responses" in surfaces_recorded(), "a responses record", 15)
