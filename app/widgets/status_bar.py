"""The status line: model, memory state, session tokens and cost."""

from __future__ import annotations

from rich.cells import cell_len, set_cell_size
from textual.geometry import Size
from textual.reactive import reactive
from textual.widgets import Static

SEPARATOR = " · "
PRIVATE, PRIVATE_SHORT = "PRIVATE · never saved to memory", "PRIVATE"
MIN_LABEL = 8  # cells of the model's label kept before anything else gives way


def clip(text: str, width: int) -> str:
    """`text` within `width` cells, its end replaced by an ellipsis when it is cut."""
    if cell_len(text) <= width:
        return text
    return set_cell_size(text, max(width - 1, 0)) + "…" if width > 0 else ""


class StatusBar(Static):
    """Shows what the chat screen binds to it; it decides nothing. Always one line: when it
    does not fit, the private note is shortened, then the model's label is cut, then the
    cost goes, so that the memory state and the tokens stay in sight."""

    model_label: reactive[str] = reactive("")
    memory: reactive[str] = reactive("memory: ready")
    tokens: reactive[int] = reactive(0)
    cost: reactive[float] = reactive(0.0)
    activity: reactive[str] = reactive("")
    private: reactive[bool] = reactive(False)

    def watch_private(self, private: bool) -> None:
        self.set_class(private, "private")

    def get_content_height(self, container: Size, viewport: Size, width: int) -> int:
        return 1

    def render(self) -> str:
        width = self.size.width or 10_000  # before the first layout: no limit yet
        label = self.model_label
        after = [self.memory, f"{self.tokens:,} tokens"]
        cost = [f"${self.cost:.4f}"]
        # From the fullest line to the barest: the private note is shortened before the
        # label is cut, the label is cut (to no less than MIN_LABEL) before the cost goes.
        shortest = min(MIN_LABEL, cell_len(label))
        candidates = [
            (PRIVATE, cost, cell_len(label)),
            (PRIVATE_SHORT, cost, cell_len(label)),
            (PRIVATE_SHORT, cost, shortest),
            (PRIVATE_SHORT, [], shortest),
        ]
        line = ""
        for note, tail, least in candidates:
            before = [self.activity, note if self.private else ""]
            rest = SEPARATOR.join(p for p in [*before, *after, *tail] if p)
            room = width - cell_len(rest) - (len(SEPARATOR) if label else 0)
            line = SEPARATOR.join(p for p in [*before, clip(label, room), *after, *tail] if p)
            if room >= least:
                return line
        return clip(line, width)
