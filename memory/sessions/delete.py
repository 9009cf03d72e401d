"""A session deleted: its transcript, and with it (if asked) the history entry it left.
What MEMORY.md learned from it stays. Only the device that wrote a session deletes it."""

from __future__ import annotations

from datetime import UTC, datetime

from memory.data.files import atomic_write, fsync_dir, read_text
from memory.data.history import ENTRY_START, HistoryEntry, join_entries, parse_entries
from memory.data.store import MemoryStore
from memory.sessions import journal as journals
from memory.sessions.browse import local_stamp


def _entry_of(store: MemoryStore, session_id: str) -> HistoryEntry | None:
    """The history entry a session wrote: the one its version recorded, else the only entry
    dated like its first message (never a guess between two: forgetting deletes it)."""
    written = {v.entry for v in store.versions_of(session_id) if v.entry}
    entries = store.all_history_entries()
    found = [e for e in entries if e.text in written]
    if found:
        return found[-1]
    try:
        journal = store.find_session(session_id)
    except LookupError:
        return None
    first = journal.messages[0].get("time") if journal.messages else None
    dated = [e for e in entries if first and e.stamp == local_stamp(str(first))]
    return dated[0] if len(dated) == 1 else None


def forget_entry(store: MemoryStore, session_id: str) -> bool:
    """Remove the history entry a session left (HISTORY.md or its archive). MEMORY.md is
    kept as a version first if it is not one already. False when there was none."""
    with store.lock():
        store.keep_unversioned(store.read_memory(), datetime.now(UTC).isoformat(timespec="seconds"))
        entry = _entry_of(store, session_id)
        if entry is None:
            return False
        text, _ = read_text(entry.file)
        lines = text.splitlines(keepends=True)
        first = next((i for i, line in enumerate(lines) if ENTRY_START.match(line)), len(lines))
        preamble = "".join(lines[:first]).rstrip()
        kept = [e.text for e in parse_entries(text, entry.file) if e.line != entry.line]
        atomic_write(entry.file, (preamble + "\n\n" if preamble else "") + join_entries(kept))
        # The version records name the entry their consolidation wrote: forgotten there too.
        store.forget_version_entry(entry.text)
    return True


def delete_session(store: MemoryStore, session_id: str, *, forget: bool = False) -> None:
    """Delete a session's transcript (and, with `forget`, its history entry). What MEMORY.md
    learned from it stays. Raises ValueError for a session that is open somewhere."""
    from memory.data.files import HeldLock

    journal = store.find_session(session_id)
    store.sessions.refuse_others(journal, "delete")
    lock = HeldLock(store.layout.live_lock(session_id))
    if journal.state is journals.JournalState.ACTIVE and not lock.acquire():
        raise ValueError(f"Session {session_id} is open in a Kept window; end it first.")
    try:
        if forget:
            forget_entry(store, session_id)
        journal.path.unlink(missing_ok=True)
        fsync_dir(journal.path.parent)
        for leftover in (store.layout.live_lock(session_id), store.layout.claim_lock(session_id)):
            leftover.unlink(missing_ok=True)
        from memory.chat.attachments import collect

        collect(store)  # the files it had attached, unless another session names them too
    finally:
        lock.release()
    from memory.recall.index import forget_deleted

    forget_deleted(store.root)  # what it said leaves the search index too
