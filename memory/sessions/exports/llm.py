"""llm's SQLite `logs.db`: each conversation's responses in order, a prompt and a reply each."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from memory.message import Message, Role
from memory.sessions.exports.records import (
    Conversation,
    Damaged,
    ExportError,
    message,
    text,
    when,
)


def llm_conversations(path: Path) -> Iterator[tuple[str, Conversation | Damaged]]:
    """llm's logs.db: each conversation's responses in order, a prompt and a reply each."""
    if not path.is_file():
        raise FileNotFoundError(2, "No such file", str(path))
    try:
        db = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True)
    except sqlite3.Error as exc:
        raise ExportError(f"{path} could not be opened as an SQLite database ({exc}).") from None
    try:
        try:
            rows = db.execute(
                "SELECT r.id, r.conversation_id, c.name, r.model, r.prompt, r.response, "
                "r.datetime_utc FROM responses r LEFT JOIN conversations c "
                "ON c.id = r.conversation_id "
                "ORDER BY coalesce(r.conversation_id, r.id), r.datetime_utc, r.rowid"
            )
        except sqlite3.DatabaseError as exc:
            raise ExportError(_llm_problem(path, exc, "is not llm's logs.db")) from None
        current: list[tuple[Any, ...]] = []
        key = None
        count = 0
        try:
            for row in rows:
                row_key = row[1] or row[0]
                if current and row_key != key:
                    count += 1
                    yield _llm_conversation(count, current)
                    current = []
                key = row_key
                current.append(row)
        except sqlite3.DatabaseError as exc:
            raise ExportError(
                _llm_problem(path, exc, f"stopped being read after {count} conversations")
            ) from None
        if current:
            yield _llm_conversation(count + 1, current)
    finally:
        db.close()


def _llm_problem(path: Path, exc: sqlite3.DatabaseError, otherwise: str) -> str:
    """Why llm's database could not be read: locked by a program writing to it (llm
    itself, most likely), or what `otherwise` says."""
    if "locked" in str(exc) or "busy" in str(exc):
        return (
            f"{path} is locked by a program writing to it (llm itself, most likely): "
            "import it again when that is done."
        )
    return f"{path} {otherwise} ({exc})."


def _llm_conversation(
    number: int, rows: list[tuple[Any, ...]]
) -> tuple[str, Conversation | Damaged]:
    first = rows[0]
    title = text(first[2])
    where = (
        f"conversation {number}"
        + (f" ({title[:60]!r})" if title else "")
        + f" [{first[1] or first[0]}]"
    )
    created = when(first[6])
    if created is None:
        return where, Damaged(where, f"its time {first[6]!r} is not a date")
    messages: list[Message] = []
    for _id, _conversation, _name, model, prompt, response, stamp in rows:
        at = when(stamp) or created
        said: tuple[tuple[Role, object], ...] = (("user", prompt), ("assistant", response))
        for role, words in said:
            if isinstance(words, str):
                found = message(role, words, at, created, text(model) or None)
                if found:
                    messages.append(found)
    return where, Conversation(
        text(first[1] or first[0]), title, created, text(first[3]) or None, tuple(messages)
    )
