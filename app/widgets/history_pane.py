"""/memory's History tab: the newest entries of HISTORY.md and its archives, newest first.

`HistoryReader` reads them (off the event loop); `HistoryPane` draws what it found."""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING

from textual.containers import VerticalScroll

from app.widgets.document import Document, shown

if TYPE_CHECKING:
    from pathlib import Path

    from textual.app import ComposeResult

    from memory.data.aio import AsyncStore
    from memory.data.history import HistoryEntry

HISTORY_SHOWN = 200  # entries drawn, newest first; /grep searches every one


def history_markdown(entries: list[HistoryEntry]) -> str:
    """The newest HISTORY_SHOWN entries, newest first by date, not by file order (an
    imported session has an older date)."""
    entries = sorted(entries, key=lambda e: e.stamp, reverse=True)
    text = "\n\n".join(shown(e.body) for e in entries[:HISTORY_SHOWN])
    if len(entries) > HISTORY_SHOWN:
        text += (
            f"\n\n*… and {len(entries) - HISTORY_SHOWN:,} older entries: /grep searches them all.*"
        )
    return text or "*No history yet.*"


class HistoryReader:
    """Reads the history files again only where they changed: an archive is parsed again
    only when its size or time changed."""

    def __init__(self) -> None:
        self._archives: dict[Path, tuple[tuple[int, int], list[HistoryEntry]]] = {}
        self._read = False

    async def look(self, store: AsyncStore) -> str | None:
        """The newest history entries as Markdown, or None when no history file changed."""
        paths = [*await store.archive_files(), store.layout.history_path]
        fresh = await asyncio.to_thread(self._read_changed, paths)
        if (
            self._read
            and fresh.keys() == self._archives.keys()
            and all(fresh[p][0] == self._archives[p][0] for p in fresh)
        ):
            return None
        self._archives, self._read = fresh, True
        return history_markdown([e for _, found in fresh.values() for e in found])

    def _read_changed(
        self, paths: list[Path]
    ) -> dict[Path, tuple[tuple[int, int], list[HistoryEntry]]]:
        """Each file's size and time, and its entries: parsed again only where they changed."""
        from memory.data.files import read_text
        from memory.data.history import parse_entries

        fresh: dict[Path, tuple[tuple[int, int], list[HistoryEntry]]] = {}
        for path in paths:
            try:
                stat = path.stat()
            except OSError:
                continue
            key = (stat.st_size, stat.st_mtime_ns)
            known = self._archives.get(path)
            if known is not None and known[0] == key:
                fresh[path] = known
            else:
                fresh[path] = (key, parse_entries(read_text(path)[0], path))
        return fresh


class HistoryPane(VerticalScroll):
    """The entries as one Markdown document."""

    def compose(self) -> ComposeResult:
        yield Document(id="history-view")

    def show(self, markdown: str) -> None:
        self.query_one(Document).show(markdown)
