"""Arrows point down: app → memory → catalog. The lower layers never load Textual, and
nothing loads litellm before a request."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).parents[2]
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


def _memory_imports(path: Path) -> set[str]:
    """The memory modules a module of memory/ imports at run time, anywhere in it (a
    function-level import closes a cycle as surely as a top-level one); imports under
    `if TYPE_CHECKING:` are for the type checker only and are left out."""
    found: set[str] = set()

    def visit(node: ast.AST) -> None:
        if isinstance(node, ast.If) and ast.unparse(node.test) in {
            "TYPE_CHECKING",
            "typing.TYPE_CHECKING",
        }:
            for child in node.orelse:
                visit(child)
            return
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names if a.name.startswith("memory."))
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            if node.module == "memory":
                found.update(f"memory.{a.name}" for a in node.names)
            elif node.module.startswith("memory."):
                found.add(node.module)
        for child in ast.iter_child_nodes(node):
            visit(child)

    visit(ast.parse(path.read_text(), str(path)))
    return found


def test_no_import_cycles_inside_memory() -> None:
    modules = {
        f"memory.{p.stem}": p for p in (ROOT / "memory").glob("*.py") if p.stem != "__init__"
    }
    graph = {name: _memory_imports(path) & modules.keys() for name, path in modules.items()}
    done: set[str] = set()

    def walk(name: str, trail: list[str]) -> None:
        if name in trail:
            pytest.fail("import cycle in memory/: " + " -> ".join([*trail, name]))
        if name in done:
            return
        for imported in sorted(graph[name]):
            walk(imported, [*trail, name])
        done.add(name)

    for name in sorted(graph):
        walk(name, [])
