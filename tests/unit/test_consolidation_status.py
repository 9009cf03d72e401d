"""A consolidation's outcome is one status, set where it is decided: every path through the
real chain (the loopback fake) ends in the status its consumers match on, and the old
fields (`saved`, `proposed`, `estimate`) read the same as before."""

from __future__ import annotations

from dataclasses import replace

import pytest

from app.words.consolidation import next_step, not_saved
from memory import MemorySettings, MemoryStore, Segment, consolidate
from memory.consolidation.outcome import AWAITING_REVIEW, BUSY, Cause, Consolidation, Status
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
ADD_ANA = {
    "history_entry": "Ana introduced herself.",
    "edits": [
        {
            "op": "add",
            "line": "Name: Ana",
            "evidence": [{"message": 1, "quote": "Je m'appelle Ana"}],
        }
    ],
}


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


@pytest.mark.asyncio
async def test_a_full_memory_is_a_cause_each_surface_words_in_its_own_terms(
    fake: FakeProvider,
) -> None:
    """The domain says what is wrong, with no command of either surface in it; the TUI's
    notice and the shell name their own way to tidy."""
    store = store_with()
    huge = "# Me\n" + "".join(f"- remembered fact {i}\n" for i in range(20_000))
    store.write_memory(huge)
    journal = pending_session(store)
    (segment,) = journal.pending
    fake.default = tool_call("save_memory", ADD_ANA)
    result = await consolidate(store, fake_catalog(fake), journal, segment, policy=POLICY)
    assert result.status is Status.FAILED and result.cause is Cause.MEMORY_FULL
    assert "over its 16,000 budget" in result.reason and "tidy" not in result.reason
    failures = store.find_session(journal.id).failures[segment]
    assert "tidy" not in failures[-1].reason  # the journal keeps the fact, not a command
    notice = not_saved(result)
    assert notice.startswith("Memory not saved yet — will retry. ")
    assert notice.endswith(
        "over its 16,000 budget. MEMORY.md is full: /tidy it (or raise [memory] memory_max_chars)."
    )
    assert "`kept memory tidy` it" in next_step(result.cause, shell=True)


def test_a_failure_the_user_cannot_fix_is_said_as_before() -> None:
    result = Consolidation.failed("s", Segment(0, 2), "No model in the chain answered (end).")
    assert result.cause is None and next_step(result.cause) == ""
    assert not_saved(result) == (
        "Memory not saved yet — will retry. No model in the chain answered (end)."
    )
