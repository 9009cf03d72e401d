"""save_memory's arguments, validated: what a model's reply must carry to become memory.

A reply counts only if it carries a `save_memory` call (or the same JSON object as text)
whose arguments pass these checks; anything else raises ReplyRejected, which moves the
walk to the next model of the chain.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

from catalog import Reply, ReplyRejected
from catalog.transport import Kind
from memory.sanitize import clean_text
from memory.settings import MemorySettings

# A non-trivial memory must keep at least this share of its text.
TRIVIAL_MEMORY = 200
KEEP_SHARE = 0.5
# The user asked, in their own words, to forget: the shrink guard lets the update through.
_FORGET = re.compile(
    r"\b(?:forget|vergiss|vergessen|oublie|oublier|olvida|olvidar|"
    r"dimentica|esquece|esqueça|vergeet|glöm|zapomnij)\w*|忘れ|забудь",
    re.IGNORECASE,
)


@dataclass(frozen=True)
class SavedMemory:
    history_entry: str
    memory_update: str


_FENCE = re.compile(r"^```[a-zA-Z]*\s*|\s*```$")


def _decode_arguments(raw: Any) -> dict[str, Any]:
    value = raw
    for _ in range(2):  # some models send the JSON object encoded twice
        if isinstance(value, str):
            try:
                value = json.loads(value, strict=False)
            except ValueError:
                raise ReplyRejected("save_memory arguments are not valid JSON") from None
    if not isinstance(value, dict):
        raise ReplyRejected(
            f"save_memory arguments must be a JSON object, not {type(value).__name__}"
        )
    return value


def _json_in_text(text: str) -> dict[str, Any] | None:
    body = _FENCE.sub("", text.strip())
    start, end = body.find("{"), body.rfind("}")
    if start < 0 or end <= start:
        return None
    try:
        # strict=False: a line break left raw inside a string is the commonest slip of a
        # small model (llama.cpp's JSON grammar allows it); the text is cleaned after.
        value = json.loads(body[start : end + 1], strict=False)
    except ValueError:
        return None
    if isinstance(value, dict) and {"history_entry", "memory_update"} <= value.keys():
        return value
    return None


def _cut_off(reply: Reply, window: int | None) -> str:
    """Why a reply that stopped at its length limit is unusable, in the user's terms."""
    used = reply.prompt_tokens + reply.completion_tokens
    if window and used >= 0.9 * window:
        return (
            f"{reply.model} ran out of context: {reply.prompt_tokens:,} prompt + "
            f"{reply.completion_tokens:,} completion tokens of {window:,}"
        )
    return (
        f"{reply.model} stopped at its reply limit ({reply.completion_tokens:,} tokens) "
        "before finishing save_memory"
    )


def asked_to_forget(messages: list[dict[str, Any]]) -> bool:
    """Whether the user said, in the session, to forget something (a request is short:
    only the start of each message is searched, so a pasted megabyte costs nothing)."""
    return any(
        m.get("role") == "user" and _FORGET.search(str(m.get("content") or "")[:2000])
        for m in messages
    )


def parse_save_memory(
    reply: Reply,
    current_memory: str,
    settings: MemorySettings,
    window: int | None = None,
    *,
    forget: bool = False,
) -> SavedMemory:
    """The validated arguments of the reply's save_memory call; raises ReplyRejected.
    With `forget` (the user asked for it) the update may drop most of the memory: the old
    text is kept as a version."""
    if reply.finish_reason == "length":
        raise ReplyRejected(_cut_off(reply, window), Kind.CONTEXT_WINDOW)
    calls = [c for c in reply.tool_calls if c.name == "save_memory"]
    if calls:
        arguments = _decode_arguments(calls[0].arguments)
    elif reply.tool_calls:
        raise ReplyRejected(f"called {reply.tool_calls[0].name} instead of save_memory")
    else:
        found = _json_in_text(reply.text)
        if found is None:
            raise ReplyRejected("did not call save_memory")
        arguments = found
    for name in ("history_entry", "memory_update"):
        if name not in arguments:
            raise ReplyRejected(f"save_memory was called without {name}")
        if not isinstance(arguments[name], str):
            raise ReplyRejected(f"{name} must be a string, not {type(arguments[name]).__name__}")
    entry = " ".join(clean_text(arguments["history_entry"]).split())
    update = clean_text(arguments["memory_update"]).strip()
    if not entry:
        raise ReplyRejected("history_entry is empty")
    if len(entry) > settings.history_entry_max_chars:
        raise ReplyRejected(
            f"history_entry is {len(entry):,} characters, over the "
            f"{settings.history_entry_max_chars:,} limit"
        )
    if len(update) > settings.memory_max_chars:
        raise ReplyRejected(
            f"memory_update is {len(update):,} characters, over the "
            f"{settings.memory_max_chars:,} budget"
        )
    old = current_memory.strip()
    if (
        not forget
        and len(old) >= TRIVIAL_MEMORY
        and len(old) <= settings.memory_max_chars
        and len(update) < KEEP_SHARE * len(old)
    ):
        raise ReplyRejected(
            f"memory_update would drop most of MEMORY.md ({len(update):,} of "
            f"{len(old):,} characters kept)"
        )
    return SavedMemory(entry, update + "\n" if update else "")
