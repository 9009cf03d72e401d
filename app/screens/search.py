"""/grep: search HISTORY.md, its archives and every session's transcript, newest first;
open the entry a match is in, or the session a message was said in."""

from __future__ import annotations

import os
import re
import time
from typing import TYPE_CHECKING

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, VerticalScroll
from textual.screen import Screen
from textual.widgets import Checkbox, Footer, Input, OptionList, Static
from textual.widgets.option_list import Option
from textual.worker import get_current_worker

if TYPE_CHECKING:
    from pathlib import Path

    from app.main import KeptApp
    from memory.recall.search import Match

LIMIT = 500  # matches listed; the count says how many there were
FIRST = 0.03  # seconds before the first matches are drawn, while the search goes on


class SearchScreen(Screen[None]):
    BINDINGS = [Binding("escape", "app.pop_screen", "Back")]

    app: KeptApp

    def __init__(self, pattern: str = "") -> None:
        super().__init__()
        self.initial = pattern
        self.matches: list[Match] = []

    def compose(self) -> ComposeResult:
        with Horizontal(id="search-bar"):
            yield Input(
                self.initial, placeholder="Search history and every session's words", id="pattern"
            )
            yield Checkbox("regex", id="regex")
            yield Checkbox("match case", id="case")
        yield Static("", id="search-summary", markup=False)
        yield OptionList(id="results", markup=False)
        with VerticalScroll(id="entry-scroll"):
            yield Static("", id="entry", markup=False)
        yield Footer()

    def on_mount(self) -> None:
        self.query_one("#pattern", Input).focus()
        if self.initial:
            self.search()  # which starts the index's build itself if it must
        else:
            self.index_files()

    @work(thread=True, group="search-index", exit_on_error=False)
    def index_files(self) -> None:
        """A search index missing many files is built by a process of its own while the
        pattern is typed: searches read the files it lacks meanwhile, and say so."""
        from memory.recall.index import build_if_needed

        build_if_needed(self.app.store.root)

    @on(Input.Submitted, "#pattern")
    @on(Checkbox.Changed)
    def search(self) -> None:
        pattern = self.query_one("#pattern", Input).value
        if pattern:
            self.run_search(
                pattern,
                self.query_one("#regex", Checkbox).value,
                not self.query_one("#case", Checkbox).value,
            )

    @work(thread=True, exclusive=True, group="search", exit_on_error=False)
    def run_search(self, pattern: str, regex: bool, ignore_case: bool) -> None:
        """Search in a thread: a large history must not freeze the screen. A regex runs in
        a child process (memory.recall.search), ended when this search is cancelled: by a new
        search, by Esc, or by quitting."""
        from memory.recall.search import Pattern, Route, grep

        try:
            compiled = Pattern(pattern, regex=regex, ignore_case=ignore_case)
        except re.error as exc:
            self.app.call_from_thread(self.show, [], f"Bad regular expression: {exc}.")
            return
        found: list[Match] = []
        errors: list[str] = []
        total = 0
        started, drawn = time.monotonic(), False
        worker = get_current_worker()
        route = Route()
        try:
            for match in grep(
                self.app.store,
                compiled,
                errors=errors,
                cancelled=lambda: worker.is_cancelled,
                route=route,
            ):
                total += 1
                if len(found) < LIMIT:
                    found.append(match)
                # The newest matches go on screen at once; the rest when all is searched.
                if not drawn and (len(found) >= 50 or time.monotonic() - started > FIRST):
                    drawn = True
                    self.app.call_from_thread(self.show, list(found), "Searching…")
        except OSError as exc:  # a regex's child process could not start
            errors.append(f"the search could not run: {exc.strerror or exc}")
        shown = f" (first {LIMIT} shown)" if total > LIMIT else ""
        noun = "line matches" if total == 1 else "lines match"
        summary = f"{total:,} {noun}{shown}" if total else "No match."
        if errors:
            summary = f"{summary} {errors[-1][0].upper()}{errors[-1][1:]}."
        if not route.ready:
            summary = (
                f"{summary.rstrip('.')}. Many files are not in the search index yet"
                " (it is being built), so they were read one by one."
            )
        if not worker.is_cancelled:
            self.app.call_from_thread(self.show, found, summary)

    def show(self, matches: list[Match], summary: str) -> None:
        self.matches = matches
        self.query_one("#search-summary", Static).update(summary)
        results = self.query_one("#results", OptionList)
        results.clear_options()
        root = self.app.store.root
        for index, match in enumerate(matches):
            line = Text()
            if match.session:
                line.append(f"session {match.session}", style="magenta")
            else:
                line.append(f"{os.path.relpath(match.file, root)}:{match.line}", style="magenta")
            if match.stamp:
                line.append(f"  {match.stamp}", style="green")
            if match.role:
                line.append(f"  {match.role}:", style="bold")
            line.append("  ")
            text = Text(match.text[:300])
            for start, end in match.spans:
                if start < 300:
                    text.stylize("bold reverse", start, min(end, 300))
            line.append_text(text)
            results.add_option(Option(line, id=str(index)))
        self.query_one("#entry", Static).update("")

    @on(OptionList.OptionSelected, "#results")
    def open_session(self, event: OptionList.OptionSelected) -> None:
        """Enter on a message: its session's transcript, opened at that message."""
        from app.screens.transcript import TranscriptScreen
        from memory.sessions import journal as journals

        match = self.matches[int(str(event.option.id))]
        if match.session is None:
            return
        try:
            journal = journals.load(match.file)
        except FileNotFoundError:  # finished meanwhile: moved to done/
            journal = journals.load(match.file.parent / "done" / match.file.name)
        index = message_index(match.file, match.line)
        title = f"Session {journal.id} · {match.stamp or ''} · {match.role}"
        self.app.push_screen(
            TranscriptScreen(title, journal.messages, [index] if index is not None else [])
        )

    @on(OptionList.OptionHighlighted, "#results")
    def open_entry(self, event: OptionList.OptionHighlighted) -> None:
        match = self.matches[int(str(event.option.id))]
        entry = match.entry(self.app.store)
        body = entry.body if entry else match.text
        if match.session:
            body = (
                f"Session {match.session} · {match.stamp} · {match.role}\n\n{match.text}"
                "\n\nEnter: open the session there."
            )
        text = Text(body)
        pattern = self.query_one("#pattern", Input).value
        flags = 0 if self.query_one("#case", Checkbox).value else re.IGNORECASE
        if not self.query_one("#regex", Checkbox).value:  # a literal: linear, safe here
            text.highlight_regex(re.compile(re.escape(pattern), flags), "bold reverse")
        else:  # a regex never runs on this process: the spans found in the search are used
            offset = body.find(match.text)
            if offset >= 0:
                for start, end in match.spans:
                    text.stylize("bold reverse", offset + start, offset + end)
        self.query_one("#entry", Static).update(text)


def message_index(path: Path, line: int) -> int | None:
    """Which message of a journal is on line `line` (header and marks are not messages)."""
    from memory.sessions.journal import records

    index = 0
    try:
        for number, record in records(path):
            if isinstance(record, ValueError) or "role" not in record:
                continue
            if number == line:
                return index
            index += 1
    except OSError:
        return None
    return None
