"""Settings drift: every declared key is read somewhere, and every key read is declared."""

from __future__ import annotations

import re
from pathlib import Path

from aiplane.catalog import CATALOG, SPECS

ROOT = Path(__file__).resolve().parents[2]
SCANNED = ("aiplane", "accounts", "gateway")

SETTING_CALL = re.compile(r"""\bsetting\(\s*["']([^"']+)["']\s*\)""")
# all_settings()["gateway.x"], values["gateway.x"]: a subscript with a dotted literal key.
DOTTED_SUBSCRIPT = re.compile(r"""\[\s*["']([a-z_]+(?:\.[a-z0-9_]+)+)["']\s*\]""")


def sources() -> dict[Path, str]:
    files = {}
    for package in SCANNED:
        for path in sorted((ROOT / package).rglob("*.py")):
            if "migrations" not in path.parts:
                files[path.relative_to(ROOT)] = path.read_text()
    return files


def test_every_key_read_is_declared() -> None:
    namespaces = {spec.key.split(".")[0] for spec in CATALOG}
    undeclared = sorted(
        f"{path}: {key}"
        for path, text in sources().items()
        for key in [
            *SETTING_CALL.findall(text),
            *(k for k in DOTTED_SUBSCRIPT.findall(text) if k.split(".")[0] in namespaces),
        ]
        if key not in SPECS
    )
    assert undeclared == [], "settings read but not declared in the catalog"


def test_every_declared_key_is_read_somewhere() -> None:
    read: set[str] = set()
    for text in sources().values():
        read.update(SETTING_CALL.findall(text))
        read.update(DOTTED_SUBSCRIPT.findall(text))
    unread = [spec.key for spec in CATALOG if spec.key not in read]
    assert unread == [], f"declared but never read: {', '.join(unread)}"
