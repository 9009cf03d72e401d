"""A file changed on disk while you edited it: both texts, side by side, and a choice."""

from __future__ import annotations

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.widgets import Button, Label, Static

from app.screens.dialog import Dialog


class ConflictDialog(Dialog[str]):
    """Dismisses with "mine", "theirs" or "edit"."""

    BINDINGS = [Binding("escape", "dismiss('edit')", "Keep editing")]

    def __init__(self, mine: str, theirs: str, name: str = "MEMORY.md") -> None:
        super().__init__()
        self.mine, self.theirs, self.file = mine, theirs, name

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog wide"):
            yield Label(
                f"{self.file} changed on disk while you were editing it", classes="dialog-title"
            )
            with Horizontal(id="both"):
                with VerticalScroll(classes="side"):
                    yield Label("Your edit", classes="side-title")
                    yield Static(self.mine, markup=False, id="mine")
                with VerticalScroll(classes="side"):
                    yield Label("Now on disk", classes="side-title")
                    yield Static(self.theirs, markup=False, id="theirs")
            with Horizontal(classes="buttons"):
                yield Button("Keep mine", id="mine-button", variant="primary")
                yield Button("Take the one on disk", id="theirs-button")
                yield Button("Keep editing", id="edit-button")
            yield Label("Whichever you choose, the other text stays in versions/.", classes="hint")

    @on(Button.Pressed)
    def chosen(self, event: Button.Pressed) -> None:
        self.dismiss(str(event.button.id).removesuffix("-button"))
