"""`kept import`: a transcript in the journal format becomes a pending session."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import Any

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
            message = clean_message(record)
            if message["role"] in ("user", "assistant") and not (message["content"] or "") \
                    .strip() and not message.get("tool_calls"):
                raise ValueError(f"{path}:{number}: a {message['role']} message with no text; "
                                 "nothing was imported")
            when = _time_of(record)
            if when:
                message["time"] = when
            messages.append(message)
        except ValueError as exc:
            if str(exc).startswith(f"{path}:"):
                raise
            warnings.append(f"{path}:{number}: skipped ({exc}).")
    if not messages:
        raise ValueError(f"{path} holds no message to import.")
    journal = store.new_session(model=None)
    for message in messages:
        journal.append(message)
    journal.mark_pending(close=True)
    return journal, warnings


TIME_KEYS = ("time", "timestamp", "created_at")  # what chat exports commonly call it


def _time_of(record: dict[str, Any]) -> str | None:
    """The message's own time as ISO 8601 (from an ISO string or Unix seconds), so an
    imported session keeps when it was said, not when it was imported."""
    for key in TIME_KEYS:
        value = record.get(key)
        try:
            if isinstance(value, int | float) and not isinstance(value, bool):
                return datetime.fromtimestamp(value, UTC).isoformat(timespec="seconds")
            if isinstance(value, str) and value.strip():
                when = datetime.fromisoformat(value.strip().replace("Z", "+00:00"))
                if when.tzinfo is None:
                    when = when.replace(tzinfo=UTC)
                return when.isoformat(timespec="seconds")
        except (ValueError, OverflowError, OSError):
            continue
    return None
