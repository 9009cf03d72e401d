"""The data folder's one façade: MEMORY.md and its versions, INSTRUCTIONS.md, HISTORY.md and
its archives, the session journals, model health and the consolidation log.

Each part is a component that owns its files (memory_file, versions, instructions,
history_files, session_files) and takes its paths from the one `Layout`; MemoryStore
composes them and is what the rest of Kept goes through. A caller on an event loop goes
through memory.data.aio instead, which runs each call off the loop.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

from memory.data.files import append_line, data_dir, ensure_dir, locked, read_text
from memory.data.history_files import HistoryFiles
from memory.data.instructions import InstructionsFile
from memory.data.layout import Layout
from memory.data.memory_file import MemoryFile, MemoryProblem, MemoryText, MemoryUnreadable
from memory.data.session_files import SessionFiles, SessionScan
from memory.data.versions import Version, VersionBook, VersionKind, Written
from memory.settings import MemorySettings

if TYPE_CHECKING:
    from catalog.health import HealthBook
    from memory.data.history import HistoryEntry
    from memory.sessions.journal import Journal

# Known from here before the components had modules of their own.
__all__ = [
    "MemoryProblem",
    "MemoryStore",
    "MemoryText",
    "MemoryUnreadable",
    "SessionScan",
    "Version",
]


class MemoryStore:
    """Everything Kept keeps on disk, laid out as memory.data.layout says."""

    def __init__(
        self,
        root: Path | None = None,
        settings: MemorySettings | None = None,
        *,
        device: str | None = None,
    ) -> None:
        root = root or data_dir()
        self.layout = Layout(root, device) if device else Layout(root)
        self._upgraded = False
        self.settings = settings or MemorySettings()
        self.book = VersionBook(self.layout.versions_dir)
        self.memory = MemoryFile(
            self.layout.memory_path, self.book, self.lock, self._finish_interrupted_save
        )
        self.instructions = InstructionsFile(
            self.layout.instructions_path, self.layout.instruction_versions_dir, self.lock
        )
        self.history = HistoryFiles(self.layout)
        self.sessions = SessionFiles(self.layout)

    # --- where things are (memory.data.layout) ------------------------------------------------

    @property
    def root(self) -> Path:
        return self.layout.root

    @property
    def memory_path(self) -> Path:
        return self.layout.memory_path

    @property
    def instructions_path(self) -> Path:
        return self.layout.instructions_path

    @property
    def history_path(self) -> Path:
        return self.layout.history_path

    @property
    def archive_dir(self) -> Path:
        return self.layout.archive_dir

    @property
    def device(self) -> str:
        return self.layout.device

    @property
    def sessions_dir(self) -> Path:
        return self.layout.sessions_dir

    @property
    def done_dir(self) -> Path:
        return self.layout.done_dir

    @property
    def versions_dir(self) -> Path:
        return self.layout.versions_dir

    @property
    def instruction_versions_dir(self) -> Path:
        return self.layout.instruction_versions_dir

    @property
    def log_path(self) -> Path:
        return self.layout.log_path

    @property
    def commit_path(self) -> Path:
        return self.layout.commit_path

    @property
    def lock_path(self) -> Path:
        return self.layout.lock_path

    @property
    def health_path(self) -> Path:
        return self.layout.health_path

    @property
    def blame_dir(self) -> Path:
        """Derived, per machine: each version's lines with the version that wrote each
        (memory.recall.provenance keeps it; delete it whenever you like, it is rebuilt)."""
        return self.root / "index.blame"

    def ensure(self) -> MemoryStore:
        layout = self.layout
        if not self._upgraded:  # once per store: a folder made by an older Kept is moved first
            from memory.data.upgrade import upgrade

            upgrade(layout)
            self._upgraded = True
        for folder in (
            layout.root,
            layout.archive_dir,
            layout.sessions_dir,
            layout.done_dir,
            layout.versions_dir,
            layout.local_dir,
        ):
            ensure_dir(folder)
        return self

    @contextmanager
    def lock(self) -> Iterator[None]:
        """Serialise writers of MEMORY.md, HISTORY.md and versions across processes."""
        self.ensure()
        with locked(self.lock_path):
            yield

    def _finish_interrupted_save(self) -> None:
        if self.commit_path.exists():
            from memory.consolidation.commit import recover_locked  # a crash's leftovers are rare

            recover_locked(self)

    # --- MEMORY.md (memory.data.memory_file) --------------------------------------------------

    def read_memory(self) -> MemoryText:
        return self.memory.read()

    def write_memory(self, text: str | bytes) -> None:
        self.memory.write(text)

    def memory_problem(self) -> str | None:
        return self.memory.problem()

    def keep_unversioned(self, current: MemoryText, now: str) -> None:
        self.memory.keep_unversioned(current, now)

    def save_edit(
        self,
        text: str,
        base_digest: str,
        *,
        source: VersionKind = VersionKind.EDIT,
        model: str | None = None,
        via: str | None = None,
    ) -> MemoryText | None:
        return self.memory.save_edit(text, base_digest, source, model, via=via)

    def discard_edit(self, text: str) -> int:
        return self.memory.discard_edit(text)

    def restore(self, number: int) -> int:
        return self.memory.restore(number)

    def undo(self, number: int) -> int:
        return self.memory.undo(number)

    def remember(self, line: str, *, via: str | None = None) -> int:
        return self.memory.remember(line, via, self.settings.memory_max_chars)

    # --- versions (memory.data.versions) ------------------------------------------------------

    def version(self, number: int) -> Version | None:
        return self.book.version(number)

    def version_numbers(self) -> list[int]:
        return self.book.numbers()

    def versions(self, numbers: list[int] | None = None) -> list[Version]:
        return self.book.versions(numbers)

    def versions_of(self, session: str) -> list[Version]:
        return self.book.of_session(session)

    def latest_version(self) -> Version | None:
        return self.book.latest()

    def latest_version_digest(self) -> str | None:
        return self.book.latest_digest()

    def previous_version(self, number: int) -> Version | None:
        return self.book.previous(number)

    def version_text(self, number: int) -> bytes:
        return self.book.text(number)

    def forget_version_entry(self, entry: str) -> int:
        return self.book.forget_entry(entry)

    def save_version(
        self,
        raw: bytes,
        source: VersionKind | str,
        *,
        time: str,
        session: str | None = None,
        model: str | None = None,
        restored: int | None = None,
        entry: str | None = None,
        evidence: tuple[dict[str, Any], ...] = (),
    ) -> int:
        """Keep one MEMORY.md text as a numbered version; `source` is a kind, or the token
        or older wording of one (a write-ahead intent read back); `evidence`, the decision
        on each edit that made it, with the user's words."""
        written = Written(
            source, time, session, model, restored=restored, entry=entry, evidence=evidence
        )
        return self.book.save(raw, written)

    # --- INSTRUCTIONS.md (memory.data.instructions) -------------------------------------------

    def read_instructions(self) -> MemoryText:
        return self.instructions.read()

    def instruction_versions(self) -> list[Path]:
        return self.instructions.versions()

    def save_instructions(self, text: str, base_digest: str) -> MemoryText | None:
        return self.instructions.save(text, base_digest)

    def keep_instruction_version(self, raw: bytes) -> None:
        self.instructions.keep_version(raw)

    # --- HISTORY.md (memory.data.history_files) -----------------------------------------------

    def history_entries(self) -> list[HistoryEntry]:
        return self.history.entries()

    def archive_files(self) -> list[Path]:
        return self.history.archive_files()

    def all_history_entries(self) -> list[HistoryEntry]:
        return self.history.all_entries()

    def has_history_entry(self, paragraph: str) -> bool:
        return self.history.has_entry(paragraph)

    def append_history(self, paragraph: str) -> None:
        self.history.append(paragraph, self.settings.history_window_chars)

    # --- sessions (memory.data.session_files) -------------------------------------------------

    def new_session(self, model: str | None = None, *, private: bool = False) -> Journal:
        self.ensure()
        return self.sessions.new(model, private=private)

    def discard(self, journal: Journal) -> None:
        self.sessions.discard(journal)

    def scan_active(self) -> SessionScan:
        """The active sessions, and the journals with an open mark that could not be read."""
        return self.sessions.active()

    def active_sessions(self) -> list[Journal]:
        return self.scan_active().journals

    def scan_sessions(self) -> SessionScan:
        """Active and pending sessions, oldest first, and the journals that could not be read."""
        return self.sessions.scan()

    def open_sessions(self) -> list[Journal]:
        return self.scan_sessions().journals

    def pending_sessions(self) -> list[Journal]:
        return [j for j in self.open_sessions() if j.pending and not j.private]

    def find_session(self, session_id: str) -> Journal:
        return self.sessions.find(session_id)

    def sweep_locks(self) -> None:
        self.sessions.sweep_locks()

    def settle(self, journal: Journal) -> None:
        self.sessions.settle(journal)

    # --- model health and the consolidation log -----------------------------------------------

    def health(self) -> HealthBook:
        """What every Kept process learned about each model (catalog.health): the
        transport orders, paces and times its walk by it."""
        from catalog.health import HealthBook  # the transport's, not the first frame's

        self.ensure()
        return HealthBook(self.health_path)

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
