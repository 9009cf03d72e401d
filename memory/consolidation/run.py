"""The business layer: a session becomes memory only when a model really saved it.

"The request succeeded" is not "the task succeeded". A reply counts only if it carries a
`save_memory` call (or the same JSON object as text) whose arguments pass validation;
anything else moves the walk to the next model of the chain. When no model succeeds the
session stays pending, with the reason recorded, and is retried later.

Here one consolidation is prepared under the session's claim and handed as a `Job` to
memory/consolidation/walk.py (parts, the chain, acceptance, the commit); its outcome is a
`Consolidation` with one `Status` (memory/consolidation/outcome.py). `consolidate_pending`
takes every pending session in turn.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Unpack

from catalog import Catalog
from memory.consolidation.chain import consolidation_chain, consolidation_policy
from memory.consolidation.commit import recover
from memory.consolidation.estimate import ASK_ABOVE_PARTS, Estimate, estimate_pending
from memory.consolidation.outcome import AWAITING_REVIEW, BUSY, Cause, Consolidation, Status
from memory.consolidation.schedule import HOLD_AFTER, RETRY_DELAYS, held, next_retry, retry_note
from memory.consolidation.walk import EDIT_ROUNDS, MAX_SHRINK, Asking, Job, consolidate_job
from memory.data.files import locked
from memory.data.layout import claim_lock
from memory.data.store import MemoryStore
from memory.sanitize import clean_text
from memory.sessions.journal import Journal, Segment, session_started

# What callers import from here (the consolidation's public face).
__all__ = [
    "ASK_ABOVE_PARTS",
    "AWAITING_REVIEW",
    "BUSY",
    "EDIT_ROUNDS",
    "HOLD_AFTER",
    "MAX_SHRINK",
    "RETRY_DELAYS",
    "Asking",
    "Consolidation",
    "Estimate",
    "Status",
    "consolidate",
    "consolidate_pending",
    "consolidation_chain",
    "estimate_pending",
    "held",
    "next_retry",
    "retry_note",
]


def _segment_time(journal: Journal, segment: Segment) -> datetime:
    for message in journal.segment_messages(segment):
        try:
            when = datetime.fromisoformat(str(message.get("time")))
            return (when if when.tzinfo else when.replace(tzinfo=UTC)).astimezone()
        except (ValueError, OverflowError, OSError):  # unreadable, or past the calendar
            continue
    return datetime.now().astimezone()


async def consolidate(
    store: MemoryStore,
    catalog: Catalog,
    journal: Journal,
    segment: Segment,
    **asking: Unpack[Asking],
) -> Consolidation:
    """Consolidate one pending segment into MEMORY.md and HISTORY.md, or leave it pending.
    With `max_parts`, a session needing more requests than that is left pending with an
    estimate for the user to confirm. Reading, counting and cutting the transcript run in
    a thread: a huge session never stalls the caller's event loop."""
    started = time.monotonic()
    with locked(claim_lock(store.sessions_dir, journal.id), blocking=False) as mine:
        if not mine:
            return Consolidation.busy(journal.id, segment)
        journal = await asyncio.to_thread(store.find_session, journal.id)  # as on disk now
        job = _prepare(store, catalog, journal, segment, asking, started)
        if isinstance(job, Consolidation):
            return job
        return await consolidate_job(job)


def _prepare(
    store: MemoryStore,
    catalog: Catalog,
    journal: Journal,
    segment: Segment,
    asking: Asking,
    started: float,
) -> Job | Consolidation:
    """The job, or the outcome when no model is to be asked."""
    from memory.consolidation.review import proposal_for

    if segment not in journal.pending:
        return Consolidation.saved_before(journal.id, segment)
    if proposal_for(store, journal.id, segment) is not None:
        return Consolidation.awaiting_review(journal.id, segment)
    chain, reason, cause = consolidation_chain(catalog, store.settings, asking.get("chat_model"))
    if chain is None:
        return _not_asked(journal, segment, reason, cause)
    problem = store.memory_problem()
    if problem is not None:  # nothing could be saved: no model is asked
        return _not_asked(journal, segment, problem)
    # The journal checks each message as it reads it (memory.message.clean_message).
    said = journal.segment_messages(segment)
    when = _segment_time(journal, segment)
    return Job(
        store,
        catalog,
        journal,
        segment,
        chain,
        consolidation_policy(catalog, store.settings, asking.get("policy")),
        store.health(),
        said,
        when,
        session_started(journal.id) or when,  # imported sessions: their own start
        asking,
        started,
    )


def _not_asked(
    journal: Journal, segment: Segment, reason: str, cause: Cause | None = None
) -> Consolidation:
    journal.mark_failed(segment, reason, cause=cause or "")
    return Consolidation.failed(journal.id, segment, reason, cause=cause)


# --- every pending session -----------------------------------------------------------------


