"""A message as Kept keeps it: OpenAI's message shape plus Kept's own keys, one definition for
the journal, the chat turn, the prompts and the app.

A journal may come from anywhere (an import, a hand edit): `clean_message` checks a record
read from disk before it becomes a `Message`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal, Required, TypedDict, cast, get_args

from catalog.sanitize import clean_text

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
    # On a user message: the [start, end) character spans of `content` that arrived by
    # paste, standard input or a dropped path, not typed (memory.consolidation.evidence).
    pasted: list[list[int]]


# The keys a journal keeps of a message; any other is dropped when it is read.
MESSAGE_KEYS = Message.__required_keys__ | Message.__optional_keys__
ROLES: frozenset[str] = frozenset(get_args(Role))
# Text details of a message: a wrong-typed one is dropped, the message itself kept.
TEXT_KEYS = ("time", "name", "model", "tool_call_id", "queued")


def clean_message(message: Mapping[str, Any]) -> Message:
    """The message's known fields, checked: raises ValueError naming what is wrong."""
    role = message.get("role")
    if role not in ROLES:
        raise ValueError(f"role must be one of {', '.join(sorted(ROLES))}, not {role!r}")
    content = message.get("content")
    if content is not None and not isinstance(content, str):
        # Multi-part content (OpenAI's list form) is kept as its text parts.
        if isinstance(content, list):
            content = "\n".join(str(p.get("text", "")) for p in content if isinstance(p, dict))
        else:
            raise ValueError(f"content must be text, not {type(content).__name__}")
    record = {k: v for k, v in message.items() if k in MESSAGE_KEYS}
    # A journal may come from anywhere (an import, a hand edit): its text enters here.
    record["content"] = clean_text(content) if content else content
    for key in TEXT_KEYS:
        if key in record and not isinstance(record[key], str):
            del record[key]  # a wrong-typed detail is dropped; the message itself is kept
        elif key in record:
            record[key] = clean_text(record[key])
    if "tool_calls" in record:
        record["tool_calls"] = _clean_tool_calls(record["tool_calls"])
    if "pasted" in record:
        spans = pasted_spans(record["pasted"], len(record["content"] or ""))
        if spans:
            record["pasted"] = spans
        else:
            del record["pasted"]  # a wrong-typed detail is dropped, the message kept
    return cast("Message", record)


def pasted_spans(value: object, length: int) -> list[list[int]]:
    """`value` as sorted, merged [start, end) spans within a text of `length` characters;
    whatever is not such a span is left out."""
    if not isinstance(value, list):
        return []
    spans = sorted(
        (max(0, s[0]), min(length, s[1]))
        for s in value
        if isinstance(s, list | tuple)
        and len(s) == 2
        and all(isinstance(n, int) and not isinstance(n, bool) for n in s)
        and s[0] < s[1]
    )
    merged: list[list[int]] = []
    for start, end in spans:
        if start >= end:
            continue
        if merged and start <= merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], end)
        else:
            merged.append([start, end])
    return merged


def _clean_tool_calls(calls: object) -> list[dict[str, Any]]:
    """Tool calls in OpenAI's shape, checked: raises ValueError naming what is wrong."""
    if not isinstance(calls, list):
        raise ValueError("tool_calls must be a list")
    for call in calls:
        function = call.get("function") if isinstance(call, dict) else None
        if not isinstance(function, dict) or not isinstance(function.get("name"), str):
            raise ValueError(
                'each tool call must be an object with "function": {"name": ..., "arguments": ...}'
            )
        if not isinstance(function.get("arguments", ""), str | dict):
            raise ValueError("tool call arguments must be a JSON object or text")
    return calls


def clean_pasted(content: str, pasted: object) -> tuple[str, tuple[tuple[int, int], ...]]:
    """`content` cleaned (memory.sanitize) typed part by pasted part, so that the `pasted`
    spans (whatever of them is a span) still cover what was pasted when cleaning removes
    characters; an old queued record has none."""
    spans = pasted_spans(pasted, len(content))
    if not spans:
        return clean_text(content), ()
    parts: list[str] = []
    kept: list[tuple[int, int]] = []
    at = length = 0
    for start, end in spans:
        typed, pasted_part = clean_text(content[at:start]), clean_text(content[start:end])
        parts += [typed, pasted_part]
        length += len(typed)
        kept.append((length, length + len(pasted_part)))
        length += len(pasted_part)
        at = end
    parts.append(clean_text(content[at:]))
    return "".join(parts), tuple((s, e) for s, e in kept if s < e)
