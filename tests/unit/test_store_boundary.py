"""The store as a boundary: paths from one layout, version kinds stored as tokens (older
records still read), and the journals a look could not read returned with what it found."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from memory import Journal, LiveSession, MemoryStore
from memory.data.layout import Layout
from memory.data.versions import VersionKind
from memory.recall.places import Places, searched_files
from memory.sessions.marks import mark_open
from memory.sessions.pending import scan_pending


def closed_session(store: MemoryStore) -> Journal:
    """A closed session with one message, pending consolidation."""
    journal = store.new_session("gpt-4.1-mini")
    journal.append({"role": "user", "content": "I like tea."})
    journal.mark_pending(close=True)
    return journal


@pytest.fixture
def store() -> MemoryStore:
    return MemoryStore().ensure()


def record(store: MemoryStore, number: int) -> dict[str, object]:
    meta = json.loads((store.versions_dir / f"{number:06d}.json").read_text(encoding="utf-8"))
    assert isinstance(meta, dict)
    return meta


def test_the_store_and_the_search_take_their_paths_from_one_layout(tmp_path: Path) -> None:
    store = MemoryStore(tmp_path / "data")
    layout = Layout(tmp_path / "data")
    assert store.layout == layout
    for name in ("memory_path", "history_path", "sessions_dir", "done_dir", "versions_dir"):
        assert getattr(store, name) == getattr(layout, name)
    assert store.layout.live_lock("abc") == layout.sessions_dir / ".abc.live"
    assert Places(store.root) == layout  # the search's places are the layout itself
    store.ensure().append_history("[2026-11-29 10:00] Talked.")
    assert searched_files(layout) == searched_files(store) == [store.history_path]


def test_a_new_version_stores_its_kind_as_a_token(store: MemoryStore) -> None:
    first = store.remember("I like tea", via="Claude Code")
    second = store.remember("I live in Porto")
    restored = store.restore(first)
    undone = store.undo(restored)
    assert record(store, first)["kind"] == "remembered"
    assert record(store, first)["via"] == "Claude Code"
    assert record(store, restored)["kind"] == "restore" and record(store, restored)["of"] == 1
    assert record(store, undone)["kind"] == "undo" and record(store, undone)["of"] == restored
    assert all("source" not in record(store, n) for n in (first, second, restored, undone))
    # Worded only where it is shown, as it always was.
    assert [v.describe() for v in store.versions()] == [
        "remembered via Claude Code",
        "remembered",
        "restore of version 1",
        "undo of version 3",
    ]
    assert store.versions()[-1].restored == second


def test_a_version_record_in_the_older_wording_still_reads(store: MemoryStore) -> None:
    old: list[dict[str, str | int]] = [
        {"source": "consolidation", "session": "20261120-091500-a1b2c3", "model": "m"},
        {"source": "consolidation, edited by you"},
        {"source": "restore of version 1", "restored": 1},
        {"source": "undo of version 3", "restored": 2},
        {"source": "remembered via Claude Code", "entry": "I like tea"},
        {"source": "your edit, not kept"},
        {"source": "written by a newer Kept"},
    ]
    for number, meta in enumerate(old, start=1):
        (store.versions_dir / f"{number:06d}.md").write_text(f"- v{number}\n")
        meta = {"time": "2026-11-20T09:15:00+00:00", "digest": "", **meta}
        (store.versions_dir / f"{number:06d}.json").write_text(json.dumps(meta))
    versions = store.versions()
    assert [v.kind for v in versions] == [
        VersionKind.CONSOLIDATION,
        VersionKind.REVIEWED,
        VersionKind.RESTORE,
        VersionKind.UNDO,
        VersionKind.REMEMBERED,
        VersionKind.NOT_KEPT,
        VersionKind.OTHER,
    ]
    assert [v.describe() for v in versions] == [str(m["source"]) for m in old]
    assert versions[3].of == 3 and versions[3].restored == 2
    assert versions[4].via == "Claude Code" and versions[4].entry == "I like tea"
    assert store.previous_version(7) == versions[4]  # "not kept" never was MEMORY.md
    # A kind given as words (a write-ahead intent an older Kept left) is kept as its token.
    number = store.save_version(b"- x\n", "consolidation, edited by you", time="t")
    assert record(store, number)["kind"] == "reviewed"


def test_the_journals_a_look_could_not_read_come_back_with_what_it_found(
    store: MemoryStore,
) -> None:
    journal = closed_session(store)
    bad = store.sessions_dir / "20261120-091500-zzzzzz.jsonl"
    bad.mkdir()  # not a file: it cannot be read as a journal
    scan = store.scan_sessions()
    assert [j.id for j in scan.journals] == [journal.id]
    assert list(scan.unreadable) == [bad] and "could not be read" in scan.unreadable[bad]
    pending = scan_pending(store)
    assert [s.id for s in pending.sessions] == [journal.id]
    assert list(pending.unreadable) == [bad]
    mark_open(bad)  # it may be active: the look for the session to resume reads it
    live = LiveSession.resume_or_start(store, "gpt-4.1-mini")
    assert list(live.unreadable) == [bad]
    live.release()


def test_a_refused_write_carries_its_kind_and_facts(store: MemoryStore) -> None:
    from dataclasses import replace

    from memory.data.memory_file import MemoryRefused, Refusal
    from memory.data.versions import NoSuchVersion

    store.settings = replace(store.settings, memory_max_chars=20)
    with pytest.raises(MemoryRefused) as empty:
        store.remember("   ")
    with pytest.raises(MemoryRefused) as over:
        store.remember("a line far longer than twenty characters")
    assert empty.value.kind is Refusal.EMPTY
    assert (over.value.kind, over.value.chars, over.value.budget) == (Refusal.OVER_BUDGET, 43, 20)
    first = store.remember("I like tea")
    store.write_memory("- changed by hand\n")
    with pytest.raises(MemoryRefused) as changed:
        store.undo(first)
    assert (changed.value.kind, changed.value.version) == (Refusal.CHANGED, first)
    with pytest.raises(NoSuchVersion) as missing:
        store.version_text(9)
    assert missing.value.number == 9
    # Until every caller words the kind itself, each says what it said before.
    assert str(over.value) == "MEMORY.md would be 43 characters, over its 20 budget."
    assert isinstance(changed.value, ValueError) and isinstance(missing.value, LookupError)
