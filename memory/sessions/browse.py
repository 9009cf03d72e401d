"""Every session, newest first, as the sessions browser lists it; deleting a transcript.

What the list shows of a journal is kept in `index.sessions.json`: a derived cache, checked
against each file's size and time (a journal is only ever appended to), rebuilt when
missing or damaged, never needed for correctness. A private journal's row says only that it
is private: nothing of what it says is written there.
"""

from __future__ import annotations

import json
import logging
import os
import re
from collections.abc import Callable
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from memory.data.files import NOFOLLOW, atomic_write, ensure_dir, read_text
from memory.data.history import ENTRY_START, HistoryEntry
from memory.data.store import MemoryStore
from memory.sessions import journal as journals

log = logging.getLogger(__name__)

INDEX = "index.sessions.json"
INDEX_VERSION = 2  # 2: the model is the one that answered
_SENTENCE = re.compile(r"(?<=[.!?])\s")


@dataclass(frozen=True)
class SessionSummary:
    """One row of the sessions browser."""

    id: str
    started: str  # "YYYY-MM-DD HH:MM", local time
    title: str
    model: str
    messages: int
    state: str  # "active", "pending", "saved"

    def matches(self, words: str, said: dict[str, set[str]] | None = None) -> bool:
        """Whether every word of a filter is in the row (any case), or, given `said` (each
        word's sessions, from said_in), was said in the session."""
        row = f"{self.started} {self.title} {self.model} {self.state} {self.id}".lower()
        return all(
            word in row or (said is not None and self.id in said.get(word, ()))
            for word in words.lower().split()
        )


def said_in(store: MemoryStore, words: str) -> dict[str, set[str]]:
    """Each word of a filter (lower case) and the sessions whose messages say it, any case:
    the transcript search of /grep and `kept memory grep`, one pass over the journals per
    word (a literal is found in the raw bytes; only matching lines are decoded). A private
    session is never searched."""
    from memory.recall.pattern import Pattern, Scope
    from memory.recall.search import grep

    found: dict[str, set[str]] = {}
    for word in dict.fromkeys(words.lower().split()):
        matches = grep(store, Pattern(word, ignore_case=True), Scope(details=False))
        found[word] = {m.session for m in matches if m.session is not None}
    return found


def local_stamp(value: str) -> str:
    """An ISO time as HISTORY.md dates it: "YYYY-MM-DD HH:MM", local time."""
    try:
        when = datetime.fromisoformat(value)
    except ValueError:
        return ""
    when = when if when.tzinfo else when.replace(tzinfo=UTC)
    return when.astimezone().strftime("%Y-%m-%d %H:%M")


def first_sentence(text: str, limit: int = 90) -> str:
    text = " ".join(ENTRY_START.sub("", text).split())
    sentence = _SENTENCE.split(text, maxsplit=1)[0]
    return sentence if len(sentence) <= limit else sentence[: limit - 1].rstrip() + "…"


class _Titles:
    """History entries by the session that wrote them, loaded once, only if needed."""

    def __init__(self, store: MemoryStore) -> None:
        self.store = store
        self._by_entry: dict[str, str] | None = None
        self._by_stamp: dict[str, HistoryEntry] = {}

    def _load(self) -> None:
        by_session = {v.entry: v.session for v in self.store.versions() if v.entry and v.session}
        self._by_entry = {}
        for entry in self.store.all_history_entries():
            session = by_session.get(entry.text)
            if session:
                self._by_entry[session] = entry.text
            self._by_stamp.setdefault(entry.stamp, entry)

    def entry(self, journal: journals.Journal) -> str | None:
        if self._by_entry is None:
            self._load()
        assert self._by_entry is not None
        if journal.id in self._by_entry:
            return self._by_entry[journal.id]
        # A consolidation that left MEMORY.md as it was wrote no version: match the date.
        first = journal.messages[0].get("time") if journal.messages else None
        found = self._by_stamp.get(local_stamp(str(first))) if first else None
        return found.text if found else None


