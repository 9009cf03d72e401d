"""The model wants to run a tool of the user's: which one, from which server, with what,
and the user's answer: y once, a always for this tool, n no (Esc is no)."""

from __future__ import annotations

import json

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.widgets import Button, Label, Static

from app.screens.dialog import Dialog
from catalog.mcp import McpTool
from catalog.sanitize import clean_text
from memory.chat.turn import Approval

SHOWN_ARGUMENTS = 4_000  # characters of the arguments drawn; the model's are sent whole


def pretty_arguments(arguments: str, limit: int = SHOWN_ARGUMENTS) -> str:
    """The model's arguments as indented JSON (as sent when they are not JSON), clean."""
    try:
        text = json.dumps(json.loads(arguments or "{}"), indent=2, ensure_ascii=False)
    except ValueError:
        text = arguments
    text = clean_text(text)
    return text if len(text) <= limit else text[:limit] + "…"


class ConsentDialog(Dialog[Approval]):
    """Dismisses with the user's Approval."""

    DEFAULT_CSS = """
    #consent-arguments { height: auto; max-height: 12; border: round $panel; padding: 0 1; }
    """
    BINDINGS = [
        Binding("y", "choose('once')", "Yes, once"),
        Binding("a", "choose('always')", "Always"),
        Binding("n,escape", "choose('deny')", "No"),
    ]

    def __init__(self, tool: McpTool, arguments: str) -> None:
        super().__init__()
        self.tool, self.arguments = tool, arguments

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog"):
            yield Label(
                f"Run {self.tool.name} from {self.tool.server}?",
                classes="dialog-title",
                markup=False,
            )
            if self.tool.description:
                yield Static(self.tool.description[:300], markup=False)
            with VerticalScroll(id="consent-arguments"):
                yield Static(pretty_arguments(self.arguments), markup=False)
            with Horizontal(classes="buttons"):
                yield Button("Yes, once (y)", id="once", variant="primary")
                yield Button("Always (a)", id="always")
                yield Button("No (n)", id="deny")
            yield Label(
                "Its result goes to the model. Always: this tool runs without asking "
                "from now on (kept in config.toml).",
                classes="hint",
            )

    def action_choose(self, choice: str) -> None:
        self.dismiss(Approval(choice))

    @on(Button.Pressed)
    def chosen(self, event: Button.Pressed) -> None:
        self.dismiss(Approval(str(event.button.id)))