@dataclass(frozen=True)
class _Pick:
    """Which pending segments a run takes."""

    now: datetime
    only_due: bool
    include_held: bool

    def skips(self, store: MemoryStore, journal: Journal, segment: Segment) -> bool:
        from memory.consolidation.review import proposal_for

        if proposal_for(store, journal.id, segment) is not None:
            return True  # it waits for the user's decision, not for a model
        due = next_retry(journal, segment)
        if self.only_due and due is not None and due > self.now:
            return True
        return not self.include_held and held(journal, segment)


async def consolidate_pending(
    store: MemoryStore,
    catalog: Catalog,
    ids: list[str] | None = None,
    *,
    only_due: bool = False,
    include_held: bool = True,
    on_result: Callable[[Consolidation], None] | None = None,
    **asking: Unpack[Asking],
) -> list[Consolidation]:
    """Consolidate the pending segments of the given sessions, or of all pending ones,
    oldest first (session ids begin with their start time, imported ones too). Each saved
    segment is committed before the next begins, so an interrupted run loses nothing and
    the next one goes on where it stopped. Automatic runs pass `include_held=False` to
    leave the sessions every model keeps refusing to the user."""
    journals = await asyncio.to_thread(_pending_journals, store, ids)
    pick = _Pick(datetime.now(UTC), only_due, include_held)
    results = []
    for journal in journals:
        for segment in list(journal.pending):
            if pick.skips(store, journal, segment):
                continue
            result = await _one(store, catalog, journal, segment, asking)
            results.append(result)
            if on_result is not None and result.status is not Status.BUSY:  # reported below
                on_result(result)
        with contextlib.suppress(LookupError, OSError):
            await asyncio.to_thread(_settle, store, journal.id)
    await _after_busy(store, catalog, journals, results, asking, on_result)
    await asyncio.to_thread(store.sweep_locks)
    return results


def _pending_journals(store: MemoryStore, ids: list[str] | None) -> list[Journal]:
    """Reading every journal takes time: done in a thread."""
    recover(store)
    for journal in store.open_sessions():
        store.settle(journal)  # closed with nothing left to save
    if not ids:
        return store.pending_sessions()
    found = [store.find_session(i) for i in ids]
    for journal in found:  # another device's session is saved to memory by that device
        try:
            store.sessions.refuse_others(journal, "consolidate")
        except ValueError as exc:
            raise LookupError(f"session {journal.id}: {exc}") from None
    return found


async def _one(
    store: MemoryStore, catalog: Catalog, journal: Journal, segment: Segment, asking: Asking
) -> Consolidation:
    try:
        return await consolidate(store, catalog, journal, segment, **asking)
    except Exception as exc:  # this session's failure; the next one goes on
        return _failed(journal, segment, f"{type(exc).__name__}: {exc}")


async def _after_busy(
    store: MemoryStore,
    catalog: Catalog,
    journals: list[Journal],
    results: list[Consolidation],
    asking: Asking,
    on_result: Callable[[Consolidation], None] | None,
) -> None:
    """Sessions another Kept process was saving meanwhile: once it is done, report what it
    did, so overlapping runs both see the truth; go ahead if it did not touch them."""
    for index, result in enumerate(results):
        if result.status is not Status.BUSY or result.segment is None:
            continue
        journal = next(j for j in journals if j.id == result.session)
        after = await _after_the_other(store, journal, result.segment)
        if after is None:
            after = await _one(store, catalog, journal, result.segment, asking)
        results[index] = after
        if on_result is not None:
            on_result(after)


async def _after_the_other(
    store: MemoryStore, journal: Journal, segment: Segment
) -> Consolidation | None:
    """Another Kept process is saving this session: wait for it and report what it did,
    so two overlapping runs both see the session saved (or both see it still pending).
    None when it did nothing to this segment: the caller goes ahead."""
    started = time.monotonic()
    claim = claim_lock(store.sessions_dir, journal.id)

    def wait() -> tuple[int, Journal]:
        before = len(store.find_session(journal.id).failures.get(segment, []))
        with locked(claim):
            pass
        return before, store.find_session(journal.id)

    try:
        before, journal = await asyncio.to_thread(wait)
    except LookupError:
        return None
    elapsed = time.monotonic() - started
    if segment not in journal.pending:
        return Consolidation.saved_before(
            journal.id, segment, "saved by another Kept process", elapsed
        )
    if len(journal.failures.get(segment, [])) > before:
        return Consolidation.failed(
            journal.id,
            segment,
            "another Kept process tried to save it at the same time and "
            "could not; it stays pending",
            elapsed=elapsed,
        )
    return None


def _settle(store: MemoryStore, session_id: str) -> None:
    store.settle(store.find_session(session_id))


def _failed(journal: Journal, segment: Segment, reason: str) -> Consolidation:
    """A consolidation that broke off: recorded in the journal when the disk allows it, so
    the session is retried later like any other failure."""
    reason = clean_text(" ".join(reason.split()))[:500]
    with contextlib.suppress(OSError):
        journal.mark_failed(segment, reason)
    return Consolidation.failed(journal.id, segment, reason)
