"""The sessions browser, driven by Pilot: every session newest first, filter, open, continue
(a new segment, saved at /new), export, delete with what stays said; and its cache."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from textual import events
from textual.pilot import Pilot
from textual.widgets import Button, Input, OptionList, Static

from app.main import KeptApp
from app.screens.chat import ChatScreen
from app.screens.sessions import DeleteDialog, SessionsScreen
from app.screens.transcript import TranscriptScreen
from app.widgets.message import MessageView
from memory import MemoryStore
from memory.sessions.browse import INDEX, list_sessions
from tests.factories import saved_session
from tests.fakes.provider import FakeProvider, text, tool_call
from tests.support import make_app, nothing_new, send, settle, until


def seeded() -> tuple[MemoryStore, str, str, str]:
    store = MemoryStore().ensure()
    tea = saved_session(store, "green tea", 2)
    lisbon = saved_session(store, "Lisbon", 5)
    pending = store.new_session("claude-haiku-4-5")
    pending.append({"role": "user", "content": "Unsaved question about bikes\nsecond line"})
    pending.mark_pending(close=True)
    return store, tea, lisbon, pending.id


def rows(app: KeptApp) -> list[str]:
    options = app.screen.query_one("#sessions", OptionList)
    return [str(options.get_option_at_index(i).prompt) for i in range(options.option_count)]


async def open_sessions(pilot: Pilot[Any]) -> SessionsScreen:
    await pilot.press("f2")
    screen = pilot.app.screen
    assert isinstance(screen, SessionsScreen)
    await pilot.app.workers.wait_for_complete()
    await pilot.pause()
    return screen


async def test_every_session_newest_first_with_title_model_count_state_and_a_filter() -> None:
    store, tea, _lisbon, _pending = seeded()

    app = make_app(None, env={"OPENAI_API_KEY": "x"})
    async with app.run_test(size=(130, 30)) as pilot:
        screen = await open_sessions(pilot)
        shown = rows(app)
        assert len(shown) == 4
        # Begun this minute: the session you are in, and the pending one.
        live, bikes = sorted(shown[:2], key=lambda row: not row.endswith("live"))
        assert live.endswith("live")
        assert "Unsaved question about bikes" in bikes and bikes.endswith("pending")
        # Asked of claude-haiku-4-5, answered by none: no model is named.
        assert "claude-haiku-4-5" not in bikes and " — " in bikes and "1 msg" in bikes
        assert "Ana asked about Lisbon." in shown[2] and shown[2].endswith("saved")
        assert "Ana asked about green tea." in shown[3] and "2 msg" in shown[3]
        await pilot.press(*"tea saved")
        assert [s.id for s in screen.shown] == [tea]
        assert "1 of 4 sessions" in str(screen.query_one("#sessions-summary", Static).render())
        screen.query_one("#filter", Input).value = ""
        await pilot.pause()
        await pilot.press("down", "down", "down", "enter")  # to the list, then Lisbon
        assert isinstance(app.screen, TranscriptScreen)
        assert "Ana asked about Lisbon." in app.screen.title_text
    assert (store.layout.local_dir / INDEX).exists()


def test_the_list_cache_is_derived_and_mended(tmp_path: Path) -> None:
    store, _tea, _lisbon, _pending = seeded()
    first = list_sessions(store)
    (store.layout.local_dir / INDEX).write_text("{not json")
    assert list_sessions(store) == first  # rebuilt from the journals
    cached = json.loads((store.layout.local_dir / INDEX).read_text())
    assert len(cached["sessions"]) == 3  # every session, the pending one too
    assert list_sessions(store) == first


async def test_continue_makes_a_saved_session_live_and_new_words_a_new_segment(
    fake: FakeProvider,
) -> None:
    store, _tea, lisbon, _pending = seeded()
    fake.script("gpt-4.1-mini", text("Yes, in May."))
    fake.default = tool_call(
        "save_memory",
        nothing_new("Ana asked whether to go then."),
    )

    async def scenario() -> None:
        app = make_app(fake)
        async with app.run_test(size=(130, 30)) as pilot:
            screen = await open_sessions(pilot)
            index = next(i for i, s in enumerate(screen.shown) if s.id == lisbon)
            screen.query_one("#sessions", OptionList).focus()
            screen.query_one("#sessions", OptionList).highlighted = index
            await pilot.press("c")
            await pilot.pause()
            assert isinstance(app.screen, ChatScreen) and app.session.id == lisbon
            assert any("Lisbon is lovely." in v.text for v in app.screen.query(MessageView))
            await send(pilot, "Should I go in May?")
            sent = [m["content"] for m in fake.requests[-1].body["messages"][1:]]
            assert sent == ["Tell me about Lisbon.", "Lisbon is lovely.", "Should I go in May?"]
            await pilot.press(*"/new", "enter")
            await settle(pilot)

    await scenario()
    journal = store.find_session(lisbon)
    assert journal.path.parent == store.done_dir and journal.state == "consolidated"
    assert [(s.start, s.end) for s in journal.consolidated] == [(0, 2), (2, 4)]
    consolidation = fake.requests[-1].body["messages"][-1]["content"]
    assert "Should I go in May?" in consolidation and "Tell me about Lisbon" not in consolidation
    assert "Ana asked whether to go then." in store.history_path.read_text()


async def test_export_and_delete_saying_what_stays(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store, tea, _lisbon, _pending = seeded()
    monkeypatch.chdir(tmp_path)
    memory_before = store.memory_path.read_text()

    app = make_app(None, env={"OPENAI_API_KEY": "x"})
    async with app.run_test(size=(130, 30)) as pilot:
        screen = await open_sessions(pilot)
        options = screen.query_one("#sessions", OptionList)
        options.focus()
        options.highlighted = next(i for i, s in enumerate(screen.shown) if s.id == tea)
        await pilot.press("e")
        await pilot.pause()
        # Into the data folder's exports/, never the folder Kept was started from.
        exported = store.root / "exports" / f"kept-{tea}.md"
        assert "green tea is lovely." in exported.read_text()
        assert not (tmp_path / f"kept-{tea}.md").exists()
        await pilot.press("d")
        await pilot.pause()
        assert isinstance(app.screen, DeleteDialog)
        stays = str(app.screen.query_one("#what-stays", Static).render())
        assert "history entry stays" in stays and "MEMORY.md" in stays
        app.screen.query_one("#forget-button", Button).press()
        for _ in range(200):  # the press, then the dismissal, are messages of their own
            if not isinstance(app.screen, DeleteDialog):
                break
            await pilot.pause()
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert isinstance(app.screen, SessionsScreen)
        assert tea not in [s.id for s in app.screen.sessions]
        # The live session cannot be deleted from here.
        options.highlighted = next(
            i for i, s in enumerate(app.screen.shown) if s.id == app.session.id
        )
        await pilot.press("d")
        await pilot.pause()
        assert isinstance(app.screen, SessionsScreen)
    assert not (store.done_dir / f"{tea}.jsonl").exists()
    history = store.history_path.read_text()
    assert "green tea" not in history and "Ana asked about Lisbon." in history
    assert store.memory_path.read_text() == memory_before  # what memory learned stays


def test_forgetting_never_guesses_between_two_entries_of_the_same_minute() -> None:
    from memory.sessions.delete import forget_entry

    store = MemoryStore().ensure()
    journal = store.new_session("gpt-4.1-mini")
    journal.append({"role": "user", "content": "hi", "time": "2026-11-03T09:00:00+00:00"})
    when = datetime(2026, 11, 3, 9, 0, tzinfo=UTC).astimezone().strftime("%Y-%m-%d %H:%M")
    store.append_history(f"[{when}] One session.")
    store.append_history(f"[{when}] Another session, the same minute.")
    assert forget_entry(store, journal.id) is False
    assert len(store.history_entries()) == 2


async def test_keys_that_arrive_in_one_read_follow_the_focus_they_move(fake: FakeProvider) -> None:
    """Down then c typed fast (one read from the terminal): Down moves focus from the filter to
    the list at once, so c continues the session instead of landing in the filter."""
    _store, _tea, lisbon, _pending = seeded()

    app = make_app(fake)
    async with app.run_test(size=(130, 30)) as pilot:
        screen = await open_sessions(pilot)
        await pilot.press(*"Lisbon")
        await pilot.pause()
        assert [s.id for s in screen.shown] == [lisbon]
        search = screen.query_one("#filter", Input)
        # Both keys queued before either is handled, as a terminal read delivers them.
        app.post_message(events.Key("down", None))
        app.post_message(events.Key("c", "c"))
        await pilot.pause()
        assert search.value == "Lisbon"
        assert isinstance(app.screen, ChatScreen) and app.session.id == lisbon


def test_the_model_shown_is_the_one_that_answered() -> None:
    """Asked of claude-sonnet-4-5 with no key, answered by the local model: the list says
    smollm2, for an open session and a finished one (read again or from the cache)."""
    store = MemoryStore().ensure()
    local = store.new_session("claude-sonnet-4-5")
    local.append({"role": "user", "content": "hello"})
    local.append({"role": "assistant", "content": "Hi!", "model": "smollm2"})
    both = store.new_session("claude-sonnet-4-5")
    both.append({"role": "user", "content": "hello"})
    both.append({"role": "assistant", "content": "Hi!", "model": "smollm2"})
    both.append({"role": "user", "content": "and again"})
    both.append({"role": "assistant", "content": "Hello.", "model": "gpt-4.1-mini"})
    unanswered = store.new_session("claude-sonnet-4-5")
    unanswered.append({"role": "user", "content": "anyone?"})
    for journal in (local, both):
        journal.mark_pending(close=True)
        journal.mark_consolidated(journal.pending[0], "smollm2")
        store.settle(journal)
    for _ in range(2):  # read from the journals, then from the cache
        models = {s.id: s.model for s in list_sessions(store)}
        assert models == {local.id: "smollm2", both.id: "smollm2, gpt-4.1-mini", unanswered.id: ""}


async def test_the_filter_finds_words_said_in_a_session_not_only_in_its_row() -> None:
    _store, tea, lisbon, pending = seeded()

    app = make_app(None, env={"OPENAI_API_KEY": "x"})
    async with app.run_test(size=(130, 30)) as pilot:
        screen = await open_sessions(pilot)
        await pilot.press(*"second")  # the pending session's second line, not its title
        await until(lambda: [s.id for s in screen.shown] == [pending], message="a match")
        screen.query_one("#filter", Input).value = "lovely"  # said by the assistant
        await until(lambda: {s.id for s in screen.shown} == {tea, lisbon}, message="both")
        screen.query_one("#filter", Input).value = "lovely tea"  # said, and in a title
        await until(lambda: [s.id for s in screen.shown] == [tea], message="tea alone")
        assert "1 of 4 sessions" in str(screen.query_one("#sessions-summary", Static).render())


async def test_a_long_title_keeps_its_closing_quote_in_the_delete_dialog_at_80x24() -> None:
    store = MemoryStore().ensure()
    journal = store.new_session("gpt-4.1-mini")
    journal.append(
        {
            "role": "user",
            "content": "Could you help me plan a long weekend in the mountains with my two "
            "dogs and a friend who does not drive",
        }
    )
    journal.mark_pending(close=True)

    app = make_app(None, env={"OPENAI_API_KEY": "x"})
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await open_sessions(pilot)
        options = screen.query_one("#sessions", OptionList)
        options.focus()
        index = next(i for i, s in enumerate(screen.shown) if s.id == journal.id)
        options.highlighted = index
        await pilot.press("d")
        await pilot.pause()
        assert isinstance(app.screen, DeleteDialog)
        title = app.screen.query_one(".dialog-title", Static)
        said = str(title.render())
        assert "“Could you help me plan a long weekend" in said and "…”" in said
        assert said.endswith(f"” ({screen.shown[index].started})?")
        # Every character of it on screen: wrapped inside the dialog, never cropped.
        assert app.screen.region.contains_region(title.region)
        assert title.region.width <= 80 and title.region.height >= 2
