"""A piece of a streamed reply: Textual's Markdown, laid out at a cost that does not grow
with the reply. Imported when the first reply is drawn, not before the first frame."""

from __future__ import annotations

from textual.geometry import Size
from textual.widgets import Markdown


class ReplyPart(Markdown):
    """Markdown whose height is its blocks' alone.

    Textual lays out a container of auto-height children against the height around it, so
    every frame a growing reply changes that height and each part above is laid out again,
    block by block. A reply's blocks are as tall as their text whatever the height around
    them, so a part is laid out against none: a finished part's layout is then reused.
    """

    def get_content_height(self, container: Size, viewport: Size, width: int) -> int:
        return super().get_content_height(Size(container.width, 0), viewport, width)
