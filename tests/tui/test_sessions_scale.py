"""/sessions with many sessions: pending journals are listed from the index too (not read
again while unchanged), a private one leaves nothing of itself there, and a filter over
more rows than the loop should match at a keystroke is matched in a thread."""

from __future__ import annotations

import os
from typing import Any

import pytest
from textual.widgets import Static

from app.screens.sessions import SessionsScreen
from memory import MemoryStore
from memory.sessions.browse import INDEX, list_sessions
from memory.sessions.live import LiveSession
from tests.support import make_app, pending_session, until


def test_a_pending_journal_unchanged_is_listed_from_the_index() -> None:
    store = MemoryStore().ensure()
    journal = pending_session(store, [{"role": "user", "content": "Bikes in Lisbon"}])
    (first,) = list_sessions(store)
    assert first.title == "Bikes in Lisbon" and first.state == "pending"
    # The same size and time, other bytes: a row from the index does not read it again.
    stat = journal.path.stat()
    raw = journal.path.read_bytes()
    journal.path.write_bytes(raw.replace(b"Bikes", b"Hikes"))
    os.utime(journal.path, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    (again,) = list_sessions(store)
    assert again == first
    # Appended to (another time and size): read again.
    journal.path.write_bytes(raw)
    live = LiveSession.reopen(store, journal.id)
    assert live is not None
    live.append({"role": "assistant", "content": "Hills everywhere."})
    live.release()
    (changed,) = list_sessions(store)
    assert changed.messages == 2 and changed.state == "active"


def test_a_pending_journal_grown_only_by_failures_keeps_its_row() -> None:
    """Every retry of a session no model can save appends a "failed" mark: nothing the list
    shows changes, so the journal is not read again for it."""
    from memory.sessions.journal import Segment

    store = MemoryStore().ensure()
    journal = pending_session(store, [{"role": "user", "content": "Bikes in Lisbon"}])
    (first,) = list_sessions(store)
    raw = journal.path.read_bytes()
    journal.path.write_bytes(raw.replace(b"Bikes", b"Hikes"))  # seen only if read again
    journal.mark_failed(Segment(0, 1), "No key for any model.")
    journal.mark_failed(Segment(0, 1), "No key for any model.")
    assert list_sessions(store) == [first]
    assert list_sessions(store) == [first]  # from the index as written now
    journal.path.write_bytes(journal.path.read_bytes() + b'{"mark": "reopened"}\n')
    (again,) = list_sessions(store)
    assert again.title == "Hikes in Lisbon" and again.state == "active"


def test_a_private_session_leaves_nothing_of_itself_in_the_index() -> None:
    store = MemoryStore().ensure()
    private = LiveSession.start(store, private=True)
    private.append({"role": "user", "content": "my secret plan"})
    pending_session(store, [{"role": "user", "content": "an open plan"}])
    for _ in range(2):  # written, then read from the index
        assert [s.title for s in list_sessions(store)] == ["an open plan"]
    assert "secret" not in (store.layout.local_dir / INDEX).read_text()
    private.close()


async def test_a_filter_over_many_rows_is_matched_off_the_loop(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import threading

    from app.screens.sessions import FILTER_HERE
    from memory.sessions.browse import SessionSummary

    on_the_loop: list[bool] = []
    matches = SessionSummary.matches

    def noted(self: SessionSummary, *args: Any, **kwargs: Any) -> bool:
        on_the_loop.append(threading.current_thread() is threading.main_thread())
        return matches(self, *args, **kwargs)

    monkeypatch.setattr(SessionSummary, "matches", noted)
    store = MemoryStore().ensure()
    count = FILTER_HERE + 50
    for number in range(count):
        pending_session(store, [{"role": "user", "content": f"question n{number}n"}])

    app = make_app(None, env={"OPENAI_API_KEY": "x"})
    async with app.run_test(size=(130, 30)) as pilot:
        await pilot.press("f2")
        screen = app.screen
        assert isinstance(screen, SessionsScreen)
        await until(lambda: len(screen.sessions) >= count, message="the list")
        await pilot.press(*"n77")
        # The rows follow once the thread has matched them.
        await until(lambda: len(screen.shown) == 11, message="the matching rows")
        summary = str(screen.query_one("#sessions-summary", Static).render())
        assert f"11 of {len(screen.sessions):,} sessions" in summary
    assert on_the_loop and not any(on_the_loop)
