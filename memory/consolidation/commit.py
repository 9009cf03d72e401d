"""The write-ahead commit: a consolidation's result reaches disk whole or not at all.

The commit is written ahead to `commit.json`, then applied step by step, each step
idempotent, so a crash at any instant is completed by `recover()` with the history entry
present exactly once and MEMORY.md either old or new, never torn. The store calls
`recover_locked()` before its own writes; this module needs only the store's methods, so
it imports nothing that imports it.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from memory.consolidation.reply import SavedMemory
from memory.data.files import atomic_write, digest, read_text, remove_leftovers
from memory.data.history import entry_key, format_entry
from memory.data.versions import VersionKind, decisions
from memory.sessions.journal import Journal, Segment

if TYPE_CHECKING:
    from memory.data.store import MemoryStore, MemoryText


def _apply(store: MemoryStore, intent: dict[str, Any]) -> None:
    """Carry out a written-ahead commit; safe to run again after a crash at any point."""
    current = store.read_memory()
    new_text: str = intent["memory_update"]
    new_digest = digest(new_text.encode("utf-8"))
    if current.digest not in (intent["previous_digest"], new_digest):
        # Someone wrote MEMORY.md between the crash and now: their text stands, and the
        # session stays pending, to be consolidated again against it.
        store.commit_path.unlink(missing_ok=True)
        return
    if current.digest == intent["previous_digest"]:
        store.keep_unversioned(current, intent["time"])
        store.write_memory(new_text)
        current = store.read_memory()
    if current.digest == new_digest and store.latest_version_digest() != new_digest:
        store.save_version(
            current.raw,
            str(intent.get("source", VersionKind.CONSOLIDATION)),
            time=intent["time"],
            session=intent["session"],
            model=intent["model"],
            entry=intent["history_entry"],
            evidence=decisions(intent.get("decisions")),
        )
    if not store.has_history_entry(intent["history_entry"]):
        store.append_history(intent["history_entry"])
    segment = Segment(intent["start"], intent["end"])
    journal = store.find_session(intent["session"])
    if segment not in journal.consolidated:
        journal.mark_consolidated(segment, intent["model"])
    store.settle(journal)
    store.commit_path.unlink(missing_ok=True)


def commit(
    store: MemoryStore,
    journal: Journal,
    segment: Segment,
    saved: SavedMemory,
    base: MemoryText,
    model: str,
    when: datetime,
    *,
    source: VersionKind = VersionKind.CONSOLIDATION,
) -> bool:
    """Write the result. False, with nothing written, when MEMORY.md changed since `base`
    was read: the user's edit is never overwritten."""
    with store.lock():
        recover_locked(store)
        if store.read_memory().digest != base.digest:
            return False
        intent = {
            "session": journal.id,
            "start": segment.start,
            "end": segment.end,
            "model": model,
            "time": datetime.now(UTC).isoformat(timespec="seconds"),
            "previous_digest": base.digest,
            "memory_update": saved.memory_update,
            "history_entry": format_entry(
                when, saved.history_entry, entry_key(journal.id, segment.start, segment.end)
            ),
            "decisions": saved.decision_records(),
        }
        if source is not VersionKind.CONSOLIDATION:
            intent["source"] = source
        atomic_write(store.commit_path, json.dumps(intent, ensure_ascii=False))
        _apply(store, intent)
    return True


def recover_locked(store: MemoryStore) -> str | None:
    if not store.commit_path.exists():
        return None
    text, _ = read_text(store.commit_path)
    if not text.strip():
        # Written atomically, so an empty intent means it never held a commit.
        store.commit_path.unlink(missing_ok=True)
        return None
    try:
        intent = json.loads(text)
        _apply(store, intent)
    except (ValueError, KeyError, TypeError, LookupError) as exc:
        # Not an intent Kept wrote (it writes them atomically), or its session is gone.
        store.commit_path.rename(store.commit_path.with_suffix(".damaged"))
        return f"{store.commit_path} could not be used ({exc}) and has been set aside."
    return f"Completed the interrupted save of session {intent['session']}."


def recover(store: MemoryStore) -> str | None:
    """Complete a commit a crash interrupted, and remove the temporary copies crashes left.
    Returns what was done, if anything."""
    for folder in (
        store.root,
        store.versions_dir,
        store.archive_dir,
        store.sessions_dir,
        store.layout.local_dir,
        store.layout.device_dir,
    ):
        remove_leftovers(folder)
    if not store.commit_path.exists():
        return None
    with store.lock():
        return recover_locked(store)
