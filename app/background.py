"""Memory work that runs while the user chats: consolidation after /new or compaction,
and retries of pending sessions. The user never waits for it."""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine
from typing import TYPE_CHECKING, Any

from catalog.llm import litellm
from catalog.sanitize import clean_text

if TYPE_CHECKING:
    from app.main import KeptApp
    from memory import Consolidation, Journal, Segment

RETRY_EVERY = 60.0  # seconds between looks for pending sessions that are due


class MemoryJobs:
    """Starts consolidation workers and keeps the app's memory status current."""

    def __init__(self, app: KeptApp) -> None:
        self.app = app
        self.running = 0
        self.last_saved = ""
        self._asked: set[tuple[str, str]] = set()  # held segments the user was told about

    def start(self) -> None:
        """After the first frame: finish any interrupted save, then retry what is due."""
        self._run(self._startup())
        self.app.set_interval(RETRY_EVERY, self.retry_due)

    async def _startup(self) -> None:
        from memory.commit import recover

        message = await asyncio.to_thread(recover, self.app.store)
        if message:
            self.app.notify(message, title="Memory", markup=False)
        self.refresh_status()
        await self._retry(only_due=False)  # every start retries what is pending

    def _run(self, job: Coroutine[Any, Any, None]) -> None:
        """A memory job in a worker; whatever goes wrong is said, and the app goes on."""

        async def guarded() -> None:
            try:
                await job
            except Exception as exc:  # the session stays pending: nothing is lost
                # `running` is not touched here: the job's own `finally` already counted it
                # down, and another job may still be running.
                self.app.notify(
                    f"Memory could not be saved: {type(exc).__name__}: "
                    f"{clean_text(str(exc))}. "
                    "The session stays pending.",
                    title="Memory",
                    severity="error",
                    markup=False,
                )
                self.refresh_status()

        self.app.run_worker(guarded(), group="memory", exclusive=False, exit_on_error=False)

    def retry_due(self) -> None:
        if self.running == 0:  # _retry looks for pending sessions in a thread
            self._run(self._retry(only_due=True))

    def retry_now(self) -> None:
        """The user asked: every pending session, those every model refused included."""
        self._run(self._retry(only_due=False, include_held=True))

    async def _retry(self, only_due: bool, include_held: bool = False) -> None:
        pending = await asyncio.to_thread(self.app.store.pending_sessions)
        if not pending:
            return
        self.running += 1
        self.app.memory_status = "Saving memory…"
        try:
            await asyncio.to_thread(litellm)
            from memory.consolidation import ASK_ABOVE_PARTS, consolidate_pending

            results = await consolidate_pending(
                self.app.store,
                self.app.catalog,
                only_due=only_due,
                policy=self.app.policy,
                include_held=include_held,
                chat_model=self.app.model,
                max_parts=None if include_held else ASK_ABOVE_PARTS,
            )  # asked: go ahead
        finally:
            self.running -= 1
        for result in results:
            self._report(result)
        self._ask_about_held(await asyncio.to_thread(self.app.store.pending_sessions))
        self.refresh_status()

    def _ask_about_held(self, pending: list[Journal]) -> None:
        """Once per session and segment: every model keeps refusing it, so Kept stops
        paying for the same answers and asks the user what to do."""
        from memory.consolidation import HOLD_AFTER, held

        for journal in pending:
            for segment in journal.pending:
                key = (journal.id, str(segment))
                if key in self._asked or not held(journal, segment):
                    continue
                self._asked.add(key)
                reason = journal.failures[segment][-1].reason
                self.app.notify(
                    f"Session {journal.id} was refused by every model {HOLD_AFTER} times in "
                    f"a row ({reason}), so Kept no longer retries it on its own. It stays "
                    "pending, nothing lost: fix the cause, then Retry pending memory (or "
                    "Retry now in /log).",
                    title="Memory",
                    severity="warning",
                    timeout=30,
                    markup=False,
                )

    def save(self, journal: Journal, segment: Segment) -> None:
        """Consolidate one segment in the background."""
        self._run(self._save(journal, segment))

    async def _save(self, journal: Journal, segment: Segment) -> None:
        self.running += 1
        self.app.memory_status = "Saving memory…"
        try:
            await asyncio.to_thread(litellm)
            from memory.consolidation import ASK_ABOVE_PARTS, consolidate

            result = await consolidate(
                self.app.store,
                self.app.catalog,
                journal,
                segment,
                policy=self.app.policy,
                chat_model=self.app.model,
                max_parts=ASK_ABOVE_PARTS,
            )
        finally:
            self.running -= 1
        if result.saved:
            journal.record_consolidated(segment)  # the live session's copy of the journal
        self._report(result)
        self.refresh_status()

    def _report(self, result: Consolidation) -> None:
        if result.estimate:
            self.app.notify(
                f"Session {result.session} is long: {result.estimate} with "
                "Retry pending memory (or Retry now in /log). It stays pending, "
                "nothing lost.",
                title="Memory",
                severity="warning",
                timeout=30,
                markup=False,
            )
            return
        if result.proposed:
            if result.model:  # newly proposed, not one already waiting
                self.app.review.proposed(result)
        elif result.saved and result.model:
            self.last_saved = (
                f"Memory saved ({result.model}, {result.elapsed:.1f} s, ${result.cost:.4f})"
            )
            self.app.review.saved(result)
        elif not result.saved:
            self.last_saved = "Memory not saved yet — will retry"
            self.app.notify(
                f"Memory not saved yet — will retry. {result.reason}",
                title="Memory",
                severity="warning",
                timeout=8,
                markup=False,
            )

    def refresh_status(self) -> None:
        """saving… / Memory saved (…) / Memory not saved yet — will retry / N pending.
        Counting pending sessions reads every journal: done in a thread."""
        if self.running:
            self.app.memory_status = "Saving memory…"
            return
        self.app.run_worker(
            self._count_pending,
            thread=True,
            group="memory-status",
            exclusive=True,
            exit_on_error=False,
        )

    def _count_pending(self) -> None:
        from memory.review import proposals

        waiting = len(proposals(self.app.store))
        pending = sum(len(j.pending) for j in self.app.store.pending_sessions()) - waiting
        self.app.call_from_thread(self._show_status, pending, waiting)

    def _show_status(self, pending: int, waiting: int = 0) -> None:
        if self.running:
            self.app.memory_status = "Saving memory…"
        elif waiting:
            self.app.memory_status = (
                f"{waiting} memory change{'s' if waiting > 1 else ''} to review (Ctrl+R)"
            )
        elif self.last_saved.startswith("Memory not saved") and pending:
            self.app.memory_status = f"{self.last_saved} ({pending} pending)"
        elif pending:
            self.app.memory_status = f"{pending} pending"
        else:
            self.app.memory_status = self.last_saved or (
                "Memory saved" if self._ever_saved() else "No memory saved yet"
            )

    def _ever_saved(self) -> bool:
        """A brand-new data folder has nothing saved: it must not say "Memory saved"."""
        store = self.app.store
        return any(
            path.exists() and path.stat().st_size > 0
            for path in (store.history_path, store.memory_path)
        )