def _summary(
    journal: journals.Journal, titles: _Titles | None, title: str | None
) -> SessionSummary:
    state = journal.state
    shown = "saved" if state is journals.JournalState.CONSOLIDATED else state.value
    if not title and titles is not None and journal.consolidated:
        entry = titles.entry(journal)
        title = first_sentence(entry) if entry else None
    if not title:
        first = next(
            (
                m.get("content")
                for m in journal.messages
                if m.get("role") == "user" and m.get("content")
            ),
            "",
        )
        title = first_sentence(str(first).splitlines()[0] if first else "") or "(no message)"
    count = sum(
        1 for m in journal.messages if m.get("role") in ("user", "assistant") and m.get("content")
    )
    started = local_stamp(journal.created)
    if not started and journal.messages:
        started = local_stamp(str(journal.messages[0].get("time")))
    return SessionSummary(journal.id, started, title, answered_by(journal), count, shown)


def answered_by(journal: journals.Journal) -> str:
    """The models that answered, in the order they first did ("smollm2, gpt-4.1-mini"): the
    header names only the model that was asked, which a fallback may have stood in for.
    An import whose replies name no model falls back to its header; no reply, ""."""
    replies = [m for m in journal.messages if m.get("role") == "assistant"]
    models = dict.fromkeys(str(m["model"]) for m in replies if m.get("model"))
    if models:
        return ", ".join(models)
    return (journal.model or "") if replies else ""


def _header_title(path: Path) -> str | None:
    """An imported conversation's own title, from its journal's header."""
    try:
        with open(path, "rb") as f:
            header = json.loads(f.readline() or b"{}")
    except (OSError, ValueError):
        return None
    title = header.get("title") if isinstance(header, dict) else None
    return first_sentence(title) if isinstance(title, str) and title.strip() else None


_FIELDS = {"id": str, "started": str, "title": str, "model": str, "messages": int, "state": str}
_TYPES = tuple(_FIELDS.values())


def _cached(known: object, mtime: int, size: int) -> SessionSummary | None:
    """The cache's row for a journal of this time and size; None when it has none, or one
    that is damaged or of the wrong types (the journal is read again instead)."""
    if not isinstance(known, dict) or known.get("mtime") != mtime or known.get("size") != size:
        return None
    row = known.get("summary")
    # Exactly these fields, of these types (bool is not an int here): one pass in C.
    if (
        type(row) is not dict
        or len(row) != len(_FIELDS)
        or tuple(map(type, map(row.get, _FIELDS))) != _TYPES
    ):
        return None
    return SessionSummary(**row)


def _cached_private(known: object, mtime: int, size: int) -> bool:
    """Whether the cache knows this journal, at this time and size, as a private one."""
    return (
        isinstance(known, dict)
        and known.get("private") is True
        and known.get("mtime") == mtime
        and known.get("size") == size
    )


def _grown_by_failures(
    path: Path, known: dict[str, Any], stat: os.stat_result
) -> SessionSummary | None:
    """The cached row of a journal that has only grown by "failed" marks since (what every
    retry of a session no model could save appends): nothing the list shows has changed.
    None when anything else was appended, or it did not only grow."""
    size = known.get("size")
    if not isinstance(size, int) or not 0 < size < stat.st_size or "summary" not in known:
        return None
    summary = _cached(
        {**known, "mtime": stat.st_mtime_ns, "size": stat.st_size}, stat.st_mtime_ns, stat.st_size
    )
    if summary is None:
        return None
    try:
        with open(os.open(path, os.O_RDONLY | NOFOLLOW), "rb") as f:
            f.seek(size - 1)
            added = f.read(stat.st_size - size + 1)
    except OSError:
        return None
    if not added.startswith(b"\n"):  # the old end was not a line's end: read it all
        return None
    for line in added.split(b"\n"):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except (ValueError, RecursionError):
            return None
        if not isinstance(record, dict) or record.get("mark") != "failed":
            return None
    return summary


