"""One message in the chat: who said it, and what, as Markdown (streamed while it arrives)."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.containers import Vertical
from textual.widgets import Markdown, Static
from textual.widgets.markdown import MarkdownStream


class MessageView(Vertical):
    """A user or assistant message, or a notice from Kept."""

    def __init__(self, who: str, text: str = "", *, kind: str = "assistant") -> None:
        super().__init__(classes=kind)
        self.who = who
        self.text = text
        self._stream: MarkdownStream | None = None
        self._pending: list[str] = []

    def compose(self) -> ComposeResult:
        yield Static(self.who, classes="who", markup=False)
        yield Markdown(self.text)

    @property
    def markdown(self) -> Markdown:
        return self.query_one(Markdown)

    def set_who(self, who: str) -> None:
        self.who = who
        self.query_one(".who", Static).update(who)

    # --- streaming: chunks are buffered and written once per frame -------------------------

    def feed(self, piece: str) -> None:
        """Take a chunk now; it is drawn at the next flush."""
        self._pending.append(piece)

    async def flush(self) -> None:
        if not self._pending:
            return
        chunk = "".join(self._pending)
        self._pending.clear()
        self.text += chunk
        if self._stream is None:
            self._stream = Markdown.get_stream(self.markdown)
        await self._stream.write(chunk)

    async def restart(self) -> None:
        """Drop what was streamed so far (the model that sent it failed)."""
        self._pending.clear()
        if self._stream is not None:
            await self._stream.stop()
            self._stream = None
        self.text = ""
        await self.markdown.update("")

    async def finish(self, final_text: str | None = None) -> None:
        """Stop streaming and render the whole text once: appended fragments can differ in
        small ways (spacing at a chunk's edge) from the document parsed whole."""
        await self.flush()
        if self._stream is not None:
            await self._stream.stop()
            self._stream = None
        if final_text is not None:
            self.text = final_text
        await self.markdown.update(self.text)
