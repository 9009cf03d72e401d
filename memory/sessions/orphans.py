"""Private sessions left behind: a journal off the record whose process died (a crash, a
kill) is deleted at the next start of Kept, app or command line. Light on purpose: every
`kept` verb runs it before anything else, so it needs only the files layer."""

from __future__ import annotations

import json
import logging
import time
from pathlib import Path

from memory.data.files import HeldLock, fsync_dir
from memory.data.layout import live_lock
from memory.sessions.marks import marked_open, open_marks

log = logging.getLogger(__name__)

ORPHAN_GRACE = 60.0  # seconds a private journal with no lock file yet may be a new one


def _is_private(path: Path) -> bool:
    try:
        with open(path, "rb") as f:
            header = json.loads(f.readline(1 << 16) or b"{}")
    except (OSError, ValueError):
        return False
    return isinstance(header, dict) and header.get("private") is True


def _maybe_active(sessions_dir: Path) -> list[Path]:
    """The journals that may be active: a private one is never closed, so it keeps its
    open mark until it is deleted. A folder not marked yet is marked once (each journal
    read from its end); one whose marks cannot be written is looked through whole."""
    try:
        return marked_open(sessions_dir)
    except OSError:
        return sorted(sessions_dir.glob("*.jsonl"))


def discard_orphaned_private(sessions_dir: Path) -> int:
    """Delete every private journal whose session no process has open any more (a crash,
    a killed process): off the record means nothing of it stays on disk. A journal whose
    `.ID.live` lock is held is another window's live session and is left alone. Returns
    how many were deleted."""
    if not sessions_dir.is_dir():
        return 0
    deleted = 0
    for path in _maybe_active(sessions_dir):
        if not _is_private(path):
            continue
        lock_path = live_lock(sessions_dir, path.stem)
        try:
            # A new session writes its journal, then takes its lock: a moment apart.
            if not lock_path.exists() and time.time() - path.stat().st_mtime < ORPHAN_GRACE:
                continue
            lock = HeldLock(lock_path)
            if not lock.acquire():
                continue  # live in another process
        except OSError:
            continue
        try:
            path.unlink(missing_ok=True)
            fsync_dir(path.parent)
            lock_path.unlink(missing_ok=True)
            (open_marks(sessions_dir) / path.stem).unlink(missing_ok=True)
            deleted += 1
        except OSError as exc:
            log.warning("%s could not be deleted (%s).", path, exc.strerror or exc)
        finally:
            lock.release()
    return deleted
