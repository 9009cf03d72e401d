"""A Markdown document drawn as one piece of text: /memory's MEMORY.md, INSTRUCTIONS.md and
History. Textual's Markdown mounts a widget per block and per list item, and MEMORY.md at
its budget (some 300 bullets) took most of a second to lay out, on the event loop, at each
change; one Static is laid out at once, whatever the length, and drawn again only when its
text or its width changes."""

from __future__ import annotations

import re
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

    def show(self, markdown: str) -> None:
        """Draw `markdown` unless it is what is shown: most looks at a file find it as it was."""
        if markdown != self.source:
            self.update(markdown)


def shown(text: str) -> str:
    """Markdown that shows every character typed: `<transcript>` would be taken for HTML
    and vanish, so angle brackets are escaped (not in code, where a backslash would show)."""
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


async def _done() -> None:
    """Nothing to wait for: the text is drawn with the next frame."""
