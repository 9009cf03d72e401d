"""The scan: every searched file read as it is, newest first, and the lines that match.

A literal is found with bytes.find at C speed, and only the lines that match are decoded. A
journal line is a JSON object, so the pattern is looked for in its JSON-escaped form and
every candidate is checked against the message's text after parsing: a hit on a key, a time
or a model name is never reported. A regular expression is scanned here only in the
search's child process (memory.recall.child).
"""

from __future__ import annotations

import contextlib
import json
import os
from collections.abc import Callable, Iterable, Iterator
from datetime import UTC, datetime
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

from memory.data.history import STAMP_AT, STAMP_AT_BYTES
from memory.recall.pattern import Match, Pattern, Scope, in_range, quick_match
from memory.recall.places import searched_files

if TYPE_CHECKING:
    from memory.data.store import MemoryStore
    from memory.recall.places import Places


def scan(
    store: MemoryStore | Places,
    pattern: Pattern,
    scope: Scope,
    errors: list[str] | None = None,
    files: list[Path] | None = None,
    skip: Callable[[Path], bool] | None = None,
) -> Iterator[Match]:
    """grep in this process: linear for a literal; for a regex, only in a child. `files`
    are those searched_files names, less those `skip` rules out (the index, for one); a
    file that cannot be read is said in `errors`."""
    for path in searched_files(store, scope.since, scope.until) if files is None else files:
        if skip is not None and skip(path):
            continue
        journal = path.suffix == ".jsonl"
        if journal and path.stem in scope.exclude:
            continue
        read = _read_searched(store, path, errors)
        if read is None:
            continue
        path, data = read
        if journal and not scope.private and b'"private":true' in data[: data.find(b"\n")]:
            continue  # off the record: never shown to a model outside its own session
        yield from _in_file(path, data, pattern, scope)


def _read_searched(
    store: MemoryStore | Places, path: Path, errors: list[str] | None
) -> tuple[Path, bytes] | None:
    """A searched file's path and bytes (a journal that just moved to done/ is read there);
    None for a file that is gone, or unreadable (said in `errors`)."""
    try:
        return path, _read(path)
    except FileNotFoundError:
        if path.suffix == ".jsonl" and path.parent.name != "done":  # moved to done/
            moved = path.parent / "done" / path.name
            with contextlib.suppress(OSError):
                return moved, _read(moved)
        return None
    except OSError as exc:
        if errors is not None:
            errors.append(f"{path}: {exc.strerror}")
        return None


def _in_file(path: Path, data: bytes, pattern: Pattern, scope: Scope) -> list[Match]:
    """A file's matches within the scope's dates, its last line first."""
    found: Iterable[Match]
    if path.suffix == ".jsonl":
        found = _grep_journal(path, data, pattern, scope.details)
    elif pattern.literal is not None:
        found = _grep_literal(path, data, pattern, scope.dated, pattern.literal)
    else:
        found = _grep_regex(path, data, pattern, scope.dated)
    matches = list(found)
    matches.reverse()
    if scope.since or scope.until:
        matches = [m for m in matches if in_range(m.stamp, scope.since, scope.until)]
    if not scope.details and scope.dated:  # stamps were only for the date range
        matches = [m if m.role else Match(m.file, m.line, m.text, (), None) for m in matches]
    return matches


def _read(path: Path) -> bytes:
    """The file's bytes in one read where it can (no buffered file object: thousands of
    journals are opened per search)."""
    fd = os.open(path, os.O_RDONLY)
    try:
        size = os.fstat(fd).st_size
        data = os.read(fd, size + 1)
        if len(data) <= size:  # short read, or the file grew: read the rest
            chunks = [data]
            while chunk := os.read(fd, 1 << 20):
                chunks.append(chunk)
            data = b"".join(chunks)
        return data
    finally:
        os.close(fd)


# json.loads less its Python wrapping (the same C scanner), for a line that is one object.
_scan_json: Callable[[str, int], tuple[Any, int]] = json.JSONDecoder().scan_once  # type: ignore[attr-defined]


def _message_match(
    path: Path, number: int, raw: str, pattern: Pattern, details: bool, session: str
) -> Match | None:
    """The message on a journal line, if its text (not its keys or time) matches."""
    try:
        if raw[:1] == "{" and raw[-1:] == "}":  # as Kept writes it: json.loads, but quicker
            record, end = _scan_json(raw, 0)
            if end != len(raw):
                raise ValueError(raw)
        else:
            record = json.loads(raw)
    except (ValueError, StopIteration):
        return None
    if not isinstance(record, dict) or "role" not in record:
        return None
    content = record.get("content")
    if isinstance(content, list):  # OpenAI's multi-part form
        content = "\n".join(str(p.get("text", "")) for p in content if isinstance(p, dict))
    if not isinstance(content, str):
        return None
    if pattern.plain:
        if pattern.text not in content:
            return None
    elif not pattern.compiled.search(content):
        return None
    text = content
    if "\n" in content:
        lines = content.splitlines() or [content]
        text = next((line for line in lines if pattern.compiled.search(line)), lines[0])
    return quick_match(
        path,
        number,
        text,
        pattern.spans(text) if details else (),
        message_stamp(str(record.get("time"))),
        str(record.get("role")),
        session,
    )


