"""Memory on disk: journals, permissions, the history window, versions, bad input."""

from __future__ import annotations

import json
import stat
import subprocess
import sys
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from catalog import Reply
from memory import LiveSession, MemorySettings, MemoryStore, parse_save_memory
from memory.consolidation.edits import Context
from memory.consolidation.reply import SavedMemory
from memory.data.files import atomic_write, locked
from memory.data.history import format_entry, parse_entries
from memory.sessions.journal import Segment, load


@pytest.fixture
def store() -> MemoryStore:
    return MemoryStore().ensure()


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_files_are_private_to_the_user(store: MemoryStore) -> None:
    session = LiveSession.resume_or_start(store, "gpt-4.1-mini")
    session.append({"role": "user", "content": "secret plans"})
    store.write_memory("# Me\n")
    store.append_history("[2026-11-29 10:00] Talked.")
    store.log({"session": session.id})
    for folder in (
        store.root,
        store.sessions_dir,
        store.done_dir,
        store.versions_dir,
        store.archive_dir,
    ):
        assert mode(folder) == 0o700, folder
    for path in (session.journal.path, store.memory_path, store.history_path, store.log_path):
        assert mode(path) == 0o600, path


def test_a_new_session_never_takes_an_id_already_taken(
    store: MemoryStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two ids made in the same second can share their random part (one in 16 million); the
    second session then gets another id, and the first is left as it was."""
    from memory.sessions import journal as journals

    first = store.new_session("gpt-4.1-mini")
    first.append({"role": "user", "content": "the first one"})
    before = first.path.read_bytes()
    made = iter([first.id, first.id, "20261202-100000-0a0b0c"])
    monkeypatch.setattr(journals, "new_session_id", lambda private=False: next(made))
    second = store.new_session("gpt-4.1-mini")
    assert second.id == "20261202-100000-0a0b0c"
    assert first.path.read_bytes() == before
    assert load(second.path).messages == [] and load(first.path).id == first.id
    with pytest.raises(FileExistsError):  # an id given, not made up, is never replaced
        journals.create(store.sessions_dir, "gpt-4.1-mini", first.id)


def test_journal_round_trip_keeps_every_field(store: MemoryStore) -> None:
    journal = store.new_session("claude-sonnet-4-5")
    call = [
        {
            "id": "c1",
            "type": "function",
            "function": {"name": "search_history", "arguments": '{"pattern": "tea"}'},
        }
    ]
    journal.append({"role": "user", "content": "Ünïcode ✓ 日本"})
    journal.append(
        {"role": "assistant", "content": None, "tool_calls": call, "model": "claude-sonnet-4-5"}
    )
    journal.append(
        {
            "role": "tool",
            "tool_call_id": "c1",
            "name": "search_history",
            "content": "[2026-11-01 09:00] tea",
        }
    )
    again = load(journal.path)
    assert again.id == journal.id and again.model == "claude-sonnet-4-5"
    assert again.messages == journal.messages
    assert again.messages[1]["tool_calls"] == call
    assert all("time" in m for m in again.messages)
    assert again.state == "active" and again.warnings == []


def test_torn_and_corrupt_lines_are_skipped_with_file_and_line(
    store: MemoryStore, caplog: pytest.LogCaptureFixture
) -> None:
    journal = store.new_session()
    journal.append({"role": "user", "content": "first"})
    with open(journal.path, "ab") as f:
        f.write(b"not json at all\n")
        f.write(b"\xff\xfe\n")
        f.write(b'{"role": "wizard", "content": "x"}\n')
        f.write(b'{"role": "user", "content": "torn')  # a crash mid-line
    again = load(journal.path)
    assert [m["content"] for m in again.messages] == ["first"]
    assert len(again.warnings) == 4
    assert f"{journal.path}:3:" in again.warnings[0]
    assert f"{journal.path}:6:" in again.warnings[3]
    assert any(f"{journal.path}:3" in r.message for r in caplog.records)
    # Appending after a torn line starts on a fresh line: nothing new is lost.
    again.append({"role": "user", "content": "after the crash"})
    assert [m["content"] for m in load(journal.path).messages] == ["first", "after the crash"]


def test_session_states_follow_marks(store: MemoryStore) -> None:
    session = LiveSession.resume_or_start(store)
    assert session.journal.state == "active"
    session.append({"role": "user", "content": "hi"})
    segment = session.close()
    assert segment == Segment(0, 1)
    assert load(session.journal.path).state == "pending"
    with pytest.raises(ValueError, match="closed"):
        session.append({"role": "user", "content": "late"})
    journal = load(session.journal.path)
    journal.mark_consolidated(segment, "m")
    assert load(journal.path).state == "consolidated"
    store.settle(journal)
    assert journal.path.parent == store.done_dir
    assert mode(journal.path) == 0o400


def test_an_empty_session_closes_straight_to_done(store: MemoryStore) -> None:
    session = LiveSession.resume_or_start(store)
    assert session.close() is None
    assert session.journal.path.parent == store.done_dir
    assert store.open_sessions() == []


def test_the_next_launch_resumes_the_active_session(store: MemoryStore) -> None:
    first = LiveSession.resume_or_start(store, "gpt-5")
    first.append({"role": "user", "content": "remember me"})
    # A second window while the first is open gets a session of its own...
    second = LiveSession.resume_or_start(MemoryStore())
    assert second.id != first.id
    second.release()
    # ...and the next launch, once the first has ended, resumes the newest free one.
    first.release()
    again = LiveSession.resume_or_start(MemoryStore())
    assert again.id == second.id
    again.release()
    assert LiveSession.resume_or_start(MemoryStore()).context() == []


def test_history_rolls_into_archives_and_nothing_is_lost(tmp_path: Path) -> None:
    store = MemoryStore(settings=replace(MemorySettings(), history_window_chars=1_000)).ensure()
    written = []
    for day in range(1, 31):
        month = 10 if day <= 15 else 11
        entry = f"[2026-{month:02d}-{day:02d} 10:00] Session number {day}: " + "words " * 20
        store.append_history(entry.strip())
        written.append(entry.strip())
    assert store.history_path.stat().st_size <= 1_200
    assert [a.name for a in store.archive_files()] == ["2026-10.md", "2026-11.md"]
    assert [e.text for e in store.all_history_entries()] == written
    # Plain grep finds an archived entry and a recent one.
    for needle in ("Session number 3:", "Session number 30:"):
        found = subprocess.run(
            ["grep", "-rlF", needle, str(store.root)], capture_output=True, text=True
        )
        assert found.stdout.strip(), needle


def test_history_keeps_a_heading_the_user_added(store: MemoryStore) -> None:
    store.history_path.write_text("# My history\n\n[2026-11-01 08:00] Old entry.\n")
    store.append_history("[2026-11-02 08:00] New entry.")
    assert store.history_path.read_text() == (
        "# My history\n\n[2026-11-01 08:00] Old entry.\n\n[2026-11-02 08:00] New entry.\n\n"
    )


def test_entries_are_single_timestamped_paragraphs() -> None:
    from datetime import datetime

    entry = format_entry(datetime(2026, 11, 29, 9, 5), "Line one.\n\nLine   two.")
    assert entry == "[2026-11-29 09:05] Line one. Line two."
    parsed = parse_entries(f"{entry}\n\n[2026-11-30 10:00] Next.\ncontinued\n", Path("H"))
    assert [(e.stamp, e.line) for e in parsed] == [("2026-11-29 09:05", 1), ("2026-11-30 10:00", 3)]
    assert parsed[1].text == "[2026-11-30 10:00] Next.\ncontinued"


def test_atomic_write_never_leaves_a_partial_file(tmp_path: Path) -> None:
    target = tmp_path / "MEMORY.md"
    atomic_write(target, "old")
    atomic_write(target, "new" * 1000)
    assert target.read_text() == "new" * 1000
    assert [p.name for p in tmp_path.iterdir()] == ["MEMORY.md"]


def test_the_lock_excludes_other_processes(tmp_path: Path) -> None:
    lock = tmp_path / ".lock"
    code = (
        "import sys; from pathlib import Path; from memory.data.files import locked\n"
        "with locked(Path(sys.argv[1]), blocking=False) as got: print(got)"
    )
    with locked(lock):
        held = subprocess.run(
            [sys.executable, "-c", code, str(lock)],
            capture_output=True,
            text=True,
            cwd=Path(__file__).parents[2],
            check=True,
        )
    free = subprocess.run(
        [sys.executable, "-c", code, str(lock)],
        capture_output=True,
        text=True,
        cwd=Path(__file__).parents[2],
        check=True,
    )
    assert held.stdout.strip() == "False" and free.stdout.strip() == "True"


# --- save_memory arguments -----------------------------------------------------------------


def reply(arguments: Any = None, text: str = "") -> Reply:
    from catalog import ToolCall

    calls = (
        ()
        if arguments is None
        else (
            ToolCall(
                "c1",
                "save_memory",
                arguments if isinstance(arguments, str) else json.dumps(arguments),
            ),
        )
    )
    return Reply("m", "groq", text, calls, "stop", 10, 10, 0.0)


SAID = Context(
    [{"role": "user", "content": "I started the cello", "time": "2026-11-20T09:15:00+00:00"}],
    datetime(2026, 11, 20, tzinfo=UTC),
    16_000,
)


ENTRY = "Ana started the cello."


def parse(reply: Reply, memory: str = "") -> SavedMemory:
    return parse_save_memory(reply, memory, MemorySettings(), context=SAID)


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        ('{"history_entry": "x", ', "not valid JSON"),
        ('["history_entry"]', "must be a JSON object, not list"),
        ({"history_entry": 42, "edits": []}, "history_entry must be a string, not int"),
        (
            {"history_entry": ENTRY, "memory_update": {"a": 1}},
            "memory_update must be a string, not dict",
        ),
        ({"history_entry": ENTRY}, "without edits"),
        ({"edits": []}, "without history_entry"),
        ({"history_entry": "\x1b[2J\x00", "edits": []}, "history_entry is empty"),
        ({"history_entry": "x" * 5000, "edits": []}, "over the 4,000 limit"),
        ({"history_entry": ENTRY, "edits": {"op": "add"}}, "edits must be a list, not dict"),
    ],
)
def test_bad_save_memory_arguments_are_rejected_with_a_reason(arguments: Any, message: str) -> None:
    from catalog import ReplyRejected

    with pytest.raises(ReplyRejected, match=message):
        parse(reply(arguments))


def test_prose_and_other_tools_are_rejected() -> None:
    from catalog import Reply, ReplyRejected, ToolCall

    with pytest.raises(ReplyRejected, match="did not call save_memory"):
        parse(reply(text="Here's what I remember..."))
    other = Reply("m", "groq", "", (ToolCall("c", "search_history", "{}"),), None, 1, 1, 0)
    with pytest.raises(ReplyRejected, match="called search_history instead"):
        parse(other)


def test_double_encoded_and_text_json_arguments_are_accepted() -> None:
    cello = {
        "op": "add",
        "line": "Plays the cello",
        "evidence": [{"message": 1, "quote": "I started the cello"}],
    }
    args = {"history_entry": "Talked.", "edits": [cello]}
    twice = parse(reply(json.dumps(json.dumps(args))), "# M\n")
    assert twice.history_entry == "Talked." and twice.memory_update == "# M\n- Plays the cello\n"
    in_text = parse(reply(text=f"Sure:\n{json.dumps(args)}"), "# M\n")
    assert in_text == twice


def test_a_few_huge_messages_are_compacted_by_tokens() -> None:
    settings = replace(MemorySettings(), session_max_tokens=1_000, session_keep_messages=40)
    store = MemoryStore(settings=settings).ensure()
    session = LiveSession.resume_or_start(store)
    for i in range(6):
        session.append({"role": "user" if i % 2 == 0 else "assistant", "content": "x" * 2_000})
    assert session.needs_compaction()
    segment = session.compact()
    assert segment == Segment(0, 4)  # only the last turn stays in the context
    assert len(session.context()) == 2 and len(session.messages) == 6


def test_a_history_file_with_bad_bytes_is_copied_aside_before_it_is_rewritten() -> None:
    store = MemoryStore().ensure()
    original = b"[2026-11-01 09:00] caf\xe9 with Ana.\n\n"
    store.history_path.write_bytes(original)
    store.append_history("[2026-11-02 09:00] Next.")
    (copy,) = store.root.glob("HISTORY.md.*.orig")
    assert copy.read_bytes() == original
    assert "[2026-11-02 09:00] Next." in store.history_path.read_text()


# Kept on Windows: no fcntl there. The stand-in msvcrt below locks with the real flock of
# this machine, so the Windows branch of memory.data.files is run, and its exclusion tested.
_ON_WINDOWS = """
import fcntl, os, sys, types
from pathlib import Path

real_flock = fcntl.flock
sys.modules["fcntl"] = None  # import fcntl now fails, as on Windows
msvcrt = types.ModuleType("msvcrt")
msvcrt.LK_LOCK, msvcrt.LK_NBLCK, msvcrt.LK_UNLCK = 1, 2, 0

def locking(fd, mode, nbytes):
    if mode == msvcrt.LK_UNLCK:
        real_flock(fd, fcntl.LOCK_UN)
        return
    try:
        real_flock(fd, fcntl.LOCK_EX | (fcntl.LOCK_NB if mode == msvcrt.LK_NBLCK else 0))
    except BlockingIOError:
        raise PermissionError(13, "Permission denied") from None

msvcrt.locking = locking
sys.modules["msvcrt"] = msvcrt
sys.platform = "win32"  # only while memory.data.files picks its locks
from memory.data.files import HeldLock, atomic_write, locked
sys.platform = "linux"

lock = Path(sys.argv[1]) / ".lock"
first, second = HeldLock(lock), HeldLock(lock)
with locked(lock, blocking=False) as got:
    print(got, first.acquire())
print(first.acquire(), second.acquire())
first.release()
print(second.acquire())
atomic_write(Path(sys.argv[1]) / "MEMORY.md", "kept")
"""


def test_memory_files_run_without_fcntl_as_on_windows(tmp_path: Path) -> None:
    out = subprocess.run(
        [sys.executable, "-c", _ON_WINDOWS, str(tmp_path)],
        capture_output=True,
        text=True,
        cwd=Path(__file__).parents[2],
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.split("\n") == ["True False", "True False", "True", ""]
    assert (tmp_path / "MEMORY.md").read_text() == "kept"


def test_two_held_locks_in_one_process_exclude_each_other(tmp_path: Path) -> None:
    from memory.data.files import HeldLock

    first, second = HeldLock(tmp_path / ".lock"), HeldLock(tmp_path / ".lock")
    assert first.acquire() and not second.acquire()
    first.release()
    assert second.acquire()
    second.release()


def test_an_edit_the_user_did_not_keep_is_a_version_that_never_was_memory(
    tmp_path: Path,
) -> None:
    store = MemoryStore(tmp_path).ensure()
    store.write_memory("# Me\n- on disk\n")
    number = store.discard_edit("# Me\n- my edit\n")
    (version,) = store.versions()
    assert version.number == number and version.source == "your edit, not kept"
    assert version.path.read_text() == "# Me\n- my edit\n"
    assert store.memory_path.read_text() == "# Me\n- on disk\n"
    assert store.previous_version(number + 1) is None  # never MEMORY.md


def test_a_session_state_is_one_of_three_named_states(tmp_path: Path) -> None:
    from memory.sessions.journal import JournalState

    store = MemoryStore(tmp_path).ensure()
    journal = store.new_session("gpt-4.1-mini")
    journal.append({"role": "user", "content": "hello"})
    states = [journal.state]
    segment = journal.mark_pending(close=True)
    assert segment is not None
    states.append(journal.state)
    journal.mark_consolidated(segment, "gpt-4.1-mini")
    states.append(journal.state)
    assert states == [JournalState.ACTIVE, JournalState.PENDING, JournalState.CONSOLIDATED]


def test_log_lines_from_any_version_read_back_as_typed_records(tmp_path: Path) -> None:
    from memory.consolidation.log import LogRecord, figures, read_records, sessions

    store = MemoryStore(tmp_path).ensure()
    lines = [
        {"session": "s1", "segment": "0-2", "model": "m", "outcome": "ok", "latency": 1.5},
        {"session": "s1", "segment": "0-2", "model": "m", "outcome": "failed", "cost": None},
        {"session": 7, "model": ["x"], "outcome": "ok", "latency": "fast", "cost": True},
    ]
    store.log_path.write_text("".join(json.dumps(line) + "\n" for line in lines) + "torn {\n")
    records = read_records(store)
    assert records[0] == LogRecord("s1", "0-2", "m", "ok", latency=1.5)
    assert records[1].cost == 0.0 and records[1].kind == ""
    assert records[2] == LogRecord("?", "", "?", "ok")
    unknown, m = sorted(figures(store), key=lambda f: f.model)  # "?" sorts first
    assert (m.attempts, m.successes, m.median_latency) == (2, 1, 0.75)
    assert unknown.model == "?" and unknown.cost == 0.0
    assert next(log.chain() for log in sessions(store)) == "m ✓ 1.5 s $0.0000 → m → None"


def test_a_version_kind_is_named_once_and_its_prose_rendered_from_it(tmp_path: Path) -> None:
    from memory.data.versions import VersionKind

    store = MemoryStore(tmp_path).ensure()
    store.save_edit("# Me\n- tea\n", store.read_memory().digest)
    store.save_edit("# Me\n- coffee\n", store.read_memory().digest)
    store.restore(1)
    store.undo(3)
    store.discard_edit("# Me\n- not kept\n")
    versions = store.versions()
    assert [v.kind for v in versions] == [
        VersionKind.EDIT,
        VersionKind.EDIT,
        VersionKind.RESTORE,
        VersionKind.UNDO,
        VersionKind.NOT_KEPT,
    ]
    assert [v.source for v in versions[2:4]] == ["restore of version 1", "undo of version 3"]
    assert VersionKind.of("written by a newer Kept") is VersionKind.OTHER


def test_a_consolidated_paragraph_carries_its_key_and_reads_without_it() -> None:
    """A history paragraph names its session and part, so two devices' histories merge on
    it; readers see the paragraph without it, and an older paragraph is keyed by its text."""
    keyed = format_entry(
        datetime(2026, 11, 29, 9, 5), "Ana said hello.", "20261129-090500-abc123.0-4"
    )
    assert keyed == "[2026-11-29 09:05] Ana said hello. <!-- kept:20261129-090500-abc123.0-4 -->"
    old = "[2026-11-28 08:00] An older paragraph."
    first, second = parse_entries(f"{keyed}\n\n{old}\n", Path("H"))
    assert (first.key, first.body) == (
        "20261129-090500-abc123.0-4",
        "[2026-11-29 09:05] Ana said hello.",
    )
    assert (second.key, second.body) == (old, old)
