"""The prompt box: multi-line input, Enter to send, recall of earlier prompts."""

from __future__ import annotations

from dataclasses import dataclass

from textual import events
from textual.binding import Binding
from textual.message import Message
from textual.widgets import TextArea


class Composer(TextArea):
    """Enter sends; Shift+Enter, Alt+Enter or Ctrl+J adds a line; Up/Down recall prompts."""

    BINDINGS = [
        Binding("ctrl+j,shift+enter,alt+enter", "newline", "New line", show=False),
        Binding("tab", "complete", "Complete command", show=False),
    ]

    @dataclass
    class Submitted(Message):
        text: str

    def __init__(self, prompts: list[str] | None = None, **kwargs) -> None:
        super().__init__(soft_wrap=True, show_line_numbers=False, tab_behavior="focus",
                         compact=True, **kwargs)
        self.prompts: list[str] = prompts or []
        self._recall: int | None = None
        self.commands: list[str] = []

    async def _on_key(self, event: events.Key) -> None:
        if event.key == "enter":
            event.stop()
            event.prevent_default()
            self._submit()
            return
        if event.key == "up" and self.cursor_location[0] == 0 and self.prompts:
            event.stop()
            event.prevent_default()
            self._step_history(-1)
            return
        if event.key == "down" and self._recall is not None and \
                self.cursor_location[0] == self.document.line_count - 1:
            event.stop()
            event.prevent_default()
            self._step_history(1)
            return
        await super()._on_key(event)

    def _submit(self) -> None:
        text = self.text.strip()
        if not text:
            return
        if not self.prompts or self.prompts[-1] != text:
            self.prompts.append(text)
        self._recall = None
        self.clear()
        self.post_message(self.Submitted(text))

    def _step_history(self, step: int) -> None:
        index = len(self.prompts) if self._recall is None else self._recall
        index = max(0, min(len(self.prompts), index + step))
        self._recall = None if index == len(self.prompts) else index
        self.load_text("" if self._recall is None else self.prompts[index])
        self.move_cursor(self.document.end)

    def action_newline(self) -> None:
        self.insert("\n")

    def matching_commands(self) -> list[str]:
        text = self.text
        if not text.startswith("/") or " " in text or "\n" in text:
            return []
        return [c for c in self.commands if c.startswith(text)]

    def action_complete(self) -> None:
        matches = self.matching_commands()
        if matches:
            common = matches[0]
            for match in matches[1:]:
                while not match.startswith(common):
                    common = common[:-1]
            completion = matches[0] + " " if len(matches) == 1 else common
            self.load_text(completion)
            self.move_cursor(self.document.end)
        else:
            self.app.action_focus_next()
