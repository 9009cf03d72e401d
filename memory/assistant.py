"""One chat turn: the user's message, the model's answer, and any history searches between.

Every message is in the session journal before the next step starts, so a crash or a
cancelled reply loses nothing that was said or shown.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime

from catalog import Attempt, Catalog, RetryPolicy, complete
from memory.prompt import system_prompt
from memory.sanitize import clean_text
from memory.search import SEARCH_HISTORY_TOOL, run_search_tool
from memory.session import LiveSession

MAX_TOOL_ROUNDS = 4
CUT_OFF = "\n\n*[reply cut off]*"  # ends a reply whose stream broke: it says so in the journal


class _CutOff(Exception):
    """A reply broke off after part of it was shown: the walk stops there, so the user
    keeps what they read instead of seeing it replaced by another model's answer."""


@dataclass
class Turn:
    """How a turn went: the answer, who gave it, what it cost, or why it failed."""

    requested: str
    ok: bool = False
    text: str = ""
    model: str | None = None
    reason: str = ""
    attempts: list[Attempt] = field(default_factory=list)
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost: float = 0.0
    searches: list[str] = field(default_factory=list)
    cut_off: bool = False  # part of a reply was shown and kept; `reason` says what failed

    @property
    def fell_back(self) -> bool:
        return self.model is not None and self.model != self.requested


async def answer(
    session: LiveSession,
    catalog: Catalog,
    model: str,
    *,
    on_delta: Callable[[str], None] | None = None,
    on_attempt: Callable[[Attempt], None] | None = None,
    policy: RetryPolicy | None = None,
    now: datetime | None = None,
) -> Turn:
    """Answer the session's last message (the caller has journaled it, so nothing the user
    sent is lost whatever happens next) and journal the answer."""
    from catalog.llm import litellm

    store = session.store
    turn = Turn(requested=model)
    shown: list[str] = []

    def delta(piece: str) -> None:
        shown.append(piece)
        if on_delta is not None:
            on_delta(piece)

    def attempt(record: Attempt) -> None:
        turn.attempts.append(record)
        if record.outcome.value not in ("ok", "cancelled", "skipped") and "".join(shown).strip():
            raise _CutOff
        if record.outcome.value not in ("ok", "cancelled"):
            shown.clear()
        if on_attempt is not None:
            on_attempt(record)

    try:
        await asyncio.to_thread(litellm)  # its first import takes seconds: not on this loop
        for _ in range(MAX_TOOL_ROUNDS):
            try:
                memory_text = store.read_memory().text
            except OSError:
                memory_text = ""  # an unreadable MEMORY.md must not stop the conversation
            prompt = system_prompt(memory_text, limit=store.settings.prompt_memory_chars,
                                   now=now)
            messages = [{"role": "system", "content": prompt}, *session.context()]
            try:
                result = await complete(catalog, model, messages, tools=[SEARCH_HISTORY_TOOL],
                                        stream=True, policy=policy, on_delta=delta,
                                        on_attempt=attempt)
            except _CutOff:
                failed = turn.attempts[-1]
                turn.text, turn.cut_off, turn.model = clean_text("".join(shown)), True, \
                    failed.model
                turn.reason = f"{failed.model}: {failed.reason}"
                session.append({"role": "assistant", "content": turn.text + CUT_OFF,
                                "model": failed.model})
                return turn
            turn.cost += result.cost
            if not result.ok or result.reply is None:
                turn.reason = result.reason
                return turn
            reply = result.reply
            turn.prompt_tokens += reply.prompt_tokens
            turn.completion_tokens += reply.completion_tokens
            turn.model = reply.model
            searches = [c for c in reply.tool_calls if c.name == "search_history"]
            if not searches:
                turn.text = clean_text(reply.text)
                session.append({"role": "assistant", "content": turn.text,
                                "model": reply.model})
                turn.ok = True
                return turn
            session.append({"role": "assistant", "content": reply.text or None,
                            "model": reply.model, "tool_calls": [
                                {"id": c.id, "type": "function",
                                 "function": {"name": c.name, "arguments": c.arguments}}
                                for c in searches]})
            shown.clear()
            for call in searches:
                turn.searches.append(call.arguments)
                found = await asyncio.to_thread(run_search_tool, store, call.arguments)
                session.append({"role": "tool", "tool_call_id": call.id,
                                "name": call.name, "content": found})
        turn.reason = "the model kept searching its history without answering"
        return turn
    except asyncio.CancelledError:
        # What the user saw of the reply stays in the session (unless it was closed first).
        if shown and not session.journal.closed:
            last = turn.attempts[-1].model if turn.attempts else model
            session.append({"role": "assistant", "content": clean_text("".join(shown)),
                            "model": last})
        raise


def describe_search(arguments: str) -> str:
    try:
        return str(json.loads(arguments).get("pattern", ""))
    except (ValueError, AttributeError):
        return ""
