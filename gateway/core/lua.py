"""Lua scripts kept as .lua files beside the Python that runs them, read once at import."""

from __future__ import annotations

from pathlib import Path


def script(module_file: str, name: str) -> str:
    """The text of `lua/<name>.lua` next to `module_file`, exactly: processes sharing a Redis
    prefix run one version of a script, named by the SHA1 of this text. Universal newlines: a
    checkout with CRLF line ends still reads as the text every other process runs."""
    return (Path(module_file).resolve().parent / "lua" / f"{name}.lua").read_text(encoding="utf-8")
