"""Hostile inputs, round three: what the user (or a paste) supplies never runs unbounded on
the app's process. A regex search runs in a child process that is ended on cancel or time;
redaction is linear and catches what it missed; a huge pending session is estimated once,
from its size."""

from __future__ import annotations

import asyncio
import multiprocessing

import pytest
from textual.widgets import Checkbox, Input, Static

from app.cli import main
from app.screens.search import SearchScreen
from memory import MemoryStore
from memory.search import Pattern, grep
from tests.support import make_app, until

# 34 "a"s and then no end of the text: `(a+)+$` backtracks 2**34 times on it.
CATASTROPHIC = "(a+)+$"
LINE = "a" * 34


@pytest.fixture
def store() -> MemoryStore:
    store = MemoryStore().ensure()
    store.history_path.write_text(f"[2026-11-20 10:00] {LINE}\nand more after it.\n\n")
    return store


async def open_regex_grep(pilot) -> None:
    """/grep, then the catastrophic pattern as a regex (ticking the box searches)."""
    await pilot.press(*"/grep", "enter")
    await until(pilot, lambda: isinstance(pilot.app.screen, SearchScreen), "the search")
    pilot.app.screen.query_one("#pattern", Input).value = CATASTROPHIC
    pilot.app.screen.query_one("#regex", Checkbox).value = True
    await pilot.pause()


# --- a backtracking regex ------------------------------------------------------------------


@pytest.mark.timeout(120)
def test_a_backtracking_regex_is_stopped_after_its_time_with_a_sentence(store) -> None:
    errors: list[str] = []
    found = list(grep(store, Pattern(CATASTROPHIC, regex=True), errors=errors, seconds=1))
    assert found == []
    assert len(errors) == 1
    assert "took more than 1 s and was stopped" in errors[0]
    assert multiprocessing.active_children() == []  # the child was ended
    # A regex that ends is searched the same way, and finds what it did.
    found = list(grep(store, Pattern(r"and mo\w+", regex=True)))
    assert [(m.line, m.text, m.spans) for m in found] == [(2, "and more after it.", ((0, 8),))]
    assert multiprocessing.active_children() == []


@pytest.mark.timeout(120)
def test_kept_memory_grep_stops_a_backtracking_regex(store, capsys, monkeypatch) -> None:
    monkeypatch.setattr("memory.search.REGEX_SECONDS", 1.0)
    assert main(["memory", "grep", "-E", CATASTROPHIC]) == 2
    err = capsys.readouterr().err
    assert "took more than 1 s and was stopped; try a simpler one, or a plain word" in err
    assert "Traceback" not in err


@pytest.mark.timeout(120)
def test_escape_leaves_a_backtracking_grep_and_ends_its_search(store) -> None:
    async def scenario() -> None:
        app = make_app(None, env={"OPENAI_API_KEY": "x"})
        async with app.run_test(size=(120, 32)) as pilot:
            await open_regex_grep(pilot)
            await until(pilot, lambda: multiprocessing.active_children(), "the search's child")
            await pilot.press("escape")
            await until(pilot, lambda: not isinstance(app.screen, SearchScreen), "Esc")
            await until(pilot, lambda: not multiprocessing.active_children(), "the child's end")

    asyncio.run(scenario())


@pytest.mark.timeout(120)
def test_a_regex_that_runs_too_long_in_grep_says_so(store, monkeypatch) -> None:
    monkeypatch.setattr("memory.search.REGEX_SECONDS", 1.0)

    async def scenario() -> None:
        app = make_app(None, env={"OPENAI_API_KEY": "x"})
        async with app.run_test(size=(120, 32)) as pilot:
            await open_regex_grep(pilot)
            screen = app.screen
            summary = screen.query_one("#search-summary", Static)
            await until(pilot, lambda: "stopped" in str(summary.render()), "the summary")
            assert str(summary.render()) == (
                f"No match. The regular expression {CATASTROPHIC!r} took more than 1 s and "
                "was stopped; try a simpler one, or a plain word."
            )

    asyncio.run(scenario())
