"""One message in the chat: who said it, and what. Replies are Markdown, streamed while they
arrive; the user's words and Kept's notices are plain text, so a new session's first
screen never pays for loading the Markdown widget."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from textual.app import ComposeResult
from textual.containers import Vertical
from textual.widgets import Static

from memory.sanitize import clean_text

if TYPE_CHECKING:
    from textual.widgets import Markdown
    from textual.widgets.markdown import MarkdownStream

PLAIN = {"user", "info", "notice", "error"}
DRAW_SHARE = 0.25  # of the time, at most, spent drawing a streamed reply
MAX_PAUSE = 0.5  # seconds: what arrived is drawn within this, however long drawing takes


def attachment_line(record: object) -> str:
    """What a sent message's attachment is, in one line: its name, pages and size (a
    journal edited by hand may hold anything; what is missing is left out)."""
    from memory.attachments import display_name, human_size  # not before the first frame

    if not isinstance(record, dict):
        return "+ (an attachment this journal does not describe)"
    parts = [clean_text(display_name(record))]
    pages = record.get("pages")
    if isinstance(pages, int) and not isinstance(pages, bool) and pages > 0:
        parts.append(f"{pages} page" + ("s" if pages != 1 else ""))
    size = record.get("size")
    if isinstance(size, int) and not isinstance(size, bool) and size >= 0:
        parts.append(human_size(size))
    return "+ " + " · ".join(parts)


class MessageView(Vertical):
    """A user or assistant message, or a notice from Kept."""

    clock: Callable[[], float] = staticmethod(time.monotonic)

    def __init__(
        self, who: str, text: str = "", *, kind: str = "assistant", attachments: Any = None
    ) -> None:
        super().__init__(classes=kind)
        self.kind = kind
        # A user message's attachments, as the journal names them.
        self.attachments: list[object] = attachments if isinstance(attachments, list) else []
        self.who = who
        self.text = text
        self._stream: MarkdownStream | None = None
        self._pending: list[str] = []
        self._next_draw = 0.0  # the clock time before which a flush does not draw
        self._drawing: float | None = None  # when the draw not yet on screen began

    def compose(self) -> ComposeResult:
        yield Static(self.who, classes="who", markup=False)
        if self.kind in PLAIN:
            if self.text or not self.attachments:
                yield Static(self.text, classes="body", markup=False)
            if self.attachments:
                lines = "\n".join(attachment_line(a) for a in self.attachments)
                yield Static(lines, classes="attachments", markup=False)
        else:
            from textual.widgets import Markdown

            yield Markdown(self.text)

    @property
    def markdown(self) -> Markdown:
        from textual.widgets import Markdown

        return self.query_one(Markdown)

    def set_who(self, who: str) -> None:
        self.who = who
        self.query_one(".who", Static).update(who)

    # --- streaming: chunks are buffered and drawn at most once per frame ---------------------

    def feed(self, piece: str) -> None:
        """Take a chunk now; it is drawn at the next flush, without any control character:
        a reply must never drive the terminal (window title, clipboard, screen)."""
        self._pending.append(clean_text(piece))

    async def flush(self, *, now: bool = False) -> None:
        """Draw what arrived since the last draw, once that draw is on screen and three
        times as long again as it took (at most MAX_PAUSE): a long reply's layout grows
        with each block, and the keys and the stream keep at least three quarters of the
        time. `now` draws whatever the pace."""
        if not self._pending or (not now and self.clock() < self._next_draw):
            return
        started = self.clock()
        # Until this draw is on screen; a draw never seen holds the next one no longer.
        self._next_draw = started + MAX_PAUSE
        self._drawing = started
        self.call_after_refresh(self._drawn, started)
        chunk = "".join(self._pending)
        self._pending.clear()
        self.text += chunk
        if self._stream is None:
            from textual.widgets import Markdown

            self._stream = Markdown.get_stream(self.markdown)
        await self._stream.write(chunk)

    def _drawn(self, started: float) -> None:
        if self._drawing != started:  # a later draw, or a restart, came meanwhile
            return
        self._drawing = None
        took = self.clock() - started
        self._next_draw = self.clock() + min((1 / DRAW_SHARE - 1) * took, MAX_PAUSE)

    async def restart(self) -> None:
        """Drop what was streamed so far (the model that sent it failed)."""
        self._pending.clear()
        self._next_draw, self._drawing = 0.0, None
        if self._stream is not None:
            await self._stream.stop()
            self._stream = None
        self.text = ""
        await self.markdown.update("")

    async def finish(self, final_text: str | None = None) -> None:
        """Stop streaming; render the whole text again only if it differs from what was
        streamed (a long reply re-rendered whole would stall the screen)."""
        await self.flush(now=True)
        if self._stream is not None:
            await self._stream.stop()
            self._stream = None
        if final_text is not None and final_text != self.text:
            self.text = final_text
            await self.markdown.update(final_text)
