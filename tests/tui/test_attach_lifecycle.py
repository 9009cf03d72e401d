"""An attachment lives as long as a session names it: deleting a session deletes the files
no other session uses, and a private session's files go when it ends, or at the next start
after a crash."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from app.cli.main import main as kept
from memory import LiveSession, MemoryStore
from memory.chat.attachments import FOLDER, PRIVATE, keep, read_attachment, storage, stored_path
from memory.data.files import data_dir
from memory.sessions.delete import delete_session
from tests.fakes.provider import FakeProvider


def _file(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def _send(session: LiveSession, record: dict[str, Any]) -> None:
    session.append({"role": "user", "content": "Read it", "attachments": [record]})


def test_deleting_a_session_deletes_the_files_only_it_named(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = MemoryStore(tmp_path / "data")
    own = read_attachment(_file(tmp_path, "own.txt", "only the first session has this\n"))
    shared = read_attachment(_file(tmp_path, "shared.txt", "both sessions have this\n"))
    first = LiveSession.start(store, "gpt-4.1-mini")
    own_record, shared_record = keep(store, own), keep(store, shared)
    _send(first, own_record)
    _send(first, shared_record)
    first.close()
    second = LiveSession.start(store, "gpt-4.1-mini")
    _send(second, keep(store, shared))
    second.close()
    # Kept long ago, as far as the grace of a new file goes (its change time, which a
    # sync tool cannot set back, cannot be set back here either).
    monkeypatch.setattr(storage, "COLLECT_GRACE", 0.0)

    delete_session(store, first.id)
    assert not stored_path(store, own_record).exists()
    assert stored_path(store, shared_record).exists()  # the second session still names it


def test_a_file_just_come_from_another_machine_is_spared_though_its_time_is_old(
    tmp_path: Path,
) -> None:
    """A sync tool keeps a file's modification time: an attachment that arrived a moment
    ago, before the journal that names it, looks an hour old and must not be collected."""
    store = MemoryStore(tmp_path / "data")
    arrived = keep(store, read_attachment(_file(tmp_path, "theirs.txt", "from the desk\n")))
    path = stored_path(store, arrived)
    old = path.stat().st_mtime - 3600
    os.utime(path, (old, old))
    session = LiveSession.start(store, "gpt-4.1-mini")
    _send(session, keep(store, read_attachment(_file(tmp_path, "mine.txt", "mine\n"))))
    session.close()
    delete_session(store, session.id)
    assert path.exists()


def test_a_private_session_s_files_go_when_it_ends(tmp_path: Path) -> None:
    store = MemoryStore(tmp_path / "data")
    note = read_attachment(_file(tmp_path, "secret.txt", "off the record\n"))
    session = LiveSession.start(store, "gpt-4.1-mini", private=True)
    record = keep(store, note, private=True)
    _send(session, record)
    assert stored_path(store, record).exists()
    session.close()
    assert not stored_path(store, record).exists()


def test_a_private_session_a_crash_left_loses_its_files_at_the_next_start(
    tmp_path: Path,
) -> None:
    store = MemoryStore(data_dir()).ensure()
    note = read_attachment(_file(tmp_path, "secret.txt", "off the record\n"))
    session = LiveSession.start(store, "gpt-4.1-mini", private=True)
    record = keep(store, note, private=True)
    _send(session, record)
    session.release()  # the window died: no close, the journal and the file are left
    assert stored_path(store, record).exists()

    assert kept(["memory", "path"]) == 0  # any command first ends orphaned private sessions
    assert not stored_path(store, record).exists()
    assert list((store.root / FOLDER / PRIVATE).iterdir()) == []


def test_an_attached_file_counts_toward_compaction() -> None:
    from memory.sessions.live import estimate_tokens

    plain = [{"role": "user", "content": "Read it"}]
    attached = [{**plain[0], "attachments": [{"name": "r.pdf", "tokens": 40_000}]}]
    assert estimate_tokens(attached) == estimate_tokens(plain) + 40_000
    hostile = [
        {**plain[0], "attachments": [{"tokens": "9"}, {"tokens": -5}, "x", {"tokens": True}]}
    ]
    assert estimate_tokens(hostile) == estimate_tokens(plain)


def test_ending_a_private_session_reads_only_the_open_journals(tmp_path: Path) -> None:
    """/new after a private session with a file runs on the event loop: the files of private
    sessions are looked for in the few open journals, not in 10,000 finished ones."""
    from memory.chat.attachments.storage import _naming

    store = MemoryStore(tmp_path / "data")
    for _ in range(30):
        LiveSession.start(store, "gpt-4.1-mini").close()
    private = LiveSession.start(store, "gpt-4.1-mini", private=True)
    assert _naming(store, private_only=True) == [private.journal.path]
    assert len(_naming(store, private_only=False)) == 31
    private.close()


async def test_a_file_is_stored_while_it_is_read_not_when_enter_is_pressed(
    fake: FakeProvider, tmp_path: Path
) -> None:
    """The copy into the data folder (fsynced, perhaps megabytes) is made in the reading
    worker: at Enter the journal is written and the file is already there."""

    from app.screens.chat import ChatScreen
    from app.widgets.composer import Chips
    from tests.support import make_app, until

    path = _file(tmp_path, "notes.txt", "the notes\n")

    async def go() -> Path:
        app = make_app(fake)
        async with app.run_test():
            await until(lambda: app.session.is_found, message="the session")
            screen = app.screen
            assert isinstance(screen, ChatScreen)
            screen.attach(path)  # as /attach does
            chips = app.screen.query_one(Chips)
            await until(lambda: bool(chips.attachments), message="the chip, read")
            (attachment,) = chips.attachments
            return stored_path(app.store, attachment.record())

    assert (await go()).read_text() == "the notes\n"  # stored, though never sent
