"""Searching what Kept remembers: HISTORY.md, its archives, and pending sessions."""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from memory.store import HistoryEntry, MemoryStore

_STAMP = re.compile(rb"\[(\d{4}-\d{2}-\d{2} \d{2}:\d{2})\] ")
_STAMP_TEXT = re.compile(r"\[(\d{4}-\d{2}-\d{2} \d{2}:\d{2})\] ")


@dataclass(frozen=True)
class Match:
    """One matching line, like grep's `file:line:text`, with where the pattern matched."""

    file: Path
    line: int
    text: str
    spans: tuple[tuple[int, int], ...]
    stamp: str | None  # the date of the history entry the line belongs to

    def entry(self, store: MemoryStore) -> HistoryEntry | None:
        """The whole history entry this match is in (None for a session journal)."""
        if self.file.suffix != ".md":
            return None
        from memory.storage import read_text
        from memory.store import parse_entries

        entries = parse_entries(read_text(self.file)[0], self.file)
        found = [e for e in entries if e.line <= self.line]
        return found[-1] if found else None


def searched_files(store: MemoryStore) -> list[Path]:
    """Archives oldest first, then HISTORY.md, then the journals of open sessions."""
    files = [*store.archive_files()]
    if store.history_path.exists():
        files.append(store.history_path)
    if store.sessions_dir.is_dir():
        files.extend(sorted(store.sessions_dir.glob("*.jsonl")))
    return files


class Pattern:
    """A literal or regular-expression pattern, searched in bytes where that is exact."""

    def __init__(self, pattern: str, *, regex: bool = False, ignore_case: bool = False) -> None:
        if not pattern:
            raise ValueError("the pattern is empty")
        self.text = pattern
        flags = re.IGNORECASE if ignore_case else 0
        self.compiled = re.compile(pattern if regex else re.escape(pattern), flags)
        # A literal, case-sensitive or ASCII, is found with bytes.find: C speed, no decoding.
        self.literal: bytes | None = None
        self.fold = ignore_case
        if not regex and (not ignore_case or pattern.isascii()):
            needle = pattern.encode("utf-8")
            self.literal = needle.lower() if ignore_case else needle

    def spans(self, line: str) -> tuple[tuple[int, int], ...]:
        return tuple(m.span() for m in self.compiled.finditer(line))

def grep(store: MemoryStore, pattern: Pattern, *, details: bool = True,
         errors: list[str] | None = None) -> Iterator[Match]:
    """Every line that matches, file by file, as grep would list them. Without `details`,
    matches carry no spans or entry dates (the command line prints neither)."""
    for path in searched_files(store):
        try:
            data = path.read_bytes()
        except FileNotFoundError:
            continue  # a journal just moved to done/
        except OSError as exc:
            if errors is not None:
                errors.append(f"{path}: {exc.strerror}")
            continue
        if pattern.literal is not None:
            yield from _grep_literal(path, data, pattern, details)
        else:
            yield from _grep_regex(path, data, pattern, details)


def _grep_literal(path: Path, data: bytes, pattern: Pattern, details: bool) -> Iterator[Match]:
    assert pattern.literal is not None
    history = details and path.suffix == ".md"
    haystack = data.lower() if pattern.fold else data
    counted, number = 0, 1
    hit = haystack.find(pattern.literal)
    while hit >= 0:
        start = haystack.rfind(b"\n", 0, hit) + 1
        end = haystack.find(b"\n", hit)
        stop = end if end >= 0 else len(data)
        number += data.count(b"\n", counted, start)
        counted = start
        text = data[start:stop].decode("utf-8", errors="replace").rstrip("\r")
        yield Match(path, number, text, pattern.spans(text) if details else (),
                    _stamp_before(data, start) if history else None)
        if end < 0:
            return
        hit = haystack.find(pattern.literal, end)


def _grep_regex(path: Path, data: bytes, pattern: Pattern, details: bool) -> Iterator[Match]:
    """One search over the whole text (C speed), then the line around each hit."""
    history = details and path.suffix == ".md"
    text = data.decode("utf-8", errors="replace")
    compiled = pattern.compiled
    counted, number, position = 0, 1, 0
    while True:
        hit = compiled.search(text, position)
        if hit is None:
            return
        start = text.rfind("\n", 0, hit.start()) + 1
        end = text.find("\n", hit.start())
        stop = end if end >= 0 else len(text)
        line = text[start:stop].rstrip("\r")
        # grep is line by line: a hit that ran over a line break must hold within the line.
        if hit.end() <= stop or compiled.search(line):
            number += text.count("\n", counted, start)
            counted = start
            yield Match(path, number, line, pattern.spans(line) if details else (),
                        _stamp_before(text, start) if history else None)
        if end < 0:
            return
        position = end + 1


def _stamp_before(data: bytes | str, line_start: int) -> str | None:
    """The date of the entry a line belongs to: the nearest stamped line at or above it."""
    stamp = _STAMP if isinstance(data, bytes) else _STAMP_TEXT
    newline = b"\n" if isinstance(data, bytes) else "\n"
    position = line_start
    while True:
        match = stamp.match(data, position)  # type: ignore[call-overload]
        if match:
            found = match.group(1)
            return found.decode() if isinstance(found, bytes) else found
        if position == 0:
            return None
        position = data.rfind(newline, 0, position - 1) + 1  # type: ignore[arg-type]


@dataclass(frozen=True)
class SearchResult:
    entries: tuple[HistoryEntry, ...]  # newest first
    total: int


def search_history(store: MemoryStore, pattern: str, *, regex: bool = False,
                   ignore_case: bool = True, limit: int = 20) -> SearchResult:
    """History entries matching `pattern`, newest first. Raises re.error on a bad regex."""
    flags = re.IGNORECASE if ignore_case else 0
    matcher = re.compile(pattern if regex else re.escape(pattern), flags)
    found = [e for e in store.all_history_entries() if matcher.search(e.text)]
    found.reverse()
    return SearchResult(tuple(found[:limit]), len(found))


SEARCH_HISTORY_TOOL = {
    "type": "function",
    "function": {
        "name": "search_history",
        "description": "Search the summaries of earlier sessions with the user (one dated "
                       "paragraph per session). Case-insensitive; returns matching "
                       "paragraphs, newest first.",
        "parameters": {
            "type": "object",
            "properties": {"pattern": {"type": "string",
                                       "description": "A word or phrase to look for."}},
            "required": ["pattern"],
        },
    },
}


def run_search_tool(store: MemoryStore, arguments: str, *, max_chars: int = 8_000) -> str:
    """The tool's answer as text for the model; bad arguments get a sentence, not a crash."""
    import json

    try:
        args = json.loads(arguments or "{}")
        pattern = args["pattern"]
        if not isinstance(pattern, str) or not pattern.strip():
            raise ValueError
    except (ValueError, KeyError, TypeError):
        return 'Error: call search_history with {"pattern": "a word or phrase"}.'
    result = search_history(store, pattern.strip())
    if not result.entries:
        return f"No earlier session mentions {pattern.strip()!r}."
    lines, used = [], 0
    for entry in result.entries:
        if used + len(entry.text) > max_chars:
            break
        lines.append(entry.text)
        used += len(entry.text)
    more = result.total - len(lines)
    tail = f"\n({more} older matches not shown; search with a narrower phrase.)" if more else ""
    return "\n\n".join(lines) + tail
