"""/private: a session off the record is never consolidated and leaves no journal behind."""

from __future__ import annotations

from dataclasses import replace

import pytest

from app.widgets.status_bar import StatusBar
from memory import LiveSession, MemorySettings, MemoryStore
from tests.fakes.provider import FakeProvider, text, tool_call
from tests.support import make_app, nothing_new, send, settle


def test_a_private_session_is_never_queued_and_is_deleted_when_it_ends() -> None:
    store = MemoryStore(
        settings=replace(MemorySettings(), session_max_messages=4, session_keep_messages=2)
    ).ensure()
    session = LiveSession.start(store, "gpt-4.1-mini", private=True)
    for i in range(8):
        session.append({"role": "user" if i % 2 == 0 else "assistant", "content": f"m{i}"})
    assert session.needs_compaction()
    assert session.compact() is None  # older messages leave the context, not for memory
    assert len(session.context()) < 8 and not session.needs_compaction()
    assert store.pending_sessions() == []
    with pytest.raises(ValueError, match="private"):
        session.journal.mark_pending(close=True)
    path = session.journal.path
    assert path.exists()
    assert session.close() is None
    assert not path.exists() and not any(store.done_dir.iterdir())


def test_a_private_journal_left_by_a_crash_is_deleted_not_resumed() -> None:
    store = MemoryStore().ensure()
    crashed = LiveSession.start(store, "gpt-4.1-mini", private=True)
    crashed.append({"role": "user", "content": "between us"})
    crashed.release()  # the process died: its lock is gone, its journal is not
    resumed = LiveSession.resume_or_start(store, "gpt-4.1-mini")
    assert resumed.id != crashed.id and not resumed.private
    assert not crashed.journal.path.exists()


async def test_private_command_shows_it_and_saves_nothing(fake: FakeProvider) -> None:
    fake.default = text("Noted.")
    fake.set_default("llama-3.3-70b-versatile", tool_call("save_memory", nothing_new()))

    async def scenario() -> MemoryStore:
        app = make_app(fake)
        async with app.run_test() as pilot:
            await pilot.press(*"/private", "enter")
            await pilot.pause()
            bar = app.screen.query_one(StatusBar)
            assert app.session.private and bar.has_class("private")
            assert "PRIVATE" in str(bar.render())
            await send(pilot, "my secret plan")
            private_path = app.session.journal.path
            assert private_path.exists()
            await pilot.press(*"/new", "enter")
            await settle(pilot)
            assert not private_path.exists()
            assert not app.session.private and not bar.has_class("private")
            await send(pilot, "back on the record")
            await pilot.press(*"/private", "enter")
            await settle(pilot)  # the normal session is saved as /new would save it
            await send(pilot, "another secret")
            last_private = app.session.journal.path
        assert not last_private.exists()  # quitting ends a private session too
        return app.store

    store = await scenario()
    prompts = " ".join(
        str(r.body)
        for r in fake.requests
        if r.body.get("tools", [{}])[0].get("function", {}).get("name") == "save_memory"
    )
    assert "back on the record" in prompts
    assert "secret" not in prompts
    assert [p.name for p in store.sessions_dir.glob("*.jsonl")] == []
