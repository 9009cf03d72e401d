"""Searching what Kept remembers: HISTORY.md, its archives, and every session's journal
(live, pending and finished), newest first.

The files are searched as they are: a literal is found with bytes.find at C speed, and only
the lines that match are decoded. The search index (memory.recall.index) only spares the reading
of files that cannot hold a literal; what is found in the others is the same either way.
A journal line is a JSON object, so the pattern is looked for in its JSON-escaped form and
every candidate is checked against the message's text after parsing: a hit on a key, a time
or a model name is never reported.

A regular expression is the user's own program, and Python's `re` cannot be interrupted
while it matches (no signal, no thread can stop `(a+)+$` on a long line of "a"s): it runs in
a child process, which is ended when the search is cancelled or takes longer than
REGEX_SECONDS. A literal needs none of this: it is found in linear time.
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import pickle
import queue
import re
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from functools import lru_cache
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

from memory.data.history import STAMP_AT, STAMP_AT_BYTES
from memory.recall.places import Places as Places  # re-exported: callers know it from here
from memory.recall.places import searched_files as searched_files

if TYPE_CHECKING:  # not imported at run time: `kept memory grep` loads only what it needs
    from memory.data.history import HistoryEntry
    from memory.data.store import MemoryStore


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


def _match(
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


def grep(
    store: MemoryStore | Places,
    pattern: Pattern,
    *,
    details: bool = True,
    errors: list[str] | None = None,
    since: str = "",
    until: str = "",
    exclude: tuple[str, ...] = (),
    private: bool = False,
    seconds: float | None = None,
    cancelled: Callable[[], bool] | None = None,
    route: Route | None = None,
) -> Iterator[Match]:
    """Every line of history, and every message of a session, that matches: newest first
    (files by date, the last line of each first). Without `details`, history matches carry
    no spans or entry dates (the command line prints neither). `since`/`until` keep
    matches dated within them; `exclude` names sessions not to search; private sessions'
    journals are searched only with `private` (never for what a user or model is shown).

    A regular expression is searched in a child process, stopped after `seconds`
    (REGEX_SECONDS by default) or as soon as `cancelled()` says so; a search stopped for
    its time is said in `errors`, in a sentence.

    A literal asks the search index (memory.recall.index) which files cannot hold it, and reads
    only the others; `route` is told how that went once every file is searched. When many
    files are not in the index, a background process is started to index them."""
    if pattern.regex:
        yield from _grep_in_child(
            store,
            pattern,
            seconds=REGEX_SECONDS if seconds is None else seconds,
            cancelled=cancelled,
            errors=errors,
            details=details,
            since=since,
            until=until,
            exclude=exclude,
            private=private,
        )
        return
    files = searched_files(store, since, until)
    judge = None
    needles = pattern.trigrams()
    if needles is not None:
        from memory.recall.index import Judge

        judge = Judge(store.root, needles)
    skip = judge.rules_out if judge is not None else None
    yield from _grep_here(
        store, pattern, details, errors, since, until, exclude, private, files, skip
    )
    if route is not None and judge is not None:
        route.skipped, route.ready = judge.skipped, judge.ready


def _grep_here(
    store: MemoryStore | Places,
    pattern: Pattern,
    details: bool,
    errors: list[str] | None,
    since: str,
    until: str,
    exclude: tuple[str, ...],
    private: bool,
    files: list[Path] | None = None,
    skip: Callable[[Path], bool] | None = None,
) -> Iterator[Match]:
    """grep in this process: linear for a literal; for a regex, only in a child. `files`
    are those searched_files names, less those `skip` rules out (the index, for one)."""
    dated = details or bool(since or until)
    for path in searched_files(store, since, until) if files is None else files:
        if skip is not None and skip(path):
            continue
        journal = path.suffix == ".jsonl"
        if journal and path.stem in exclude:
            continue
        try:
            data = _read(path)
        except FileNotFoundError:
            if journal and path.parent == store.sessions_dir:  # it just moved to done/
                path = store.done_dir / path.name
                try:
                    data = _read(path)
                except OSError:
                    continue
            else:
                continue
        except OSError as exc:
            if errors is not None:
                errors.append(f"{path}: {exc.strerror}")
            continue
        if journal and not private and b'"private":true' in data[: data.find(b"\n")]:
            continue  # off the record: never shown to a model outside its own session
        found: Iterable[Match]
        if journal:
            found = _grep_journal(path, data, pattern, details)
        elif pattern.literal is not None:
            found = _grep_literal(path, data, pattern, dated, pattern.literal)
        else:
            found = _grep_regex(path, data, pattern, dated)
        matches = list(found)
        matches.reverse()
        if since or until:
            matches = [m for m in matches if in_range(m.stamp, since, until)]
        if not details and dated:  # stamps were only for the date range
            matches = [m if m.role else Match(m.file, m.line, m.text, (), None) for m in matches]
        yield from matches


REGEX_SECONDS = 30.0  # a regular expression's whole search, at most
_BATCH = 100  # matches sent from the child at a time
# The child: its arguments come pickled on stdin, its matches go pickled to stdout.
_CHILD = (
    "import pickle, sys; args = pickle.load(sys.stdin.buffer); sys.path[:] = args[0]; "
    "from memory.recall.search import _child_main; _child_main(*args[1:])"
)


def _grep_in_child(
    store: MemoryStore | Places,
    pattern: Pattern,
    *,
    seconds: float,
    cancelled: Callable[[], bool] | None,
    errors: list[str] | None,
    **options: Any,
) -> Iterator[Match]:
    """grep with a regex in a child Python (a plain subprocess: forking a threaded app is
    unsafe, and multiprocessing needs a real stderr, which a running Textual app has not),
    its matches streamed back in batches; the child is killed when the caller stops
    reading, cancels, or the time is up."""
    child = subprocess.Popen(
        [sys.executable, "-c", _CHILD],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    )
    assert child.stdin is not None and child.stdout is not None
    arguments = (list(sys.path), str(store.root), pattern.text, pattern.ignore_case, seconds)
    inbox: queue.Queue[tuple[str, Any]] = queue.Queue()
    reader = threading.Thread(target=_receive, args=(child.stdout, inbox), daemon=True)
    reader.start()
    deadline = time.monotonic() + seconds
    try:
        with contextlib.suppress(OSError), child.stdin:  # it died at once: said below
            pickle.dump((*arguments, options), child.stdin)
        while True:
            if cancelled is not None and cancelled():
                return
            if time.monotonic() > deadline:
                if errors is not None:
                    errors.append(
                        f"the regular expression {pattern.text!r} took more than "
                        f"{seconds:g} s and was stopped; try a simpler one, or a plain word"
                    )
                return
            try:
                kind, value = inbox.get(timeout=0.1)
            except queue.Empty:
                continue
            if kind == "matches":
                yield from value
            elif kind == "errors":
                if errors is not None:
                    errors.extend(value)
            elif kind == "done":
                return
            else:  # the child died without a word
                if errors is not None:
                    errors.append("the search stopped unexpectedly")
                return
    finally:
        if child.poll() is None:
            child.kill()
        child.wait()
        reader.join(5)
        child.stdout.close()


def _receive(stream: IO[bytes], inbox: queue.Queue[tuple[str, Any]]) -> None:
    """The child's messages, one pickle each, until it ends."""
    try:
        while True:
            inbox.put(pickle.load(stream))
    except (EOFError, OSError, pickle.UnpicklingError):
        inbox.put(("ended", None))


