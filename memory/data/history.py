"""HISTORY.md's paragraphs: each begins with "[YYYY-MM-DD HH:MM] ", defined here once.

A paragraph a consolidation wrote ends with its key, `<!-- kept:SESSION.START-END -->` (the
session and the part of it the paragraph tells): two devices' histories merge as a union on
it, each entry once. Older paragraphs have no key; their text is their key.
"""

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
# The key that ends a paragraph a consolidation wrote; group 1 is "SESSION.START-END".
KEY_AT_END = re.compile(r"\s*<!-- kept:([A-Za-z0-9_.-]+) -->\s*\Z")


@dataclass(frozen=True)
class HistoryEntry:
    stamp: str  # "YYYY-MM-DD HH:MM"
    text: str  # the whole paragraph, stamp included
    file: Path
    line: int

    @property
    def key(self) -> str:
        """What names this entry in a merge: its session and part, else its text."""
        found = KEY_AT_END.search(self.text)
        return found.group(1) if found else self.text

    @property
    def body(self) -> str:
        """The paragraph as a reader sees it: without its key."""
        return KEY_AT_END.sub("", self.text)


def entry_key(session: str, start: int, end: int) -> str:
    """The key of the paragraph that tells messages [start, end) of a session."""
    return f"{session}.{start}-{end}"


def format_entry(when: datetime, text: str, key: str | None = None) -> str:
    """One history paragraph: "[YYYY-MM-DD HH:MM] text", on a single line, ending with
    its key when it has one."""
    paragraph = f"[{when.strftime(STAMP_FORMAT)}] {' '.join(text.split())}"
    return f"{paragraph} <!-- kept:{key} -->" if key else paragraph


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
