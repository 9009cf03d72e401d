"""A past session's transcript, opened at the messages a line of memory most likely came
from (they are marked), below the history entry that session left."""

from __future__ import annotations

from typing import TYPE_CHECKING

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import Screen
from textual.widgets import Footer, Static

from app.widgets.message import MessageView

if TYPE_CHECKING:
    from collections.abc import Sequence

    from app.main import KeptApp
    from memory.message import Message


class TranscriptScreen(Screen[None]):
    BINDINGS = [Binding("escape", "app.pop_screen", "Back")]

    app: KeptApp

    def __init__(self, title: str, messages: Sequence[Message], marked: list[int]) -> None:
        super().__init__()
        self.title_text, self.messages, self.marked = title, messages, marked

    def compose(self) -> ComposeResult:
        yield Static(self.title_text, id="transcript-title", markup=False)
        with VerticalScroll(id="transcript"):
            for index, message in enumerate(self.messages):
                role = message.get("role")
                attachments = message.get("attachments") if role == "user" else None
                if role not in ("user", "assistant") or not (message.get("content") or attachments):
                    continue
                who = "You" if role == "user" else str(message.get("model") or "Assistant")
                if index in self.marked:
                    who = f"▶ {who} — this line most likely came from here"
                view = MessageView(
                    who,
                    str(message.get("content") or ""),
                    kind="user" if role == "user" else "assistant",
                    attachments=attachments,
                )
                view.id = f"message-{index}"
                view.set_class(index in self.marked, "marked")
                yield view
        yield Footer()

    def on_mount(self) -> None:
        if self.marked:
            target = self.query_one(f"#message-{min(self.marked)}")
            self.call_after_refresh(
                self.query_one("#transcript").scroll_to_widget, target, animate=False, top=True
            )
