"""What every export format becomes: a conversation in Kept's shape, or why one was not
usable; and the small readings of times, ids and texts from outside that they share."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from memory.message import Message, Role
from memory.sanitize import clean_text

# The start of time stands for a conversation that says nothing of when it was held: its
# session id must be the same at every import.
UNKNOWN_TIME = datetime(1970, 1, 1, tzinfo=UTC)


class ExportError(ValueError):
    """The export cannot be read any further (what came before it is imported)."""


@dataclass(frozen=True)
class Conversation:
    """One conversation of an export, as Kept will journal it."""

    source_id: str
    title: str
    created: datetime
    model: str | None
    messages: tuple[Message, ...]


@dataclass(frozen=True)
class Damaged:
    """A conversation that could not be used, and why, in the user's terms."""

    where: str  # "conversation 12 ('Trip to Lisbon')"
    reason: str


def when(value: Any) -> datetime | None:
    """A Unix time (ChatGPT) or an ISO time (Claude.ai, llm) as an aware datetime."""
    if isinstance(value, int | float) and not isinstance(value, bool):
        try:
            return datetime.fromtimestamp(value, UTC)
        except (OverflowError, OSError, ValueError):
            return None
    if isinstance(value, str) and value:
        try:
            found = datetime.fromisoformat(value.replace("Z", "+00:00"))
        except ValueError:
            return None
        return found if found.tzinfo else found.replace(tzinfo=UTC)
    return None


def message(
    role: Role, text: str, said: datetime | None, fallback: datetime, model: str | None = None
) -> Message | None:
    """A message said at `said` (else at `fallback`); None when it has no text."""
    text = clean_text(text).strip()
    if not text:
        return None
    found: Message = {
        "role": role,
        "content": text,
        "time": (said or fallback).isoformat(timespec="seconds"),
    }
    if model and role == "assistant":
        found["model"] = model
    return found


def text(value: Any) -> str:
    """An id, a title or a model name from an export, cleaned like any text from outside."""
    return clean_text(str(value)) if value else ""
