"""`kept import`: a transcript in the journal format becomes a pending session."""

from __future__ import annotations

import json
from pathlib import Path

from memory.journal import (
    FORMAT_VERSION,
    HEADER_KIND,
    Journal,
    clean_message,
    load,
    new_session_id,
    now_iso,
    records,
)
from memory.storage import atomic_write
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
    # Written whole to a temporary file and renamed into place, closed: an interrupted
    # import leaves nothing, never a half journal that the next start would adopt.
    store.ensure()
    session_id = new_session_id()
    created = now_iso()
    header = {"kept": HEADER_KIND, "version": FORMAT_VERSION, "id": session_id,
              "created": created, "model": None, "source": "import"}
    mark = {"mark": "pending", "start": 0, "end": len(messages), "closed": True,
            "time": created}
    lines = [header, *({**m, "time": m.get("time") or created} for m in messages), mark]
    target = store.sessions_dir / f"{session_id}.jsonl"
    atomic_write(target, "".join(json.dumps(r, ensure_ascii=False, separators=(",", ":"))
                                 + "\n" for r in lines))
    return load(target), warnings
