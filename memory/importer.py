"""`kept import`: a transcript in the journal format becomes a pending session."""

from __future__ import annotations

from pathlib import Path

from memory.journal import Journal, clean_message, records
from memory.store import MemoryStore


def import_transcript(store: MemoryStore, path: str | Path) -> tuple[Journal, list[str]]:
    """Copy the messages of `path` into a new, closed, pending session.

    Header and mark lines are ignored; damaged lines are skipped and reported by file and
    line. Raises ValueError when the file holds no message at all.
    """
    path = Path(path)
    warnings: list[str] = []
    messages = []
    for number, record in records(path):
        try:
            if isinstance(record, ValueError):
                raise record
            if "kept" in record or "mark" in record:
                continue
            messages.append(clean_message(record))
        except ValueError as exc:
            warnings.append(f"{path}:{number}: skipped ({exc}).")
    if not messages:
        raise ValueError(f"{path} holds no message to import.")
    journal = store.new_session(model=None)
    for message in messages:
        journal.append(message)
    journal.mark_pending(close=True)
    return journal, warnings
