"""The data folder's layout: every path and lock-file name Kept uses in it, named here once.

Light on purpose (pathlib only): the command line's quickest verbs and the search's child
process know where things are without importing the store.

    MEMORY.md  INSTRUCTIONS.md  HISTORY.md    what Kept knows, your instructions, the sessions
    history/YYYY-MM.md                        HISTORY.md's archived months
    sessions/ID.jsonl, sessions/done/         journals: open or pending, and finished
    sessions/.ID.live, sessions/.ID.claim     a session's locks: held by its window, and by
                                              whoever consolidates or deletes it
    versions/NNNNNN.json, versions/instructions/
    consolidation.jsonl  commit.json  .lock  health.json
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class Layout:
    """Where each file of one data folder is."""

    root: Path

    @property
    def memory_path(self) -> Path:
        return self.root / "MEMORY.md"

    @property
    def instructions_path(self) -> Path:
        return self.root / "INSTRUCTIONS.md"

    @property
    def history_path(self) -> Path:
        return self.root / "HISTORY.md"

    @property
    def archive_dir(self) -> Path:
        return self.root / "history"

    @property
    def sessions_dir(self) -> Path:
        return self.root / "sessions"

    @property
    def done_dir(self) -> Path:
        return self.sessions_dir / "done"

    @property
    def versions_dir(self) -> Path:
        return self.root / "versions"

    @property
    def instruction_versions_dir(self) -> Path:
        return self.versions_dir / "instructions"

    @property
    def log_path(self) -> Path:
        return self.root / "consolidation.jsonl"

    @property
    def commit_path(self) -> Path:
        return self.root / "commit.json"

    @property
    def lock_path(self) -> Path:
        return self.root / ".lock"

    @property
    def health_path(self) -> Path:
        return self.root / "health.json"

    def live_lock(self, session_id: str) -> Path:
        """Held by the window a session is open in, for as long as it is."""
        return live_lock(self.sessions_dir, session_id)

    def claim_lock(self, session_id: str) -> Path:
        """Held by whoever consolidates, deletes or proposes from a session."""
        return claim_lock(self.sessions_dir, session_id)

    def archive_files(self) -> list[Path]:
        return sorted(self.archive_dir.glob("*.md")) if self.archive_dir.is_dir() else []


def live_lock(sessions_dir: Path, session_id: str) -> Path:
    return sessions_dir / f".{session_id}.live"


def claim_lock(sessions_dir: Path, session_id: str) -> Path:
    return sessions_dir / f".{session_id}.claim"


# Every session lock in a sessions folder, for the sweep of those whose session left it.
LOCK_GLOBS = (".*.live", ".*.claim")
