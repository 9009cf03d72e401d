"""The data folder: MEMORY.md, HISTORY.md and its archives, versions, sessions, the log."""

from __future__ import annotations

import errno
import json
import os
import stat
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from memory.data.files import (
    append_line,
    atomic_write,
    data_dir,
    digest,
    ensure_dir,
    fsync_dir,
    locked,
    read_text,
)
from memory.data.versions import VersionKind, version_numbers
from memory.sessions import journal as journals
from memory.sessions.journal import Journal, JournalState
from memory.sessions.marks import is_closed, marked_open, open_marks, unmark_open
from memory.settings import MemorySettings

if TYPE_CHECKING:
    from catalog.health import HealthBook
    from memory.data.history import HistoryEntry


class MemoryProblem(OSError):
    """MEMORY.md cannot be written as asked; `strerror` is the sentence to show."""

    def __str__(self) -> str:
        return str(self.strerror)


class MemoryUnreadable(MemoryProblem):
    """MEMORY.md exists but cannot be read."""


@dataclass(frozen=True)
class MemoryText:
    """MEMORY.md as read: its text, its exact bytes, and any problem with them."""

    text: str
    raw: bytes
    problem: str | None = None

    @property
    def digest(self) -> str:
        return digest(self.raw)


@dataclass(frozen=True)
class Version:
    number: int
    time: str
    source: str  # the prose: "consolidation", "edited by you", "restore of version 3"
    session: str | None
    model: str | None
    path: Path
    restored: int | None = None  # the version a restore (or an undo) brought back
    entry: str | None = None  # the history entry of the consolidation that wrote it

    @property
    def kind(self) -> VersionKind:
        return VersionKind.of(self.source)


