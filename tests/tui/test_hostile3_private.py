"""Hostile inputs, round three: /private text stays off the disk whatever ends the session
(Ctrl+C, a closed terminal, a logout), a crash's private journal goes at the next start of
any `kept`, grep never shows a private session, and the export, the sessions cache and
"Forget it too" hold against what an import or a damaged file leaves."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from app.cli.main import main
from memory import LiveSession, MemoryStore
from memory.data.files import HeldLock
from tests.fakes.provider import FakeProvider, hold, http_error, tool_call
from tests.support import (
    configure_fake,
    fake_keys,
    make_app,
    nothing_new,
    settle,
    subprocess_env,
    until,
    until_blocking,
)

if TYPE_CHECKING:
    from app.main import KeptApp

ROOT = Path(__file__).parents[2]
DEADLINE = 120.0  # far above the work, for a busy machine
STOPS = [signal.SIGINT, signal.SIGTERM, signal.SIGHUP]


@pytest.fixture
def configured(fake: FakeProvider, monkeypatch: pytest.MonkeyPatch) -> FakeProvider:
    configure_fake(fake, monkeypatch, '[app]\nmodel = "gpt-4.1-mini"\n')
    fake.default = tool_call("save_memory", nothing_new("Nothing."))
    return fake


def wait_for(condition: Callable[[], object], what: str) -> None:
    until_blocking(condition, deadline=DEADLINE, message=what)


def journals(store: MemoryStore) -> list[Path]:
    return sorted(store.sessions_dir.glob("*.jsonl")) if store.sessions_dir.is_dir() else []


def crashed_private(store: MemoryStore, text: str) -> Path:
    """A private session whose process died: its journal on disk, its lock held by no one."""
    session = LiveSession.start(store, "gpt-4.1-mini", private=True)
    session.append({"role": "user", "content": text})
    session.release()
    return session.journal.path


# --- 1. signals ------------------------------------------------------------------------------


@pytest.mark.parametrize("stop", STOPS, ids=lambda s: s.name)
def test_a_signal_during_a_private_ask_deletes_its_journal_and_says_so(
    configured: FakeProvider, stop: signal.Signals
) -> None:
    configured.script("gpt-4.1-mini", hold())
    child = subprocess.Popen(
        [sys.executable, "-m", "app.cli.main", "ask", "--private", "my private quokka"],
        cwd=ROOT,
        env=subprocess_env(**fake_keys()),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        wait_for(lambda: configured.requests or child.poll() is not None, "the ask's request")
        assert configured.requests, child.communicate()
        store = MemoryStore()
        (path,) = journals(store)
        assert "my private quokka" in path.read_text()
        child.send_signal(stop)
        _, err = child.communicate(timeout=DEADLINE)
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()
    assert child.returncode == 128 + stop
    assert not path.exists() and journals(store) == []
    assert "deleted" in err and "kept in session" not in err and "Traceback" not in err


CHILD_APP = """
import os, sys
from pathlib import Path
from app.main import KeptApp, run

class Child(KeptApp):
    def on_ready(self) -> None:
        self.new_session(private=True)
        self.session.append({"role": "user", "content": "my private quokka"})
        marker = Path(sys.argv[1])
        marker.with_suffix(".tmp").write_text(str(self.session.journal.path))
        os.replace(marker.with_suffix(".tmp"), marker)

