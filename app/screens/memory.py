"""/memory: MEMORY.md and HISTORY.md as they are on disk, live; edit; versions and restore;
where each line came from."""

from __future__ import annotations

import asyncio
import difflib
import os
import shlex
import subprocess
import tempfile
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from rich.syntax import Syntax
from textual import on, work
from textual.app import ComposeResult, SuspendNotSupported
from textual.binding import Binding
from textual.containers import Horizontal, VerticalScroll
from textual.screen import Screen
from textual.widgets import (
    Button,
    Footer,
    OptionList,
    Static,
    TabbedContent,
    TabPane,
    Tabs,
    TextArea,
)
from textual.widgets.option_list import Option

from app.screens.conflict import ConflictDialog
from app.widgets.document import Document
from app.widgets.where_from import WhereFrom, described
from catalog.sanitize import clean_text

if TYPE_CHECKING:
    from app.main import KeptApp
    from memory import MemoryText
    from memory.data.history import HistoryEntry
    from memory.data.store import Version
    from memory.recall.provenance import BlameLine

HISTORY_SHOWN = 200  # entries drawn, newest first; /grep searches every one
# Versions listed at first, newest first; Enter on the last row lists as many more. Each is
# a file to read, and a year of them would keep the list away for seconds.
VERSIONS_SHOWN = 200
OLDER_VERSIONS = "older"


def _history_markdown(entries: list[HistoryEntry]) -> str:
    """The newest HISTORY_SHOWN entries, newest first by date, not by file order (an
    imported session has an older date)."""
    entries = sorted(entries, key=lambda e: e.stamp, reverse=True)
    text = "\n\n".join(shown(e.text) for e in entries[:HISTORY_SHOWN])
    if len(entries) > HISTORY_SHOWN:
        text += (
            f"\n\n*… and {len(entries) - HISTORY_SHOWN:,} older entries: /grep searches them all.*"
        )
    return text or "*No history yet.*"


@dataclass(frozen=True)
class _Loaded:
    """One look at the files; None where nothing changed since the last."""

    memory: MemoryText | None
    problem: str | None
    instructions: str
    history: str | None
    versions: list[Version] | None
    blame: list[BlameLine] | None


def shown(text: str) -> str:
    """Markdown that shows every character typed: `<transcript>` would be taken for HTML
    and vanish, so angle brackets are escaped (not in code, where a backslash would show)."""
    import re

    out, fenced = [], False
    for line in text.split("\n"):
        if line.lstrip().startswith("```"):
            fenced = not fenced
        elif not fenced:
            line = "".join(
                part if part.startswith("`") else part.replace("<", "\\<")
                for part in re.split(r"(`[^`]*`)", line)
            )
        out.append(line)
    return "\n".join(out)


