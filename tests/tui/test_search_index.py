"""The search index answers exactly what the scan answers: the same matches, in the same
order, with the same text, for every kind of file and pattern; a file changed behind Kept's
back is scanned, never answered from a stale entry; a damaged index is rebuilt."""

from __future__ import annotations

import contextlib
import json
import os
import re
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest
from textual.widgets import Static

from app.cli.main import main
from app.screens.search import SearchScreen
from memory import MemoryStore
from memory.data.files import locked
from memory.recall import index, index_file
from memory.recall.scan import scan
from memory.recall.search import Pattern, Route, Scope, grep, run_search_tool, search_history
from tests.factories import HISTORY, PATTERNS, corpus, journal, said
from tests.support import make_app

ROOT = Path(__file__).parents[2]


def scanned(store: MemoryStore, pattern: Pattern, **options: object) -> list[object]:
    """What the scan finds, as it always did: every file read, no index asked."""
    since, until = str(options.get("since", "")), str(options.get("until", ""))
    private = bool(options.get("private", False))
    details = bool(options.get("details", True))
    return list(scan(store, pattern, Scope(details, since, until, (), private)))


def same_as_the_scan(store: MemoryStore) -> int:
    """Every pattern, with and without case, dates, details and private sessions: the same
    matches as the scan. The number of files the index ruled out, in all."""
    skipped = 0
    for text in PATTERNS:
        for ignore_case in (False, True):
            pattern = Pattern(text, ignore_case=ignore_case)
            for options in (
                {},
                {"details": False},
                {"since": "2025-10"},
                {"until": "2025-12-31"},
                {"private": True},
            ):
                route = Route()
                found = list(grep(store, pattern, Scope(**options), route=route))
                assert found == scanned(store, pattern, **options), (text, ignore_case, options)
                skipped += route.skipped
    return skipped


@pytest.fixture
def store(monkeypatch: pytest.MonkeyPatch) -> MemoryStore:
    # The files here were all written a moment ago; a real folder's have long settled.
    monkeypatch.setattr(index, "SETTLE_SECONDS", -1.0)
    store = MemoryStore().ensure()
    corpus(store)
    return store


def test_the_index_answers_exactly_what_the_scan_does(store: MemoryStore) -> None:
    assert same_as_the_scan(store) == 0  # no index yet: every file is read
    assert index.refresh(store.root) == 7  # every file but the private journal
    assert same_as_the_scan(store) > 500  # and now most of them are ruled out unread
    route = Route()
    assert [m.line for m in grep(store, Pattern("zebra"), route=route)] == []
    assert route.ready and route.skipped == 7


def test_a_file_changed_behind_kept_s_back_is_never_answered_from_the_index(
    store: MemoryStore,
) -> None:
    index.refresh(store.root)
    archive = store.archive_dir / "2025-01.md"
    indexed = archive.stat()
    # Any write moves a file's ctime, but only once the clock has ticked past the index's.
    probe = store.root / "probe"
    deadline = time.monotonic() + 60
    while probe.exists() is False or probe.stat().st_ctime_ns <= indexed.st_ctime_ns:
        assert time.monotonic() < deadline
        probe.write_text("tick")
    # The same size, the same mtime: only the words differ.
    archive.write_text(archive.read_text().replace("piano museum", "zebra museum"))
    os.utime(archive, ns=(indexed.st_atime_ns, indexed.st_mtime_ns))
    assert archive.stat().st_size == indexed.st_size
    # A journal grows, one appears, one goes, HISTORY.md is replaced whole.
    with (store.done_dir / "20250301-100000-aaaaaa.jsonl").open("a") as f:
        f.write(json.dumps(said("user", "a zebra appended")) + "\n")
    journal(store, "20251201-100000-dddddd", [said("user", "a new zebra", "2025-12-01")])
    (store.archive_dir / "undated.md").unlink()
    store.history_path.with_suffix(".new").write_text(HISTORY + "[2026-11-23 08:00] zebra\n")
    store.history_path.with_suffix(".new").replace(store.history_path)

    assert [m.text for m in grep(store, Pattern("zebra"))] == [
        "[2026-11-23 08:00] zebra",
        "a new zebra",
        "a zebra appended",
        "[2025-01-03 10:00] Quokka photos, and the zebra museum.",
    ]
    same_as_the_scan(store)
    index.refresh(store.root)  # forgets the file gone, indexes the rest again
    same_as_the_scan(store)
    with contextlib.closing(sqlite3.connect(store.root / index.INDEX)) as db:
        paths = {row[0] for row in db.execute("SELECT path FROM files")}
    assert "history/undated.md" not in paths and "history/2025-01.md" in paths


