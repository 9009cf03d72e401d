"""The session journals' files: made, found, read in one look at sessions/, moved to done/
once settled, and the lock files of sessions that left swept away."""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass, field
from pathlib import Path

from memory.data.files import HeldLock, ensure_dir, fsync_dir
from memory.data.layout import LOCK_GLOBS, Layout
from memory.sessions import journal as journals
from memory.sessions.journal import Journal, JournalState
from memory.sessions.marks import is_closed, marked_open, open_marks, unmark_open


def unreadable(path: Path, exc: OSError) -> str:
    """The sentence for a journal that could not be read."""
    return (
        f"{path} could not be read ({exc.strerror or exc}); Kept "
        "skips it. Fix its owner or mode, or move it away."
    )


@dataclass(frozen=True)
class SessionScan:
    """What one look at sessions/ found: the journals it read, oldest first, and those it
    could not read, each with the sentence why (one bad file never hides the rest)."""

    journals: list[Journal] = field(default_factory=list)
    unreadable: dict[Path, str] = field(default_factory=dict)


class SessionFiles:
    """sessions/ (open and pending journals), sessions/done/ and the sessions' locks."""

    def __init__(self, layout: Layout) -> None:
        self.layout = layout

    def new(self, model: str | None, *, private: bool) -> Journal:
        return journals.create(self.layout.sessions_dir, model, private=private)

    def discard(self, journal: Journal) -> None:
        """Delete a private session's journal: off the record, nothing of it is kept."""
        if not journal.private:
            raise ValueError(f"session {journal.id} is not private; Kept never deletes it")
        journal.path.unlink(missing_ok=True)
        fsync_dir(journal.path.parent)
        unmark_open(journal.path)

    def active(self) -> SessionScan:
        """The active sessions, oldest first, as `scan` would find them, read from the few
        journals that have an open mark (memory.sessions.marks), not from every one."""
        scan = SessionScan()
        for path in marked_open(self.layout.sessions_dir):
            try:
                journal = journals.load(path)
            except FileNotFoundError:
                self.drop_open_mark(path)
                continue
            except OSError as exc:
                scan.unreadable[path] = unreadable(path, exc)
                continue
            if journal.state is JournalState.ACTIVE:
                scan.journals.append(journal)
            else:
                self.drop_open_mark(path)
        return scan

    def drop_open_mark(self, path: Path) -> None:
        """Remove a stale open mark, under the session's lock: whoever reopens a session
        holds it, so a mark made meanwhile is never the one removed."""
        lock = HeldLock(self.layout.live_lock(path.stem))
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

    def scan(self) -> SessionScan:
        """Active and pending sessions, oldest first. A session another device holds too
        (one data folder copied to two machines, each upgraded on its own) is this device's
        only if no device before it in name order has it: it is consolidated once."""
        scan = SessionScan()
        folder = self.layout.sessions_dir
        before = [d for d in self.layout.devices()[1:] if d < self.layout.device]
        for path in sorted(folder.glob("*.jsonl")) if folder.is_dir() else []:
            if before and self._held_before(path.name, before):
                continue
            try:
                scan.journals.append(journals.load(path))
            except FileNotFoundError:
                continue  # another Kept process just moved it to done/
            except OSError as exc:  # one bad file must not lock the user out of the rest
                scan.unreadable[path] = unreadable(path, exc)
        return scan

    def _held_before(self, name: str, devices: list[str]) -> bool:
        root = self.layout.sessions_root
        return any(
            (root / d / name).exists() or (root / d / "done" / name).exists() for d in devices
        )

    def find(self, session_id: str) -> Journal:
        # This device's first, then the others' (read-only here). Open before done/: a
        # journal only ever moves from the first to the second, so looking in that order
        # cannot miss one that moves while we look.
        for pair in self.layout.session_folders():
            for folder in pair:
                try:
                    return journals.load(folder / f"{session_id}.jsonl")
                except FileNotFoundError:
                    continue
        raise LookupError(f"No session '{session_id}' in {self.layout.sessions_root}.")

    def mine(self, journal: Journal) -> bool:
        """Whether this device wrote the journal (and so may consolidate, continue or
        delete it): another device's is only read here."""
        return journal.path.parent in (self.layout.sessions_dir, self.layout.done_dir)

    def refuse_others(self, journal: Journal, doing: str) -> None:
        """Raise ValueError when another device wrote the journal: only it may change it."""
        if not self.mine(journal):
            device = self.layout.device_of(journal.path)
            raise ValueError(f"it was written on {device}, so only {device} can {doing} it")

    def sweep_locks(self) -> None:
        """Delete the lock files (.ID.live, .ID.claim) of sessions that left sessions/: no
        one locks a settled session again, and they would pile up otherwise."""
        folder = self.layout.sessions_dir
        if not folder.is_dir():
            return
        marks = open_marks(folder)
        for mark in marks.glob("[!.]*") if marks.is_dir() else []:
            if not (folder / f"{mark.name}.jsonl").exists():
                self.drop_open_mark(folder / f"{mark.name}.jsonl")
        for lock in [path for pattern in LOCK_GLOBS for path in folder.glob(pattern)]:
            session_id = lock.name[1:].rsplit(".", 1)[0]
            if not (folder / f"{session_id}.jsonl").exists():
                lock.unlink(missing_ok=True)

    def settle(self, journal: Journal) -> None:
        """Move a closed, fully consolidated journal to done/, read-only. Idempotent, and
        safe when another process settles the same journal at the same time."""
        if journal.state is not JournalState.CONSOLIDATED:
            return
        done = self.layout.done_dir
        ensure_dir(done)
        target = done / journal.path.name
        if journal.path.parent == self.layout.sessions_dir:
            try:
                os.replace(journal.path, target)
            except FileNotFoundError:
                if not target.exists():
                    raise
            fsync_dir(self.layout.sessions_dir)
            fsync_dir(done)
            journal.path = target
        if target.exists() and stat.S_IMODE(target.stat().st_mode) != 0o400:
            os.chmod(target, 0o400)  # also mends a crash between the move and the chmod
