"""One message in the chat: who said it, and what. Replies are Markdown, streamed while they
arrive; the user's words and Kept's notices are plain text, so a new session's first
screen never pays for loading the Markdown widget."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from textual.app import ComposeResult
from textual.containers import Vertical
from textual.widgets import Static

from memory.sanitize import clean_text

if TYPE_CHECKING:
    from textual.widgets import Markdown

PLAIN = {"user", "info", "notice", "error"}
DRAW_SHARE = 0.25  # of the time, at most, spent drawing a streamed reply
MAX_PAUSE = 0.5  # seconds: what arrived is drawn within this, however long drawing takes
# A streamed reply's Markdown is sealed once it holds this many blocks, and the rest of the
# reply goes on in a new one: each frame's layout and parse cover only the open part.
SEAL_BLOCKS = 16


def attachment_line(record: object) -> str:
    """What a sent message's attachment is, in one line: its name, pages and size (a
    journal edited by hand may hold anything; what is missing is left out)."""
    from memory.chat.attachments import display_name, human_size  # not before the first frame

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
        self._pending: list[str] = []
        self._unwritten = ""  # flushed, not yet appended to the Markdown
        self._writer: asyncio.Task[None] | None = None
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
            from app.widgets.reply_part import ReplyPart

            yield ReplyPart(self.text)

    @property
    def markdown(self) -> Markdown:
        """The reply's first (or only) Markdown widget."""
        return self._parts()[0]

    def _parts(self) -> list[Markdown]:
        """The Markdown widgets the reply is drawn in: the sealed ones, then the open one."""
        from textual.widgets import Markdown

        return list(self.query_children(Markdown))

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
        times as long again as it took (at most MAX_PAUSE): the keys and the stream keep
        at least three quarters of the time. `now` draws whatever the pace."""
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
        self._unwritten += chunk
        if self._writer is None or self._writer.done():
            self._writer = asyncio.create_task(self._write())
        await asyncio.sleep(0)  # the writer starts now; the stream goes on meanwhile

    async def _write(self) -> None:
        """Append what was flushed to the open Markdown widget, all that came meanwhile at
        once, sealing it when it has grown long."""
        while self._unwritten and self.is_attached:
            chunk, self._unwritten = self._unwritten, ""
            part = self._parts()[-1]
            await part.append(chunk)
            if len(part.children) >= SEAL_BLOCKS:
                await self._seal(part)

    async def _written(self) -> None:
        """Wait until what was flushed is in the Markdown widgets. The writer is shielded:
        a caller cancelled meanwhile (a failed attempt's pump) leaves it writing, and the
        next wait finds it done, never cancelled."""
        writer = self._writer
        if writer is None:
            return
        if not writer.done():
            await asyncio.shield(writer)
        if self._writer is writer:
            self._writer = None

    async def _seal(self, part: Markdown) -> None:
        """Leave `part` its finished blocks and go on in a new Markdown widget, from the
        last finished block whose top margin is nothing (so the two look as one): only the
        last block of a stream may still change, as Markdown.append itself assumes."""
        from textual.widgets.markdown import MarkdownBlock

        from app.widgets.reply_part import ReplyPart

        blocks = [block for block in part.children if isinstance(block, MarkdownBlock)]
        cut = next(
            (i for i in range(len(blocks) - 2, 0, -1) if blocks[i].styles.margin.top == 0), None
        )
        if cut is None:
            return
        start = blocks[cut].source_range[0]
        rest = "".join(part.source.splitlines(keepends=True)[start:])
        with self.app.batch_update():  # no frame shows the reply half moved
            # Appended, not given whole: an append goes on from the start of the last
            # block, which may still grow (given whole, from its last line only: a block
            # already two lines long lost all but the lines after it).
            following = ReplyPart()
            await self.mount(following, after=part)
            await following.append(rest)
            await part.remove_children(blocks[cut:])

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
        self._unwritten = ""
        await self._written()
        self.text = ""
        await self._redraw("")

    async def _redraw(self, text: str) -> None:
        """Draw `text` whole in the first Markdown widget, without the others."""
        first, *others = self._parts()
        if others:
            await self.remove_children(others)
        await first.update(text)

    async def finish(self, final_text: str | None = None) -> None:
        """Stop streaming; render the whole text again only if it differs from what was
        streamed (a long reply re-rendered whole would stall the screen)."""
        await self.flush(now=True)
        await self._written()
        if final_text is not None and final_text != self.text:
            self.text = final_text
            await self._redraw(final_text)
