"""The house keeps its rooms: gateway/ is packages by layer, each saying what it holds, none of
its product modules over 700 lines, and docs/architecture.md naming every package."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
GATEWAY = ROOT / "gateway"
PACKAGES = sorted(p.name for p in GATEWAY.iterdir() if (p / "__init__.py").exists())
LAYERS = ["admin", "dataplane", "runtime", "observability", "allowances", "admission", "dialects",
          "engines", "core", "sim"]  # fmt: skip


def test_the_top_of_gateway_holds_only_the_django_app_and_its_packages():
    loose = {p.name for p in GATEWAY.glob("*.py")}
    assert loose == {"__init__.py", "apps.py", "models.py"}
    assert set(PACKAGES) == {*LAYERS, "management", "migrations"}


@pytest.mark.parametrize("package", LAYERS)
def test_each_package_says_what_it_holds_and_nothing_else(package):
    init = GATEWAY / package / "__init__.py"
    module = ast.parse(init.read_text())
    assert ast.get_docstring(module), f"{package} has no docstring"
    assert len(module.body) == 1, f"{package}/__init__.py holds code (a re-export?)"


def test_no_product_module_but_the_simulated_engine_is_over_700_lines():
    long = {
        str(path.relative_to(ROOT)): n
        for path in GATEWAY.rglob("*.py")
        if "migrations" not in path.parts and "sim" not in path.parts
        if (n := len(path.read_text().splitlines())) > 700
    }
    assert not long


def test_the_architecture_document_names_every_package():
    text = (ROOT / "docs" / "architecture.md").read_text()
    assert all(f"  {package}/" in text for package in LAYERS)
