"""What is pending, without reading every message of every pending journal.

`kept log`, `kept doctor`, `kept consolidate --dry-run` and /log need of each pending
session only its marks (segments, failures) and the size of each pending part. A journal
changes only by growing, so that much is kept in `index.pending.json`: a derived cache,
checked against each journal's size, time and inode, rebuilt when missing or damaged, never
needed for correctness (consolidation itself reads the journals).
"""

from __future__ import annotations

import json
import logging
import os
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Any

from memory.data.files import atomic_write, ensure_dir, read_text
from memory.data.session_files import unreadable
from memory.data.store import MemoryStore
from memory.sessions import journal as journals
from memory.sessions.journal import Failure, Journal, Segment

log = logging.getLogger(__name__)

INDEX = "index.pending.json"
INDEX_VERSION = 1  # a row: size, mtime_ns, inode, id, parts


@dataclass(frozen=True)
class PendingPart:
    """One pending segment: how many messages, and how many characters they say."""

    segment: Segment
    messages: int
    chars: int


@dataclass
class PendingSession:
    """A pending session as its marks say, its messages not read."""

    path: str
    id: str
    parts: list[PendingPart]
    failures: dict[Segment, list[Failure]]

    @cached_property
    def marks(self) -> Journal:
        """Its journal without the messages (id, segments, failures): enough for
        `retry_note` and `held`, never for a consolidation."""
        return Journal(
            path=Path(self.path),
            id=self.id,
            created="",
            pending=[part.segment for part in self.parts],
            failures=self.failures,
        )


def _row(journal: Journal) -> list[Any]:
    """What the cache keeps of a journal, compactly (10,000 rows are read at a time): its
    id, then each pending part as [start, end, messages, characters, failures]; a private
    journal has none."""
    parts = []
    for segment in [] if journal.private else journal.pending:
        said = journal.segment_messages(segment)
        failures = [
            [f.time, f.reason, f.rejected, f.cause] for f in journal.failures.get(segment, [])
        ]
        chars = sum(len(str(m.get("content") or "")) for m in said)
        parts.append([segment.start, segment.end, len(said), chars, failures])
    return [journal.id, parts]


def _session(path: str, row: list[Any]) -> PendingSession | None:
    """A cached row as a pending session; None when it has nothing pending. Raises
    (TypeError, ValueError) on a row that is not one Kept wrote."""
    session_id, rows = row
    if not rows:
        return None
    parts, failures = [], {}
    for start, end, messages, chars, failed in rows:
        segment = Segment(int(start), int(end))
        parts.append(PendingPart(segment, int(messages), int(chars)))
        if failed:
            # A row cached before failures had a cause has three fields.
            failures[segment] = [
                Failure(str(row[0]), str(row[1]), bool(row[2]), str(row[3]) if row[3:] else "")
                for row in failed
            ]
    return PendingSession(path, str(session_id), parts, failures)


@dataclass(frozen=True)
class PendingScan:
    """What one look at the pending sessions found: each pending session, oldest first,
    and the journals that could not be read, each with the sentence why."""

    sessions: list[PendingSession]
    unreadable: dict[Path, str]


def _cached_rows(index_path: Path) -> dict[str, Any]:
    """The cache's rows by journal name; empty when missing, damaged or not an index."""
    try:
        index = json.loads(read_text(index_path)[0] or "{}")
        if index.get("version") == INDEX_VERSION and isinstance(index.get("journals"), dict):
            return dict(index["journals"])
    except (OSError, ValueError, AttributeError):
        pass
    return {}


def _journal_entries(folder: Path) -> list[os.DirEntry[str]]:
    try:
        with os.scandir(folder) as scan:
            return sorted((e for e in scan if e.name.endswith(".jsonl")), key=lambda e: e.name)
    except (FileNotFoundError, NotADirectoryError):
        return []


def _from_cache(
    entry: os.DirEntry[str], key: list[int], known: object
) -> tuple[list[Any], PendingSession | None] | None:
    """The cached row of a journal unchanged since it was written (key first) and its
    pending session, or None when the journal must be read again."""
    if not isinstance(known, list) or known[:3] != key:
        return None
    try:
        return known, _session(entry.path, known[3:])
    except (TypeError, ValueError):
        return None  # a row Kept did not write: the journal is read again


def scan_pending(store: MemoryStore) -> PendingScan:
    """Every pending session that is not private, oldest first, as `store.pending_sessions`
    finds them: journals changed since the cache was written are read, the rest are not."""
    index_path = store.layout.local_dir / INDEX
    cached = _cached_rows(index_path)
    fresh: dict[str, Any] = {}
    scan = PendingScan([], {})
    changed = False
    for entry in _journal_entries(store.sessions_dir):
        try:
            stat = entry.stat(follow_symlinks=False)
        except FileNotFoundError:
            continue  # moved to done/ by another process meanwhile
        except OSError:
            stat = None
        key = [stat.st_size, stat.st_mtime_ns, stat.st_ino] if stat else None
        found = _from_cache(entry, key, cached.get(entry.name)) if key is not None else None
        if found is None:
            try:
                journal = journals.load(Path(entry.path))
            except FileNotFoundError:
                continue
            except OSError as exc:  # one bad file must not hide the rest
                scan.unreadable[Path(entry.path)] = unreadable(Path(entry.path), exc)
                continue
            row = [*(key or []), *_row(journal)]
            found, changed = (row, _session(entry.path, row[-2:])), True
        if key is not None:
            fresh[entry.name] = found[0]
        if found[1] is not None:
            scan.sessions.append(found[1])
    if changed or len(fresh) != len(cached):
        _save(index_path, fresh)
    return scan


def pending(store: MemoryStore) -> list[PendingSession]:
    """The sessions of `scan_pending`, for a caller that does not report unreadable journals."""
    return scan_pending(store).sessions


def _save(index_path: Path, fresh: dict[str, Any]) -> None:
    try:
        ensure_dir(index_path.parent)
        atomic_write(
            index_path,
            json.dumps({"version": INDEX_VERSION, "journals": fresh}, ensure_ascii=False),
        )
    except OSError as exc:  # a cache: the answer is right without it, only slower
        log.warning(
            "%s could not be written (%s); pending sessions are read from their "
            "journals next time too.",
            index_path,
            exc.strerror,
        )
