"""Session journals: one JSONL file per session, appended and fsynced as the chat happens.

Line 1 is a header; every other line is either a message (OpenAI message shape plus a
`time`) or a mark that records what became of a range of messages:

    {"kept": "session", "version": 1, "id": "...", "created": "...", "model": "..."}
    {"role": "user", "content": "Hi", "time": "2026-11-29T20:05:00+00:00"}
    {"mark": "pending", "start": 0, "end": 2, "closed": true, "time": "..."}
    {"mark": "failed", "start": 0, "end": 2, "reason": "...", "time": "..."}
    {"mark": "consolidated", "start": 0, "end": 2, "model": "...", "time": "..."}
    {"mark": "reopened", "time": "..."}
    {"mark": "queued", "id": "q…", "content": "...", "time": "...", "pasted": [[0, 12]]}

A message typed while a reply is being written is journaled at once as a "queued" mark, and
becomes a message (carrying `"queued": id`) when it is sent, after that reply: the
conversation keeps its order and a crash in between loses nothing (`Journal.queued` holds
what was typed and never sent).

A segment [start, end) of messages is pending from its "pending" mark until its
"consolidated" mark. A session is closed by /new; a closed session with nothing pending
moves to `done/`, where it is kept, read-only, unless the user continues it: then it is
reopened, and the messages that follow form a new segment.
"""

from __future__ import annotations

import json
import logging
import os
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from enum import StrEnum
from pathlib import Path
from typing import Any

from catalog.sanitize import clean_text
from memory.data.files import append_line, ensure_dir, fsync_dir
from memory.message import Message, clean_message, clean_pasted
from memory.sessions.marks import (
    HEADER_KIND,
    mark_open,
    open_journal,
    unmark_open,
)

log = logging.getLogger(__name__)

FORMAT_VERSION = 1


def now_iso() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


# In a private session's id: its journal never leaves the machine, and every sync tool is
# told so by its name (memory.data.layout.PER_MACHINE).
PRIVATE_MARK = "private-"


def new_session_id(*, private: bool = False) -> str:
    import secrets  # not needed before the first frame (ids are made after it)

    stamp = datetime.now(UTC).strftime("%Y%m%d-%H%M%S-")
    return stamp + (PRIVATE_MARK if private else "") + secrets.token_hex(3)


def session_started(session_id: str) -> datetime | None:
    """When a session began, read from its id ("20261120-091500-…", UTC), or None."""
    try:
        return datetime.strptime(session_id[:15], "%Y%m%d-%H%M%S").replace(tzinfo=UTC)
    except ValueError:
        return None


class JournalState(StrEnum):
    """Where a session stands: still being written, waiting to become memory, or saved."""

    ACTIVE = "active"
    PENDING = "pending"
    CONSOLIDATED = "consolidated"


@dataclass(frozen=True, order=True)
class Segment:
    """Messages [start, end) of one session, consolidated together."""

    start: int
    end: int

    def __str__(self) -> str:
        return f"{self.start}-{self.end}"


@dataclass(frozen=True)
class Failure:
    time: str
    reason: str
    rejected: bool = False  # every model answered, and every answer was refused
    cause: str = ""  # what the user can do about it (a consolidation Cause), for the app to word


@dataclass(frozen=True)
class Queued:
    """A message typed while a reply was being written, journaled but not yet sent."""

    id: str
    content: str
    time: str
    # The [start, end) spans of `content` that were pasted, not typed (memory.message).
    pasted: tuple[tuple[int, int], ...] = ()


