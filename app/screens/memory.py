"""/memory: MEMORY.md and HISTORY.md as they are on disk, live; edit; versions and restore;
where each line came from.

The tabs are widgets of their own (app/widgets: memory_pane, history_pane, versions_pane,
where_from); the two files the editor edits are documents behind one protocol
(app/documents.py)."""

from __future__ import annotations

import asyncio
import os
import shlex
import subprocess
import tempfile
from dataclasses import dataclass
from typing import TYPE_CHECKING

from textual import on, work
from textual.app import ComposeResult, SuspendNotSupported
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import Screen
from textual.widgets import Footer, OptionList, TabbedContent, TabPane, Tabs

from app.documents import EditableDocument, InstructionsDocument, MemoryDocument, async_store
from app.screens.conflict import ConflictDialog
from app.widgets.document import Document, shown
from app.widgets.history_pane import HISTORY_SHOWN, HistoryPane, HistoryReader, history_markdown
from app.widgets.memory_pane import MemoryPane
from app.widgets.versions_pane import VERSIONS_SHOWN, VersionReader, VersionsPane
from app.widgets.where_from import WhereFromPane

if TYPE_CHECKING:
    from app.main import KeptApp
    from memory import MemoryText
    from memory.data.store import Version
    from memory.recall.provenance import BlameLine

__all__ = ["HISTORY_SHOWN", "VERSIONS_SHOWN", "MemoryScreen", "shown"]

EDITOR_TAB = "memory-tab"  # one editor for both files: it lives on MEMORY.md's tab


