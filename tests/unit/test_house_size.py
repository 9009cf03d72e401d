"""A module a newcomer can read in one sitting: no file of app/ or memory/ grows past 400
lines (the function-size gates, complexity 12 and 8 arguments, are ruff's: `make lint`)."""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).parents[2]
MOST_LINES = 400


def test_no_module_of_app_or_memory_is_over_400_lines() -> None:
    over = {
        str(path.relative_to(ROOT)): lines
        for package in ("app", "memory")
        for path in sorted((ROOT / package).rglob("*.py"))
        if (lines := len(path.read_text(encoding="utf-8").splitlines())) > MOST_LINES
    }
    assert over == {}, f"split these by what their parts are: {over}"
