"""`kept sync` over git: commit what this device wrote, fetch, merge, commit, push.

The data folder is the work tree, and git never writes it: every file the other side
changed is read from its commit and written here the way Kept writes any file (atomically,
the shared ones through the store and its lock). Then the folder is staged and recorded as
the merge of both sides, and pushed; a push the remote rejects (another device pushed
first) is fetched and merged again. Killed at any point, the next sync finds the folder as
some mix of before and after, each file whole, commits it as this device's change and
merges again; since merging a side twice changes nothing, nothing is lost or doubled.

What merges how:
- MEMORY.md, INSTRUCTIONS.md, HISTORY.md, history/: memory.sync.shared, against the file
  as it was in the commit both sides share (git's merge base);
- this device's own files (sessions/DEVICE/, devices/DEVICE/): ours, always;
- anything else (another device's files, attachments, exports, files of the user's own):
  theirs where only they changed it, ours where we did.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

from memory.data.files import atomic_write, fsync_dir, locked
from memory.data.store import MemoryStore
from memory.sync.blobs import read_blobs
from memory.sync.copies_merge import keep_proposal, merge_copies
from memory.sync.git import GitError, GitFailure, Repo
from memory.sync.ignore import write_ignore_files
from memory.sync.shared import is_shared, merge_shared

# Pushes refused in a row (other devices pushing meanwhile) before giving up for now.
ATTEMPTS = 3
ATTACHMENTS = "attachments/"  # each device collects its own: a deletion is never taken


class SyncBusy(Exception):
    """Another `kept sync` is running in this data folder."""


@dataclass
class SyncReport:
    """What one sync did."""

    pushed: bool = False
    devices: set[str] = field(default_factory=set)  # whose changes came in
    shared: set[str] = field(default_factory=set)  # shared files the merge changed
    files: int = 0  # other files taken from the other side
    proposals: int = 0  # lines both changed, held for the user
    copies: int = 0  # a sync tool's conflict copies merged


@contextmanager
def _sync_lock(store: MemoryStore) -> Iterator[None]:
    store.ensure()
    with locked(store.layout.local_dir / "sync.lock", blocking=False) as mine:
        if not mine:
            raise SyncBusy("Another `kept sync` is running in this data folder; try again soon.")
        yield


def _owner(relative: str) -> str | None:
    """The device a path belongs to (sessions/DEVICE/…, devices/DEVICE/…), if one does."""
    parts = relative.split("/")
    if len(parts) > 2 and parts[0] in ("sessions", "devices"):
        return parts[1]
    return None


def _stage(store: MemoryStore, repo: Repo) -> None:
    """Stage the folder; a private session's journal never, whatever its name (the ignore
    files name private ids; this also keeps out one an older Kept named otherwise)."""
    repo.stage_all()
    private = [path for path in repo.staged_new("sessions/") if _is_private(store.root / path)]
    repo.unstage(private)


def _is_private(path: Path) -> bool:
    if path.suffix != ".jsonl":
        return False
    try:
        with open(path, "rb") as f:
            return b'"private":true' in f.readline(1 << 16).replace(b" ", b"")
    except OSError:
        return False


def _commit_local(store: MemoryStore, repo: Repo) -> None:
    _stage(store, repo)
    now = datetime.now(UTC).isoformat(timespec="seconds")
    repo.commit(f"{store.device}: what it wrote until {now}", store.device)


def _take(path: Path, wanted: bytes | None) -> bool:
    """Make the file at `path` hold `wanted` (None: no file); whether it changed."""
    try:
        current: bytes | None = path.read_bytes()
    except FileNotFoundError:
        current = None
    if current == wanted:
        return False
    if wanted is None:
        path.unlink(missing_ok=True)
        fsync_dir(path.parent)
    else:
        path.parent.mkdir(parents=True, exist_ok=True)
        atomic_write(path, wanted)
    return True


def _merge(store: MemoryStore, repo: Repo, theirs: str, report: SyncReport) -> None:
    head = repo.head()
    if head is not None and repo.is_ancestor(theirs, head):
        return  # nothing of theirs is new here
    base = repo.merge_base(head, theirs) if head else None
    # Even with nothing to take (they changed only what is ours), the merge is recorded:
    # without it, the next push would be refused for ever.
    paths = [p for p in repo.changed(base, theirs) if _owner(p) != store.device]
    mine = read_blobs(repo, theirs, paths)
    before = read_blobs(repo, base, paths) if base else dict.fromkeys(paths)
    # Another device's files first, so that a history entry never names a session not here.
    for relative in sorted(paths, key=is_shared):
        owner = _owner(relative)
        if owner:
            report.devices.add(owner)
        if is_shared(relative):
            _merge_shared(store, relative, mine[relative], before[relative], report)
        else:
            path = store.root / relative
            try:
                ours: bytes | None = path.read_bytes()
            except FileNotFoundError:
                ours = None
            wanted = mine[relative]
            if wanted is None and relative.startswith(ATTACHMENTS):
                continue  # each device collects its own: a file one of its sessions names stays
            if (owner or ours == before[relative]) and _take(path, wanted):
                report.files += 1
    _stage(store, repo)
    merged = ", ".join(sorted(report.devices)) or "another device"
    repo.record_merge(theirs, f"{store.device}: merged {merged}", store.device)


def _merge_shared(
    store: MemoryStore, relative: str, theirs: bytes | None, base: bytes | None, report: SyncReport
) -> None:
    source = ", ".join(sorted(report.devices)) or "another device"
    merged = merge_shared(store, relative, theirs, base, source)
    if merged.changed:
        report.shared.add(relative)
    report.proposals += keep_proposal(store, merged, source)


def sync(store: MemoryStore, repo: Repo | None = None) -> SyncReport:
    """One sync with the remote; GitError (one sentence, its kind) when git fails, SyncBusy
    when another sync runs. Nothing is lost either way: the next sync catches up."""
    repo = repo or Repo(store.root)
    if not repo.is_repo():
        raise GitError(GitFailure.NOT_A_REPO, f"{store.root} is not set up for sync yet.")
    if not repo.is_kept():
        raise GitError(
            GitFailure.OTHER,
            f"{store.root} is a git repository Kept did not set up, so Kept does not sync it.",
        )
    report = SyncReport()
    with _sync_lock(store):
        repo.clear_stale_lock()
        write_ignore_files(store.layout)
        copies = merge_copies(store)
        report.copies, report.proposals = len(copies.merged), copies.proposals
        for attempt in range(ATTEMPTS):
            _commit_local(store, repo)
            theirs = repo.fetch()
            if theirs is not None:
                _merge(store, repo, theirs, report)
            if theirs is not None and repo.head() == theirs:
                break  # the remote has all of it
            try:
                repo.push()
                report.pushed = True
                break
            except GitError as exc:
                if exc.kind is not GitFailure.REJECTED or attempt == ATTEMPTS - 1:
                    raise
        record_sync(store, report)
        repo.tidy()
    return report


def record_sync(store: MemoryStore, report: SyncReport | None, error: str | None = None) -> None:
    """This machine's last sync: when, what came in from whom, or why it failed (read by
    the status bar, /log and `kept sync status`; other devices' syncs are read from git)."""
    now = datetime.now(UTC).isoformat(timespec="seconds")
    record: dict[str, object] = {"time": now, "ok": error is None}
    if error is not None:
        record["error"] = error
    if report is not None:
        record.update(
            pushed=report.pushed,
            devices=sorted(report.devices),
            shared=sorted(report.shared),
            files=report.files,
            proposals=report.proposals,
            copies=report.copies,
        )
    store.layout.local_dir.mkdir(parents=True, exist_ok=True)
    atomic_write(store.layout.sync_record_path, json.dumps(record))
