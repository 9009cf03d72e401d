"""The first screen loads only what it draws: on an empty data folder with no config to
check, neither the config schema's library (pydantic) nor litellm is imported before the
first frame; a config with a table in it is checked, and loads pydantic then."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support import subprocess_env, until

ROOT = Path(__file__).parents[2]
# A fresh interpreter, as `kept` starts: the modules loaded when the first frame is drawn
# (before anything is started after it), then it leaves.
CHILD = """
import json, sys
from app.main import KeptApp

class FirstFrame(KeptApp):
    def _first_frame(self):
        print(json.dumps({m: m in sys.modules for m in sys.argv[1:]}))
        self.exit()

FirstFrame().run(headless=True)
"""


def modules_at_first_frame(
    config: str | None, modules: tuple[str, ...] = ("pydantic", "litellm")
) -> dict[str, bool]:
    config_dir = Path(os.environ["KEPT_CONFIG_DIR"])
    if config is not None:
        config_dir.mkdir(parents=True, exist_ok=True)
        (config_dir / "config.toml").write_text(config, encoding="utf-8")
    done = subprocess.run(
        [sys.executable, "-c", CHILD, *modules],
        cwd=ROOT,
        env=subprocess_env(
            KEPT_DATA_DIR=os.environ["KEPT_DATA_DIR"],
            KEPT_CONFIG_DIR=str(config_dir),
            OPENAI_API_KEY="sk-test",
            PYTHON_KEYRING_BACKEND="keyring.backends.fail.Keyring",
        ),
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    loaded: dict[str, bool] = json.loads(done.stdout.strip().splitlines()[-1])
    return loaded


@pytest.mark.parametrize(
    ("config", "pydantic"),
    [
        (None, False),  # no config.toml
        ("# nothing set yet\n[app]\n[memory]\n", False),  # empty tables: nothing to check
        ('[app]\ntheme = "kept-light"\n', True),  # a table to check
    ],
)
def test_the_schema_library_loads_only_when_a_table_is_checked(
    config: str | None, pydantic: bool
) -> None:
    assert modules_at_first_frame(config) == {"pydantic": pydantic, "litellm": False}


# What only a later action needs (a TOML parser with no file to parse, hashes, random ids,
# the module finder, prices, HISTORY.md's format) is loaded when first used.
LATER = (
    "tomllib",
    "hashlib",
    "secrets",
    "importlib.util",
    "catalog.pricing",
    "memory.data.history",
)


def test_what_only_later_work_needs_is_not_loaded_before_the_first_frame() -> None:
    assert modules_at_first_frame(None, LATER) == dict.fromkeys(LATER, False)


def test_a_config_file_loads_the_toml_parser() -> None:
    assert modules_at_first_frame("# nothing set yet\n", ("tomllib",)) == {"tomllib": True}


@pytest.mark.parametrize(
    ("chosen", "theme", "problem"),
    [("kept-light", "kept-light", False), ("no-such-theme", "kept-dark", True)],
)
def test_the_theme_is_set_when_the_app_is_built(chosen: str, theme: str, problem: bool) -> None:
    """Set before the stylesheet is first parsed: once mounted, it would be parsed and
    applied a second time before the first frame."""
    from app.main import KeptApp

    config_dir = Path(os.environ["KEPT_CONFIG_DIR"])
    config_dir.mkdir(parents=True, exist_ok=True)
    (config_dir / "config.toml").write_text(f'[app]\ntheme = "{chosen}"\n', encoding="utf-8")
    app = KeptApp()
    assert app.theme == theme
    assert any("no-such-theme" in p for p in app.problems) is problem


@pytest.mark.parametrize("chosen", ["kept-dark", "kept-light"])
async def test_the_stylesheet_is_parsed_once_before_the_first_frame(chosen: str) -> None:
    """The theme read at start-up is in place before the first parse: setting it once the
    app is built scheduled a second parse and application of every rule, before the first
    frame, for nothing."""
    from textual.color import Color

    from app.main import KeptApp
    from themes import KEPT_THEMES

    class Counting(KeptApp):
        refreshed = 0
        at_first_frame: int | None = None

        def refresh_css(self, animate: bool = True) -> None:
            self.refreshed += 1
            super().refresh_css(animate)

        def _first_frame(self) -> None:  # what starts after it is not this test's
            self.at_first_frame = self.refreshed

    config = Path(os.environ["KEPT_CONFIG_DIR"]) / "config.toml"
    config.parent.mkdir(parents=True, exist_ok=True)
    config.write_text(f'[app]\ntheme = "{chosen}"\n', encoding="utf-8")
    theme = next(t for t in KEPT_THEMES if t.name == chosen)
    app = Counting()

    async with app.run_test():
        await until(lambda: app.at_first_frame is not None, message="the first frame")
        chat = app.screen_stack[0]
        assert chat.styles.background == Color.parse(str(theme.background))
        assert app.has_class(f"-theme-{chosen}")
        assert app.has_class("-dark-mode") is theme.dark
        assert app.has_class("-light-mode") is not theme.dark
    assert app.at_first_frame == 0
    assert config.read_text(encoding="utf-8") == f'[app]\ntheme = "{chosen}"\n'  # not saved
