"""What a search looks for and what it finds: the pattern, the scope it reads, a match, and
how the search index answered (the route)."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # not imported at run time: `kept memory grep` loads only what it needs
    from memory.data.history import HistoryEntry
    from memory.data.store import MemoryStore
    from memory.recall.places import Places


@dataclass(frozen=True)
class Match:
    """One matching line, like grep's `file:line:text`, with where the pattern matched."""

    file: Path
    line: int
    text: str
    spans: tuple[tuple[int, int], ...]
    stamp: str | None  # the date of the history entry the line belongs to, or the message's
    role: str | None = None  # a journal's message: who said it
    session: str | None = None  # a journal's message: the session it is in

    def entry(self, store: MemoryStore | Places) -> HistoryEntry | None:
        """The whole history entry this match is in (None for a session journal)."""
        if self.file.suffix != ".md":
            return None
        from memory.data.files import read_text
        from memory.data.history import parse_entries

        entries = parse_entries(read_text(self.file)[0], self.file)
        found = [e for e in entries if e.line <= self.line]
        return found[-1] if found else None


def quick_match(
    file: Path,
    line: int,
    text: str,
    spans: tuple[tuple[int, int], ...],
    stamp: str | None,
    role: str | None = None,
    session: str | None = None,
) -> Match:
    """Match(...) at half the cost, for the scan's loop (tens of thousands per search): a
    frozen dataclass's __init__ sets each field through object.__setattr__; this fills the
    new instance's __dict__ in one call. The instance is the same in every way."""
    match = object.__new__(Match)
    match.__dict__.update(
        file=file, line=line, text=text, spans=spans, stamp=stamp, role=role, session=session
    )
    return match


def in_range(stamp: str | None, since: str = "", until: str = "") -> bool:
    """Whether a "YYYY-MM-DD HH:MM" stamp is within `since`..`until`, both inclusive."""
    if not since and not until:
        return True
    if stamp is None:
        return False
    return (not since or stamp[: len(since)] >= since) and (
        not until or stamp[: len(until)] <= until
    )


@dataclass(frozen=True)
class Scope:
    """What a search reads and how much it says: `details` are the spans and entry dates
    of history matches (the command line prints neither); `since`/`until` keep matches
    dated within them; `exclude` names sessions not to search; private sessions' journals
    are read only with `private` (never for what a user or model is shown)."""

    details: bool = True
    since: str = ""
    until: str = ""
    exclude: tuple[str, ...] = ()
    private: bool = False

    @property
    def dated(self) -> bool:
        """Whether history matches need their entry's date: to show it, or to range it."""
        return self.details or bool(self.since or self.until)


class Pattern:
    """A literal or regular-expression pattern, searched in bytes where that is exact."""

    def __init__(self, pattern: str, *, regex: bool = False, ignore_case: bool = False) -> None:
        if not pattern:
            raise ValueError("the pattern is empty")
        self.text = pattern
        self.regex = regex
        self.ignore_case = ignore_case
        flags = re.IGNORECASE if ignore_case else 0
        self.compiled = re.compile(pattern if regex else re.escape(pattern), flags)
        # A literal, case-sensitive or ASCII, is found with bytes.find: C speed, no decoding.
        self.literal: bytes | None = None
        self.json_literal: bytes | None = None  # the same, as it is written inside JSON
        self.fold = ignore_case
        # A case-sensitive literal is in a text exactly when `in` says so: no regex needed.
        self.plain = not regex and not ignore_case
        if not regex and (not ignore_case or pattern.isascii()):
            needle = pattern.encode("utf-8")
            self.literal = needle.lower() if ignore_case else needle
            escaped = json.dumps(pattern, ensure_ascii=False)[1:-1].encode("utf-8")
            self.json_literal = escaped.lower() if ignore_case else escaped

    def spans(self, line: str) -> tuple[tuple[int, int], ...]:
        return tuple(m.span() for m in self.compiled.finditer(line))

    def trigrams(self) -> dict[str, list[str]] | None:
        """What the search index is asked, per file suffix (a journal holds the literal
        JSON-escaped); None when it cannot help: a regex, or too short a literal."""
        if self.regex:
            return None
        from memory.recall.index import trigrams

        if self.json_literal is None:  # matched by re.IGNORECASE, in the decoded text
            grams = trigrams(self.text, unicode_case=True)
            needles = {".md": grams, ".jsonl": grams}
        else:  # found in the bytes, ASCII folded at most
            escaped = json.dumps(self.text, ensure_ascii=False)[1:-1]
            needles = {".md": trigrams(self.text), ".jsonl": trigrams(escaped)}
        return needles if any(needles.values()) else None


@dataclass
class Route:
    """How a search was answered: which files the search index ruled out unread, and
    whether it was ready (if not, many files were read one by one, and a build started)."""

    skipped: int = 0
    ready: bool = True
