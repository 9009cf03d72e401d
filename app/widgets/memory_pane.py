"""/memory's first tab: MEMORY.md as it is on disk, the editor that takes its place while a
file is edited (MEMORY.md or INSTRUCTIONS.md: there is one editor), and a status line."""

from __future__ import annotations

from typing import TYPE_CHECKING

from textual.containers import Vertical, VerticalScroll
from textual.widgets import Static, TextArea

from app.widgets.document import Document

if TYPE_CHECKING:
    from textual.app import ComposeResult


class MemoryPane(Vertical):
    """The view, or the editor; the status line below both."""

    DEFAULT_CSS = "MemoryPane { height: auto; }"

    def compose(self) -> ComposeResult:
        with VerticalScroll(id="memory-scroll"):
            yield Document(id="memory-view")
        yield TextArea(id="editor", language="markdown", soft_wrap=True)
        yield Static("", id="memory-status", markup=False)

    def on_mount(self) -> None:
        self.query_one(TextArea).display = False

    @property
    def editor(self) -> TextArea:
        return self.query_one(TextArea)

    def show(self, markdown: str) -> None:
        """Draw MEMORY.md (as Markdown) unless it is what is shown."""
        self.query_one(Document).show(markdown)

    def say(self, status: str) -> None:
        self.query_one("#memory-status", Static).update(status)

    def edit(self, editing: bool) -> None:
        """The editor in the view's place, or the view back."""
        self.query_one("#memory-scroll").display = not editing
        self.editor.display = editing
