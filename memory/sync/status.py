"""Where sync stands: this machine's last sync, every device's last change the remote has,
and what waits (conflict copies not merged yet, choices put to the user)."""

from __future__ import annotations

import json
import subprocess
from dataclasses import dataclass, field
from typing import Any

from memory.data.files import read_text
from memory.data.store import MemoryStore
from memory.sync.copies import find_copies
from memory.sync.git import BRANCH, GitError, Repo, redact
from memory.sync.proposals import sync_proposals


@dataclass
class SyncStatus:
    device: str
    remote: str | None  # None: not set up for `kept sync` (a sync tool may still carry it)
    last: dict[str, Any] | None  # this machine's last sync (memory.sync.gitsync.record_sync)
    devices: dict[str, str] = field(default_factory=dict)  # device -> its newest commit's time
    copies: int = 0
    proposals: int = 0


def last_sync(store: MemoryStore) -> dict[str, Any] | None:
    """This machine's last sync record; None when it never synced (or the record is bad)."""
    try:
        found = json.loads(read_text(store.layout.sync_record_path)[0] or "null")
    except (OSError, ValueError):
        return None
    return found if isinstance(found, dict) and isinstance(found.get("time"), str) else None


def device_times(repo: Repo, limit: int = 2000) -> dict[str, str]:
    """Each device's newest commit (Kept's messages begin "DEVICE: "), here or at the
    remote, newest first; {} when git cannot say."""
    refs = ["HEAD", f"refs/remotes/origin/{BRANCH}"]
    command = ["git", "-C", str(repo.root), "log", "--ignore-missing", f"-n{limit}"]
    try:
        done = subprocess.run(
            [*command, "--format=%cI %s", *refs],
            capture_output=True,
            env=repo.env(read_only=True),
            timeout=repo.timeout,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired):
        return {}
    times: dict[str, str] = {}
    for line in done.stdout.decode("utf-8", "replace").splitlines():
        when, _, subject = line.partition(" ")
        device, colon, _ = subject.partition(": ")
        if colon and device and device not in times:
            times[device] = when
    return times


def sync_status(store: MemoryStore) -> SyncStatus:
    """Where sync stands; git missing, or a repository it cannot read, is "no remote"."""
    repo = Repo(store.root)
    try:
        remote = repo.remote() if repo.is_repo() else None
        devices = device_times(repo) if remote is not None else {}
    except GitError:
        remote, devices = None, {}
    status = SyncStatus(store.device, redact(remote) if remote else None, last_sync(store))
    status.devices = devices
    status.copies = len(find_copies(store.root))
    status.proposals = len(sync_proposals(store))
    return status
