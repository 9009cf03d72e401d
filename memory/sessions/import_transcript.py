"""`kept import`: a transcript in the journal format becomes a pending session."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from memory.data.files import atomic_write
from memory.data.store import MemoryStore
from memory.message import clean_message
from memory.sessions.journal import (
    FORMAT_VERSION,
    Journal,
    load,
    new_session_id,
    now_iso,
    records,
)
from memory.sessions.marks import HEADER_KIND


def import_transcript(store: MemoryStore, path: str | Path) -> tuple[Journal, list[str]]:
    """Copy the messages of `path` into a new, closed, pending session.

    Header and mark lines are ignored; damaged lines are skipped and reported by file and
    line. A `system` message is left out, and said so: it was another tool's instructions
    to its model, and imported it would become Kept's own instructions when the session
    is continued (and an order in the transcript memory is made from). Raises ValueError
    when the file holds no message at all, or is another tool's export (the sentence
    names the `--from` that imports it).
    """
    from memory.sessions.import_exports import export_source, suggestion

    path = Path(path)
    source = export_source(path)
    if source is not None:
        raise ValueError(suggestion(path, source))
    warnings: list[str] = []
    messages = []
    for number, record in records(path):
        try:
            if isinstance(record, ValueError):
                raise record
            if "kept" in record or "mark" in record:
                continue
            message = clean_message(record)
            if message["role"] == "system":
                warnings.append(
                    f"{path}:{number}: a system message was left out (another tool's "
                    "instructions to its model are not part of the conversation)."
                )
                continue
            if (
                message["role"] in ("user", "assistant")
                and not (message["content"] or "").strip()
                and not message.get("tool_calls")
            ):
                raise ValueError(
                    f"{path}:{number}: a {message['role']} message with no text; "
                    "nothing was imported"
                )
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
    # Written whole to a temporary file and renamed into place, closed: an interrupted
    # import leaves nothing, never a half journal that the next start would adopt.
    store.ensure()
    session_id = new_session_id()
    created = now_iso()
    header = {
        "kept": HEADER_KIND,
        "version": FORMAT_VERSION,
        "id": session_id,
        "created": created,
        "model": None,
        "source": "import",
    }
    mark = {"mark": "pending", "start": 0, "end": len(messages), "closed": True, "time": created}
    lines = [header, *({**m, "time": m.get("time") or created} for m in messages), mark]
    target = store.sessions_dir / f"{session_id}.jsonl"
    atomic_write(
        target,
        "".join(json.dumps(r, ensure_ascii=False, separators=(",", ":")) + "\n" for r in lines),
    )
    return load(target), warnings


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
