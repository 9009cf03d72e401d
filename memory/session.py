"""The live session: what the chat appends to, and what the model is shown of it."""

from __future__ import annotations

from typing import Any

from memory.journal import Journal, Segment
from memory.store import MemoryStore

CONTEXT_KEYS = ("role", "content", "tool_calls", "tool_call_id", "name")


def estimate_tokens(messages: list[dict[str, Any]]) -> int:
    """A cheap estimate (about 4 characters a token) for deciding when to compact."""
    return sum(len(str(m.get("content") or "")) + len(str(m.get("tool_calls") or ""))
               for m in messages) // 4 + 4 * len(messages)


class LiveSession:
    """An active session journal plus the window of it that the model sees."""

    def __init__(self, store: MemoryStore, journal: Journal) -> None:
        self.store = store
        self.journal = journal

    @classmethod
    def resume_or_start(cls, store: MemoryStore, model: str | None = None) -> LiveSession:
        """The newest active session (quitting never consolidates), or a new one."""
        active = [j for j in store.open_sessions() if j.state == "active"]
        return cls(store, active[-1] if active else store.new_session(model))

    @property
    def id(self) -> str:
        return self.journal.id

    @property
    def messages(self) -> list[dict[str, Any]]:
        return self.journal.messages

    def live_messages(self) -> list[dict[str, Any]]:
        return self.journal.messages[self.journal.compacted_through:]

    def context(self) -> list[dict[str, Any]]:
        """The messages sent to the model, in OpenAI shape."""
        return [{k: m[k] for k in CONTEXT_KEYS if m.get(k) is not None or k == "content"}
                for m in self.live_messages()]

    def append(self, message: dict[str, Any]) -> dict[str, Any]:
        return self.journal.append(message)

    def needs_compaction(self) -> bool:
        live = self.live_messages()
        settings = self.store.settings
        return (len(live) > settings.session_max_messages
                or estimate_tokens(live) > settings.session_max_tokens)

    def compact(self) -> Segment | None:
        """Queue the older part of the live window for consolidation and drop it from the
        context. The journal keeps every message; nothing leaves the disk."""
        if not self.needs_compaction():
            return None
        messages = self.journal.messages
        start = self.journal.compacted_through
        end = max(start, len(messages) - self.store.settings.session_keep_messages)
        # Cut at the start of a user turn, so a tool call never loses its result.
        while end > start and messages[end].get("role") != "user":
            end -= 1
        if end <= start:
            return None
        return self.journal.mark_pending(end)

    def close(self) -> Segment | None:
        """End the session (/new): what is left is queued for consolidation."""
        segment = self.journal.mark_pending(close=True)
        if segment is None:
            self.store.settle(self.journal)
        return segment