@dataclass(frozen=True)
class _Loaded:
    """One look at the files; None where nothing changed since the last."""

    memory: MemoryText | None
    problem: str | None
    instructions: str
    history: str | None
    versions: list[Version] | None
    blame: list[BlameLine] | None
    older: int = 0  # versions not listed yet


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
        self.base: MemoryText | None = None  # the text the edit started from
        self.blamed = False  # "Where from" opened: it follows MEMORY.md from then on
        self._stop = asyncio.Event()
        # What the last look found, so that the next reads only what changed.
        self._loading = asyncio.Lock()
        self._history = HistoryReader()
        self._versions = VersionReader()
        self._documents: tuple[EditableDocument, ...] = ()
        self.document: EditableDocument  # the file edited last, set with the store on mount

    @property
    def diff_text(self) -> str:
        """The diff the Versions tab shows."""
        return self.query_one(VersionsPane).diff_text

    def compose(self) -> ComposeResult:
        with TabbedContent(id="tabs"):
            with TabPane("MEMORY.md", id="memory-tab"):
                yield MemoryPane()
            with (
                TabPane("INSTRUCTIONS.md", id="instructions-tab"),
                VerticalScroll(id="instructions-scroll"),
            ):
                yield Document(id="instructions-view")
            with TabPane("History", id="history-tab"):
                yield HistoryPane()
            with TabPane("Versions", id="versions-tab"):
                yield VersionsPane()
            with TabPane("Where from", id="blame-tab"):
                yield WhereFromPane()
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

    async def on_mount(self) -> None:
        store = async_store(self.app)
        self._documents = (MemoryDocument(store), InstructionsDocument(store))
        self.document = self._documents[0]
        # The files themselves first (HISTORY.md is bounded: older entries roll out to its
        # archives); what grows with history follows. Every read is off the event loop.
        recent = history_markdown(await store.history_entries())
        self._show(_Loaded(*await self._files(), recent, None, None))
        self.reload()
        self.watch_files()

    def on_unmount(self) -> None:
        self._stop.set()

    # --- showing what is on disk -------------------------------------------------------------

    def reload(self) -> None:
        """Show what is on disk now. What grows with history (versions, archives, blame)
        is read off the event loop, and only where it changed since the last look."""
        self._load()

    @work(group="memory-load", exit_on_error=False)
    async def _load(self) -> None:
        async with self._loading:  # one look at a time, each shown in the order it was made
            self._show(await self._look())

    async def _files(self) -> tuple[MemoryText | None, str | None, str]:
        """MEMORY.md (or why it cannot be read) and INSTRUCTIONS.md: two files of bounded
        size, read again at every look."""
        memory, instructions = self._documents
        try:
            return await memory.read(), None, (await instructions.read()).text
        except OSError as exc:  # another owner, or a folder: say so, never crash
            return None, str(exc), (await instructions.read()).text

    async def _look(self) -> _Loaded:
        store = async_store(self.app)
        memory, problem, instructions = await self._files()
        history = await self._history.look(store)
        versions = await self._versions.look(store)
        lines = None
        if self.blamed:
            from memory.recall.provenance import blame

            lines = await asyncio.to_thread(blame, store.store)
        older = self._versions.older
        return _Loaded(memory, problem, instructions, history, versions, lines, older)

    def _show(self, loaded: _Loaded) -> None:
        if not self.is_attached:
            return
        memory = loaded.memory
        if memory is None:
            text, status = "*MEMORY.md cannot be read.*", loaded.problem or ""
        else:
            # A file anyone can edit: its escapes never reach the terminal.
            text = shown(memory.text.strip()) or "*MEMORY.md is empty: nothing has been saved yet.*"
            status = memory.problem or f"MEMORY.md · {len(memory.raw):,} bytes"
        pane = self.query_one(MemoryPane)
        pane.show(text)
        if not self.editing:
            pane.say(f"{status} · e: edit here · ctrl+e: edit in $EDITOR · 1–5: tabs")
        instructions = shown(loaded.instructions.strip()) or (
            "*INSTRUCTIONS.md is empty. Press e to write what Kept should always do: tone, "
            "language, format. It goes into every prompt, above the memory.*"
        )
        self.query_one("#instructions-view", Document).show(instructions)
        if loaded.history is not None:
            self.query_one(HistoryPane).show(loaded.history)
        lines = memory.text.splitlines() if memory is not None else None
        self.query_one(VersionsPane).show(loaded.versions, loaded.older, lines)
        if loaded.blame is not None:
            self.query_one(WhereFromPane).show(loaded.blame)

    @on(VersionsPane.LookAgain)
    def look_again(self, event: VersionsPane.LookAgain) -> None:
        if event.more:
            self._versions.shown += VERSIONS_SHOWN
        self.reload()

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

    @work(exclusive=True, group="watch", exit_on_error=False)
    async def watch_files(self) -> None:
        from memory.recall.watch import memory_changes

        async for changed in memory_changes(self.app.store, self._stop):
            if self.editing and self.document.path in changed:
                self.query_one(MemoryPane).say(
                    f"{self.document.name} changed on disk while you edit: saving will show both."
                )
            self.reload()

    # --- editing -----------------------------------------------------------------------------

    def _chosen(self) -> EditableDocument:
        """The file the active tab shows (MEMORY.md from any other tab): the one to edit."""
        active = self.query_one(TabbedContent).active
        return next((d for d in self._documents if d.tab == active), self._documents[0])

    async def _read(self, document: EditableDocument) -> MemoryText | None:
        """The file's text, or None, the reason shown, when it cannot be read."""
        try:
            return await document.read()
        except OSError as exc:
            self.app.notify(str(exc), title="Memory", severity="error", markup=False)
            return None

    async def action_edit(self) -> None:
        if self.editing:
            return
        document = self._chosen()
        base = await self._read(document)
        if base is None or self.editing:  # unreadable, or an edit began meanwhile
            return
        self.document, self.base = document, base
        self.query_one(TabbedContent).active = EDITOR_TAB
        editor = self.query_one(MemoryPane).editor
        editor.load_text(base.text)
        self._set_editing(True)
        editor.focus()

    def _set_editing(self, editing: bool) -> None:
        self.editing = editing
        pane = self.query_one(MemoryPane)
        pane.edit(editing)
        pane.say(f"Editing {self.document.name}: ctrl+s saves · esc cancels" if editing else "")
        if not editing:
            self.reload()

    def action_leave(self) -> None:
        if self.editing:
            self._set_editing(False)
        else:
            self.app.pop_screen()

    def action_save(self) -> None:
        if self.editing and self.base is not None:
            self._save(self.query_one(MemoryPane).editor.text, self.base)

    def _save(self, text: str, base: MemoryText) -> None:
        self._write(self.document, text, base)

    @work(group="memory-files", exit_on_error=False)
    async def _write(self, document: EditableDocument, text: str, base: MemoryText) -> None:
        """Through the async store: its lock waits, off the loop, while another Kept process
        writes."""
        try:
            on_disk = await document.save(text, base)
        except OSError as exc:  # the edit stays in the editor
            self.app.notify(
                f"{document.name} not saved: {exc}", title="Memory", severity="error", markup=False
            )
            return
        self._written(document, text, on_disk)

    def _written(self, document: EditableDocument, text: str, on_disk: MemoryText | None) -> None:
        if on_disk is None:
            self.app.notify(
                f"{document.name} saved; the previous text is a version.",
                title="Memory",
                markup=False,
            )
            self._set_editing(False)
            if document.tab != EDITOR_TAB:
                # Back where the edit began (focus follows, or the tab would).
                self.query_one(TabbedContent).active = document.tab
                self.query_one(f"#{document.tab} VerticalScroll").focus()
            return

        def chosen(choice: str | None) -> None:
            if choice == "mine":
                self._save(text, on_disk)
            elif choice == "theirs":
                self._discard(document, text)
            else:  # keep editing, now against what is on disk
                self.base = on_disk
                if not self.editing:
                    self.query_one(MemoryPane).editor.load_text(text)
                    self._set_editing(True)

        self.app.push_screen(ConflictDialog(text, on_disk.text, document.name), chosen)

    @work(group="memory-files", exit_on_error=False)
    async def _discard(self, document: EditableDocument, text: str) -> None:
        """The user kept what is on disk: their edit is still kept, as a version."""
        try:
            await document.keep(text)
        except OSError as exc:  # the edit stays in the editor
            self.app.notify(
                f"Your edit could not be kept as a version: {exc}",
                title="Memory",
                severity="error",
                markup=False,
            )
            return
        self._set_editing(False)

    async def action_external_edit(self) -> None:
        """Edit in $EDITOR (or $VISUAL, else vi); the save is checked like an edit here."""
        document = self._chosen()
        base = await self._read(document)
        if base is None:
            return
        self.document = document
        text = self._edit_outside(base.text, prefix=document.name.removesuffix(".md") + "-")
        if text is not None and text != base.text:
            self._save(text, base)

    def _edit_outside(self, text: str, *, prefix: str) -> str | None:
        """`text` as the editor saved it, or None (said) when no editor could be run."""
        editor = os.environ.get("VISUAL") or os.environ.get("EDITOR") or "vi"
        fd, name = tempfile.mkstemp(prefix=prefix, suffix=".md")
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as f:
                f.write(text)
            try:
                with self.app.suspend():
                    subprocess.run([*shlex.split(editor), name], check=False)
            except SuspendNotSupported:
                self.app.notify(
                    "This terminal cannot hand over to an editor; press e to edit here.",
                    severity="warning",
                    markup=False,
                )
                return None
            except OSError as exc:
                self.app.notify(
                    f"Could not start {editor!r}: {exc.strerror}. Set $EDITOR.",
                    severity="error",
                    markup=False,
                )
                return None
            with open(name, encoding="utf-8", errors="replace") as f:
                return f.read()
        finally:
            os.unlink(name)
