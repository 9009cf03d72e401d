"""Arrows point down: app → memory → catalog. The lower layers never load Textual, and
nothing loads litellm before a request."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).parent.parent
FORBIDDEN = {
    "catalog": {"memory", "app", "themes", "textual"},
    "memory": {"app", "themes", "textual"},
    "themes": {"app", "memory", "catalog"},
}


@pytest.mark.parametrize("package", sorted(FORBIDDEN))
def test_no_import_points_up(package: str) -> None:
    for path in (ROOT / package).rglob("*.py"):
        tree = ast.parse(path.read_text(), str(path))
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
                names = [node.module]
            else:
                continue
            for name in names:
                assert name.split(".")[0] not in FORBIDDEN[package], f"{path}: {name}"


def test_importing_every_memory_and_catalog_module_loads_neither_textual_nor_litellm() -> None:
    modules = sorted(
        ".".join(p.relative_to(ROOT).with_suffix("").parts).removesuffix(".__init__")
        for package in ("catalog", "memory")
        for p in (ROOT / package).rglob("*.py")
    )
    code = (
        f"import importlib, sys\nfor m in {modules!r}: importlib.import_module(m)\n"
        "print(sorted(m for m in ('textual', 'litellm') if m in sys.modules))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, check=True
    )
    assert out.stdout.strip() == "[]"