@dataclass
class Journal:
    """A session journal as replayed from disk."""

    path: Path
    id: str
    created: str
    model: str | None = None
    messages: list[Message] = field(default_factory=list)
    pending: list[Segment] = field(default_factory=list)
    consolidated: list[Segment] = field(default_factory=list)
    failures: dict[Segment, list[Failure]] = field(default_factory=dict)
    closed: bool = False
    warnings: list[str] = field(default_factory=list)
    private: bool = False  # off the record: never consolidated, deleted when it ends
    queued: list[Queued] = field(default_factory=list)  # typed, not yet sent, oldest first

    @property
    def state(self) -> JournalState:
        if not self.closed:
            return JournalState.ACTIVE
        return JournalState.PENDING if self.pending else JournalState.CONSOLIDATED

    @property
    def compacted_through(self) -> int:
        """Messages before this index are consolidated or on their way; the rest is live."""
        ends = [s.end for s in (*self.pending, *self.consolidated)]
        return max(ends, default=0)

    def segment_messages(self, segment: Segment) -> list[Message]:
        return self.messages[segment.start : segment.end]

    # --- writing ---------------------------------------------------------------------------

    def _write(self, record: Mapping[str, Any]) -> None:
        """Append to the journal, which must exist: a journal another process moved to
        done/ (or deleted) meanwhile raises FileNotFoundError, and the caller finds it
        again, rather than a new one-line file taking its place."""
        line = json.dumps(record, ensure_ascii=False, separators=(",", ":"))
        append_line(self.path, line, create=False)

    def append(self, message: Mapping[str, Any]) -> Message:
        """Add one message to the journal (fsynced before this returns)."""
        if self.closed:
            raise ValueError(f"session {self.id} is closed")
        record = clean_message(message)
        record.setdefault("time", now_iso())
        self._write(record)
        self.messages.append(record)
        self._sent(record)
        return record

    def queue(self, content: str, pasted: list[list[int]] | None = None) -> Queued:
        """Journal a message typed while a reply is being written (fsynced before this
        returns); `append` it, carrying `"queued": its id`, when it is sent. `pasted`:
        the spans of it that were pasted, kept with it."""
        if self.closed:
            raise ValueError(f"session {self.id} is closed")
        if not isinstance(content, str):
            raise ValueError(f"content must be text, not {type(content).__name__}")
        import secrets

        text, spans = clean_pasted(content, pasted or [])
        waiting = Queued("q" + secrets.token_hex(4), text, now_iso(), spans)
        record: dict[str, Any] = {
            "mark": "queued",
            "id": waiting.id,
            "content": waiting.content,
            "time": waiting.time,
        }
        if spans:
            record["pasted"] = [list(s) for s in spans]
        self._write(record)
        self.queued.append(waiting)
        return waiting

    def _sent(self, message: Message) -> None:
        if message.get("queued"):
            self.queued = [q for q in self.queued if q.id != message["queued"]]

    def mark_pending(self, end: int | None = None, *, close: bool = False) -> Segment | None:
        """Queue messages from the last mark up to `end` for consolidation."""
        if self.private:
            raise ValueError(f"session {self.id} is private: it is never saved to memory")
        end = len(self.messages) if end is None else end
        start = self.compacted_through
        segment = Segment(start, end) if end > start else None
        record: dict[str, Any] = {"mark": "pending", "time": now_iso()}
        if segment is not None:
            record.update(start=segment.start, end=segment.end)
        elif not close:
            return None
        if close:
            record["closed"] = True
        self._write(record)
        if segment is not None:
            self.pending.append(segment)
        if close:
            unmark_open(self.path)  # after the mark: a crash between leaves a stale one only
        self.closed = self.closed or close
        return segment

    def mark_failed(
        self, segment: Segment, reason: str, *, rejected: bool = False, cause: str = ""
    ) -> None:
        failure = Failure(now_iso(), reason, rejected, cause)
        record: dict[str, Any] = {
            "mark": "failed",
            "start": segment.start,
            "end": segment.end,
            "reason": reason,
            "time": failure.time,
        }
        if rejected:
            record["rejected"] = True
        if cause:
            record["cause"] = cause
        self._write(record)
        self.failures.setdefault(segment, []).append(failure)

    def mark_consolidated(self, segment: Segment, model: str, *, rejected: bool = False) -> None:
        record: dict[str, Any] = {
            "mark": "consolidated",
            "start": segment.start,
            "end": segment.end,
            "model": model,
            "time": now_iso(),
        }
        if rejected:  # the user reviewed the change and kept none of it
            record["rejected"] = True
        self._write(record)
        self.record_consolidated(segment)

    def reopen(self) -> None:
        """Go on with a closed session: what follows is a new segment, saved at its close."""
        if self.private:
            raise ValueError(f"session {self.id} is private: it cannot be continued")
        mark_open(self.path)  # before the mark: an active journal always has its open mark
        self._write({"mark": "reopened", "time": now_iso()})
        self.closed = False

    def record_consolidated(self, segment: Segment) -> None:
        """Note in memory a consolidation whose mark is on disk (written here or elsewhere)."""
        if segment in self.pending:
            self.pending.remove(segment)
        if segment not in self.consolidated:
            self.consolidated.append(segment)


