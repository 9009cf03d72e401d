"""Arrows point down: app → memory → catalog; no UI library below app/; the command line
never loads Textual. Those are import-linter's contracts ([tool.importlinter] in
pyproject.toml, `make check`); what they cannot say is checked here: no module imports
itself back, and nothing loads Textual or litellm at run time before it is needed."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import grimp
import pytest

ROOT = Path(__file__).parents[2]
LINT_IMPORTS = Path(sys.executable).parent / "lint-imports"
# The one way from the command line into the app: `kept` with no command opens the chat.
LAUNCHER = ("app.cli.main", "app.main")


def lint_imports(cwd: Path, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(LINT_IMPORTS), "--no-cache"],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=300,
        env={"PATH": "/usr/bin:/bin", **env},
    )


def test_the_import_contracts_hold() -> None:
    done = lint_imports(ROOT, PYTHONPATH=str(ROOT))
    assert done.returncode == 0, done.stdout + done.stderr


def _contracts() -> str:
    """pyproject.toml's [tool.importlinter] tables, as written."""
    lines, keep = [], False
    for line in (ROOT / "pyproject.toml").read_text().splitlines():
        if line.startswith("["):
            keep = line.lstrip("[").startswith("tool.importlinter")
        if keep:
            lines.append(line)
    return "\n".join(lines) + "\n"


@pytest.mark.parametrize(
    ("module", "imports"),
    [
        ("catalog/keys.py", "import memory"),
        ("memory/turn.py", "from app import cli"),
        ("memory/view.py", "import textual"),
        ("catalog/show.py", "import rich"),
        ("app/cli/ask.py", "import textual"),
        ("app/cli/ask.py", "from app import screens"),
    ],
)
def test_a_broken_contract_fails_the_check(tmp_path: Path, module: str, imports: str) -> None:
    """The contracts catch an upward import, a UI library below app/ and Textual in the
    command line, directly or through the app."""
    for package in ("app", "app/cli", "memory", "catalog", "themes"):
        (tmp_path / package).mkdir(parents=True, exist_ok=True)
        (tmp_path / package / "__init__.py").write_text("")
    (tmp_path / "app" / "main.py").write_text("import textual\nimport rich\n")
    (tmp_path / "app" / "screens.py").write_text("from app import main\n")
    (tmp_path / "app" / "cli" / "main.py").write_text("def run():\n    from app import main\n")
    (tmp_path / "pyproject.toml").write_text(_contracts())
    assert lint_imports(tmp_path, PYTHONPATH=str(tmp_path)).returncode == 0
    (tmp_path / module).write_text(imports + "\n")
    done = lint_imports(tmp_path, PYTHONPATH=str(tmp_path))
    assert done.returncode == 1 and "BROKEN" in done.stdout, done.stdout + done.stderr


def test_no_module_imports_itself_back() -> None:
    """No import cycle between modules of app/, memory/ or catalog/ at run time (a
    function-level import closes one as surely as a top-level one; imports for the type
    checker only are left out)."""
    graph = grimp.build_graph(
        "app", "memory", "catalog", "themes", exclude_type_checking_imports=True
    )
    graph.remove_import(importer=LAUNCHER[0], imported=LAUNCHER[1])
    cycles = []
    for module in sorted(graph.modules):
        for imported in sorted(graph.find_modules_directly_imported_by(module)):
            chain = graph.find_shortest_chain(importer=imported, imported=module)
            if chain:
                cycles.append(" -> ".join([module, *chain]))
    assert cycles == []


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
