"""A message as Kept keeps it: OpenAI's message shape plus Kept's own keys, one definition for
the journal, the chat turn, the prompts and the app.

A journal may come from anywhere (an import, a hand edit): `memory.sessions.journal.
clean_message` checks a record read from disk before it becomes a `Message`.
"""

from __future__ import annotations

from typing import Any, Literal, Required, TypedDict, get_args

Role = Literal["system", "user", "assistant", "tool"]


class ToolFunction(TypedDict, total=False):
    """The function a tool call names, and its arguments (JSON text, or an object)."""

    name: Required[str]
    arguments: str | dict[str, Any]


class ToolCall(TypedDict, total=False):
    """One tool call of an assistant message, in OpenAI's shape."""

    id: str
    type: str
    function: Required[ToolFunction]


class Message(TypedDict, total=False):
    """One message of a session. Only `role` is always there; `content` is None on an
    assistant message that only calls tools."""

    role: Required[Role]
    content: str | None
    time: str  # ISO 8601, with its offset
    tool_calls: list[ToolCall]
    tool_call_id: str
    name: str
    model: str  # the model that wrote an answer
    tokens: int  # what the turn used, on its answer
    cost: float
    queued: str  # a message typed during a reply: the id of its "queued" mark
    attachments: list[dict[str, Any]]  # memory.chat.attachments records


# The keys a journal keeps of a message; any other is dropped when it is read.
MESSAGE_KEYS = Message.__required_keys__ | Message.__optional_keys__
ROLES: frozenset[str] = frozenset(get_args(Role))
