"""A tidy: the consolidation chain rewrites MEMORY.md within its budget —
duplicates merged, what later sessions contradicted dropped, every still-true fact kept —
and the user accepts or rejects the result, shown as a diff. The only whole-file rewrite a
model may make (a consolidation proposes edits): it must keep within the budget and keep at
least half of the memory; an accepted tidy is versioned and never overwrites an edit made
meanwhile."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from catalog import Attempt, Catalog, RetryPolicy, complete
from memory.consolidation.chain import consolidation_chain, consolidation_policy
from memory.consolidation.chunks import rewrite_budget
from memory.consolidation.outcome import Cause
from memory.consolidation.prompt import (
    REWRITE_MEMORY_SCHEMA,
    REWRITE_MEMORY_TOOL,
    SAVE_MEMORY_CHOICE,
    inert,
)
from memory.consolidation.reply import parse_rewrite
from memory.data.store import MemoryStore, MemoryText
from memory.data.versions import VersionKind

TIDY_SYSTEM = (
    "You maintain the long-term memory of a personal assistant called Kept. You receive "
    "the current MEMORY.md. Rewrite it tidily and call the save_memory tool exactly once, "
    "with:\n"
    "- memory_update: the whole tidied MEMORY.md. Merge duplicate facts; where two facts "
    "contradict each other, keep the later one (facts further down or marked as newer); "
    "keep every fact that is still true, in the user's own language; group related facts "
    "under short headings. Add nothing new. Stay under {budget} characters.\n"
    "- history_entry: one sentence saying what you changed.\n"
    "Do not answer in prose. If the save_memory tool is unavailable, reply with only a JSON "
    'object: {{"history_entry": "...", "memory_update": "..."}}.'
)


@dataclass(frozen=True)
class Tidy:
    """A proposed tidy of MEMORY.md, or why there is none."""

    base: MemoryText
    text: str = ""
    summary: str = ""
    model: str | None = None
    reason: str = ""
    attempts: tuple[Attempt, ...] = ()
    cause: Cause | None = None  # what the user can do about a refusal, for the app to word

    @classmethod
    def rewritten(
        cls,
        base: MemoryText,
        text: str,
        summary: str,
        model: str | None,
        attempts: tuple[Attempt, ...],
    ) -> Tidy:
        return cls(base, text=text, summary=summary, model=model, attempts=attempts)

    @classmethod
    def refused(
        cls,
        base: MemoryText,
        reason: str,
        attempts: tuple[Attempt, ...] = (),
        cause: Cause | None = None,
    ) -> Tidy:
        return cls(base, reason=reason, attempts=attempts, cause=cause)

    @property
    def ok(self) -> bool:
        return not self.reason


async def tidy(
    store: MemoryStore,
    catalog: Catalog,
    *,
    policy: RetryPolicy | None = None,
    on_attempt: Callable[[Attempt], None] | None = None,
    chat_model: str | None = None,
) -> Tidy:
    """Ask the consolidation chain for a tidied MEMORY.md; nothing is written here."""
    settings = store.settings
    base = store.read_memory()
    if not base.text.strip():
        return Tidy.refused(base, "it is empty, so there is nothing to tidy")
    chain, problem, cause = consolidation_chain(catalog, settings, chat_model)
    if chain is None:
        return Tidy.refused(base, problem, cause=cause)
    messages = [
        {"role": "system", "content": TIDY_SYSTEM.format(budget=settings.memory_max_chars)},
        {
            "role": "user",
            "content": f"<current_memory>\n{inert(base.text.strip())}\n</current_memory>",
        },
    ]
    result = await complete(
        catalog,
        chain.models[0].id,
        messages,
        tools=[REWRITE_MEMORY_TOOL],
        tool_choice=SAVE_MEMORY_CHOICE,
        policy=consolidation_policy(catalog, settings, policy),
        on_attempt=on_attempt,
        chain=chain,
        schema=REWRITE_MEMORY_SCHEMA,
        max_tokens=rewrite_budget(settings, base.text),
        health=store.health(),
        accept=lambda reply: parse_rewrite(reply, base.text, settings),
    )
    if not result.ok:
        return Tidy.refused(base, result.reason, result.attempts)
    return Tidy.rewritten(
        base,
        result.value.memory_update,
        result.value.history_entry,
        result.model,
        result.attempts,
    )


def apply_tidy(store: MemoryStore, proposal: Tidy, text: str | None = None) -> bool:
    """Write the accepted tidy as a new version; False (nothing written) if MEMORY.md
    changed since the tidy was asked for."""
    return (
        store.save_edit(
            proposal.text if text is None else text,
            proposal.base.digest,
            source=VersionKind.TIDY,
            model=proposal.model,
        )
        is None
    )
