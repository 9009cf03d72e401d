"""Memory work that runs while the user chats: consolidation after /new or compaction,
and retries of pending sessions. The user never waits for it."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Coroutine
from dataclasses import dataclass
from enum import StrEnum
from typing import TYPE_CHECKING, Any

from textual.worker import Worker, WorkerCancelled, WorkerFailed, WorkerState

from app.sync_jobs import SyncJobs
from app.words.consolidation import not_saved
from catalog.llm import litellm
from catalog.sanitize import clean_text
from memory.consolidation.outcome import Status

if TYPE_CHECKING:
    from app.main import KeptApp
    from memory import Consolidation, Journal, Segment
    from memory.sessions.pending import PendingSession

RETRY_EVERY = 60.0  # seconds between looks for pending sessions that are due
SAVING = "memory"  # the worker group of consolidations: what "Saving memory…" means
LOOKING = "memory-look"  # start-up recovery and looks for pending sessions


class MemoryState(StrEnum):
    """What the status bar says of memory, from the most to the least pressing."""

    UNKNOWN = "unknown"  # before the first look at the data folder
    SAVING = "saving"
    REVIEW = "review"  # proposed changes wait for the user
    NOT_SAVED = "not saved"  # the last consolidation failed; it will be retried
    PENDING = "pending"
    SAVED = "saved"
    SYNCED = "synced"  # the last change came from another device
    EMPTY = "empty"  # a brand-new data folder


@dataclass(frozen=True)
class MemoryStatus:
    """The memory part of the status bar; `str()` is the one place it is worded."""

    state: MemoryState = MemoryState.UNKNOWN
    pending: int = 0  # segments waiting to be saved
    waiting: int = 0  # proposed changes waiting for review
    saved: str = ""  # "model, 1.2 s, $0.0010" of the last save this run
    source: str = ""  # SYNCED: the device the change came from

    def __str__(self) -> str:
        match self.state:
            case MemoryState.UNKNOWN:
                return ""
            case MemoryState.SAVING:
                return "Saving memory…"
            case MemoryState.REVIEW:
                plural = "s" if self.waiting > 1 else ""
                return f"{self.waiting} memory change{plural} to review (Ctrl+R)"
            case MemoryState.NOT_SAVED:
                more = f" ({self.pending} pending)" if self.pending else ""
                return f"Memory not saved yet — will retry{more}"
            case MemoryState.PENDING:
                return f"{self.pending} pending"
            case MemoryState.SAVED:
                return f"Memory saved ({self.saved})" if self.saved else "Memory saved"
            case MemoryState.SYNCED:
                return f"Memory merged from {self.source}"
            case MemoryState.EMPTY:
                return "No memory saved yet"


@dataclass(frozen=True)
class _Counts:
    """What the data folder holds, read in a thread."""

    pending: int
    waiting: int
    ever_saved: bool


class MemoryJobs:
    """Starts consolidation workers and keeps the app's memory status current. What is
    running is the app's worker manager's to know (the "memory" group), not a counter."""

    def __init__(self, app: KeptApp) -> None:
        self.app = app
        # The outcome of the last consolidation this run: SAVED (with its detail),
        # NOT_SAVED, or None before any.
        self._last: MemoryStatus | None = None
        self._counts: _Counts | None = None
        self._asked: set[tuple[str, str]] = set()  # held segments the user was told about
        # Long sessions whose estimate the user was shown: the retry every minute finds
        # them again, and says nothing new.
        self._estimated: set[tuple[str, str]] = set()
        self.sync = SyncJobs(app)

    @property
    def running(self) -> int:
        """Consolidations started and not yet finished."""
        return sum(
            1
            for worker in self.app.workers
            if worker.group == SAVING and worker.state in (WorkerState.PENDING, WorkerState.RUNNING)
        )

    def start(self) -> None:
        """After the first frame: finish any interrupted save, then retry what is due."""
        self.app.run_worker(self._startup(), group=LOOKING, exit_on_error=False)
        self.app.set_interval(RETRY_EVERY, self.retry_due)
        self.sync.look()
        self.app.set_interval(RETRY_EVERY, self.sync.look)

    async def _startup(self) -> None:
        from memory.consolidation.commit import recover

        message = await asyncio.to_thread(recover, self.app.store)
        if message:
            self.app.notify(message, title="Memory", markup=False)
        await self._look(only_due=False)  # every start retries what is pending

    async def _look(self, only_due: bool, include_held: bool = False) -> None:
        """Count what is pending (shown at once) and consolidate it, if any."""
        self._show(await asyncio.to_thread(self._count))
        if self._counts is not None and self._counts.pending + self._counts.waiting:
            worker = self._consolidate(self._retry(only_due, include_held))
            # Waited for, so that whoever waits for this look waits for the saving too; its
            # failure is said when its state changes.
            with contextlib.suppress(WorkerCancelled, WorkerFailed):
                await worker.wait()

    def _consolidate(self, job: Coroutine[Any, Any, None]) -> Worker[None]:
        """A consolidation in the "memory" group: the status says so while it runs."""
        worker: Worker[None] = self.app.run_worker(
            job, group=SAVING, exclusive=False, exit_on_error=False
        )
        self._show()
        return worker

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        """A memory job ended: whatever went wrong is said, and the app goes on."""
        if event.worker.group not in (SAVING, LOOKING):
            return
        if event.state is WorkerState.ERROR:  # the session stays pending: nothing is lost
            error = event.worker.error
            self.app.notify(
                f"Memory could not be saved: {type(error).__name__}: "
                f"{clean_text(str(error))}. "
                "The session stays pending.",
                title="Memory",
                severity="error",
                markup=False,
            )
            self._show()
            self.refresh_status()
        elif event.state is WorkerState.CANCELLED:  # it did not count what it left
            self._show()
            self.refresh_status()
        elif event.state is WorkerState.SUCCESS:  # it counted before it ended
            self._show()

    def retry_due(self) -> None:
        if not self.running:  # the look for pending sessions happens in a thread
            self.app.run_worker(self._look(only_due=True), group=LOOKING, exit_on_error=False)

    def retry_now(self) -> None:
        """The user asked: every pending session, those every model refused included."""
        self.app.run_worker(
            self._look(only_due=False, include_held=True), group=LOOKING, exit_on_error=False
        )

    async def _retry(self, only_due: bool, include_held: bool = False) -> None:
        await asyncio.to_thread(litellm)
        from memory.consolidation.run import ASK_ABOVE_PARTS, consolidate_pending
        from memory.sessions.pending import pending as pending_sessions

        results = await consolidate_pending(
            self.app.store,
            self.app.catalog,
            only_due=only_due,
            policy=self.app.policy,
            include_held=include_held,
            chat_model=self.app.model,
            max_parts=None if include_held else ASK_ABOVE_PARTS,
        )  # asked: go ahead
        for result in results:
            await self._report(result)
        self._ask_about_held(await asyncio.to_thread(pending_sessions, self.app.store))
        self._counts = await asyncio.to_thread(self._count)

    def _ask_about_held(self, pending: list[PendingSession]) -> None:
        """Once per session and segment: every model keeps refusing it, so Kept stops
        paying for the same answers and asks the user what to do."""
        from memory.consolidation.run import HOLD_AFTER, held

        for session in pending:
            journal = session.marks
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
        self._consolidate(self._save(journal, segment))

    async def _save(self, journal: Journal, segment: Segment) -> None:
        await asyncio.to_thread(litellm)
        from memory.consolidation.run import ASK_ABOVE_PARTS, consolidate

        result = await consolidate(
            self.app.store,
            self.app.catalog,
            journal,
            segment,
            policy=self.app.policy,
            chat_model=self.app.model,
            max_parts=ASK_ABOVE_PARTS,
        )
        match result.status:
            case Status.SAVED | Status.SAVED_BEFORE:
                journal.record_consolidated(segment)  # the live session's copy of the journal
                from memory.recall.index import build_if_needed

                # Its transcript moved to done/: indexed once enough is new (searches read it).
                await asyncio.to_thread(build_if_needed, self.app.store.root)
        await self._report(result)
        # Counted before the job ends, so the status is right the moment it does.
        self._counts = await asyncio.to_thread(self._count)

    async def _report(self, result: Consolidation) -> None:
        match result.status:
            case Status.TOO_LONG:
                self._ask_to_confirm(result)
            # No model: nothing was asked (a part with nothing said), so nothing to say.
            case Status.PROPOSED if result.model:
                self.app.review.proposed(result)
            case Status.SAVED if result.model:
                self._last = MemoryStatus(
                    MemoryState.SAVED,
                    saved=f"{result.model}, {result.elapsed:.1f} s, ${result.cost:.4f}",
                )
                await self.app.review.saved(result)
                self.sync.after_save()
            case Status.FAILED | Status.BUSY:
                self._last = MemoryStatus(MemoryState.NOT_SAVED)
                self.app.notify(
                    not_saved(result),
                    title="Memory",
                    severity="warning",
                    timeout=8,
                    markup=False,
                )
            case _:  # saved or proposed before: said when it happened
                pass

    def came_from(self, source: str) -> None:
        """Memory changed with another device's side: the status says whose."""
        self._last = MemoryStatus(MemoryState.SYNCED, source=source)
        self.refresh_status()

    def _ask_to_confirm(self, result: Consolidation) -> None:
        """A long session's estimate, said once: the retry every minute finds it again."""
        told = (result.session, str(result.segment))
        if told in self._estimated:
            return
        self._estimated.add(told)
        self.app.notify(
            f"Session {result.session} is long: {result.estimate} with "
            "Retry pending memory (or Retry now in /log). It stays pending, "
            "nothing lost.",
            title="Memory",
            severity="warning",
            timeout=30,
            markup=False,
        )

    def refresh_status(self) -> None:
        """Count pending sessions again (it reads every journal: done in a thread)."""
        self.app.run_worker(
            self._count_then_show,
            thread=True,
            group="memory-status",
            exclusive=True,
            exit_on_error=False,
        )

    def _count_then_show(self) -> None:
        counts = self._count()
        self.app.call_from_thread(self._show, counts)

    def _count(self) -> _Counts:
        from memory.consolidation.review import proposals
        from memory.sessions.pending import pending as pending_sessions

        store = self.app.store
        waiting = len(proposals(store))
        # From index.pending.json: 10,000 pending journals are not read message by message.
        pending = sum(len(s.parts) for s in pending_sessions(store)) - waiting
        # A brand-new data folder has nothing saved: it must not say "Memory saved".
        ever_saved = any(
            path.exists() and path.stat().st_size > 0
            for path in (store.history_path, store.memory_path)
        )
        return _Counts(pending, waiting, ever_saved)

    def _show(self, counts: _Counts | None = None) -> None:
        """Set the app's memory status from what is running and the last counts."""
        if counts is not None:
            self._counts = counts
        self.app.memory_status = self.status()

    def status(self) -> MemoryStatus:
        if self.running:
            return MemoryStatus(MemoryState.SAVING)
        counts = self._counts
        if counts is None:
            return MemoryStatus()
        if counts.waiting:
            return MemoryStatus(MemoryState.REVIEW, waiting=counts.waiting)
        last = self._last
        if last is not None and last.state is MemoryState.NOT_SAVED:
            return MemoryStatus(MemoryState.NOT_SAVED, pending=counts.pending)
        if counts.pending:
            return MemoryStatus(MemoryState.PENDING, pending=counts.pending)
        if last is not None:
            return last
        return MemoryStatus(MemoryState.SAVED if counts.ever_saved else MemoryState.EMPTY)