def _child_main(
    root: str, text: str, ignore_case: bool, seconds: float, options: dict[str, Any]
) -> None:
    """The child's side: the same search, over the same folder, sent back in batches. It
    bounds itself too: should its parent be killed before it could end the child, the
    kernel ends it once it has used its CPU time (no lock held by `re` can stop that)."""
    with contextlib.suppress(ImportError, ValueError, OSError):  # not on Windows
        import resource

        limit = math.ceil(seconds) + 2
        resource.setrlimit(resource.RLIMIT_CPU, (limit, limit + 1))
    out = sys.stdout.buffer

    def send(kind: str, value: object) -> None:
        pickle.dump((kind, value), out)
        out.flush()

    pattern = Pattern(text, regex=True, ignore_case=ignore_case)
    errors: list[str] = []
    batch: list[Match] = []
    found = _grep_here(
        Places(Path(root)),
        pattern,
        options["details"],
        errors,
        options["since"],
        options["until"],
        options["exclude"],
        options["private"],
    )
    for match in found:
        batch.append(match)
        if len(batch) >= _BATCH:
            send("matches", batch)
            batch = []
    send("matches", batch)
    send("errors", errors)
    send("done", None)


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
    return _match(
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
            _match(
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


@dataclass(frozen=True)
class SearchResult:
    entries: tuple[HistoryEntry, ...]  # newest first
    total: int
    messages: tuple[Match, ...] = ()  # said in a session's transcript, newest first
    total_messages: int = 0


def search_history(
    store: MemoryStore,
    pattern: str,
    *,
    regex: bool = False,
    ignore_case: bool = True,
    limit: int = 20,
    exclude: tuple[str, ...] = (),
) -> SearchResult:
    """History entries, and messages of past sessions (not those in `exclude`), matching
    `pattern`, newest first. Raises re.error on a bad regex."""
    flags = re.IGNORECASE if ignore_case else 0
    matcher = re.compile(pattern if regex else re.escape(pattern), flags)
    found = [
        e for e in _history_entries(store, pattern, regex, ignore_case) if matcher.search(e.text)
    ]
    found.reverse()
    compiled = Pattern(pattern, regex=regex, ignore_case=ignore_case)
    messages: list[Match] = []
    total = 0
    for match in grep(store, compiled, exclude=exclude, private=False):
        if match.role is None:
            continue
        total += 1
        if len(messages) < limit:
            messages.append(match)
    return SearchResult(tuple(found[:limit]), len(found), tuple(messages), total)


def _history_entries(
    store: MemoryStore, pattern: str, regex: bool, ignore_case: bool
) -> list[HistoryEntry]:
    """Every history entry, oldest first, less those in files the search index rules out
    for a literal (an entry is matched with re, so its case rules are the index's too)."""
    from memory.recall import index

    grams = [] if regex else index.trigrams(pattern, unicode_case=ignore_case)
    paths = [*store.archive_files(), store.history_path]
    skip = index.lookup(store.root, paths, {".md": grams}).skip if grams else frozenset()
    if not skip:
        return store.all_history_entries()
    from memory.data.files import read_text
    from memory.data.history import parse_entries

    return [e for p in paths if p not in skip for e in parse_entries(read_text(p)[0], p)]


SEARCH_HISTORY_TOOL = {
    "type": "function",
    "function": {
        "name": "search_history",
        "description": "Search earlier sessions with the user: the summaries (one dated "
        "paragraph per session) and every word said in them. "
        "Case-insensitive; returns matching paragraphs and messages (session, "
        "date, who said it), newest first.",
        "parameters": {
            "type": "object",
            "properties": {
                "pattern": {"type": "string", "description": "A word or phrase to look for."}
            },
            "required": ["pattern"],
        },
    },
}


def describe_message(match: Match, width: int = 300) -> str:
    """A transcript hit in one line: date, session, who, and the line that matched."""
    text = match.text if len(match.text) <= width else match.text[:width] + "…"
    return f"[{match.stamp or '?'}] session {match.session}, {match.role}: {text}"


def run_search_tool(
    store: MemoryStore, arguments: str, *, max_chars: int = 8_000, exclude: tuple[str, ...] = ()
) -> str:
    """The tool's answer as text for the model; bad arguments get a sentence, not a crash.
    `exclude` leaves out the session being answered (it would only find the question)."""
    try:
        args = json.loads(arguments or "{}")
        pattern = args["pattern"]
        if not isinstance(pattern, str) or not pattern.strip():
            raise ValueError
    except (ValueError, KeyError, TypeError):
        return 'Error: call search_history with {"pattern": "a word or phrase"}.'
    from memory.consolidation.redact import redact

    result = search_history(store, pattern.strip(), exclude=exclude)
    if not result.entries and not result.messages:
        return f"No earlier session mentions {redact(pattern.strip())!r}."
    # Whichever provider asks, a credential said in an earlier session does not reach it:
    # each text is redacted whole, before it is cut to fit.
    lines, used = [], 0
    for entry in result.entries:
        text = redact(entry.text)
        if used + len(text) > max_chars // 2:
            break
        lines.append(text)
        used += len(text)
    more = result.total - len(lines)
    tail = (
        f"\n({more} older matching summaries not shown; search with a narrower phrase.)"
        if more
        else ""
    )
    said: list[str] = []
    for match in result.messages:
        line = describe_message(replace(match, text=redact(match.text)))
        if used + len(line) > max_chars:
            break
        said.append(line)
        used += len(line)
    if said:
        more_said = result.total_messages - len(said)
        tail += (
            "\n\nSaid in earlier sessions:\n"
            + "\n".join(said)
            + (f"\n({more_said} older messages not shown.)" if more_said else "")
        )
    return ("\n\n".join(lines) + tail).strip()
