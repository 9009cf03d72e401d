"""A change to MEMORY.md as a diff, with the choices that fit it: undo a saved change;
accept, edit or reject a proposed one; accept or reject a tidy. Below the diff, where the
change kept them, the user's words each line stands on and the edits that were not kept
(app.words.evidence): the user's text, shown as typed, never read as markup."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from rich.syntax import Syntax
from rich.text import Text
from textual import events, on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.widgets import Button, Label, Static, TextArea

from app.screens.dialog import Dialog
from app.words.evidence import Part

_MOST, _LEAST = 24, 3  # the rows the diff may take, at most and at least

# How each part of the account of a change's evidence looks (styles, never markup).
_STYLES: dict[Part, str] = {"title": "bold", "line": "", "quote": "italic", "note": "dim"}


def why_shown(parts: Sequence[tuple[Part, str]]) -> Vertical:
    """The account of a change's evidence (app.words.evidence.why_parts): one text a part,
    styled, its indent kept when it wraps; the quotes are the user's words, so nothing in
    them is read as markup."""
    shown = []
    for part, line in parts:
        text = line.lstrip(" ")
        widget = Static(Text(text, style=_STYLES[part]), markup=False, classes=f"why-{part}")
        widget.styles.padding = (0, 0, 0, len(line) - len(text))
        shown.append(widget)
    box = Vertical(*shown, id="change-why")
    box.styles.height = "auto"
    box.styles.margin = (1, 0, 0, 0)
    return box


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
        why: Sequence[tuple[Part, str]] = (),
    ) -> None:
        super().__init__()
        self.title_text, self.diff, self.new_text = title, diff, new_text
        self.choices, self.note, self.editable = choices, note, editable
        self.why = tuple(why)  # the words each line stands on (app.words.evidence)

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
                if self.why:
                    yield why_shown(self.why)
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

    def on_mount(self) -> None:
        self.call_after_refresh(self._fit)

    def on_resize(self) -> None:
        self.call_after_refresh(self._fit)

    def _fit(self) -> None:
        """The diff (with the words below it) and the editor scroll within what the screen
        leaves them, so the title, the note and the buttons stay in sight (at 80x24 too)."""
        dialog = self.query_one("#change")
        scroll = self.query_one("#change-diff")
        buttons = self.query_one(".buttons")
        editor = self.query_one("#change-editor")
        shown = scroll if scroll.display else editor
        above = shown.region.y - dialog.region.y  # the top border, the title, the note
        below = buttons.outer_size.height + buttons.styles.margin.top
        below += dialog.styles.gutter.bottom
        room = max(_LEAST, self.size.height - above - below)
        scroll.styles.max_height = min(_MOST, room)
        editor.styles.max_height = room

    @on(Button.Pressed)
    def chosen(self, event: Button.Pressed) -> None:
        ident = str(event.button.id)
        editor = self.query_one("#change-editor", TextArea)
        if ident == "edit":
            self.query_one("#change-diff").display = False
            editor.display = True
            editor.focus()
            event.button.display = False
            self.call_after_refresh(self._fit)
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
