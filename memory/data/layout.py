"""The data folder's layout: every path and lock-file name Kept uses in it, named here once.

Light on purpose (pathlib only): the command line's quickest verbs and the search's child
process know where things are without importing the store.

Several machines may share one data folder (through git or a file-sync tool). What they
all write is merged (memory.sync); everything else is written by one machine only, under its
device id (memory.data.device), or never leaves the machine.

Merged, written by every device:
    MEMORY.md  INSTRUCTIONS.md  HISTORY.md    what Kept knows, your instructions, the sessions
    history/YYYY-MM.md                        HISTORY.md's archived months
Written by one device, read by all:
    sessions/DEVICE/ID.jsonl, .../done/       its journals: open or pending, and finished
    devices/DEVICE/versions/NNNNNN.json       its versions of MEMORY.md (and instructions/)
    devices/DEVICE/consolidation.jsonl        its consolidation log
    devices/DEVICE/proposals/                 its changes waiting for your review
Never leaves the machine (PER_MACHINE: every sync tool is told to ignore it):
    sessions/DEVICE/.ID.live, .ID.claim       a session's locks: held by its window, and by
                                              whoever consolidates or deletes it
    local/DEVICE/                             commit.json, health.json, caches, last sync
    .lock  index.*  mcp/                      the store's lock, the search and blame indexes,
                                              the tool servers' logs
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

from memory.data.device import this_device
from memory.data.device import valid_device as valid


@dataclass(frozen=True)
class Layout:
    """Where each file of one data folder is, for one device."""

    root: Path
    device: str = field(default_factory=this_device)

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
    def sessions_root(self) -> Path:
        return self.root / "sessions"

    @property
    def sessions_dir(self) -> Path:
        """This device's journals."""
        return self.sessions_root / self.device

    @property
    def done_dir(self) -> Path:
        return self.sessions_dir / "done"

    @property
    def device_dir(self) -> Path:
        """What this device writes and every device reads."""
        return self.root / "devices" / self.device

    @property
    def local_dir(self) -> Path:
        """What never leaves this machine."""
        return self.root / "local" / self.device

    @property
    def versions_dir(self) -> Path:
        return self.device_dir / "versions"

    @property
    def instruction_versions_dir(self) -> Path:
        return self.versions_dir / "instructions"

    @property
    def log_path(self) -> Path:
        return self.device_dir / "consolidation.jsonl"

    @property
    def sync_record_path(self) -> Path:
        """This machine's last sync (other devices' are read from git)."""
        return self.local_dir / "sync.json"

    @property
    def proposals_dir(self) -> Path:
        """Changes waiting for the user: decided on the device whose session they are from."""
        return self.device_dir / "proposals"

    @property
    def commit_path(self) -> Path:
        return self.local_dir / "commit.json"

    @property
    def lock_path(self) -> Path:
        return self.root / ".lock"

    @property
    def health_path(self) -> Path:
        return self.local_dir / "health.json"

    def devices(self) -> list[str]:
        """Every device with sessions or a folder here, this one first."""
        found: set[str] = set()
        for folder in (self.sessions_root, self.root / "devices"):
            try:
                found.update(e.name for e in os.scandir(folder) if e.is_dir() and valid(e.name))
            except OSError:
                continue
        found.discard(self.device)
        return [self.device, *sorted(found)]

    def device_of(self, journal: Path) -> str:
        """The device a journal's path says wrote it."""
        folder = journal.parent.parent if journal.parent.name == "done" else journal.parent
        return folder.name

    def session_folders(self) -> list[tuple[Path, Path]]:
        """Each device's (open, done) journal folders, this device's first: a session is
        read from whichever device wrote it."""
        folders = []
        for device in self.devices():
            open_ = self.sessions_root / device
            folders.append((open_, open_ / "done"))
        return folders

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

# What no sync tool should carry, as gitignore-style patterns from the data folder: per
# machine (locks, marks, caches, the commit in progress, model health, sync bases) or
# derived (indexes). The one list every ignore file is written from (memory.sync.ignore).
PER_MACHINE = (
    "/.lock",
    "/.upgrade.lock",
    "/index.*",
    "/local/",
    "/attachments/private/",
    "/mcp/",
    "/sessions/.*",
    "/sessions/*/.*",
    "/sessions/*/*-private-*",
    "*.tmp",
)
