"""/help: commands and keys."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.widgets import Markdown

from app.commands import SLASH_COMMANDS
from app.screens.dialog import Dialog

KEYS = """
| key | does |
|---|---|
| Enter | send |
| Shift+Enter, Alt+Enter, Ctrl+J | new line |
| Up / Down | recall earlier prompts |
| Tab | complete a /command |
| Esc | cancel the reply being written |
| Ctrl+N | new session |
| Ctrl+O | choose model |
| F2 | every session: open, continue, export or delete one |
| Ctrl+R | see the last memory change (and undo it), or review a proposed one |
| Ctrl+P | command palette |
| Ctrl+Q | quit (nothing is lost) |
"""


def help_markdown() -> str:
    rows = "\n".join(f"| `{c.name}` | {c.help} |" for c in SLASH_COMMANDS)
    return (
        "# Kept\n\nKept remembers you across sessions: when you start a new session, the "
        "finished one is summarised into `MEMORY.md` and `HISTORY.md` in the background.\n\n"
        f"## Commands\n\n| command | does |\n|---|---|\n{rows}\n\n## Keys\n{KEYS}"
    )


class HelpScreen(Dialog[None]):
    BINDINGS = [Binding("escape,q,f1", "dismiss(None)", "Close")]

    def compose(self) -> ComposeResult:
        with VerticalScroll(classes="dialog"):
            yield Markdown(help_markdown())
