"""Start-up is O(1) in history: the session to go on with is found from the open marks of
the few journals that may be active, in a thread after the first frame, and it is the
same one a read of every journal would have picked."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from memory import MemoryStore
from memory.data.files import HeldLock
from memory.sessions import journal as journals
from memory.sessions.journal import JournalState
from memory.sessions.live import LiveSession
from memory.sessions.marks import SCANNED, is_closed, mark_open, open_marks
from tests.fakes.provider import FakeProvider, text
from tests.support import make_app, pending_session, settle, until

if TYPE_CHECKING:
    from app.main import KeptApp


def _write(path: Path, *lines: object, raw: bytes = b"") -> Path:
    body = "".join(json.dumps(line) + "\n" for line in lines).encode() + raw
    path.write_bytes(body)
    return path


def _header(session_id: str, **extra: object) -> dict[str, object]:
    return {"kept": "session", "version": 1, "id": session_id, "created": "", **extra}


def _user(content: str) -> dict[str, str]:
    return {"role": "user", "content": content, "time": "2026-11-20T09:00:00+00:00"}


def _close(end: int) -> dict[str, object]:
    return {"mark": "pending", "start": 0, "end": end, "closed": True, "time": ""}


def _hand_written(folder: Path) -> None:
    """Journals in every state, written as an older Kept (or a hand) would: no open marks."""
    folder.mkdir(parents=True, exist_ok=True)
    big = "x" * 40_000  # a last line longer than a read from the end
    _write(folder / "20261101-000000-aaaaaa.jsonl", _header("a"), _user("active"))
    _write(folder / "20261101-000001-bbbbbb.jsonl", _header("b"), _user("hi"), _close(1))
    _write(
        folder / "20261101-000002-cccccc.jsonl",
        _header("c"),
        _user("hi"),
        _close(1),
        {"mark": "consolidated", "start": 0, "end": 1, "model": "m", "time": ""},
        {"mark": "failed", "start": 0, "end": 1, "reason": "x", "time": ""},
    )
    _write(
        folder / "20261101-000003-dddddd.jsonl",
        _header("d"),
        _user("hi"),
        _close(1),
        {"mark": "reopened", "time": ""},
        _user(big),
    )
    _write(
        folder / "20261101-000004-eeeeee.jsonl",
        _header("e"),
        _user("hi"),
        _close(1),
        {"mark": "reopened", "time": ""},
        _user("again"),
        {"mark": "pending", "start": 1, "end": 2, "closed": 1, "time": ""},
    )
    _write(folder / "20261101-000005-ffffff.jsonl", _header("f", private=True), _user("secret"))
    # A closing mark as the first line is a mark, not a header; a torn last line is skipped.
    _write(folder / "20261101-000006-gggggg.jsonl", _close(0), raw=b'{"role": "user", "con')
    _write(
        folder / "20261101-000007-hhhhhh.jsonl",
        _header("h"),
        _user("said"),
        _close(1),
        raw=b"\xff\xfe not json\n\n",
    )
    _write(folder / "20261101-000008-iiiiii.jsonl", _header("i"), _user(big), _user(big))
    (folder / "20261101-000009-jjjjjj.jsonl").write_bytes(b"")
    _write(
        folder / "20261101-000010-kkkkkk.jsonl",
        _header("k"),
        {"role": "user", "content": '{"mark": "pending", "closed": true}'},
    )
    for number, path in enumerate(sorted(folder.glob("*.jsonl"))):
        os.utime(path, ns=(10**18 + number * 10**9, 10**18 + (7 * number % 11) * 10**9))


def _active_by_full_parse(store: MemoryStore) -> list[str]:
    """What start-up read before open marks: every journal, in full."""
    return [j.id for j in store.open_sessions() if j.state is JournalState.ACTIVE]


def test_a_journal_read_from_its_end_is_closed_exactly_when_a_full_read_says_so(
    tmp_path: Path,
) -> None:
    folder = tmp_path / "sessions"
    _hand_written(folder)
    for path in sorted(folder.glob("*.jsonl")):
        closed = journals.load(path).closed
        for chunk in (5, 64, 16384):  # reads that end inside lines, and one that does not
            assert is_closed(path, chunk=chunk) is closed, (path.name, chunk)


def test_the_active_sessions_are_found_from_open_marks_as_a_full_read_finds_them() -> None:
    store = MemoryStore().ensure()
    _hand_written(store.sessions_dir)
    expected = _active_by_full_parse(store)
    assert set(expected) == {
        "20261101-000000-aaaaaa",
        "20261101-000003-dddddd",
        "20261101-000005-ffffff",
        "20261101-000008-iiiiii",
        "20261101-000009-jjjjjj",
        "20261101-000010-kkkkkk",
    }
    # The first look marks the journals an older Kept left; then only marked ones are read.
    assert [j.id for j in store.active_sessions()] == expected
    marks = open_marks(store.sessions_dir)
    assert sorted(p.name for p in marks.iterdir() if p.name != SCANNED) == expected

    # Sessions made, closed, reopened and discarded since, as Kept does it.
    made = LiveSession.start(store, "gpt-4.1-mini")
    made.append({"role": "user", "content": "new"})
    pending = pending_session(store)
    closed_then = LiveSession.start(store, "gpt-4.1-mini")
    closed_then.append({"role": "user", "content": "closing"})
    closed_then.close()
    private = LiveSession.start(store, private=True)
    private.close()
    reopened = LiveSession.reopen(store, pending.id)
    assert reopened is not None
    # A crash between a closing mark and its mark's removal leaves a stale mark.
    mark_open(store.sessions_dir / f"{closed_then.id}.jsonl")
    for live in (made, reopened):
        live.release()

    expected = _active_by_full_parse(store)
    assert made.id in expected and pending.id in expected
    assert [j.id for j in store.active_sessions()] == expected
    assert not (marks / closed_then.id).exists()  # the stale mark was dropped
    assert not (marks / private.id).exists()


def test_resuming_picks_the_session_a_full_read_picked(tmp_path: Path) -> None:
    store = MemoryStore().ensure()
    _hand_written(store.sessions_dir)
    active = [j for j in store.open_sessions() if j.state is JournalState.ACTIVE]
    newest = [
        j.id
        for j in sorted(active, key=lambda j: j.path.stat().st_mtime_ns, reverse=True)
        if not j.private
    ]
    # Another window has the newest one: the next is resumed, as before.
    held = HeldLock(store.sessions_dir / f".{newest[0]}.live")
    assert held.acquire()
    try:
        live = LiveSession.resume_or_start(store)
        assert live.id == newest[1]
        live.release()
    finally:
        held.release()
    joined = LiveSession.join_latest(store)
    assert joined is not None and joined.id == newest[0]
    joined.release()


def test_constructing_the_app_makes_and_locks_no_file() -> None:
    store = MemoryStore().ensure()
    live = LiveSession.start(store, "gpt-4.1-mini")
    live.append({"role": "user", "content": "where we were"})
    live.release()
    before = sorted(str(p) for p in store.root.rglob("*"))
    app = make_app()
    assert sorted(str(p) for p in store.root.rglob("*")) == before
    other = HeldLock(store.sessions_dir / f".{live.id}.live")
    assert other.acquire(), "constructing the app locked the session"
    other.release()
    assert not app.session.is_found and app.session.messages == []


async def test_the_session_found_after_the_first_frame_is_drawn(fake: FakeProvider) -> None:
    from app.screens.chat import ChatScreen
    from app.widgets.composer import Composer
    from app.widgets.message import MessageView

    store = MemoryStore().ensure()
    live = LiveSession.start(store, "gpt-4.1-mini")
    live.append({"role": "user", "content": "where we were"})
    live.append({"role": "assistant", "content": "Right here.", "model": "gpt-4.1-mini"})
    live.release()
    app = make_app(fake)
    async with app.run_test() as pilot:
        await settle(pilot)
        assert app.session.is_found and app.session.id == live.id
        screen = app.screen
        assert isinstance(screen, ChatScreen)
        shown = [v.text for v in screen.query(MessageView)]
        assert shown == ["where we were", "Right here."]
        assert screen.query_one(Composer).prompts == ["where we were"]


async def test_a_message_sent_before_the_session_is_found_goes_into_it(
    fake: FakeProvider, monkeypatch: pytest.MonkeyPatch
) -> None:
    from app.main import KeptApp
    from app.screens.chat import ChatScreen
    from app.widgets.composer import Composer
    from app.widgets.message import MessageView

    store = MemoryStore().ensure()
    live = LiveSession.start(store, "gpt-4.1-mini")
    live.append({"role": "user", "content": "where we were"})
    live.release()
    # The thread that finds the session has not run yet when Enter is pressed.
    monkeypatch.setattr(KeptApp, "_find_session", lambda self: None)
    fake.set_default("gpt-4.1-mini", text("Carrying on."))
    app = make_app(fake)
    async with app.run_test() as pilot:
        await until(lambda: isinstance(app.focused, Composer), message="the composer's focus")
        assert not app.session.is_found
        await pilot.press(*"and then?", "enter")
        screen = app.screen
        assert isinstance(screen, ChatScreen)
        await until(lambda: not screen.replying, message="the reply")
        await screen.reply_finished()
        await pilot.pause()
        assert app.session.id == live.id
        said = [(m["role"], m["content"]) for m in journals.load(live.journal.path).messages]
        assert said == [
            ("user", "where we were"),
            ("user", "and then?"),
            ("assistant", "Carrying on."),
        ]
        shown = [v.text for v in screen.query(MessageView)]
        assert shown == ["where we were", "and then?", "Carrying on."]


async def test_a_session_that_cannot_be_made_is_said_and_the_message_kept(
    fake: FakeProvider,
) -> None:
    from app.widgets.composer import Composer

    store = MemoryStore().ensure()
    shutil.rmtree(store.sessions_dir)
    store.sessions_dir.write_text("not a folder")  # read-only folders do not stop root
    app = make_app(fake)
    async with app.run_test() as pilot:
        await settle(pilot)
        assert any("No session could be opened" in n for n in app.notices)
        await until(lambda: isinstance(app.focused, Composer), message="the composer's focus")
        await pilot.press(*"keep this", "enter")
        await pilot.pause()
        assert app.query_one(Composer).text == "keep this"
        assert any("could not be saved" in n for n in _texts(app))
        assert all("Traceback" not in n for n in [*app.notices, *_texts(app)])


def _texts(app: KeptApp) -> list[str]:
    from app.widgets.message import MessageView

    return [v.text for v in app.screen.query(MessageView)]
