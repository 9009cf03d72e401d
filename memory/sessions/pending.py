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

from memory.data.files import atomic_write, read_text
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
        failures = [[f.time, f.reason, f.rejected] for f in journal.failures.get(segment, [])]
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
            failures[segment] = [Failure(str(t), str(r), bool(x)) for t, r, x in failed]
    return PendingSession(path, str(session_id), parts, failures)


def pending(store: MemoryStore) -> list[PendingSession]:
    """Every pending session that is not private, oldest first, as `store.pending_sessions`
    finds them: journals changed since the cache was written are read, the rest are not.
    A journal that cannot be read is named in `store.skipped`, as there."""
    index_path = store.root / INDEX
    cached: dict[str, Any] = {}
    try:
        index = json.loads(read_text(index_path)[0] or "{}")
        if index.get("version") == INDEX_VERSION and isinstance(index.get("journals"), dict):
            cached = index["journals"]
    except (OSError, ValueError, AttributeError):
        cached = {}  # missing, damaged or not an index: rebuilt below
    try:
        with os.scandir(store.sessions_dir) as scan:
            entries = sorted(
                (e for e in scan if e.name.endswith(".jsonl")),
                key=lambda e: e.name,
            )
    except (FileNotFoundError, NotADirectoryError):
        entries = []
    fresh: dict[str, Any] = {}
    found: list[PendingSession] = []
    skipped: dict[Path, str] = {}
    changed = False
    for entry in entries:
        try:
            stat = entry.stat(follow_symlinks=False)
        except FileNotFoundError:
            continue  # moved to done/ by another process meanwhile
        except OSError:
            stat = None
        key = [stat.st_size, stat.st_mtime_ns, stat.st_ino] if stat else None
        known = cached.get(entry.name)
        session: PendingSession | None = None
        if isinstance(known, list) and key is not None and known[:3] == key:
            try:
                session = _session(entry.path, known[3:])
            except (TypeError, ValueError):
                known = None  # a row Kept did not write: the journal is read again
            else:
                fresh[entry.name] = known
                if session is not None:
                    found.append(session)
                continue
        try:
            journal = journals.load(Path(entry.path))
        except FileNotFoundError:
            continue
        except OSError as exc:  # one bad file must not hide the rest
            skipped[Path(entry.path)] = (
                f"{entry.path} could not be read ({exc.strerror or exc}); Kept "
                "skips it. Fix its owner or mode, or move it away."
            )
            continue
        row = _row(journal)
        if key is not None:
            fresh[entry.name] = [*key, *row]
        changed = True
        session = _session(entry.path, row)
        if session is not None:
            found.append(session)
    store.skipped = skipped
    if changed or len(fresh) != len(cached):
        try:
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
    return found
