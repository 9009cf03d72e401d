"""Claude.ai's `conversations.json`: each conversation's `chat_messages`, in order."""

from __future__ import annotations

from typing import Any

from memory.message import Message, Role
from memory.sessions.exports.records import UNKNOWN_TIME, Conversation, message, text, when

_ROLES: dict[str, Role] = {"human": "user", "user": "user", "assistant": "assistant"}


def claude_conversation(item: dict[str, Any]) -> Conversation:
    """The conversation's messages from the user and Claude, with their times."""
    chat = item.get("chat_messages")
    if not isinstance(chat, list):
        raise ValueError("it has no list of 'chat_messages'")
    created = when(item.get("created_at")) or next(
        (at for entry in chat if isinstance(entry, dict) and (at := when(entry.get("created_at")))),
        when(item.get("updated_at")) or UNKNOWN_TIME,
    )
    messages: list[Message] = []
    for entry in chat:
        if not isinstance(entry, dict):
            raise ValueError("a message is not an object")
        role = _ROLES.get(str(entry.get("sender")))
        if role is None:
            continue
        words = entry.get("text")
        if not isinstance(words, str) or not words.strip():
            blocks = entry.get("content") or []
            words = "\n".join(
                b["text"]
                for b in blocks
                if isinstance(b, dict)
                and b.get("type") == "text"
                and isinstance(b.get("text"), str)
            )
        found = message(role, words, when(entry.get("created_at")), created)
        if found:
            messages.append(found)
    return Conversation(
        text(item.get("uuid")), text(item.get("name")), created, None, tuple(messages)
    )