class MemoryScreen(Screen[None]):
    BINDINGS = [
        Binding("escape", "leave", "Back"),
        Binding("e", "edit", "Edit here"),
        Binding("ctrl+e", "external_edit", "Edit in $EDITOR"),
        Binding("ctrl+s", "save", "Save", show=False),
        Binding("b", "where_from", "Where from"),
        # A tab from anywhere on the screen, not only once the tab bar has focus.
        *(
            Binding(str(n), f"tab('{tab}')", tab, show=False)
            for n, tab in enumerate(
                ("memory-tab", "instructions-tab", "history-tab", "versions-tab", "blame-tab"),
                start=1,
            )
        ),
    ]

    app: KeptApp

    def __init__(self) -> None:
        super().__init__()
        self.editing = False
        self.diff_text = ""
        self.base: MemoryText | None = None  # the text the edit started from
        self.blamed = False  # "Where from" opened: it follows MEMORY.md from then on
        self.target = "memory"  # the file being edited: "memory" or "instructions"
        self._stop = asyncio.Event()
        # What the last look found, so that the next reads only what changed.
        self._loading = threading.Lock()
        self._versions: dict[int, Version] = {}
        self._archives: dict[Path, tuple[tuple[int, int], list[HistoryEntry]]] = {}
        self._history_shown = False
        self._memory_lines: list[str] = []
        self._version_lines: dict[int, list[str]] = {}
        self._diffed: int | None = None
        self._drawn: dict[str, str] = {}
        self._versions_shown = VERSIONS_SHOWN
        self._older = 0  # versions not listed yet

    def compose(self) -> ComposeResult:
        with TabbedContent(id="tabs"):
            with TabPane("MEMORY.md", id="memory-tab"):
                with VerticalScroll(id="memory-scroll"):
                    yield Document(id="memory-view")
                yield TextArea(id="editor", language="markdown", soft_wrap=True)
                yield Static("", id="memory-status", markup=False)
            with (
                TabPane("INSTRUCTIONS.md", id="instructions-tab"),
                VerticalScroll(id="instructions-scroll"),
            ):
                yield Document(id="instructions-view")
            with TabPane("History", id="history-tab"), VerticalScroll():
                yield Document(id="history-view")
            with TabPane("Versions", id="versions-tab"), Horizontal():
                yield OptionList(id="versions", markup=False)
                with VerticalScroll(id="diff-scroll"):
                    yield Static("", id="diff")
                    yield Button("Restore this version", id="restore", variant="warning")
            with TabPane("Where from", id="blame-tab"), Horizontal():
                yield WhereFrom(id="blame")
                with VerticalScroll(id="blame-scroll"):
                    yield Static("", id="blame-detail", markup=False)
        yield Footer()

    def action_tab(self, tab: str) -> None:
        if self.editing:
            return
        if tab == "blame-tab":
            self.action_where_from()
            return
        tabs = self.query_one(TabbedContent)
        # Focus left in the pane being hidden would go to a sibling there, and a pane that
        # gets focus makes itself the active tab again: the tab bar takes it, as on opening.
        tabs.query_one(Tabs).focus()
        tabs.active = tab

    def on_mount(self) -> None:
        self.query_one("#editor").display = False
        # The files themselves at once (HISTORY.md is bounded: older entries roll out to
        # its archives); what grows with history follows from a thread.
        recent = _history_markdown(self.app.store.history_entries())
        self._show(_Loaded(*self._files(), recent, None, None))
        self.reload()
        self.watch_files()

    def on_unmount(self) -> None:
        self._stop.set()

    # --- showing what is on disk -------------------------------------------------------------

    def _read(self, target: str = "memory") -> MemoryText | None:
        """MEMORY.md (or INSTRUCTIONS.md), or None, the reason shown, when it cannot be read."""
        store = self.app.store
        try:
            return store.read_instructions() if target == "instructions" else store.read_memory()
        except OSError as exc:
            self.app.notify(str(exc), title="Memory", severity="error", markup=False)
            return None

    def reload(self) -> None:
        """Show what is on disk now. What grows with history (versions, archives, blame)
        is read in a thread, and only where it changed since the last look."""
        self._load()

    @work(thread=True, group="memory-load", exit_on_error=False)
    def _load(self) -> None:
        with self._loading:  # one look at a time, each shown in the order it was made
            loaded = self._look()
            self.app.call_from_thread(self._show, loaded)

    def _files(self) -> tuple[MemoryText | None, str | None, str]:
        """MEMORY.md (or why it cannot be read) and INSTRUCTIONS.md: two files of bounded
        size, read again at every look."""
        store = self.app.store
        try:
            return store.read_memory(), None, store.read_instructions().text
        except OSError as exc:  # another owner, or a folder: say so, never crash
            return None, str(exc), store.read_instructions().text

    def _look(self) -> _Loaded:
        store = self.app.store
        memory, problem, instructions = self._files()
        history = self._history_text()
        versions = self._known_versions()
        lines = None
        if self.blamed:
            from memory.recall.provenance import blame

            lines = blame(store)
        return _Loaded(memory, problem, instructions, history, versions, lines)

    def _history_text(self) -> str | None:
        """The newest history entries as Markdown, or None when no history file changed:
        an archive is parsed again only when its size or time changed."""
        from memory.data.files import read_text
        from memory.data.history import parse_entries

        store = self.app.store
        fresh: dict[Path, tuple[tuple[int, int], list[HistoryEntry]]] = {}
        for path in [*store.archive_files(), store.history_path]:
            try:
                stat = path.stat()
            except OSError:
                continue
            key = (stat.st_size, stat.st_mtime_ns)
            known = self._archives.get(path)
            if known is not None and known[0] == key:
                fresh[path] = known
            else:
                fresh[path] = (key, parse_entries(read_text(path)[0], path))
        if (
            self._history_shown
            and fresh.keys() == self._archives.keys()
            and all(fresh[p][0] == self._archives[p][0] for p in fresh)
        ):
            return None
        self._archives, self._history_shown = fresh, True
        return _history_markdown([e for _, found in fresh.values() for e in found])

    def _known_versions(self) -> list[Version] | None:
        """The newest versions (as many as the list shows), newest first, or None when none
        came or went since the last look: only the records of new versions are read."""
        store = self.app.store
        every = store.version_numbers()
        self._older = max(len(every) - self._versions_shown, 0)
        numbers = every[self._older :]
        if numbers == list(self._versions):
            return None
        fresh = {n: self._versions[n] for n in numbers if n in self._versions}
        for version in store.versions([n for n in numbers if n not in fresh]):
            fresh[version.number] = version
        # A record that cannot be read is not listed (and is read again at the next look).
        self._versions = {n: fresh[n] for n in numbers if n in fresh}
        return list(reversed(self._versions.values()))

    def _show(self, loaded: _Loaded) -> None:
        if not self.is_attached:
            return
        memory = loaded.memory
        if memory is None:
            text, status = "*MEMORY.md cannot be read.*", loaded.problem or ""
        else:
            self._memory_lines = memory.text.splitlines()
            # A file anyone can edit: its escapes never reach the terminal.
            text = shown(memory.text.strip()) or "*MEMORY.md is empty: nothing has been saved yet.*"
            status = memory.problem or f"MEMORY.md · {len(memory.raw):,} bytes"
        self._draw("#memory-view", text)
        if not self.editing:
            self.query_one("#memory-status", Static).update(
                f"{status} · e: edit here · ctrl+e: edit in $EDITOR · 1–5: tabs"
            )
        instructions = shown(loaded.instructions.strip()) or (
            "*INSTRUCTIONS.md is empty. Press e to write what Kept should always do: tone, "
            "language, format. It goes into every prompt, above the memory.*"
        )
        self._draw("#instructions-view", instructions)
        if loaded.history is not None:
            self._draw("#history-view", loaded.history)
        if loaded.versions is not None:
            self._list_versions(loaded.versions)
        else:
            self._refresh_diff()  # MEMORY.md may have changed: the diff is against it
        if loaded.blame is not None:
            lines = self.query_one(WhereFrom)
            lines.show(loaded.blame)
            if not lines.lines:
                self.query_one("#blame-detail", Static).update("MEMORY.md is empty.")

    def _draw(self, selector: str, text: str) -> None:
        """A document drawn again only when its text changed: most looks find it as it was."""
        if self._drawn.get(selector) != text:
            self._drawn[selector] = text
            self.query_one(selector, Document).update(text)

    def _list_versions(self, versions: list[Version]) -> None:
        options = self.query_one("#versions", OptionList)
        highlighted = options.highlighted
        rows = []
        for version in versions:
            # The model that wrote it says "consolidation" already; a row stays one line.
            by = version.model if version.session and version.model else version.source
            when = version.time[:16].replace("T", " ")
            rows.append(Option(f"{version.number:>3}  {when}  {by}", id=str(version.number)))
        if self._older:
            rows.append(
                Option(f"… {self._older:,} older versions: Enter lists more", id=OLDER_VERSIONS)
            )
        options.clear_options()
        options.add_options(rows)
        if options.option_count:
            options.highlighted = min(highlighted or 0, options.option_count - 1)

    # --- where each line came from -------------------------------------------------------------

    def action_where_from(self) -> None:
        if self.editing:
            return
        self.query_one(TabbedContent).active = "blame-tab"
        self.show_blame()
        self.query_one("#blame", OptionList).focus()

    def show_blame(self) -> None:
        """Blame follows MEMORY.md from now on; it is computed with the next look."""
        self.blamed = True
        self.reload()

    @on(OptionList.OptionHighlighted, "#blame")
    def explain_line(self, event: OptionList.OptionHighlighted) -> None:
        lines = self.query_one(WhereFrom)
        lines.refresh_bindings()  # Enter is offered on a line a session wrote, only
        line = lines.lines[event.option_index]
        self.query_one("#blame-detail", Static).update(described(self.app.store, line))

    @on(OptionList.OptionSelected, "#blame")
    def open_transcript(self, event: OptionList.OptionSelected) -> None:
        """The session that wrote the line, at the messages it most likely came from."""
        from app.screens.transcript import TranscriptScreen
        from memory.recall.provenance import history_entry_for, likely_messages

        line = self.query_one(WhereFrom).lines[event.option_index]
        session = line.version.session if line.version else None
        if session is None:  # a click, not Enter: the pane says who wrote the line
            return
        try:
            journal = self.app.store.find_session(session)
        except LookupError:
            self.app.notify(
                f"Session {session}'s journal is no longer on disk.",
                title="Where from",
                severity="warning",
                markup=False,
            )
            return
        marked = likely_messages(journal.messages, line.text)
        entry = history_entry_for(self.app.store, session, line.version)
        title = f"Session {session} · {line.version.model if line.version else ''}\n" + (
            entry.text if entry else "(its history entry was not found)"
        )
        if not marked:
            title += (
                "\nNo message shares a telling word with the line "
                f"{line.text!r} (matching is by text, best effort)."
            )
        self.app.push_screen(TranscriptScreen(title, journal.messages, marked))

    @work(exclusive=True, group="watch", exit_on_error=False)
    async def watch_files(self) -> None:
        from memory.recall.watch import memory_changes

        async for changed in memory_changes(self.app.store, self._stop):
            if self.editing and self.app.store.memory_path in changed:
                self.query_one("#memory-status", Static).update(
                    "MEMORY.md changed on disk while you edit: saving will show both."
                )
            self.reload()

    # --- versions ----------------------------------------------------------------------------

    @on(OptionList.OptionHighlighted, "#versions")
    def show_diff(self, event: OptionList.OptionHighlighted) -> None:
        if event.option.id == OLDER_VERSIONS:
            return
        self._diffed = int(str(event.option.id))
        self._refresh_diff()

    @on(OptionList.OptionSelected, "#versions")
    def more_versions(self, event: OptionList.OptionSelected) -> None:
        if event.option.id == OLDER_VERSIONS:
            self._versions_shown += VERSIONS_SHOWN
            self.reload()

    def _refresh_diff(self) -> None:
        """The highlighted version beside MEMORY.md as last read: a version's text is read
        once (versions never change), MEMORY.md only when it changes on disk."""
        number = self._diffed
        if number is None:
            return
        old = self._version_lines.get(number)
        if old is None:
            try:
                raw = self.app.store.version_text(number)
            except (LookupError, OSError) as exc:
                self.query_one("#diff", Static).update(str(exc))
                return
            old = self._version_lines[number] = raw.decode("utf-8", errors="replace").splitlines()
            while len(self._version_lines) > 64:  # the last few looked at
                del self._version_lines[next(iter(self._version_lines))]
        diff = clean_text(
            "\n".join(
                difflib.unified_diff(
                    old, self._memory_lines, f"version {number}", "MEMORY.md now", lineterm=""
                )
            )
        )
        self.diff_text = diff
        self.query_one("#diff", Static).update(
            Syntax(diff, "diff", theme="ansi_dark", word_wrap=True)
            if diff
            else f"Version {number} is the same as MEMORY.md now."
        )

    @on(Button.Pressed, "#restore")
    def restore(self) -> None:
        versions = self.query_one("#versions", OptionList)
        if versions.highlighted is None:
            return
        chosen = versions.get_option_at_index(versions.highlighted).id
        if chosen != OLDER_VERSIONS:
            self._restore(int(str(chosen)))

    @work(thread=True, group="memory-files", exit_on_error=False)
    def _restore(self, number: int) -> None:
        """Off the event loop: the store's lock waits while another Kept process writes."""
        try:
            saved = self.app.store.restore(number)
        except (LookupError, OSError) as exc:
            self.app.call_from_thread(
                self.app.notify, str(exc), title="Memory", severity="error", markup=False
            )
            return
        self.app.call_from_thread(self._restored, number, saved)

    def _restored(self, number: int, saved: int) -> None:
        self.app.notify(
            f"Restored version {number} (saved as version {saved}).", title="Memory", markup=False
        )
        self.reload()

    # --- editing -----------------------------------------------------------------------------

    def action_edit(self) -> None:
        if self.editing:
            return
        tabs = self.query_one(TabbedContent)
        target = "instructions" if tabs.active == "instructions-tab" else "memory"
        base = self._read(target)
        if base is None:
            return
        self.target, self.base = target, base
        tabs.active = "memory-tab"  # one editor for both files: it lives on MEMORY.md's tab
        editor = self.query_one("#editor", TextArea)
        editor.load_text(self.base.text)
        self._set_editing(True)
        editor.focus()

    def _set_editing(self, editing: bool) -> None:
        self.editing = editing
        self.query_one("#memory-scroll").display = not editing
        self.query_one("#editor").display = editing
        name = "INSTRUCTIONS.md" if self.target == "instructions" else "MEMORY.md"
        self.query_one("#memory-status", Static).update(
            f"Editing {name}: ctrl+s saves · esc cancels" if editing else ""
        )
        if not editing:
            self.reload()

    def action_leave(self) -> None:
        if self.editing:
            self._set_editing(False)
        else:
            self.app.pop_screen()

    def action_save(self) -> None:
        if self.editing and self.base is not None:
            self._save(self.query_one("#editor", TextArea).text, self.base)

    def _save(self, text: str, base: MemoryText) -> None:
        self._write(text, base, self.target == "instructions")

    @work(thread=True, group="memory-files", exit_on_error=False)
    def _write(self, text: str, base: MemoryText, instructions: bool) -> None:
        """Off the event loop: the store's lock waits while another Kept process writes."""
        store = self.app.store
        try:
            on_disk = (
                store.save_instructions(text, base.digest)
                if instructions
                else store.save_edit(text, base.digest)
            )
        except OSError as exc:  # the edit stays in the editor
            name = "INSTRUCTIONS.md" if instructions else "MEMORY.md"
            self.app.call_from_thread(
                self.app.notify,
                f"{name} not saved: {exc}",
                title="Memory",
                severity="error",
                markup=False,
            )
            return
        self.app.call_from_thread(self._written, text, on_disk, instructions)

    def _written(self, text: str, on_disk: MemoryText | None, instructions: bool) -> None:
        if on_disk is None:
            name = "INSTRUCTIONS.md" if instructions else "MEMORY.md"
            self.app.notify(
                f"{name} saved; the previous text is a version.", title="Memory", markup=False
            )
            self._set_editing(False)
            if instructions:  # back where the edit began (focus follows, or the tab would)
                self.query_one(TabbedContent).active = "instructions-tab"
                self.query_one("#instructions-scroll").focus()
            return

        def chosen(choice: str | None) -> None:
            if choice == "mine":
                self._save(text, on_disk)
            elif choice == "theirs":
                self._discard(text, instructions)
            else:  # keep editing, now against what is on disk
                self.base = on_disk
                if not self.editing:
                    self.query_one("#editor", TextArea).load_text(text)
                    self._set_editing(True)

        self.app.push_screen(ConflictDialog(text, on_disk.text), chosen)

    @work(thread=True, group="memory-files", exit_on_error=False)
    def _discard(self, text: str, instructions: bool) -> None:
        """The user kept what is on disk: their edit is still kept, as a version."""
        store = self.app.store
        try:
            if instructions:
                store.keep_instruction_version(text.encode("utf-8"))
            else:
                store.discard_edit(text)
        except OSError as exc:  # the edit stays in the editor
            self.app.call_from_thread(
                self.app.notify,
                f"Your edit could not be kept as a version: {exc}",
                title="Memory",
                severity="error",
                markup=False,
            )
            return
        self.app.call_from_thread(self._set_editing, False)

    def action_external_edit(self) -> None:
        """Edit in $EDITOR (or $VISUAL, else vi); the save is checked like an edit here."""
        tabs = self.query_one(TabbedContent)
        target = "instructions" if tabs.active == "instructions-tab" else "memory"
        base = self._read(target)
        if base is None:
            return
        self.target = target
        editor = os.environ.get("VISUAL") or os.environ.get("EDITOR") or "vi"
        prefix = "INSTRUCTIONS-" if self.target == "instructions" else "MEMORY-"
        fd, name = tempfile.mkstemp(prefix=prefix, suffix=".md")
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as f:
                f.write(base.text)
            try:
                with self.app.suspend():
                    subprocess.run([*shlex.split(editor), name], check=False)
            except SuspendNotSupported:
                self.app.notify(
                    "This terminal cannot hand over to an editor; press e to edit here.",
                    severity="warning",
                    markup=False,
                )
                return
            except OSError as exc:
                self.app.notify(
                    f"Could not start {editor!r}: {exc.strerror}. Set $EDITOR.",
                    severity="error",
                    markup=False,
                )
                return
            with open(name, encoding="utf-8", errors="replace") as f:
                text = f.read()
        finally:
            os.unlink(name)
        if text != base.text:
            self._save(text, base)
