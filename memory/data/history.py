"""HISTORY.md's paragraphs: each begins with "[YYYY-MM-DD HH:MM] ", defined here once."""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

# The stamp that opens a history paragraph; group 1 is "YYYY-MM-DD HH:MM".
STAMP = r"\[(\d{4}-\d{2}-\d{2} \d{2}:\d{2})\] "
ENTRY_START = re.compile("^" + STAMP)
# The same stamp, for `.match(text, position)` in str or in bytes.
STAMP_AT = re.compile(STAMP)
STAMP_AT_BYTES = re.compile(STAMP.encode("ascii"))
STAMP_FORMAT = "%Y-%m-%d %H:%M"


@dataclass(frozen=True)
class HistoryEntry:
    stamp: str  # "YYYY-MM-DD HH:MM"
    text: str  # the whole paragraph, stamp included
    file: Path
    line: int


def format_entry(when: datetime, text: str) -> str:
    """One history paragraph: "[YYYY-MM-DD HH:MM] text", on a single line."""
    return f"[{when.strftime(STAMP_FORMAT)}] {' '.join(text.split())}"


def parse_entries(text: str, file: Path) -> list[HistoryEntry]:
    """Paragraphs that begin with a timestamp; anything before the first is ignored."""
    entries: list[HistoryEntry] = []
    current: list[str] = []
    start_line = 0
    stamp = ""
    for number, line in enumerate(text.splitlines(), start=1):
        match = ENTRY_START.match(line)
        if match:
            if current:
                entries.append(HistoryEntry(stamp, "\n".join(current).strip(), file, start_line))
            current, start_line, stamp = [line], number, match.group(1)
        elif current:
            current.append(line)
    if current:
        entries.append(HistoryEntry(stamp, "\n".join(current).strip(), file, start_line))
    return entries


def join_entries(entries: list[str]) -> str:
    return "".join(f"{e}\n\n" for e in entries)
