"""A tool call in the chat: which tool of which server, and how it went, collapsed; open
it for the arguments and the result."""

from __future__ import annotations

from textual.markup import escape
from textual.widgets import Collapsible, Static

from app.screens.consent import pretty_arguments
from memory.chat.turn import ToolRun

SHOWN_RESULT = 4_000  # characters of a result drawn here; the model saw up to its own cap


class ToolCallView(Collapsible):
    """One ToolRun, collapsed to its title: "tool web · weather — ran"."""

    DEFAULT_CSS = """
    ToolCallView { margin: 0 0 0 2; padding: 0; border: none; background: transparent; }
    ToolCallView .tool-part { color: $text-muted; }
    """

    def __init__(self, run: ToolRun) -> None:
        result = run.result
        if len(result) > SHOWN_RESULT:
            result = result[:SHOWN_RESULT] + f"… ({len(run.result):,} characters)"
        super().__init__(
            Static(
                f"arguments: {pretty_arguments(run.arguments)}", markup=False, classes="tool-part"
            ),
            Static(f"result: {result}", markup=False, classes="tool-part"),
            title=escape(f"tool {run.server} · {run.tool} — {run.status}"),  # names, not markup
            collapsed=True,
        )
        self.run = run
