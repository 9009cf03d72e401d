"""A consolidation's outcome is one status, set where it is decided: every path through the
real chain (the loopback fake) ends in the status its consumers match on, and the old
fields (`saved`, `proposed`, `estimate`) read the same as before."""

from __future__ import annotations

from dataclasses import replace

import pytest

from memory import MemorySettings, MemoryStore, consolidate
from memory.consolidation.outcome import AWAITING_REVIEW, BUSY, Consolidation, Status
from memory.data.files import locked
from memory.data.layout import Layout
from memory.settings import Review
from tests.fakes.provider import FakeProvider, text, tool_call
from tests.support import (
    FAST_POLICY,
    SMALL,
    fake_catalog,
    pending_session,
    save_args,
    small_window_entries,
)

POLICY = replace(FAST_POLICY, attempt_deadline=60.0)


def store_with(settings: MemorySettings | None = None) -> MemoryStore:
    return MemoryStore(settings=settings or MemorySettings(attempt_deadline=60.0)).ensure()


def views(result: Consolidation) -> tuple[bool, bool, bool]:
    return result.saved, result.proposed, bool(result.estimate)


@pytest.mark.asyncio
async def test_saved_then_saved_before(fake: FakeProvider) -> None:
    store = store_with()
    journal = pending_session(store)
    (segment,) = journal.pending
    fake.default = tool_call("save_memory", save_args())
    catalog = fake_catalog(fake)
    first = await consolidate(store, catalog, journal, segment, policy=POLICY)
    assert first.status is Status.SAVED and first.model and first.history_entry
    assert views(first) == (True, False, False) and first.reason == ""
    again = await consolidate(store, catalog, journal, segment, policy=POLICY)
    assert again.status is Status.SAVED_BEFORE and again.model is None
    assert views(again) == (True, False, False)


@pytest.mark.asyncio
async def test_proposed_then_awaiting_review(fake: FakeProvider) -> None:
    store = store_with(MemorySettings(attempt_deadline=60.0, review=Review.BEFORE))
    journal = pending_session(store)
    (segment,) = journal.pending
    fake.default = tool_call("save_memory", save_args())
    catalog = fake_catalog(fake)
    first = await consolidate(store, catalog, journal, segment, policy=POLICY)
    assert first.status is Status.PROPOSED and first.model
    assert views(first) == (False, True, False) and first.reason == AWAITING_REVIEW
    again = await consolidate(store, catalog, journal, segment, policy=POLICY)
    assert again.status is Status.AWAITING_REVIEW and again.model is None
    assert views(again) == (False, True, False)


@pytest.mark.asyncio
async def test_failed_when_no_model_saves_it(fake: FakeProvider) -> None:
    store = store_with()
    journal = pending_session(store)
    (segment,) = journal.pending
    fake.default = text("I would rather chat.")
    result = await consolidate(store, fake_catalog(fake), journal, segment, policy=POLICY)
    assert result.status is Status.FAILED and result.attempts and result.reason
    assert views(result) == (False, False, False)
    assert store.find_session(journal.id).failures[segment]  # recorded, retried later


@pytest.mark.asyncio
async def test_busy_while_another_holds_the_sessions_claim(fake: FakeProvider) -> None:
    """The claim is the layout's: a process holding that file keeps this one out."""
    store = store_with()
    journal = pending_session(store)
    (segment,) = journal.pending
    fake.default = tool_call("save_memory", save_args())
    with locked(Layout(store.root).claim_lock(journal.id)):
        result = await consolidate(store, fake_catalog(fake), journal, segment, policy=POLICY)
    assert result.status is Status.BUSY and result.reason == BUSY
    assert views(result) == (False, False, False) and fake.requests == []


@pytest.mark.asyncio
async def test_too_long_waits_for_a_go_with_its_estimate(fake: FakeProvider) -> None:
    store = store_with(MemorySettings(attempt_deadline=60.0, consolidation_model=SMALL))
    words = " ".join(f"word{i}" for i in range(6000))
    journal = pending_session(store, [{"role": "user", "content": words}])
    (segment,) = journal.pending
    catalog = fake_catalog(fake, entries=small_window_entries())
    result = await consolidate(store, catalog, journal, segment, policy=POLICY, max_parts=3)
    assert result.status is Status.TOO_LONG and "requests" in result.estimate
    assert views(result) == (False, False, True) and result.estimate == result.reason
    assert fake.requests == []
