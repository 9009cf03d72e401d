"""A Markdown document drawn as one piece of text: /memory's MEMORY.md, INSTRUCTIONS.md and
History. Textual's Markdown mounts a widget per block and per list item, and MEMORY.md at
its budget (some 300 bullets) took most of a second to lay out, on the event loop, at each
change; one Static is laid out at once, whatever the length, and drawn again only when its
text or its width changes."""

from __future__ import annotations

from typing import TYPE_CHECKING

from rich.markdown import Markdown as RichMarkdown
from textual.await_complete import AwaitComplete
from textual.widgets import Markdown, Static

from catalog.sanitize import clean_text

if TYPE_CHECKING:
    from textual.app import ComposeResult


class Document(Markdown):
    """Markdown as a single Static. A Markdown still (`source`, `update`), so that what
    reads a view's text reads it as before."""

    DEFAULT_CSS = """
    Document > Static { width: 1fr; height: auto; }
    """

    def __init__(self, markdown: str | None = None, *, id: str | None = None) -> None:
        super().__init__(markdown, id=id)
        self._body = Static("", markup=False)

    def compose(self) -> ComposeResult:
        yield self._body

    def update(self, markdown: str) -> AwaitComplete:
        """Show `markdown` (its escape sequences never reach the terminal)."""
        self._markdown = markdown
        self._table_of_contents = None
        self._body.update(RichMarkdown(clean_text(markdown), hyperlinks=False))
        return AwaitComplete(_done())


async def _done() -> None:
    """Nothing to wait for: the text is drawn with the next frame."""
