"""Memory changes the user sees and decides on: the notice after a consolidation (with its
diff and undo), proposals held for review, and /tidy."""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING

from app.documents import async_store
from app.words.memory import not_written
from catalog.models import short_label

if TYPE_CHECKING:
    from app.main import KeptApp
    from app.screens.change import Decision
    from memory import Consolidation
    from memory.consolidation.review import Proposal
    from memory.consolidation.tidy import Tidy
    from memory.data.store import Version


class MemoryReview:
    def __init__(self, app: KeptApp) -> None:
        self.app = app
        self.last_version: int | None = None  # the change Ctrl+R shows

    def _label(self, model: str | None) -> str:
        """A model as the user knows it: its catalog label, or a short one for an id a
        server gave (a file path)."""
        if model and model in self.app.catalog:
            return self.app.catalog.get(model).label
        return short_label(model or "")

    def say(self, message: str, severity: str = "information") -> None:
        self.app.notify(
            message,
            title="Memory",
            severity=severity,  # type: ignore[arg-type]
            timeout=10,
            markup=False,
        )

    # --- after a consolidation -----------------------------------------------------------

    async def saved(self, result: Consolidation) -> None:
        """Say what a consolidation changed, if anything, and how to see or undo it (the
        versions are read off the event loop)."""
        from memory.consolidation.review import line_change, version_texts, written_by

        store = self.app.store
        version = await asyncio.to_thread(written_by, store, result.session, result.history_entry)
        if version is None:
            return
        change = line_change(*await asyncio.to_thread(version_texts, store, version))
        if change.any:
            self.last_version = version.number
            self.say(f"Memory updated: {change}. Ctrl+R shows the change and can undo it.")

    def proposed(self, result: Consolidation) -> None:
        by = f" from {self._label(result.model)}" if result.model else ""
        self.say(
            f"A memory change{by} is waiting for your review: Ctrl+R to accept, edit or reject it."
        )

    # --- Ctrl+R --------------------------------------------------------------------------

    async def open(self) -> None:
        """Lines two devices changed differently, else the oldest proposal waiting for a
        decision, else the last saved change."""
        from app.sync_review import review_sync
        from memory.consolidation.review import proposals
        from memory.sync.proposals import sync_proposals

        store = self.app.store
        troubles: list[str] = []
        both = await asyncio.to_thread(sync_proposals, store, troubles)
        for trouble in troubles:
            self.say(trouble, "warning")
        if both:
            first = both[0]
            read = store.read_memory if first.file == "MEMORY.md" else store.read_instructions
            review_sync(self, first, (await asyncio.to_thread(read)).text, len(both) - 1)
            return
        problems: list[str] = []
        waiting = await asyncio.to_thread(proposals, store, problems)
        for problem in problems:  # an edited or damaged proposal file, set aside
            self.say(problem, "warning")
        if waiting:
            self._review(waiting[0], len(waiting) - 1)
            return
        version = await self._last_version()
        if version is None:
            self.say("No memory change to review yet.")
            return
        await self._show(version)

    async def _last_version(self) -> Version | None:
        """The version to review, its record read newest first (not every version's)."""
        store = async_store(self.app)
        if self.last_version is not None:
            return await store.version(self.last_version)
        for number in reversed(await store.version_numbers()):
            version = await store.version(number)
            if version is not None and version.session:
                return version
        return None

    async def _show(self, version: Version) -> None:
        from memory.consolidation.review import line_change, unified, version_texts

        old, new = await asyncio.to_thread(version_texts, self.app.store, version)
        by = f"session {version.session}, {version.model}" if version.session else version.source
        title = f"Memory updated: {line_change(old, new)} (version {version.number}, {by})"

        async def chosen(decision: Decision | None) -> None:
            if decision is None or decision.choice != "undo":
                return
            try:  # a write under the store's lock: off the event loop
                number = await async_store(self.app).undo(version.number)
            except (LookupError, ValueError) as exc:
                self.say(not_written(exc), "warning")
                return
            self.say(
                f"Change undone: MEMORY.md is as it was before version "
                f"{version.number} (saved as version {number}). The history entry "
                "stays."
            )

        from app.screens.change import ChangeDialog
        from app.words.evidence import why_parts

        self.app.push_screen(
            ChangeDialog(
                title,
                unified(old, new, "before", f"version {version.number}"),
                new,
                [("keep", "Keep it"), ("undo", "Undo this change")],
                why=why_parts(version.evidence, new, waiting=False),
            ),
            chosen,
        )

    def _review(self, proposal: Proposal, more: int) -> None:
        from memory.consolidation.review import StaleProposal, accept, reject, unified

        note = (
            f"Session {proposal.session} · {self._label(proposal.model)}\n{proposal.history_entry}"
        )
        if more:
            note += f"\n({more} more waiting after this one)"

        async def chosen(decision: Decision | None) -> None:
            if decision is None or decision.choice == "later":
                return
            store = self.app.store
            try:  # writes under the store's lock: off the event loop
                if decision.choice == "accept":
                    await asyncio.to_thread(accept, store, proposal, decision.text)
                    self.say("Memory change accepted and saved.")
                elif decision.choice == "reject":
                    await asyncio.to_thread(reject, store, proposal)
                    self.say(
                        "Memory change rejected: MEMORY.md and HISTORY.md are "
                        "unchanged; the session's journal is kept."
                    )
            except (StaleProposal, LookupError) as exc:  # decided elsewhere, or deleted
                self.say(str(exc), "warning")
                self.app.jobs.retry_now()
            self.app.jobs.refresh_status()

        from app.screens.change import ChangeDialog
        from app.words.evidence import why_parts

        self.app.push_screen(
            ChangeDialog(
                f"Proposed memory change: {proposal.change}",
                unified(proposal.base_text, proposal.memory_update, "MEMORY.md now", "proposed"),
                proposal.memory_update,
                [("accept", "Accept"), ("reject", "Reject"), ("later", "Decide later")],
                note=note,
                editable=True,
                why=why_parts(proposal.decisions, proposal.memory_update, waiting=True),
            ),
            chosen,
        )

    # --- /tidy ---------------------------------------------------------------------------

    async def tidy(self) -> None:
        from catalog.llm import litellm
        from memory.consolidation.tidy import tidy

        self.say("Tidying MEMORY.md: the consolidation chain is rewriting it…")
        await asyncio.to_thread(litellm)
        result = await tidy(
            self.app.store, self.app.catalog, policy=self.app.policy, chat_model=self.app.model
        )
        if not result.ok:
            from app.words.consolidation import next_step

            step = next_step(result.cause)
            said = f"MEMORY.md was not tidied: {result.reason.rstrip('.')}."
            self.say(f"{said} {step}" if step else said, "warning")
            return
        self._offer_tidy(result)

    def _offer_tidy(self, result: Tidy) -> None:
        from memory.consolidation.review import line_change, unified
        from memory.consolidation.tidy import apply_tidy

        old = result.base.text

        async def chosen(decision: Decision | None) -> None:
            if decision is None or decision.choice != "accept":
                return
            if await asyncio.to_thread(apply_tidy, self.app.store, result, decision.text):
                self.say("MEMORY.md tidied; the previous text is a version.")
            else:
                self.say(
                    "MEMORY.md changed while it was being tidied, so the tidy was not "
                    "applied. Run /tidy again.",
                    "warning",
                )

        from app.screens.change import ChangeDialog

        self.app.push_screen(
            ChangeDialog(
                f"Tidy MEMORY.md: {line_change(old, result.text)} (by {self._label(result.model)})",
                unified(old, result.text, "MEMORY.md now", "tidied"),
                result.text,
                [("accept", "Accept"), ("reject", "Reject")],
                note=result.summary,
                editable=True,
            ),
            chosen,
        )
