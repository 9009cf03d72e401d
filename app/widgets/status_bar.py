"""The status line: model, memory state, session tokens and cost."""

from __future__ import annotations

from textual.reactive import reactive
from textual.widgets import Static


class StatusBar(Static):
    """Shows what the chat screen binds to it; it decides nothing."""

    model_label: reactive[str] = reactive("")
    memory: reactive[str] = reactive("memory: ready")
    tokens: reactive[int] = reactive(0)
    cost: reactive[float] = reactive(0.0)
    activity: reactive[str] = reactive("")
    private: reactive[bool] = reactive(False)

    def watch_private(self, private: bool) -> None:
        self.set_class(private, "private")

    def render(self) -> str:
        parts = [self.model_label, self.memory, f"{self.tokens:,} tokens", f"${self.cost:.4f}"]
        if self.private:
            parts.insert(0, "PRIVATE · never saved to memory")
        if self.activity:
            parts.insert(0, self.activity)
        return " · ".join(p for p in parts if p)