def _journals(folder: Path) -> list[os.DirEntry[str]]:
    """The journals in `folder` (what glob("*.jsonl") finds), as directory entries: their
    paths are made and their stats taken without a Path each."""
    try:
        with os.scandir(folder) as entries:
            return [e for e in entries if e.name.endswith(".jsonl") and not e.name.startswith(".")]
    except (FileNotFoundError, NotADirectoryError):
        return []


def _read_row(
    store: MemoryStore,
    path: Path,
    stat: os.stat_result,
    titles: _Titles,
    found: dict[str, SessionSummary],
    fresh: dict[str, dict[str, Any]],
) -> bool:
    """Read a journal the index does not know as it is now; True when its row is new."""
    try:
        journal = journals.load(path)
    except FileNotFoundError:
        return False
    except OSError:
        if path.parent.name == "done":
            raise  # the list says it cannot be read
        return False  # an open one, as open_sessions skips it: the status and /log say why
    row: dict[str, Any] = {"mtime": stat.st_mtime_ns, "size": stat.st_size}
    if journal.private:  # never listed, and nothing of it is written to the index
        row["private"] = True
    else:
        summary = _summary(journal, titles, _header_title(path))
        found[summary.id] = summary
        row["summary"] = asdict(summary)
    fresh[path.name] = row
    return True


def list_sessions(store: MemoryStore) -> list[SessionSummary]:
    """Every session on disk except private ones, newest first."""
    rows, save = read_sessions(store)
    save()
    return rows


def _cached_rows(index_path: Path) -> dict[str, dict[str, Any]]:
    """The list's cache by journal name; empty when missing, damaged or not an index (it is
    rebuilt then)."""
    try:
        index = json.loads(read_text(index_path)[0] or "{}")
        if index.get("version") == INDEX_VERSION and isinstance(index.get("sessions"), dict):
            return dict(index["sessions"])
    except (OSError, ValueError, AttributeError):
        pass
    return {}


def read_sessions(store: MemoryStore) -> tuple[list[SessionSummary], Callable[[], None]]:
    """Every session on disk except private ones, newest first, and what brings the list's
    cache up to date: a screen shows the rows first, then saves (10,000 rows are some
    3 MB of JSON to write)."""
    titles = _Titles(store)
    found: dict[str, SessionSummary] = {}
    index_path = store.layout.local_dir / INDEX
    cached = _cached_rows(index_path)
    fresh: dict[str, dict[str, Any]] = {}
    changed = False
    # Directory entries, not Paths: at 10,000 sessions Path objects cost most of the time.
    folders = [f for pair in store.layout.session_folders() for f in reversed(pair)]
    for folder in folders:  # every device's: done/, then open
        for entry in _journals(folder):
            name = entry.name
            try:
                stat = entry.stat()
            except FileNotFoundError:
                continue
            known = cached.get(name)
            if _cached_private(known, stat.st_mtime_ns, stat.st_size):
                fresh[name] = known  # type: ignore[assignment]
                continue
            summary = _cached(known, stat.st_mtime_ns, stat.st_size)
            if summary is None and isinstance(known, dict):
                summary = _grown_by_failures(folder / name, known, stat)
                if summary is not None:
                    known = {**known, "mtime": stat.st_mtime_ns, "size": stat.st_size}
                    changed = True
            if summary is not None and known is not None:
                found[summary.id] = summary
                fresh[name] = known
                continue
            changed |= _read_row(store, folder / name, stat, titles, found, fresh)
    rows = sorted(found.values(), key=lambda s: (s.started, s.id), reverse=True)
    if not changed and len(fresh) == len(cached):
        return rows, _nothing_to_save

    def save() -> None:
        try:
            ensure_dir(index_path.parent)
            atomic_write(
                index_path,
                json.dumps({"version": INDEX_VERSION, "sessions": fresh}, ensure_ascii=False),
            )
        except OSError as exc:  # a cache: the list is right without it, only slower
            log.warning(
                "%s could not be written (%s); the sessions list is read from the "
                "journals next time too.",
                index_path,
                exc.strerror,
            )

    return rows, save


def _nothing_to_save() -> None:
    """The list's cache is as it should be."""