@lru_cache(maxsize=4096)
def message_stamp(value: str) -> str | None:
    """A journal time as a history stamp: "YYYY-MM-DD HH:MM", local time."""
    try:
        when = datetime.fromisoformat(value)
    except ValueError:
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    return when.astimezone().strftime("%Y-%m-%d %H:%M")


# Bytes as often met in prose and in journals, the most first; any other byte (a capital, a
# letter with an accent, most punctuation) is taken to be rarer than all of them.
_FREQUENT = b' etaoinsrhldcumfpgwybvk"\n.,:0123456789-_{}'


@lru_cache(maxsize=64)
def _rarest(needle: bytes) -> int:
    """Where the needle's rarest byte is, by _FREQUENT."""
    rank = [_FREQUENT.find(byte) for byte in needle]
    return min(range(len(needle)), key=lambda i: (rank[i] >= 0, -rank[i]))


def _finder(haystack: bytes, needle: bytes) -> Callable[[bytes, int], int]:
    """`haystack.find`, to be called with `needle` only: quicker when `needle` has a byte
    that is rare in `haystack`, for that byte is looked for alone (with memchr, many times
    faster than a search for the whole needle) and the needle checked where it is found.
    Should the byte prove common after all, the plain find does the rest."""
    plain = haystack.find
    if len(needle) < 2:
        return plain
    offset = _rarest(needle)
    rare, misses = needle[offset : offset + 1], 0
    if haystack.count(rare, 0, 2048) > 4:  # common here, at a glance
        return plain
    given_up = False

    def find(_: bytes, start: int) -> int:
        nonlocal misses, given_up
        if given_up:
            return plain(needle, start)
        at = plain(rare, start + offset)
        while at >= 0:
            if haystack.startswith(needle, at - offset):
                return at - offset
            misses += 1
            if misses > 64 + (at >> 9):  # more than one in 512 bytes: slower than plain
                given_up = True
                return plain(needle, at - offset + 1)
            at = plain(rare, at + 1)
        return -1

    return find


def _grep_journal(path: Path, data: bytes, pattern: Pattern, details: bool) -> list[Match]:
    """The messages of a journal that match: each line holding the pattern (JSON-escaped,
    for a literal) is parsed, and its message's text checked."""
    session = path.stem
    found: list[Match] = []
    if pattern.json_literal is None:
        for line in _grep_regex(path, data, pattern, False, check_line=False):
            match = _message_match(path, line.line, line.text, pattern, details, session)
            if match is not None:
                found.append(match)
        return found
    needle = pattern.json_literal
    haystack = data.lower() if pattern.fold else data
    find = _finder(haystack, needle)
    counted, number = 0, 1
    hit = find(needle, 0)
    while hit >= 0:  # as in _grep_literal
        start = haystack.rfind(b"\n", 0, hit) + 1
        end = haystack.find(b"\n", hit)
        number += data.count(b"\n", counted, start)
        counted = start
        raw = data[start : end if end >= 0 else len(data)].decode("utf-8", errors="replace")
        match = _message_match(path, number, raw.rstrip("\r"), pattern, details, session)
        if match is not None:
            found.append(match)
        if end < 0:
            break
        hit = find(needle, end)
    return found


def _grep_literal(
    path: Path, data: bytes, pattern: Pattern, details: bool, needle: bytes
) -> list[Match]:
    """Every line holding `needle` (`pattern`'s literal; found in the case-folded bytes
    when case is ignored), in order: one find over the file, and only those lines decoded."""
    history = details and path.suffix == ".md"
    haystack = data.lower() if pattern.fold else data
    found: list[Match] = []
    find = _finder(haystack, needle)
    counted, number = 0, 1
    hit = find(needle, 0)
    while hit >= 0:
        start = haystack.rfind(b"\n", 0, hit) + 1
        end = haystack.find(b"\n", hit)
        number += data.count(b"\n", counted, start)
        counted = start
        text = data[start : end if end >= 0 else len(data)].decode("utf-8", errors="replace")
        text = text.rstrip("\r")
        found.append(
            quick_match(
                path,
                number,
                text,
                pattern.spans(text) if details else (),
                _stamp_before(data, start) if history else None,
            )
        )
        if end < 0:
            break
        hit = find(needle, end)
    return found


def _grep_regex(
    path: Path, data: bytes, pattern: Pattern, details: bool, *, check_line: bool = True
) -> Iterator[Match]:
    """One search over the whole text (C speed), then the line around each hit. A journal
    (`check_line` off) has each candidate checked against its message's text instead."""
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
        if not check_line or hit.end() <= stop or compiled.search(line):
            number += text.count("\n", counted, start)
            counted = start
            yield Match(
                path,
                number,
                line,
                pattern.spans(line) if details else (),
                _stamp_before(text, start) if history else None,
            )
        if end < 0:
            return
        position = end + 1


def _stamp_before(data: bytes | str, line_start: int) -> str | None:
    """The date of the entry a line belongs to: the nearest stamped line at or above it."""
    position = line_start
    while True:
        if isinstance(data, bytes):
            raw = STAMP_AT_BYTES.match(data, position)
            if raw:
                return raw.group(1).decode()
        else:
            text = STAMP_AT.match(data, position)
            if text:
                return text.group(1)
        if position == 0:
            return None
        if isinstance(data, bytes):
            position = data.rfind(b"\n", 0, position - 1) + 1
        else:
            position = data.rfind("\n", 0, position - 1) + 1
