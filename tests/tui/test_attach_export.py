"""/export writes a session's attachments beside its Markdown and links them."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from app.export import export_session
from catalog import Catalog
from memory import LiveSession, MemoryStore
from memory.chat.attachments import keep, read_attachment, stored_path
from tests.attach_files import png
from tests.fakes.provider import FakeProvider


def test_export_copies_attachments_beside_the_markdown(tmp_path: Path) -> None:
    store = MemoryStore(tmp_path / "data")
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    (tmp_path / "a" / "my notes.txt").write_text("first notes\n")
    (tmp_path / "b" / "my notes.txt").write_text("other notes\n")
    (tmp_path / "shot.png").write_bytes(png())
    first, other, shot = (
        read_attachment(p)
        for p in (
            tmp_path / "a" / "my notes.txt",
            tmp_path / "b" / "my notes.txt",
            tmp_path / "shot.png",
        )
    )
    session = LiveSession.start(store, "gpt-4.1-mini")
    gone = keep(store, shot)
    session.append(
        {
            "role": "user",
            "content": "Two notes",
            "attachments": [keep(store, first), keep(store, other)],
        }
    )
    session.append({"role": "assistant", "content": "Read them.", "model": "gpt-4.1-mini"})
    session.append({"role": "user", "content": "And a picture", "attachments": [gone]})
    stored_path(store, gone).unlink()

    out = tmp_path / "out"
    out.mkdir()
    path = export_session(session, Catalog(), str(out), store.root / "exports")
    files = out / f"kept-{session.id}_files"
    assert (files / "my notes.txt").read_text() == "first notes\n"
    assert (files / "my notes-2.txt").read_text() == "other notes\n"
    markdown = path.read_text()
    assert (
        f"*Attached: [my notes.txt](<kept-{session.id}_files/my notes.txt>) (12 bytes)*" in markdown
    )
    assert f"(<kept-{session.id}_files/my notes-2.txt>)" in markdown
    assert "*Attached: shot.png (no longer in Kept) (73 bytes)*" in markdown


def test_a_finished_session_exports_its_attachments_too(tmp_path: Path) -> None:
    store = MemoryStore(tmp_path / "data")
    (tmp_path / "log.txt").write_text("error at line 3\n")
    session = LiveSession.start(store, "gpt-4.1-mini")
    record = keep(store, read_attachment(tmp_path / "log.txt"))
    session.append({"role": "user", "content": "Why?", "attachments": [record]})
    journal = session.journal
    session.release()
    path = export_session(journal, Catalog(), None, store.root / "exports")
    assert path.parent == store.root / "exports"
    assert (path.parent / f"{path.stem}_files" / "log.txt").read_text() == "error at line 3\n"


def test_a_session_without_attachments_makes_no_folder(tmp_path: Path) -> None:
    store = MemoryStore(tmp_path / "data")
    session = LiveSession.start(store, "gpt-4.1-mini")
    session.append({"role": "user", "content": "Hi"})
    path = export_session(session, Catalog(), None, store.root / "exports")
    assert [p.name for p in path.parent.iterdir()] == [path.name]


async def test_export_copies_in_a_thread_not_on_the_event_loop(
    fake: FakeProvider, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A session's attachments may be many megabytes: /export copies them off the loop."""
    import threading

    import app.export
    from tests.support import make_app, until

    threads: list[bool] = []
    real = app.export.export_session

    def spy(*args: Any, **kwargs: Any):  # type: ignore[no-untyped-def]
        threads.append(threading.current_thread() is threading.main_thread())
        return real(*args, **kwargs)

    monkeypatch.setattr(app.export, "export_session", spy)

    kept = make_app(fake)
    async with kept.run_test():
        kept.action_export()
        await until(
            lambda: any("exported to" in n.message for n in kept._notifications),
            message="the export's notice",
        )
    assert threads == [False]
