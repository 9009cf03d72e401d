"""A data folder made before devices had files of their own, moved to today's layout.

Before, one machine wrote everything at the top of the folder: sessions/ID.jsonl,
sessions/done/, versions/, proposals/, consolidation.jsonl, commit.json, health.json. Each
of those now lives under this device's id (memory.data.layout). The upgrade is a series of
renames, each atomic, each checked before it is made: killed at any point, the next start
finds what is left to move and moves it; nothing is copied, so nothing is doubled, and
nothing is deleted but lock files and derived caches. It runs once per store, before
anything else touches the folder, under a lock of its own (the store's lock may be held by
a caller already).
"""

from __future__ import annotations

import os
from pathlib import Path

from memory.data.files import ensure_dir, fsync_dir, locked
from memory.data.layout import LOCK_GLOBS, Layout

# Derived caches the old layout kept at the top or in sessions/: rebuilt where they live now.
_OLD_CACHES = ("index.pending.json", "index.sessions.json")


def _legacy(layout: Layout) -> bool:
    root, sessions = layout.root, layout.sessions_root
    old = ("versions", "consolidation.jsonl", "commit.json", "proposals")
    if any((root / name).exists() for name in old):
        return True
    if (root / "health.json").exists() or (sessions / "done").is_dir():
        return True
    try:
        return any(name.endswith(".jsonl") for name in os.listdir(sessions))
    except OSError:
        return False


def _move(source: Path, target: Path) -> None:
    """Rename `source` to `target` unless it is gone (moved already) or `target` exists."""
    if not source.exists() or target.exists():
        return
    ensure_dir(target.parent)
    os.rename(source, target)
    fsync_dir(source.parent)
    fsync_dir(target.parent)


def _move_journals(layout: Layout) -> None:
    old, new = layout.sessions_root, layout.sessions_dir
    # A private session a crash left is deleted first, as at any start: its id does not say
    # it is private (ids said so only later), so no ignore file would keep it from a sync.
    from memory.sessions.orphans import discard_orphaned_private

    discard_orphaned_private(old)
    for name in sorted(os.listdir(old)) if old.is_dir() else []:
        if name.endswith(".jsonl"):
            _move(old / name, new / name)
    old_done = old / "done"
    for name in sorted(os.listdir(old_done)) if old_done.is_dir() else []:
        _move(old_done / name, layout.done_dir / name)
    if old_done.is_dir() and not os.listdir(old_done):
        old_done.rmdir()
    # The open marks were kept beside sessions/, named for it; now beside this device's folder.
    _move(layout.root / ".sessions.open", old / f".{layout.device}.open")
    for pattern in LOCK_GLOBS:  # a lock of the old layout guards nothing now
        for lock in old.glob(pattern):
            lock.unlink(missing_ok=True)


def upgrade(layout: Layout) -> bool:
    """Move an old layout's files to this device's places; whether there was anything."""
    if not _legacy(layout):
        return False
    ensure_dir(layout.root)
    with locked(layout.root / ".upgrade.lock"):
        if not _legacy(layout):  # another process upgraded it while this one waited
            return False
        _move(layout.root / "versions", layout.versions_dir)
        _move(layout.root / "consolidation.jsonl", layout.log_path)
        _move(layout.root / "proposals", layout.proposals_dir)
        _move(layout.root / "commit.json", layout.commit_path)
        _move(layout.root / "health.json", layout.health_path)
        _move_journals(layout)
        for name in _OLD_CACHES:
            for folder in (layout.root, layout.sessions_root):
                (folder / name).unlink(missing_ok=True)
    return True
