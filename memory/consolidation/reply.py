"""save_memory's arguments, validated: what a model's reply must carry to become memory.

A reply counts only if it carries a `save_memory` call (or the same JSON object as text)
whose history entry is grounded in the session and of whose edits at least one holds up
(memory.consolidation.edits decides each on its own: a refused edit is dropped, the rest
stand); anything else raises ReplyRejected, which moves the walk to the next model.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any

from catalog import Reply, ReplyRejected
from catalog.transport import Kind
from memory.consolidation.decisions import Applied, Decision, Fate, apply_edits
from memory.consolidation.edits import Context, Edit, edits_from_rewrite, parse_edits
from memory.consolidation.evidence import Verdict
from memory.consolidation.grounding import Evidence, junk, ungrounded
from memory.sanitize import clean_text
from memory.settings import MemorySettings


@dataclass(frozen=True)
class SavedMemory:
    history_entry: str
    memory_update: str  # MEMORY.md with the edits applied (held ones too)
    edits: int = 0  # how many edits the model proposed
    decisions: tuple[Decision, ...] = ()  # what became of each, with its quotes
    proposed: tuple[Edit, ...] = ()  # the edits as proposed, to decide again
    base: str = ""  # the MEMORY.md they were applied to
    records: tuple[dict[str, Any], ...] = ()  # decisions as a proposal kept them

    def decision_records(self) -> list[dict[str, Any]]:
        """The decision on each edit as a version record keeps it."""
        return [d.to_json() for d in self.decisions] or list(self.records)

    @property
    def held(self) -> tuple[Decision, ...]:
        """The edits that wait for a second opinion or the user's review."""
        return tuple(d for d in self.decisions if d.fate is Fate.HELD)

    def judged(self, context: Context, verdicts: Mapping[int, Verdict], judge: str) -> SavedMemory:
        """The same edits decided again with a second opinion's `verdicts`."""
        applied = apply_edits(self.base, self.proposed, context, verdicts, judge)
        return replace(self, memory_update=applied.text, decisions=applied.decisions)


# A tidy of a non-trivial memory must keep at least this share of its text.
TRIVIAL_MEMORY = 200
KEEP_SHARE = 0.5
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
    if isinstance(value, dict) and "history_entry" in value:
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


def _arguments(reply: Reply, window: int | None) -> dict[str, Any]:
    """The arguments of the reply's save_memory call (or the same JSON object as text)."""
    if reply.finish_reason == "length":
        raise ReplyRejected(_cut_off(reply, window), Kind.CONTEXT_WINDOW)
    calls = [c for c in reply.tool_calls if c.name == "save_memory"]
    if calls:
        return _decode_arguments(calls[0].arguments)
    if reply.tool_calls:
        raise ReplyRejected(f"called {reply.tool_calls[0].name} instead of save_memory")
    found = _json_in_text(reply.text)
    if found is None:
        raise ReplyRejected("did not call save_memory")
    return found


def _string(arguments: dict[str, Any], name: str) -> str:
    if name not in arguments:
        raise ReplyRejected(f"save_memory was called without {name}")
    value = arguments[name]
    if not isinstance(value, str):
        raise ReplyRejected(f"{name} must be a string, not {type(value).__name__}")
    return clean_text(value)


def _entry(arguments: dict[str, Any], settings: MemorySettings) -> str:
    entry = " ".join(_string(arguments, "history_entry").split())
    if not entry:
        raise ReplyRejected("history_entry is empty")
    if len(entry) > settings.history_entry_max_chars:
        raise ReplyRejected(
            f"history_entry is {len(entry):,} characters, over the "
            f"{settings.history_entry_max_chars:,} limit"
        )
    return entry


def parse_save_memory(
    reply: Reply,
    current_memory: str,
    settings: MemorySettings,
    window: int | None = None,
    *,
    context: Context,
) -> SavedMemory:
    """The reply's save_memory call checked against the session (`context`) and its edits
    applied to `current_memory`; raises ReplyRejected saying what is wrong. A model that
    sent a whole new MEMORY.md (`memory_update`) anyway has it read as the edits it
    implies, each checked the same way: a rewrite cannot slip past the checks."""
    arguments = _arguments(reply, window)
    entry = _entry(arguments, settings)
    evidence = Evidence.of(context.messages)
    problem = junk(entry, entry=True) or ungrounded(entry, evidence, entry=True)
    if problem is not None:
        raise ReplyRejected(f"history_entry was refused: {problem}", Kind.REFUSED_EDIT)
    if "edits" in arguments:
        edits = parse_edits(arguments["edits"])
    elif "memory_update" in arguments:
        edits = edits_from_rewrite(current_memory, _string(arguments, "memory_update"))
    else:
        raise ReplyRejected("save_memory was called without edits")
    applied = apply_edits(current_memory, edits, context)
    _some_stand(applied)
    return SavedMemory(entry, applied.text, len(edits), applied.decisions, edits, current_memory)


def _some_stand(applied: Applied) -> None:
    """A reply whose every edit was refused is no answer: the next model is asked."""
    decisions = applied.decisions
    if decisions and all(d.fate is Fate.REFUSED for d in decisions):
        first = decisions[0]
        more = f" (and {len(decisions) - 1} more)" if len(decisions) > 1 else ""
        raise ReplyRejected(
            f"every edit was refused: {first.edit}: {first.reason}{more}", Kind.REFUSED_EDIT
        )


def parse_rewrite(
    reply: Reply, current_memory: str, settings: MemorySettings, window: int | None = None
) -> SavedMemory:
    """A whole new MEMORY.md (a tidy only, which the user sees as a diff and accepts or
    not): within the budget, and keeping at least half of a memory of some size."""
    arguments = _arguments(reply, window)
    entry = _entry(arguments, settings)
    update = _string(arguments, "memory_update").strip()
    if len(update) > settings.memory_max_chars:
        raise ReplyRejected(
            f"memory_update is {len(update):,} characters, over the "
            f"{settings.memory_max_chars:,} budget"
        )
    old = current_memory.strip()
    if (
        len(old) >= TRIVIAL_MEMORY
        and len(old) <= settings.memory_max_chars
        and len(update) < KEEP_SHARE * len(old)
    ):
        raise ReplyRejected(
            f"memory_update would drop most of MEMORY.md ({len(update):,} of "
            f"{len(old):,} characters kept)"
        )
    return SavedMemory(entry, update + "\n" if update else "")
