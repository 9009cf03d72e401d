"""/model: pick the model to chat with. Hidden consolidation models never appear."""

from __future__ import annotations

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.widgets import Label, OptionList
from textual.widgets.option_list import Option

from app.screens.dialog import Dialog
from app.widgets.status_bar import clip
from catalog import Catalog
from catalog.config import plain


class ModelPicker(Dialog[str | None]):
    BINDINGS = [Binding("escape", "dismiss(None)", "Close")]

    def __init__(self, catalog: Catalog, current: str) -> None:
        super().__init__()
        self.catalog = catalog
        self.current = current

    def compose(self) -> ComposeResult:
        options = []
        # A model of the user's whose label reads like another's (a built-in's, say) is
        # marked as theirs, with its id: two rows never look the same.
        labels = [plain(e.label) for e in self.catalog.visible()]
        for entry in self.catalog.visible():
            alike = entry.user and labels.count(plain(entry.label)) > 1
            key = self.catalog.route(entry).key
            line = Text()
            # One line of at most 48 columns, so that "no key" never wraps at 60.
            line.append("● " if entry.id == self.current else "  ", style="bold")
            # Each column cut to leave a space before the next: a long label (a model
            # file's name) never runs into its tier.
            label = f"{clip(entry.label, 13)} (yours)" if alike else clip(entry.label, 21)
            line.append(f"{label:22}", style="bold")
            line.append(f"{clip(entry.tier, 9):10}{clip(entry.gateway, 9):10}")
            if not self.catalog.route(entry).gateway.needs_key:
                line.append("local", style="green")
            else:
                line.append(
                    "key ✓" if key.usable else "no key", style="green" if key.usable else "red"
                )
            mine = f"your config.toml model {entry.id!r}: " if alike else ""
            line.append(f"\n  {mine}{entry.description}", style="dim")
            options.append(Option(line, id=entry.id))
        with Vertical(classes="dialog"):
            yield Label("Choose a model", classes="dialog-title")
            # Above the list: a long list on a short terminal cannot push it out of sight.
            yield Label(
                "Enter to choose · Esc to close · a model without a key falls back "
                "to the next in its chain",
                classes="hint picker-hint",
            )
            yield OptionList(*options, id="models")

    def on_mount(self) -> None:
        models = self.query_one(OptionList)
        ids = [e.id for e in self.catalog.visible()]
        if self.current in ids:
            models.highlighted = ids.index(self.current)
        models.focus()

    @on(OptionList.OptionSelected)
    def chosen(self, event: OptionList.OptionSelected) -> None:
        self.dismiss(event.option.id)
