"""The async store: whatever the TUI asks of the data folder, the store's lock and the health
book's write never run on a thread that runs an event loop (a lock can wait for another
process, and a loop that waits draws nothing)."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterator

import pytest

from catalog import ModelEntry, complete
from catalog.health import HealthBook, State
from memory import Journal, MemoryStore
from memory.data.aio import AsyncStore
from memory.data.files import LockedOnLoop, forbid_on_loop, locked
from tests.fakes.provider import FakeProvider, http_error
from tests.support import FAST_POLICY, fake_catalog

MESSAGES = [{"role": "user", "content": "Hello there"}]


def entry(model_id: str, gateway: str, fallback: str | None = None) -> ModelEntry:
    return ModelEntry(model_id, model_id, "fast", "", gateway, fallback=fallback)


PAIR = (entry("primary", "openai", "backup"), entry("backup", "anthropic"))


def on_a_loop() -> bool:
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return False
    return True


def closed_session(store: MemoryStore) -> Journal:
    """A closed session with one message, pending consolidation."""
    journal = store.new_session("gpt-4.1-mini")
    journal.append({"role": "user", "content": "I like tea."})
    journal.mark_pending(close=True)
    return journal


@pytest.fixture
def guarded() -> Iterator[None]:
    """The store's lock raises on a thread running an event loop, for this test."""
    forbid_on_loop(True)
    try:
        yield
    finally:
        forbid_on_loop(False)


@pytest.fixture
def health_writes(monkeypatch: pytest.MonkeyPatch) -> list[bool]:
    """Whether each write of a health book ran on a thread running an event loop."""
    seen: list[bool] = []
    write = HealthBook._write

    def noted(self: HealthBook, *args: object, **kwargs: object) -> None:
        seen.append(on_a_loop())
        write(self, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(HealthBook, "_write", noted)
    return seen


@pytest.mark.asyncio
async def test_the_guard_catches_the_store_locked_on_the_loop(guarded: None) -> None:
    store = MemoryStore().ensure()
    with pytest.raises(LockedOnLoop):
        store.remember("I like tea")
    with pytest.raises(LockedOnLoop), locked(store.lock_path):
        pass
    assert store.version_numbers() == []  # refused before anything was written


@pytest.mark.asyncio
async def test_every_write_through_the_async_store_locks_off_the_loop(guarded: None) -> None:
    store = AsyncStore(MemoryStore())
    await store.ensure()
    first = await store.remember("I like tea")
    await store.remember("I live in Porto", via="Claude Code")
    base = await store.read_memory()
    assert await store.save_edit(base.text + "- I cycle\n", base.digest) is None
    assert await store.discard_edit("- not kept\n") == 4
    restored = await store.restore(first)
    undone = await store.undo(restored)
    instructions = await store.read_instructions()
    assert await store.save_instructions("Reply briefly.\n", instructions.digest) is None
    await store.keep_instruction_version(b"Reply at length.\n")
    assert await store.memory_problem() is None
    versions = await store.versions()
    assert [v.number for v in versions] == await store.version_numbers()
    assert await store.latest_version() == versions[-1] == await store.version(undone)
    assert await store.version_text(1) == b"- I like tea\n"
    journal = closed_session(store.store)
    assert (await store.find_session(journal.id)).id == journal.id
    assert [j.id for j in await store.pending_sessions()] == [journal.id]
    assert [j.id for j in (await store.scan_sessions()).journals] == [journal.id]
    assert (await store.scan_active()).journals == []
    assert await store.history_entries() == await store.all_history_entries() == []
    assert await store.archive_files() == []


@pytest.mark.asyncio
async def test_the_health_book_of_the_async_store_is_written_off_the_loop(
    fake: FakeProvider, health_writes: list[bool]
) -> None:
    """A walk on the loop, with the book the async store gives: each write is the book's
    own thread's (or a worker's), and what it learned is in the file when the walk ends."""
    store = AsyncStore(MemoryStore())
    book = await store.health()
    fake.set_default("primary", http_error(500))
    result = await complete(
        fake_catalog(fake, entries=PAIR), "primary", MESSAGES, policy=FAST_POLICY, health=book
    )
    assert result.model == "backup"
    assert health_writes and not any(health_writes)
    assert HealthBook(store.store.health_path).get("primary").state is State.COOLING
    assert threading.current_thread() is threading.main_thread()
