"""The state the app shows is held once and followed by the screens: the model, the memory
status (a record, worded in one place), what memory work is running (the worker manager's
"memory" group), and the session the chat draws."""

from __future__ import annotations

import asyncio
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from textual.pilot import Pilot

from app.background import SAVING, MemoryState, MemoryStatus
from app.screens.chat import ChatScreen
from app.widgets.composer import Composer
from app.widgets.message import MessageView
from app.widgets.status_bar import StatusBar
from memory import LiveSession, MemorySettings, MemoryStore
from tests.fakes.provider import FakeProvider, hang, text
from tests.support import make_app, pending_session, send, settle, until


async def chat_ready(pilot: Pilot[Any]) -> ChatScreen:
    # The chat is up, its composer focused.
    await until(lambda: isinstance(pilot.app.focused, Composer), message="the composer's focus")
    assert isinstance(pilot.app.screen, ChatScreen)
    return pilot.app.screen


@pytest.mark.parametrize(
    ("status", "words"),
    [
        (MemoryStatus(), ""),
        (MemoryStatus(MemoryState.SAVING), "Saving memory…"),
        (MemoryStatus(MemoryState.REVIEW, waiting=1), "1 memory change to review (Ctrl+R)"),
        (MemoryStatus(MemoryState.REVIEW, waiting=3), "3 memory changes to review (Ctrl+R)"),
        (MemoryStatus(MemoryState.NOT_SAVED), "Memory not saved yet — will retry"),
        (
            MemoryStatus(MemoryState.NOT_SAVED, pending=2),
            "Memory not saved yet — will retry (2 pending)",
        ),
        (MemoryStatus(MemoryState.PENDING, pending=2), "2 pending"),
        (MemoryStatus(MemoryState.SAVED), "Memory saved"),
        (
            MemoryStatus(MemoryState.SAVED, saved="m, 1.0 s, $0.0001"),
            "Memory saved (m, 1.0 s, $0.0001)",
        ),
        (MemoryStatus(MemoryState.EMPTY), "No memory saved yet"),
    ],
)
def test_each_memory_state_is_worded_in_one_place(status: MemoryStatus, words: str) -> None:
    assert str(status) == words


async def test_a_model_set_on_the_app_shows_in_the_status_bar_by_itself(fake: FakeProvider) -> None:
    app = make_app(fake)
    async with app.run_test() as pilot:
        screen = await chat_ready(pilot)
        bar = screen.query_one(StatusBar)
        assert bar.model_label == app.catalog.get("gpt-4.1-mini").label
        app.set_model("claude-haiku-4-5")  # no call to refresh anything
        await pilot.pause()
        assert bar.model_label == app.catalog.get("claude-haiku-4-5").label
        assert app.catalog.get("claude-haiku-4-5").label in str(bar.render())


async def test_a_cancelled_memory_job_does_not_leave_the_status_saving(
    fake: FakeProvider, monkeypatch: pytest.MonkeyPatch
) -> None:
    import memory.consolidation.run

    started = asyncio.Event()

    async def never_ends(*args: Any, **kwargs: Any) -> None:
        started.set()
        await asyncio.Event().wait()

    monkeypatch.setattr(memory.consolidation.run, "consolidate", never_ends)

    app = make_app(fake)
    async with app.run_test() as pilot:
        await settle(pilot)
        journal = pending_session(app.store)
        app.jobs.save(journal, journal.pending[0])
        await until(started.is_set, message="the consolidation to start")
        assert app.jobs.running == 1
        assert [w.group for w in app.workers if w.group == SAVING] == [SAVING]
        assert app.memory_status.state is MemoryState.SAVING
        app.workers.cancel_group(app, SAVING)
        await until(
            lambda: app.memory_status.state is not MemoryState.SAVING,
            message="the status to leave Saving",
        )
        assert app.jobs.running == 0
        await until(
            lambda: app.memory_status == MemoryStatus(MemoryState.PENDING, pending=1),
            message="the pending count",
        )


async def test_a_failed_memory_job_says_so_and_the_session_stays_pending(
    fake: FakeProvider, monkeypatch: pytest.MonkeyPatch
) -> None:
    import memory.consolidation.run

    async def fails(*args: Any, **kwargs: Any) -> None:
        raise OSError("disk went away")

    monkeypatch.setattr(memory.consolidation.run, "consolidate", fails)

    app = make_app(fake)
    async with app.run_test() as pilot:
        await settle(pilot)
        journal = pending_session(app.store)
        for _ in range(2):  # and once more, as a retry would
            app.jobs.save(journal, journal.pending[0])
            await settle(pilot)
            assert app.jobs.running == 0
        await until(
            lambda: app.memory_status == MemoryStatus(MemoryState.PENDING, pending=1),
            message="the pending count",
        )
        said = [n for n in app.notices if n.startswith("Memory could not be saved")]
        assert len(said) == 2 and "OSError: disk went away" in said[0]


async def test_continuing_a_session_while_a_reply_is_written_is_refused(fake: FakeProvider) -> None:
    fake.set_default("gpt-4.1-mini", hang())

    app = make_app(fake)
    async with app.run_test() as pilot:
        screen = await chat_ready(pilot)
        await settle(pilot)
        other = pending_session(app.store)
        await pilot.press(*"hello", "enter")
        await until(lambda: fake.count(model="gpt-4.1-mini") > 0, message="the request")
        assert screen.replying
        live = app.session.id
        assert app.continue_session(other.id).startswith("Kept is still answering")
        assert app.session.id == live
        await pilot.press("escape")
        await screen.reply_finished()
        assert not screen.replying
        fake.release()


async def test_a_new_session_is_drawn_because_it_is_live(fake: FakeProvider) -> None:
    fake.default = text("Hello.")

    app = make_app(fake)
    async with app.run_test() as pilot:
        screen = await chat_ready(pilot)
        await send(pilot, "hi")
        bar = screen.query_one(StatusBar)
        assert bar.tokens > 0
        app.new_session(private=True)  # the app's state changes; the screen follows
        await pilot.pause()
        assert bar.private and bar.tokens == 0
        shown = [v.text for v in screen.query(MessageView)]
        assert len(shown) == 1 and shown[0].startswith("Private session started")


def test_after_turn_hands_back_what_outgrew_the_window(tmp_path: Path) -> None:
    settings = replace(MemorySettings(), session_max_messages=6, session_keep_messages=2)
    store = MemoryStore(tmp_path, settings=settings).ensure()
    session = LiveSession.start(store, "gpt-4.1-mini")
    for i in range(3):
        session.append({"role": "user", "content": f"question {i}"})
        session.append({"role": "assistant", "content": "ok"})
        assert session.after_turn() is None  # within the window: nothing to save
    session.append({"role": "user", "content": "question 3"})
    session.append({"role": "assistant", "content": "ok"})
    segment = session.after_turn()
    assert segment is not None and segment.start == 0
    assert session.journal.pending == [segment]
    assert session.after_turn() is None  # handed back once
    session.release()