def create(
    folder: Path, model: str | None = None, session_id: str | None = None, *, private: bool = False
) -> Journal:
    """Start a new journal file in `folder`. A made-up id that is taken already (two made in
    the same second with the same random part) is made again; a given one that is taken
    raises FileExistsError."""
    ensure_dir(folder)
    while True:
        chosen = session_id or new_session_id(private=private)
        path = folder / f"{chosen}.jsonl"
        if session_id is None and path.exists():
            continue  # that journal's open mark is its own: leave it alone
        mark_open(path)  # before the journal: an active journal always has its open mark
        try:
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        except FileExistsError:
            if session_id is not None:
                raise
            continue  # another process took it in between
        break
    session_id = chosen
    header: dict[str, Any] = {
        "kept": HEADER_KIND,
        "version": FORMAT_VERSION,
        "id": session_id,
        "created": now_iso(),
        "model": model,
    }
    if private:
        header["private"] = True
    try:
        os.write(fd, (json.dumps(header, separators=(",", ":")) + "\n").encode())
        os.fsync(fd)
    finally:
        os.close(fd)
    fsync_dir(folder)
    return Journal(path, session_id, header["created"], model, private=private)


def records(path: Path) -> Iterator[tuple[int, dict[str, Any] | ValueError]]:
    """Each non-blank line of a JSONL file: its number, and its object or why it is not one."""
    fd = open_journal(path)
    with open(fd, "rb") as f:
        lines = f.read().split(b"\n")
    for number, raw in enumerate(lines, start=1):
        if not raw.strip():
            continue
        try:
            record = json.loads(raw.decode("utf-8"))
        except (UnicodeDecodeError, ValueError) as exc:
            yield number, ValueError(str(exc))
            continue
        except RecursionError:  # a line nested thousands deep: no message is
            yield number, ValueError("nested too deeply to read")
            continue
        yield number, record if isinstance(record, dict) else ValueError("not a JSON object")


def load(path: Path) -> Journal:
    """Replay a journal. Torn or corrupt lines are skipped with a warning naming file and
    line; a missing or bad header is rebuilt from the file name."""
    journal = Journal(path, path.stem, "")
    for number, record in records(path):
        if isinstance(record, ValueError):
            journal.warnings.append(f"{path}:{number}: skipped a damaged line ({record}).")
            continue
        if number == 1 and record.get("kept") == HEADER_KIND:
            if record.get("id") not in (None, path.stem):
                # The file name is what Kept looks sessions up by: it wins.
                journal.warnings.append(
                    f"{path}:1: the header names session "
                    f"{clean_text(str(record.get('id')))!r}; Kept uses "
                    f"the file's name, {path.stem}."
                )
            journal.created = str(record.get("created") or "")
            model = record.get("model")
            journal.model = clean_text(model) if isinstance(model, str) else None
            if model is not None and journal.model is None:
                journal.warnings.append(
                    f"{path}:{number}: ignored a header model that is "
                    f"not text ({type(model).__name__})."
                )
            journal.private = record.get("private") is True
            continue
        if "mark" in record:
            _apply_mark(journal, record, f"{path}:{number}")
            continue
        try:
            journal.messages.append(clean_message(record))
            journal._sent(journal.messages[-1])
        except ValueError as exc:
            journal.warnings.append(f"{path}:{number}: skipped a message ({exc}).")
    for warning in journal.warnings:
        log.warning(warning)
    return journal


def _apply_mark(journal: Journal, record: dict[str, Any], where: str) -> None:
    kind = record.get("mark")
    segment = None
    if isinstance(record.get("start"), int) and isinstance(record.get("end"), int):
        segment = Segment(record["start"], record["end"])
    if kind == "pending":
        if (
            segment is not None
            and segment not in journal.pending
            and segment not in journal.consolidated
        ):
            journal.pending.append(segment)
        if record.get("closed"):
            journal.closed = True
    elif kind == "failed" and segment is not None:
        journal.failures.setdefault(segment, []).append(
            Failure(
                str(record.get("time", "")),
                clean_text(str(record.get("reason", ""))),
                record.get("rejected") is True,
                str(record.get("cause") or ""),
            )
        )
    elif kind == "consolidated" and segment is not None:
        journal.record_consolidated(segment)
    elif kind == "reopened":
        journal.closed = False
    elif kind == "queued" and isinstance(record.get("id"), str):
        content = record.get("content")
        if isinstance(content, str) and content.strip():
            text, pasted = clean_pasted(content, record.get("pasted"))
            journal.queued.append(Queued(record["id"], text, str(record.get("time", "")), pasted))
        else:
            journal.warnings.append(f"{where}: skipped a queued message that is not text.")
    else:
        journal.warnings.append(f"{where}: skipped an unknown mark ({kind!r}).")
