"""A change to MEMORY.md as a diff, with the choices that fit it: undo a saved change;
accept, edit or reject a proposed one; accept or reject a tidy."""

from __future__ import annotations

from dataclasses import dataclass

from rich.syntax import Syntax
from textual import events, on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.widgets import Button, Label, Static, TextArea

from app.screens.dialog import Dialog


@dataclass(frozen=True)
class Decision:
    choice: str  # a button's id: "undo", "keep", "accept", "reject", "later"
    text: str  # the new MEMORY.md, as the user left it if they edited it


class ChangeDialog(Dialog[Decision]):
    """Dismisses with the chosen button's id, and the (possibly edited) new text."""

    BINDINGS = [Binding("escape", "leave", "Close")]

    def __init__(
        self,
        title: str,
        diff: str,
        new_text: str,
        choices: list[tuple[str, str]],
        *,
        note: str = "",
        editable: bool = False,
    ) -> None:
        super().__init__()
        self.title_text, self.diff, self.new_text = title, diff, new_text
        self.choices, self.note, self.editable = choices, note, editable

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog wide", id="change"):
            yield Label(self.title_text, classes="dialog-title", markup=False)
            if self.note:
                yield Static(self.note, markup=False, id="change-note")
            with VerticalScroll(id="change-diff"):
                yield Static(
                    Syntax(self.diff, "diff", theme="ansi_dark", word_wrap=True)
                    if self.diff
                    else "MEMORY.md stays as it is.",
                    id="diff-text",
                )
            editor = TextArea(
                self.new_text, id="change-editor", language="markdown", soft_wrap=True
            )
            editor.display = False
            yield editor
            with Horizontal(classes="buttons"):
                for ident, label in self.choices:
                    yield Button(
                        label,
                        id=ident,
                        variant="primary" if ident in ("accept", "keep") else "default",
                    )
                if self.editable:
                    yield Button("Edit", id="edit")

    @on(Button.Pressed)
    def chosen(self, event: Button.Pressed) -> None:
        ident = str(event.button.id)
        editor = self.query_one("#change-editor", TextArea)
        if ident == "edit":
            self.query_one("#change-diff").display = False
            editor.display = True
            editor.focus()
            event.button.display = False
            return
        self.dismiss(Decision(ident, editor.text))

    def on_key(self, event: events.Key) -> None:
        """A choice's first letter presses its button (a to accept, r to reject, u to
        undo…), unless the editor is open and the letter is text."""
        if isinstance(self.focused, TextArea) or not event.character:
            return
        for button in self.query(Button):
            label = str(button.label)
            if button.display and label[:1].lower() == event.character.lower():
                event.stop()
                button.press()
                return

    def action_leave(self) -> None:
        self.dismiss(Decision("later", self.new_text))
