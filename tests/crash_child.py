"""One memory commit in a process of its own, so a test can `kill -9` it at any instant.

    python tests/crash_child.py DATA_DIR

Builds a data folder in DATA_DIR (a 12 KB MEMORY.md the user edited since the last
version, two old versions, a long HISTORY.md with a hand-written heading, monthly archives
and one closed, pending session), then prints

    SESSION <id>
    READY             <- flushed right before commit() is called
    DONE <seconds>    <- only when commit() returned (seconds: how long it took)

and calls `memory.consolidation.commit.commit` directly: no catalog, no model, no network.

`history_window_chars` is small, so the commit also rolls dozens of entries from HISTORY.md
into four history/YYYY-MM.md archives: a dozen atomic writes, two dozen fsyncs in all.

From READY on, the disk is made slow (`slow_disk`): every fsync takes half a millisecond
more and every os.write() writes at most 4 KiB, then pauses. Nothing is reordered and short
writes are legal (atomic_write loops on them); it only widens every window between two
steps of the commit to half a millisecond or more, so random kills land in each of them,
not just in the slowest ones.

The test imports this module for the expected texts (OLD_MEMORY, NEW_MEMORY, ENTRY, ...);
`build()` is deterministic except for the session id and the journal's timestamps.
"""

from __future__ import annotations

import os
import sys
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING

if __name__ == "__main__":  # run as a script: make the repository importable
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from memory.consolidation.commit import commit
from memory.consolidation.reply import SavedMemory
from memory.data.store import MemoryStore
from memory.sessions.journal import Segment
from memory.sessions.live import LiveSession
from memory.settings import MemorySettings

if TYPE_CHECKING:
    from _typeshed import FileDescriptorLike, ReadableBuffer

SETTINGS = MemorySettings(history_window_chars=3_000)
MODEL = "test-model"
WHEN = datetime(2026, 3, 14, 15, 9, tzinfo=UTC)
HISTORY_ENTRY = (
    "Crash test: the user asked how Kept survives kill -9 in the middle of a save; "
    "we walked through commit.json, atomic renames and recovery at start."
)
ENTRY = "[2026-03-14 15:09] " + HISTORY_ENTRY  # what format_entry(WHEN, HISTORY_ENTRY) gives

PREAMBLE = "# My history\n\nNotes I keep by hand; Kept leaves this heading alone.\n\n"

TOPICS = (
    "the garden shed roof",
    "Zoë's birthday present",
    "a Rust borrow-checker puzzle",
    "the trip to Zürich",
    "tax paperwork",
    "sourdough hydration",
    "the café playlist",
    "a flaky CI job",
    "learning Portuguese verbs",
    "the bike's rear derailleur",
)


def _memory(version: str, sections: int) -> str:
    lines = [f"# About the user ({version})", ""]
    for n in range(sections):
        topic = TOPICS[n % len(TOPICS)]
        lines += [
            f"## Fact group {n}: {topic}",
            "",
            f"- Cares about {topic}; mentioned it in session {n} — keep it (ça va).",
            f"- Preference {n}: short answers, metric units, dates as YYYY-MM-DD.",
            f"- Open item {n}: follow up on {topic} next time it comes up.",
            "",
        ]
    return "\n".join(lines)


OLD_MEMORY = _memory("edited by hand", 45)  # 12 KB, never seen by Kept's versions
NEW_MEMORY = (
    _memory("after the crash-test session", 50)
    + "\n## Crash safety\n\n- Knows that Kept writes ahead to commit.json.\n"
)
OLD_VERSIONS = (_memory("version one", 10), _memory("version two", 20))


def _entry(month: int, day: int, n: int) -> str:
    topic = TOPICS[n % len(TOPICS)]
    text = (
        f"[2025-{month:02d}-{day:02d} {8 + n % 12:02d}:{n % 60:02d}] Session {n} — talked "
        f"about {topic}; decided to revisit it, noted two open questions and a link."
    )
    if n % 7 == 0:  # a paragraph the user wrapped by hand
        text += f"\nA second line the user added to entry {n}."
    return text


def _entries() -> list[tuple[int, str]]:
    """(month, paragraph) for 2025-01 .. 2025-09, oldest first, all distinct."""
    out, n = [], 0
    for month in range(1, 10):
        for day in range(1, 29, 1 if month >= 6 else 2):
            out.append((month, _entry(month, day, n)))
            n += 1
    return out


def history_layout() -> tuple[dict[str, list[str]], list[str]]:
    """Archived entries by month (2025-01 .. the first half of 2025-06) and HISTORY.md's."""
    archives: dict[str, list[str]] = {}
    current: list[str] = []
    for month, paragraph in _entries():
        if month < 6 or (month == 6 and len(archives.get("2025-06", [])) < 10):
            archives.setdefault(f"2025-{month:02d}", []).append(paragraph)
        else:
            current.append(paragraph)
    return archives, current


def build(root: Path) -> tuple[MemoryStore, str, Segment]:
    store = MemoryStore(root, SETTINGS).ensure()
    archives, current = history_layout()
    for month, paragraphs in archives.items():
        body = "".join(f"{p}\n\n" for p in paragraphs)
        if month == "2025-06":  # hand-edited: no blank line at the end
            body = body.rstrip("\n") + "\n"
        (store.archive_dir / f"{month}.md").write_text(body, encoding="utf-8")
    store.history_path.write_text(PREAMBLE + "".join(f"{p}\n\n" for p in current), encoding="utf-8")
    for number, text in enumerate(OLD_VERSIONS, start=1):
        store.save_version(
            text.encode(),
            "consolidation",
            time="2025-01-01T00:00:00+00:00",
            session=f"old-{number}",
            model=MODEL,
        )
    store.memory_path.write_text(OLD_MEMORY, encoding="utf-8")

    live = LiveSession.resume_or_start(store, MODEL)
    live.append({"role": "user", "content": "What happens if you are killed mid-save?"})
    live.append({"role": "assistant", "content": "The save is completed at the next start."})
    live.append({"role": "user", "content": "Prove it."})
    segment = live.close()
    assert segment is not None
    return store, live.id, segment


def slow_disk(pause: float = 0.0005, piece: int = 4096) -> None:
    """Make this process's disk slow: see the module docstring."""
    fsync, write = os.fsync, os.write

    def slow_fsync(fd: FileDescriptorLike) -> None:
        fsync(fd)
        time.sleep(pause)

    def slow_write(fd: int, data: ReadableBuffer) -> int:
        written = write(fd, memoryview(data)[:piece])
        time.sleep(pause)
        return written

    os.fsync, os.write = slow_fsync, slow_write


def main(argv: list[str]) -> int:
    store, session_id, segment = build(Path(argv[1]))
    journal = store.find_session(session_id)
    saved = SavedMemory(HISTORY_ENTRY, NEW_MEMORY)
    base = store.read_memory()
    print(f"SESSION {session_id}", flush=True)
    slow_disk()
    print("READY", flush=True)
    started = time.perf_counter()
    ok = commit(store, journal, segment, saved, base=base, model=MODEL, when=WHEN)
    elapsed = time.perf_counter() - started
    print(f"DONE {elapsed:.6f}" if ok else "REFUSED", flush=True)
    return 0 if ok else 3


if __name__ == "__main__":
    sys.exit(main(sys.argv))