class MemoryStore:
    """Everything Kept keeps on disk, laid out as in the README."""

    def __init__(self, root: Path | None = None, settings: MemorySettings | None = None) -> None:
        self.root = root or data_dir()
        self.settings = settings or MemorySettings()
        self.memory_path = self.root / "MEMORY.md"
        self.instructions_path = self.root / "INSTRUCTIONS.md"
        self.history_path = self.root / "HISTORY.md"
        self.archive_dir = self.root / "history"
        self.sessions_dir = self.root / "sessions"
        self.done_dir = self.sessions_dir / "done"
        self.versions_dir = self.root / "versions"
        self.instruction_versions_dir = self.versions_dir / "instructions"
        self.log_path = self.root / "consolidation.jsonl"
        self.commit_path = self.root / "commit.json"
        self.lock_path = self.root / ".lock"
        # Journals the last look at sessions/ could not read, each with the sentence why.
        self.skipped: dict[Path, str] = {}
        self.health_path = self.root / "health.json"

    def ensure(self) -> MemoryStore:
        for folder in (
            self.root,
            self.archive_dir,
            self.sessions_dir,
            self.done_dir,
            self.versions_dir,
        ):
            ensure_dir(folder)
        return self

    @contextmanager
    def lock(self) -> Iterator[None]:
        """Serialise writers of MEMORY.md, HISTORY.md and versions across processes."""
        self.ensure()
        with locked(self.lock_path):
            yield

    # --- MEMORY.md -------------------------------------------------------------------------

    def read_memory(self) -> MemoryText:
        """MEMORY.md as it is; raises MemoryUnreadable (an OSError) with the sentence to
        show when the file is there but cannot be read."""
        try:
            text, raw = read_text(self.memory_path)
        except OSError as exc:
            raise MemoryUnreadable(
                exc.errno,
                f"{self.memory_path} cannot be read "
                f"({exc.strerror or exc}); check its owner and mode "
                "(`kept doctor`). Kept will not write over it.",
                str(self.memory_path),
            ) from None
        try:
            raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            return MemoryText(
                text,
                raw,
                f"{self.memory_path} is not valid UTF-8 (byte "
                f"{raw[exc.start]:#04x} at offset {exc.start}); Kept reads it "
                "with replacement characters and keeps the original bytes as a "
                "version before writing it.",
            )
        if "\x00" in text:
            return MemoryText(
                text,
                raw,
                f"{self.memory_path} looks binary (it holds NUL "
                "bytes), not Markdown; restore a version or replace it.",
            )
        return MemoryText(text, raw)

    def write_memory(self, text: str | bytes) -> None:
        """Replace MEMORY.md; refused, with the sentence why, when it is a link or
        read-only (the user's choice is respected, never silently undone)."""
        problem = self.memory_problem()
        if problem is not None:
            raise MemoryProblem(errno.EACCES, problem, str(self.memory_path))
        atomic_write(self.memory_path, text)

    def memory_problem(self) -> str | None:
        """Why Kept must not write MEMORY.md now, in a sentence, or None. Checked before a
        consolidation asks any model: a file that cannot be saved costs no request."""
        path = self.memory_path
        if path.is_symlink():
            return (
                f"{path} is a symbolic link; Kept does not write through links, so "
                "memory is not saved. Put the file itself there."
            )
        if not path.exists():
            return None
        if not path.is_file():
            return f"{path} is not a regular file; move it away so Kept can save memory."
        if not path.stat().st_mode & stat.S_IWUSR:
            return (
                f"{path} is read-only (mode {stat.S_IMODE(path.stat().st_mode):o}); "
                "Kept respects that and saves no memory: `chmod 600` it to let Kept "
                "write it."
            )
        try:
            self.read_memory()
        except MemoryUnreadable as exc:
            return exc.strerror
        return None

    # --- versions --------------------------------------------------------------------------

    @property
    def blame_dir(self) -> Path:
        """Derived, per machine: each version's lines with the version that wrote each
        (memory.recall.provenance keeps it; delete it whenever you like, it is rebuilt)."""
        return self.root / "index.blame"

    def version(self, number: int) -> Version | None:
        """Version `number` as its record says, or None when it has no readable record."""
        meta_path = self.versions_dir / f"{number:06d}.json"
        try:
            meta = json.loads(meta_path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None
        if not isinstance(meta, dict):
            return None
        restored = meta.get("restored")
        session, model, entry = meta.get("session"), meta.get("model"), meta.get("entry")
        return Version(
            number,
            str(meta.get("time", "")),
            str(meta.get("source", "")),
            session if isinstance(session, str) else None,
            model if isinstance(model, str) else None,
            meta_path.with_suffix(".md"),
            restored if isinstance(restored, int) and not isinstance(restored, bool) else None,
            entry if isinstance(entry, str) else None,
        )

    def version_numbers(self) -> list[int]:
        """Every version's number, oldest first, from the records' names alone."""
        return version_numbers(self.versions_dir)

    def versions(self, numbers: list[int] | None = None) -> list[Version]:
        """Every version (or those `numbers` name) with a readable record, oldest first."""
        found = (self.version(n) for n in (self.version_numbers() if numbers is None else numbers))
        return [v for v in found if v is not None]

    def versions_of(self, session: str) -> list[Version]:
        """The versions a session's consolidations wrote: only the records whose text
        names the session are parsed."""
        wanted = json.dumps(session)
        found = []
        for number in self.version_numbers():
            try:
                text = (self.versions_dir / f"{number:06d}.json").read_text(encoding="utf-8")
            except OSError:
                continue
            if wanted in text and (version := self.version(number)) and version.session == session:
                found.append(version)
        return found

    def latest_version(self) -> Version | None:
        """The newest version with a readable record: the records are read newest first,
        and only until one can be read."""
        for number in reversed(self.version_numbers()):
            if (version := self.version(number)) is not None:
                return version
        return None

    def latest_version_digest(self) -> str | None:
        latest = self.latest_version()
        if latest is None:
            return None
        try:
            return digest(latest.path.read_bytes())
        except OSError:
            return None

    def save_version(
        self,
        raw: bytes,
        source: str,
        *,
        time: str,
        session: str | None = None,
        model: str | None = None,
        restored: int | None = None,
        entry: str | None = None,
    ) -> int:
        """Keep one MEMORY.md text as a numbered version (content first, then metadata)."""
        ensure_dir(self.versions_dir)
        number = max(self.version_numbers(), default=0) + 1
        atomic_write(self.versions_dir / f"{number:06d}.md", raw)
        meta: dict[str, Any] = {
            "time": time,
            "source": source,
            "session": session,
            "model": model,
            "digest": digest(raw),
        }
        if restored is not None:
            meta["restored"] = restored
        if entry is not None:
            meta["entry"] = entry
        atomic_write(self.versions_dir / f"{number:06d}.json", json.dumps(meta))
        return number

    def forget_version_entry(self, entry: str) -> int:
        """Remove a forgotten history entry's text from every version record that keeps
        it (the version, and the MEMORY.md it holds, stay; each record stays valid JSON).
        The caller holds the lock. Returns how many records changed."""
        changed = 0
        # A record is parsed only when its text holds the entry as JSON writes it.
        wanted = {json.dumps(entry)[1:-1], json.dumps(entry, ensure_ascii=False)[1:-1]}
        for number in self.version_numbers():
            meta_path = self.versions_dir / f"{number:06d}.json"
            try:
                text = meta_path.read_text(encoding="utf-8")
                if not any(form in text for form in wanted):
                    continue
                meta = json.loads(text)
            except (OSError, ValueError):
                continue
            if isinstance(meta, dict) and meta.get("entry") == entry:
                del meta["entry"]
                atomic_write(meta_path, json.dumps(meta))
                changed += 1
        return changed

    def version_text(self, number: int) -> bytes:
        path = self.versions_dir / f"{number:06d}.md"
        try:
            return path.read_bytes()
        except FileNotFoundError:
            raise LookupError(
                f"There is no version {number}; `kept memory versions` lists them."
            ) from None

    def _finish_interrupted_save(self) -> None:
        if self.commit_path.exists():
            from memory.consolidation.commit import recover_locked  # a crash's leftovers are rare

            recover_locked(self)

    def keep_unversioned(self, current: MemoryText, now: str) -> None:
        # Kept versions everything it writes, so text it has no version of is the user's.
        if current.raw and self.latest_version_digest() != current.digest:
            self.save_version(current.raw, VersionKind.EDIT, time=now)

    def save_edit(
        self,
        text: str,
        base_digest: str,
        *,
        source: VersionKind = VersionKind.EDIT,
        model: str | None = None,
    ) -> MemoryText | None:
        """Save the user's edit of MEMORY.md (or a tidy they accepted), made from the text
        whose digest is `base_digest`. Returns None when saved, or the text now on disk
        when it changed meanwhile (nothing is written then: the caller lets the user
        choose)."""
        from datetime import UTC

        now = datetime.now(UTC).isoformat(timespec="seconds")
        with self.lock():
            self._finish_interrupted_save()
            current = self.read_memory()
            if current.digest != base_digest:
                return current
            self.keep_unversioned(current, now)
            self.write_memory(text)
            self.save_version(text.encode("utf-8"), source, time=now, model=model)
        return None

    def discard_edit(self, text: str) -> int:
        """Keep an edit the user chose not to save (MEMORY.md changed under it and they
        kept that) as a version that never was MEMORY.md: nothing they typed is lost.
        Numbered under the lock, since version numbers are shared with Kept's writes."""
        from datetime import UTC

        now = datetime.now(UTC).isoformat(timespec="seconds")
        with self.lock():
            return self.save_version(text.encode("utf-8"), VersionKind.NOT_KEPT, time=now)

    def restore(self, number: int) -> int:
        """Make version `number` the current MEMORY.md; the restore is a new version."""
        from datetime import UTC

        raw = self.version_text(number)
        now = datetime.now(UTC).isoformat(timespec="seconds")
        with self.lock():
            self._finish_interrupted_save()
            self.keep_unversioned(self.read_memory(), now)
            self.write_memory(raw)
            return self.save_version(
                raw, VersionKind.RESTORE.prose(number), time=now, restored=number
            )

    def previous_version(self, number: int) -> Version | None:
        """The version that was MEMORY.md just before version `number` was written (None:
        MEMORY.md was empty). An edit the user chose not to keep was never MEMORY.md."""
        # Newest first, and only back to the first that was MEMORY.md: not every record.
        for earlier in reversed([n for n in self.version_numbers() if n < number]):
            version = self.version(earlier)
            if version is not None and version.kind is not VersionKind.NOT_KEPT:
                return version
        return None

    def undo(self, number: int) -> int:
        """Put back the MEMORY.md that version `number` replaced; the undo is itself a new
        version. Raises ValueError, writing nothing, if MEMORY.md changed since."""
        from datetime import UTC

        written = self.version_text(number)
        previous = self.previous_version(number)
        raw = previous.path.read_bytes() if previous else b""
        now = datetime.now(UTC).isoformat(timespec="seconds")
        with self.lock():
            self._finish_interrupted_save()
            if self.read_memory().digest != digest(written):
                raise ValueError(
                    f"MEMORY.md changed after version {number}, so it cannot be "
                    "undone here; /memory lists every version to restore."
                )
            self.write_memory(raw)
            return self.save_version(
                raw,
                VersionKind.UNDO.prose(number),
                time=now,
                restored=previous.number if previous else 0,
            )

    def remember(self, line: str, *, via: str | None = None) -> int:
        """Add one line to MEMORY.md at once, with no model call (/remember); the result is
        a version, whose prose names `via`, the tool the line came through (an MCP
        client), when given. Returns its number; raises ValueError, writing nothing, when
        the line is empty or MEMORY.md would outgrow its budget."""
        from datetime import UTC

        from memory.consolidation.redact import redact
        from memory.sanitize import clean_text

        # Redacted before the spaces are joined: a key wrapped onto a second line is one.
        line = " ".join(redact(clean_text(line)).split())
        if not line:
            raise ValueError(
                "Nothing to remember: write it after the command, e.g. "
                "/remember I prefer metric units."
            )
        now = datetime.now(UTC).isoformat(timespec="seconds")
        with self.lock():
            self._finish_interrupted_save()
            current = self.read_memory()
            body = current.text.rstrip("\n")
            text = f"{body}\n- {line}\n" if body else f"- {line}\n"
            if len(text) > self.settings.memory_max_chars:
                raise ValueError(
                    f"MEMORY.md would be {len(text):,} characters, over its "
                    f"{self.settings.memory_max_chars:,} budget; /tidy it first."
                )
            self.keep_unversioned(current, now)
            self.write_memory(text)
            return self.save_version(
                text.encode("utf-8"), VersionKind.REMEMBERED.prose(via=via), time=now, entry=line
            )

    # --- INSTRUCTIONS.md -------------------------------------------------------------------

    def read_instructions(self) -> MemoryText:
        """What the assistant should always do (tone, language, format), as the user wrote it."""
        text, raw = read_text(self.instructions_path)
        return MemoryText(text, raw)

    def instruction_versions(self) -> list[Path]:
        """Every INSTRUCTIONS.md text Kept replaced or wrote, oldest first."""
        if not self.instruction_versions_dir.is_dir():
            return []
        return sorted(self.instruction_versions_dir.glob("*.md"))

    def save_instructions(self, text: str, base_digest: str) -> MemoryText | None:
        """Save an edit of INSTRUCTIONS.md made from the text whose digest is `base_digest`,
        the previous text kept as a version. None when saved, else the text now on disk
        (nothing written: the caller lets the user choose), as with MEMORY.md."""
        with self.lock():
            current = self.read_instructions()
            if current.digest != base_digest:
                return current
            versions = self.instruction_versions()
            known = digest(versions[-1].read_bytes()) if versions else None
            if current.raw and known != current.digest:
                self._instruction_version(current.raw)
            atomic_write(self.instructions_path, text)
            self._instruction_version(text.encode("utf-8"))
        return None

    def keep_instruction_version(self, raw: bytes) -> None:
        """Keep a text the user chose not to keep (a conflict they resolved)."""
        with self.lock():
            self._instruction_version(raw)

    def _instruction_version(self, raw: bytes) -> None:
        ensure_dir(self.instruction_versions_dir)
        number = (
            max((int(p.stem) for p in self.instruction_versions() if p.stem.isdigit()), default=0)
            + 1
        )
        atomic_write(self.instruction_versions_dir / f"{number:06d}.md", raw)

    # --- HISTORY.md ------------------------------------------------------------------------

    # HISTORY.md's format (memory.data.history) is imported with the first look at it, not
    # before the first frame.

    def history_entries(self) -> list[HistoryEntry]:
        from memory.data.history import parse_entries

        text, _ = read_text(self.history_path)
        return parse_entries(text, self.history_path)

    def archive_files(self) -> list[Path]:
        if not self.archive_dir.is_dir():
            return []
        return sorted(self.archive_dir.glob("*.md"))

    def all_history_entries(self) -> list[HistoryEntry]:
        """Archived entries, oldest first, then HISTORY.md's."""
        from memory.data.history import parse_entries

        entries: list[HistoryEntry] = []
        for path in self.archive_files():
            entries.extend(parse_entries(read_text(path)[0], path))
        return entries + self.history_entries()

    def has_history_entry(self, paragraph: str) -> bool:
        """Whether HISTORY.md, or the archive an entry of that month rolls into, holds it."""
        from memory.data.history import ENTRY_START, parse_entries

        match = ENTRY_START.match(paragraph)
        places = [self.history_path]
        places.append(self.archive_dir / f"{match.group(1)[:7] if match else 'undated'}.md")
        return any(
            e.text == paragraph for path in places for e in parse_entries(read_text(path)[0], path)
        )

    def append_history(self, paragraph: str) -> None:
        """Add one entry in date order (a session consolidated late, an import, goes where
        its date puts it); roll the oldest into history/YYYY-MM.md past the window.

        Archives are written before HISTORY.md shrinks, and skip entries they already
        hold, so a crash in between duplicates nothing and loses nothing.
        """
        from memory.data.history import ENTRY_START, join_entries, parse_entries

        text, raw = read_text(self.history_path)
        self._keep_undecodable(self.history_path, raw)
        # Whatever stands before the first entry (a heading the user added) stays put.
        lines = text.splitlines(keepends=True)
        first = next((i for i, line in enumerate(lines) if ENTRY_START.match(line)), len(lines))
        preamble = "".join(lines[:first]).rstrip()
        preamble = preamble + "\n\n" if preamble else ""
        parsed = parse_entries(text, self.history_path)
        entries = [e.text for e in parsed]
        match = ENTRY_START.match(paragraph)
        stamp = match.group(1) if match else "~"  # undated: last
        at = next((i for i, e in enumerate(parsed) if e.stamp > stamp), len(parsed))
        entries.insert(at, paragraph)
        window = self.settings.history_window_chars
        rolled: list[str] = []
        while len(entries) > 1 and sum(len(e) + 2 for e in entries) > window:
            rolled.append(entries.pop(0))
        if rolled:
            self._archive(rolled)
        atomic_write(self.history_path, preamble + join_entries(entries))

    def _keep_undecodable(self, path: Path, raw: bytes) -> None:
        """Before a file with bytes that are not UTF-8 is rewritten (as text, with
        replacement characters), its exact bytes are copied aside: nothing is lost."""
        try:
            raw.decode("utf-8")
        except UnicodeDecodeError:
            from datetime import UTC, datetime

            stamp = datetime.now(UTC).strftime("%Y%m%d-%H%M%S")
            atomic_write(path.with_name(f"{path.name}.{stamp}.orig"), raw)

    def _archive(self, paragraphs: list[str]) -> None:
        from memory.data.history import ENTRY_START, join_entries, parse_entries

        ensure_dir(self.archive_dir)
        by_month: dict[str, list[str]] = {}
        for paragraph in paragraphs:
            match = ENTRY_START.match(paragraph)
            month = match.group(1)[:7] if match else "undated"
            by_month.setdefault(month, []).append(paragraph)
        for month, items in by_month.items():
            path = self.archive_dir / f"{month}.md"
            old, raw = read_text(path)
            self._keep_undecodable(path, raw)
            have = {e.text for e in parse_entries(old, path)}
            new = [p for p in items if p not in have]
            if new:
                body = old if not old or old.endswith("\n\n") else old.rstrip("\n") + "\n\n"
                atomic_write(path, body + join_entries(new))

    # --- sessions --------------------------------------------------------------------------

    def new_session(self, model: str | None = None, *, private: bool = False) -> Journal:
        self.ensure()
        return journals.create(self.sessions_dir, model, private=private)

    def discard(self, journal: Journal) -> None:
        """Delete a private session's journal: off the record, nothing of it is kept."""
        if not journal.private:
            raise ValueError(f"session {journal.id} is not private; Kept never deletes it")
        journal.path.unlink(missing_ok=True)
        fsync_dir(journal.path.parent)
        unmark_open(journal.path)

    def active_sessions(self) -> list[Journal]:
        """The active sessions, oldest first, as `open_sessions` would find them, read from
        the few journals that have an open mark (journal.open_marks), not from every one."""
        found = []
        skipped: dict[Path, str] = {}
        for path in marked_open(self.sessions_dir):
            try:
                journal = journals.load(path)
            except FileNotFoundError:
                self._drop_open_mark(path)
                continue
            except OSError as exc:
                skipped[path] = self._unreadable(path, exc)
                continue
            if journal.state is JournalState.ACTIVE:
                found.append(journal)
            else:
                self._drop_open_mark(path)
        self.skipped = skipped
        return found

    def _drop_open_mark(self, path: Path) -> None:
        """Remove a stale open mark, under the session's lock: whoever reopens a session
        holds it, so a mark made meanwhile is never the one removed."""
        from memory.data.files import HeldLock

        lock = HeldLock(self.sessions_dir / f".{path.stem}.live")
        try:
            if not lock.acquire():
                return
        except OSError:
            return
        try:
            if not path.exists() or is_closed(path):
                unmark_open(path)
        except OSError:
            pass  # unreadable now: the mark stays, and the next look reads it again
        finally:
            lock.release()

    @staticmethod
    def _unreadable(path: Path, exc: OSError) -> str:
        return (
            f"{path} could not be read ({exc.strerror or exc}); Kept "
            "skips it. Fix its owner or mode, or move it away."
        )

    def open_sessions(self) -> list[Journal]:
        """Active and pending sessions, oldest first."""
        if not self.sessions_dir.is_dir():
            return []
        found = []
        skipped: dict[Path, str] = {}
        for path in sorted(self.sessions_dir.glob("*.jsonl")):
            try:
                found.append(journals.load(path))
            except FileNotFoundError:
                continue  # another Kept process just moved it to done/
            except OSError as exc:  # one bad file must not lock the user out of the rest
                skipped[path] = self._unreadable(path, exc)
        self.skipped = skipped
        return found

    def pending_sessions(self) -> list[Journal]:
        return [j for j in self.open_sessions() if j.pending and not j.private]

    def find_session(self, session_id: str) -> Journal:
        # sessions/ before done/: a journal only ever moves from the first to the second,
        # so looking in that order cannot miss one that moves while we look.
        for folder in (self.sessions_dir, self.done_dir):
            try:
                return journals.load(folder / f"{session_id}.jsonl")
            except FileNotFoundError:
                continue
        raise LookupError(f"No session '{session_id}' in {self.sessions_dir}.")

    def sweep_locks(self) -> None:
        """Delete the lock files (.ID.live, .ID.claim) of sessions that left sessions/: no
        one locks a settled session again, and they would pile up otherwise."""
        if not self.sessions_dir.is_dir():
            return
        marks = open_marks(self.sessions_dir)
        for mark in marks.glob("[!.]*") if marks.is_dir() else []:
            if not (self.sessions_dir / f"{mark.name}.jsonl").exists():
                self._drop_open_mark(self.sessions_dir / f"{mark.name}.jsonl")
        for lock in [*self.sessions_dir.glob(".*.live"), *self.sessions_dir.glob(".*.claim")]:
            session_id = lock.name[1:].rsplit(".", 1)[0]
            if not (self.sessions_dir / f"{session_id}.jsonl").exists():
                lock.unlink(missing_ok=True)

    def settle(self, journal: Journal) -> None:
        """Move a closed, fully consolidated journal to done/, read-only. Idempotent, and
        safe when another process settles the same journal at the same time."""
        if journal.state is not JournalState.CONSOLIDATED:
            return
        ensure_dir(self.done_dir)
        target = self.done_dir / journal.path.name
        if journal.path.parent == self.sessions_dir:
            try:
                os.replace(journal.path, target)
            except FileNotFoundError:
                if not target.exists():
                    raise
            fsync_dir(self.sessions_dir)
            fsync_dir(self.done_dir)
            journal.path = target
        if target.exists() and stat.S_IMODE(target.stat().st_mode) != 0o400:
            os.chmod(target, 0o400)  # also mends a crash between the move and the chmod

    # --- model health ----------------------------------------------------------------------

    def health(self) -> HealthBook:
        """What every Kept process learned about each model (catalog.health): the
        transport orders, paces and times its walk by it."""
        from catalog.health import HealthBook  # the transport's, not the first frame's

        self.ensure()
        return HealthBook(self.health_path)

    # --- the consolidation log -------------------------------------------------------------

    def log(self, record: dict[str, Any]) -> None:
        self.ensure()
        append_line(self.log_path, json.dumps(record, ensure_ascii=False, separators=(",", ":")))

    def read_log(self) -> list[dict[str, Any]]:
        text, _ = read_text(self.log_path)
        records = []
        for line in text.splitlines():
            try:
                record = json.loads(line)
            except ValueError:
                continue
            if isinstance(record, dict):
                records.append(record)
        return records
