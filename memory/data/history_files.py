"""HISTORY.md and its monthly archives (history/YYYY-MM.md): read, and added to in date
order. HISTORY.md's format (memory.data.history) is imported with the first look at it, not
before the first frame."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from memory.data.files import atomic_write, ensure_dir, read_text
from memory.data.layout import Layout

if TYPE_CHECKING:
    from memory.data.history import HistoryEntry


def keep_undecodable(path: Path, raw: bytes) -> None:
    """Before a file with bytes that are not UTF-8 is rewritten (as text, with replacement
    characters), its exact bytes are copied aside: nothing is lost."""
    try:
        raw.decode("utf-8")
    except UnicodeDecodeError:
        from datetime import UTC, datetime

        stamp = datetime.now(UTC).strftime("%Y%m%d-%H%M%S")
        atomic_write(path.with_name(f"{path.name}.{stamp}.orig"), raw)


def _month(paragraph: str) -> str:
    from memory.data.history import ENTRY_START

    match = ENTRY_START.match(paragraph)
    return match.group(1)[:7] if match else "undated"


class HistoryFiles:
    """HISTORY.md, the window of recent entries, and the archives older ones roll into."""

    def __init__(self, layout: Layout) -> None:
        self.path = layout.history_path
        self.archive_dir = layout.archive_dir
        self._layout = layout

    def archive_files(self) -> list[Path]:
        return self._layout.archive_files()

    def entries(self) -> list[HistoryEntry]:
        from memory.data.history import parse_entries

        text, _ = read_text(self.path)
        return parse_entries(text, self.path)

    def all_entries(self) -> list[HistoryEntry]:
        """Archived entries, oldest first, then HISTORY.md's."""
        from memory.data.history import parse_entries

        entries: list[HistoryEntry] = []
        for path in self.archive_files():
            entries.extend(parse_entries(read_text(path)[0], path))
        return entries + self.entries()

    def has_entry(self, paragraph: str) -> bool:
        """Whether HISTORY.md, or the archive an entry of that month rolls into, holds it."""
        from memory.data.history import parse_entries

        places = [self.path, self.archive_dir / f"{_month(paragraph)}.md"]
        return any(
            e.text == paragraph for path in places for e in parse_entries(read_text(path)[0], path)
        )

    def append(self, paragraph: str, window: int) -> None:
        """Add one entry in date order (a session consolidated late, an import, goes where
        its date puts it); roll the oldest into history/YYYY-MM.md past `window` characters.

        Archives are written before HISTORY.md shrinks, and skip entries they already
        hold, so a crash in between duplicates nothing and loses nothing.
        """
        from memory.data.history import ENTRY_START, join_entries, parse_entries

        text, raw = read_text(self.path)
        keep_undecodable(self.path, raw)
        # Whatever stands before the first entry (a heading the user added) stays put.
        lines = text.splitlines(keepends=True)
        first = next((i for i, line in enumerate(lines) if ENTRY_START.match(line)), len(lines))
        preamble = "".join(lines[:first]).rstrip()
        preamble = preamble + "\n\n" if preamble else ""
        parsed = parse_entries(text, self.path)
        entries = [e.text for e in parsed]
        match = ENTRY_START.match(paragraph)
        stamp = match.group(1) if match else "~"  # undated: last
        at = next((i for i, e in enumerate(parsed) if e.stamp > stamp), len(parsed))
        entries.insert(at, paragraph)
        rolled: list[str] = []
        while len(entries) > 1 and sum(len(e) + 2 for e in entries) > window:
            rolled.append(entries.pop(0))
        if rolled:
            self._archive(rolled)
        atomic_write(self.path, preamble + join_entries(entries))

    def _archive(self, paragraphs: list[str]) -> None:
        from memory.data.history import join_entries, parse_entries

        ensure_dir(self.archive_dir)
        by_month: dict[str, list[str]] = {}
        for paragraph in paragraphs:
            by_month.setdefault(_month(paragraph), []).append(paragraph)
        for month, items in by_month.items():
            path = self.archive_dir / f"{month}.md"
            old, raw = read_text(path)
            keep_undecodable(path, raw)
            have = {e.text for e in parse_entries(old, path)}
            new = [p for p in items if p not in have]
            if new:
                body = old if not old or old.endswith("\n\n") else old.rstrip("\n") + "\n\n"
                atomic_write(path, body + join_entries(new))