def test_search_history_and_its_tool_answer_as_the_scan_did(store: MemoryStore) -> None:
    def answers() -> list[object]:
        out: list[object] = []
        for text in PATTERNS:
            for ignore_case in (False, True):
                out.append(search_history(store, text, ignore_case=ignore_case))
            out.append(run_search_tool(store, json.dumps({"pattern": text})))
        return out

    before = answers()
    index.refresh(store.root)
    assert answers() == before


def test_kept_memory_grep_prints_the_same_with_the_index(
    store: MemoryStore, capsys: pytest.CaptureFixture[str]
) -> None:
    def printed() -> list[tuple[int, str]]:
        out = []
        for text in ("quokka", "Zürich", "piano museum", "zebra", "ok"):
            for flags in ([], ["-s"], ["--since", "2025-10"]):
                code = main(["memory", "grep", *flags, text])
                out.append((code, capsys.readouterr().out))
        return out

    before = printed()
    index.refresh(store.root)
    assert printed() == before


def test_a_damaged_foreign_or_linked_index_is_read_around_then_rebuilt(
    store: MemoryStore, tmp_path: Path
) -> None:
    path = store.root / index.INDEX
    expected = scanned(store, Pattern("quokka"))
    index.refresh(store.root)
    whole = path.read_bytes()
    elsewhere = tmp_path / "elsewhere.db"
    elsewhere.write_bytes(b"not yours")

    def foreign() -> None:
        with contextlib.closing(sqlite3.connect(path)) as db:
            db.execute("CREATE TABLE files(path TEXT)")
            db.commit()

    for damage in (
        lambda: path.write_bytes(b"SQLite format 3\x00" + b"\xff" * 5000),
        lambda: path.write_bytes(whole[: len(whole) // 2]),
        lambda: path.write_bytes(b""),
        foreign,
        lambda: path.symlink_to(elsewhere),
    ):
        index.remove(store.root)
        damage()
        route = Route()
        assert list(grep(store, Pattern("quokka"), route=route)) == expected
        assert route.skipped == 0
        assert index.refresh(store.root) == 7
        assert not path.is_symlink()
        route = Route()
        assert list(grep(store, Pattern("quokka"), route=route)) == expected
        assert route.skipped > 0
    assert elsewhere.read_bytes() == b"not yours"
    for name in (index.INDEX, index.INDEX + "-wal", index.INDEX + "-shm", index.LOCK):
        if (store.root / name).exists():
            assert (store.root / name).stat().st_mode & 0o777 == 0o600, name


def test_nothing_of_a_private_or_deleted_session_stays_in_the_index(
    store: MemoryStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(index, "_builders", [])
    gone = journal(store, "20250401-100000-eeeeee", [said("user", "xylophone words")])
    index.refresh(store.root)

    def holds(word: str) -> bool:
        with contextlib.closing(sqlite3.connect(store.root / index.INDEX)) as db:
            query = " AND ".join(f'"{g}"' for g in index.trigrams(word))
            return bool(db.execute("SELECT 1 FROM words WHERE words MATCH ?", (query,)).fetchall())

    assert holds("xylophone") and not holds("zebra")  # the private session's word
    assert not index.build_if_needed(store.root)  # nothing to do
    gone.unlink()
    # Nothing is missing from the index, but it holds a file deleted: a build starts.
    assert index.build_if_needed(store.root)
    (builder,) = index._builders
    assert builder.wait(120) == 0
    assert not holds("xylophone")


def test_a_deleted_session_s_words_leave_the_index_at_once(
    store: MemoryStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    from memory.sessions.delete import delete_session

    monkeypatch.setattr(index, "_builders", [])
    session = "20250401-100000-dddddd"
    journal(store, session, [said("user", "marimba words")])
    index.refresh(store.root)

    def holds(word: str) -> bool:
        with contextlib.closing(sqlite3.connect(store.root / index.INDEX)) as db:
            query = " AND ".join(f'"{g}"' for g in index.trigrams(word))
            return bool(db.execute("SELECT 1 FROM words WHERE words MATCH ?", (query,)).fetchall())

    assert holds("marimba")
    delete_session(store, session)  # no search needed to start the build
    (builder,) = index._builders
    assert builder.wait(120) == 0
    assert not holds("marimba")


def test_a_builder_killed_mid_write_leaves_a_usable_index(store: MemoryStore) -> None:
    for n in range(40):
        journal(store, f"20240101-1000{n:02d}-ffffff", [said("user", f"filler {n} " * 500)])
    # The builder commits after every file, and is killed (SIGKILL) at its sixth.
    code = (
        "import json, os, signal, sys; sys.path[:] = json.loads(sys.argv[2]);"
        "from pathlib import Path; from memory.recall import index;"
        "index._BATCH_BYTES = 1; index.SETTLE_SECONDS = -1; calls = [];"
        "stop = lambda: calls.append(1) or (len(calls) > 5 and os.kill(os.getpid(), 9));"
        "index.refresh(Path(sys.argv[1]), cancelled=stop)"
    )
    child = subprocess.run(
        [sys.executable, "-c", code, str(store.root), json.dumps(sys.path)], timeout=120
    )
    assert child.returncode == -9
    with contextlib.closing(sqlite3.connect(store.root / index.INDEX)) as db:
        written = db.execute("SELECT count(*) FROM files").fetchone()[0]
    assert 0 < written < 5
    same_as_the_scan(store)
    assert index.refresh(store.root) == 47 - written
    same_as_the_scan(store)


def test_searches_agree_while_another_process_builds_the_index(store: MemoryStore) -> None:
    for n in range(200):
        journal(store, f"20240101-1{n:05d}-ffffff", [said("user", f"filler {n} quokka " * 50)])
    expected = scanned(store, Pattern("quokka"))
    code = (
        "import json, sys; sys.path[:] = json.loads(sys.argv[2]);"
        "from pathlib import Path; from memory.recall import index;"
        "index._BATCH_BYTES = 1; index.SETTLE_SECONDS = -1; index.refresh(Path(sys.argv[1]))"
    )
    child = subprocess.Popen([sys.executable, "-c", code, str(store.root), json.dumps(sys.path)])
    try:
        searches = 0
        while child.poll() is None or searches < 3:
            assert list(grep(store, Pattern("quokka"))) == expected
            assert list(grep(store, Pattern("zebra"))) == []
            searches += 1
    finally:
        child.wait(120)
    assert child.returncode == 0
    route = Route()
    assert list(grep(store, Pattern("zebra"), route=route)) == []
    assert route.skipped == 207


def test_sqlite_folds_every_character_python_matches_to_an_ascii_letter_but_i() -> None:
    """The rule `trigrams(unicode_case=True)` relies on: under re.IGNORECASE an ASCII letter
    also matches a few other characters; SQLite folds each of them to that letter, except
    the dotted and dotless i, which are therefore never part of a trigram."""
    letters = re.compile("[A-Za-z]", re.IGNORECASE)
    others = [
        chr(c)
        for c in range(0x80, 0x110000)
        if not 0xD800 <= c < 0xE000 and letters.fullmatch(chr(c))
    ]
    assert others, "re.IGNORECASE matches some non-ASCII characters to ASCII letters"
    with contextlib.closing(sqlite3.connect(":memory:")) as db:
        db.execute(index_file.SCHEMA["words"])
        for number, char in enumerate(others):
            db.execute("INSERT INTO words(rowid, body) VALUES (?, ?)", (number, f"x{char}y"))
            for letter in "abcdefghjklmnopqrstuvwxyz":
                if re.fullmatch(letter, char, re.IGNORECASE):
                    query = f'"x{letter}y"'
                    rows = db.execute("SELECT rowid FROM words WHERE words MATCH ?", (query,))
                    assert number in {r[0] for r in rows}, (hex(ord(char)), letter)
    assert index.trigrams("Istanbul", unicode_case=True) == ["sta", "tan", "anb", "nbu", "bul"]
    assert index.trigrams("Zürich", unicode_case=True) == []
    assert index.trigrams("Zürich") == ["Zür", "üri", "ric", "ich"]


async def test_grep_says_when_files_were_read_for_want_of_the_index(
    store: MemoryStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(index, "BUILD_AFTER", 100)  # this folder counts as a big one

    async def summary_for(pattern: str) -> str:
        app = make_app(None, env={"OPENAI_API_KEY": "x"})
        async with app.run_test(size=(120, 32)) as pilot:
            await pilot.press(*f"/grep {pattern}", "enter")
            assert isinstance(app.screen, SearchScreen)
            await app.workers.wait_for_complete()
            await pilot.pause()
            return str(app.screen.query_one("#search-summary", Static).render())

    # Another process is building the index: this search reads the files it lacks.
    with locked(store.root / index.LOCK) as held:
        assert held
        text = await summary_for("quokka")
    assert text.startswith("8 lines match. Many files")
    assert "not in the search index yet (it is being built)" in text
    index.refresh(store.root)
    assert await summary_for("quokka") == "8 lines match"


def test_a_big_folder_missing_from_the_index_is_indexed_in_the_background(
    store: MemoryStore, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(index, "BUILD_AFTER", 100)
    monkeypatch.setattr(index, "_builders", [])
    assert main(["memory", "grep", "quokka"]) == 0  # answered by the scan at once
    assert len(capsys.readouterr().out.splitlines()) == 8
    (builder,) = index._builders
    assert builder.wait(120) == 0
    with contextlib.closing(sqlite3.connect(store.root / index.INDEX)) as db:
        index_file.check(db)  # a build ran; these files are too new for it to trust yet


async def test_the_app_starts_a_build_when_much_is_missing_from_the_index(
    store: MemoryStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    from tests.support import make_app, settle

    monkeypatch.setattr(index, "BUILD_AFTER", 100)
    monkeypatch.setattr(index, "_builders", [])

    async with make_app().run_test() as pilot:
        await settle(pilot)
    (builder,) = index._builders  # started after the first frame, in the session's thread
    assert builder.wait(120) == 0
    assert (store.root / index.INDEX).exists()


def test_a_session_deleted_while_a_builder_works_is_forgotten_by_that_builder(
    store: MemoryStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The builder may have listed the files before the transcript went: it is told to look
    again, and does, so the deleted words do not wait for the next start."""
    from memory.data.files import locked
    from memory.sessions.delete import delete_session

    monkeypatch.setattr(index, "_builders", [])
    session = "20250401-100000-cccccc"
    journal(store, session, [said("user", "ocarina words")])
    index.refresh(store.root)
    with locked(store.root / index.LOCK):  # a builder is at work
        delete_session(store, session)
        assert index._builders == [] and (store.root / index.AGAIN).exists()
        assert index.build_if_needed(store.root) is False  # still at work: nothing started

    passes: list[int] = []
    real = index._refresh

    def one_pass(root: Path, cancelled: object) -> int:
        passes.append(1)
        if len(passes) == 1:
            (root / index.AGAIN).touch()  # another deletion while this pass ran
        return real(root, cancelled)  # type: ignore[arg-type]

    monkeypatch.setattr(index, "_refresh", one_pass)
    index.refresh(store.root)  # the builder's own call
    assert len(passes) == 2 and not (store.root / index.AGAIN).exists()
    with contextlib.closing(sqlite3.connect(store.root / index.INDEX)) as db:
        query = " AND ".join(f'"{g}"' for g in index.trigrams("ocarina"))
        assert not db.execute("SELECT 1 FROM words WHERE words MATCH ?", (query,)).fetchall()