sys.exit(run(Child(), headless=True))
"""


@pytest.mark.parametrize("stop", STOPS, ids=lambda s: s.name)
def test_a_signal_to_the_app_in_a_private_session_deletes_its_journal(
    configured: FakeProvider, tmp_path: Path, stop: signal.Signals
) -> None:
    marker = tmp_path / "private-journal"
    child = subprocess.Popen(
        [sys.executable, "-c", CHILD_APP, str(marker)],
        cwd=ROOT,
        env=subprocess_env(**fake_keys()),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        wait_for(lambda: marker.exists() or child.poll() is not None, "the private session")
        assert marker.exists(), child.communicate()[1]
        path = Path(marker.read_text())
        assert "my private quokka" in path.read_text()
        child.send_signal(stop)
        _, err = child.communicate(timeout=DEADLINE)
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()
    assert not path.exists(), err
    assert child.returncode == 128 + stop, err


# --- 1. the start-up clean-up -----------------------------------------------------------------


def test_the_cli_deletes_every_orphaned_private_journal_but_not_a_live_one(
    configured: FakeProvider,
) -> None:
    store = MemoryStore().ensure()
    first = crashed_private(store, "first quokka secret")
    newer = LiveSession.start(store, "gpt-4.1-mini")  # a newer active session, then a crash
    newer.append({"role": "user", "content": "an ordinary question"})
    newer.release()
    second = crashed_private(store, "second quokka secret")
    live = LiveSession.start(store, "gpt-4.1-mini", private=True)  # another process's
    live.append({"role": "user", "content": "live quokka secret"})
    other = HeldLock(store.sessions_dir / f".{live.id}.live")
    assert not other.acquire()  # the lock is held, as another process holds it
    assert main(["memory", "path"]) == 0
    assert not first.exists() and not second.exists()
    assert live.journal.path.exists() and newer.journal.path.exists()
    live.close()


async def test_the_app_deletes_orphans_past_a_newer_active_session(
    configured: FakeProvider,
) -> None:
    store = MemoryStore().ensure()
    orphans = [crashed_private(store, "quokka one"), crashed_private(store, "quokka two")]
    newer = LiveSession.start(store, "gpt-4.1-mini")
    newer.append({"role": "user", "content": "an ordinary question"})
    newer.release()

    app = make_app(configured)
    async with app.run_test() as pilot:
        await settle(pilot)
        assert app.session.id == newer.id
    assert not any(p.exists() for p in orphans)


# --- 1. grep never shows a private session ----------------------------------------------------


def test_memory_grep_never_shows_a_live_private_session(
    configured: FakeProvider, capsys: pytest.CaptureFixture[str]
) -> None:
    store = MemoryStore().ensure()
    live = LiveSession.start(store, "gpt-4.1-mini", private=True)  # held: live elsewhere
    live.append({"role": "user", "content": "my private quokka plan"})
    ordinary = LiveSession.start(store, "gpt-4.1-mini")
    ordinary.append({"role": "user", "content": "an ordinary quokka question"})
    main(["memory", "grep", "quokka"])
    out = capsys.readouterr().out
    assert "ordinary quokka" in out and "private quokka" not in out
    from memory.sessions.browse import said_in

    assert said_in(store, "quokka") == {"quokka": {ordinary.id}}
    live.close()
    ordinary.release()


# --- 1. /export in a private session -----------------------------------------------------------


async def test_export_in_a_private_session_says_where_and_that_it_stays(
    configured: FakeProvider,
) -> None:
    app = make_app(configured)
    async with app.run_test() as pilot:
        await settle(pilot)
        app.new_session(private=True)
        app.session.append({"role": "user", "content": "my private quokka"})
        await pilot.press(*"/export", "enter")
        await until(lambda: (app.store.root / "exports").is_dir(), message="the export")
        said = app.notices[-1]
        (path,) = (app.store.root / "exports").glob("*.md")
        assert str(path) in said and "private clean-up" in said
        assert said.count(". ") == 0 and said.endswith(".")  # one sentence


# --- 1. a failed private ask --------------------------------------------------------------------


def test_a_failed_private_ask_does_not_say_saved(
    configured: FakeProvider, capsys: pytest.CaptureFixture[str]
) -> None:
    configured.default = http_error(500)
    assert main(["ask", "-m", "gpt-4.1-mini", "--private", "my private quokka"]) == 1
    err = capsys.readouterr().err
    assert "saved" not in err and "kept in session" not in err
    assert "private" in err and journals(MemoryStore()) == []


# --- 13. an imported tool call without arguments ------------------------------------------------


def test_export_of_an_imported_tool_call_without_arguments(
    configured: FakeProvider, tmp_path: Path
) -> None:
    from app.export import session_markdown
    from catalog import load_catalog
    from memory.sessions.import_transcript import import_transcript

    transcript = tmp_path / "chat.jsonl"
    lines = [
        {"role": "user", "content": "look it up"},
        {"role": "assistant", "tool_calls": [{"function": {"name": "search_history"}}]},
        {"role": "assistant", "tool_calls": [{"id": "x", "function": {"name": "other"}}]},
        {"role": "assistant", "content": "done"},
    ]
    transcript.write_text("".join(json.dumps(m) + "\n" for m in lines))
    journal, _ = import_transcript(MemoryStore().ensure(), transcript)
    text = session_markdown(journal, load_catalog())
    assert "*Searched history: (no arguments)*" in text
    assert "*Called other: (no arguments)*" in text


# --- 14. the sessions list cache -------------------------------------------------------------


def saved_journal(store: MemoryStore, text: str) -> Path:
    """A finished journal in done/, as the sessions list caches it."""
    journal = store.new_session("gpt-4.1-mini")
    journal.append({"role": "user", "content": text})
    done = store.done_dir / journal.path.name
    os.replace(journal.path, done)
    return done


def summary_text(app: KeptApp) -> str:
    """What the sessions screen says above its list ("Loading…" until it is drawn)."""
    found = app.screen.query("#sessions-summary")
    return str(found.first().render()) if found else "Loading sessions…"


async def test_a_wrong_typed_sessions_cache_is_rebuilt_and_f2_ends_loading(
    configured: FakeProvider,
) -> None:
    from memory.sessions.browse import INDEX, INDEX_VERSION, list_sessions

    store = MemoryStore().ensure()
    done = saved_journal(store, "About quokkas.")
    stat = done.stat()
    row = {
        "id": done.stem,
        "started": "2026-01-01 10:00",
        "title": "About quokkas.",
        "model": "",
        "messages": 1,
        "state": "pending",
    }
    same = {"mtime": stat.st_mtime_ns, "size": stat.st_size}
    wrong = [
        "oops",
        ["a", "list"],
        {**same, "summary": "oops"},
        {**same, "summary": {**row, "title": 5}},
        {**same, "summary": {**row, "messages": "1"}},
        {**same, "summary": {**row, "extra": 1}},
    ]
    index = store.layout.local_dir / INDEX
    for entry in wrong:
        index.write_text(json.dumps({"version": INDEX_VERSION, "sessions": {done.name: entry}}))
        assert [s.title for s in list_sessions(store)] == ["About quokkas."], entry
        rebuilt = json.loads(index.read_text())["sessions"][done.name]
        assert rebuilt["summary"]["title"] == "About quokkas."
    index.write_text(json.dumps({"version": INDEX_VERSION, "sessions": {done.name: "oops"}}))

    app = make_app(configured)
    async with app.run_test() as pilot:
        await settle(pilot)
        app.action_sessions()
        await until(lambda: "Loading" not in summary_text(app), message="the list")
        assert summary_text(app).startswith("2 sessions")  # this one and the live one


async def test_f2_ends_loading_with_a_sentence_when_the_list_cannot_be_read(
    configured: FakeProvider,
) -> None:
    store = MemoryStore().ensure()
    (store.done_dir / "20260101-100000-abcdef.jsonl").mkdir()  # not a file: unreadable

    app = make_app(configured)
    async with app.run_test() as pilot:
        await settle(pilot)
        app.action_sessions()
        await until(lambda: "Loading" not in summary_text(app), message="the list")
        said = app.notices[-1]
        assert said.startswith("The sessions could not be listed (") and said.count(". ") == 0


# --- 17. "Forget it too" and the version records ----------------------------------------------


def test_forget_removes_the_history_entry_from_the_version_records_too(
    configured: FakeProvider,
) -> None:
    from memory.sessions.delete import delete_session
    from tests.factories import saved_session

    store = MemoryStore().ensure()
    tea = saved_session(store, "green tea", 2)
    saved_session(store, "Lisbon", 5)

    def records() -> list[str]:
        return [p.read_text() for p in sorted(store.versions_dir.glob("*.json"))]

    assert any("Ana asked about green tea." in r for r in records())
    count = len(store.versions())
    delete_session(store, tea, forget=True)
    assert "green tea" not in store.history_path.read_text()
    assert not any("green tea" in r for r in records())
    assert all(isinstance(json.loads(r), dict) for r in records())  # each still valid
    assert any("Ana asked about Lisbon." in r for r in records())  # the other stays
    assert len(store.versions()) == count and all(v.path.exists() for v in store.versions())


def test_orphans_are_looked_for_among_the_open_sessions_only(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """Every `kept` verb looks for orphaned private sessions first: with 10,000 finished
    sessions it must read the few that are open, not every journal's first line."""
    from memory.sessions import orphans
    from memory.sessions.marks import open_marks

    store = MemoryStore(tmp_path / "data").ensure()
    for _ in range(30):
        LiveSession.start(store, "gpt-4.1-mini").close()
    orphan = crashed_private(store, "quokka")
    store.active_sessions()  # as any start does: the folder is now known to be all marked
    read: list[str] = []
    real = orphans._is_private

    def is_private(path: Path) -> bool:
        read.append(path.stem)
        return real(path)

    monkeypatch.setattr(orphans, "_is_private", is_private)
    monkeypatch.setattr(orphans, "ORPHAN_GRACE", 0.0)

    assert orphans.discard_orphaned_private(store.sessions_dir) == 1
    assert read == [orphan.stem]
    assert not orphan.exists() and not (open_marks(store.sessions_dir) / orphan.stem).exists()
