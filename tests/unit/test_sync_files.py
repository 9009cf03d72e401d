"""One data folder carried by a file-sync tool (Syncthing, Dropbox, Nextcloud): two machines
work, the tool copies and makes conflict copies, Kept merges them; nothing is lost."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from memory.sync.copies import find_copies
from memory.sync.copies_merge import merge_copies
from memory.sync.ignore import write_ignore_files
from tests.filesync import FileSync, ignored
from tests.sync_world import Machine, act, check, consolidate, machine


def _settle(sim: FileSync, machines: list[Machine]) -> None:
    """Sync and merge until neither side has a copy left and both agree."""
    for _ in range(8):
        sim.sync()
        for m in machines:
            merge_copies(m.store)
        sim.sync()
        if not any(find_copies(m.store.root) for m in machines):
            return
    raise AssertionError("conflict copies kept coming back")


@pytest.mark.parametrize("seed", [3, 2026, 99991])
def test_random_work_through_a_file_sync_tool_loses_nothing(tmp_path: Path, seed: int) -> None:
    rng = random.Random(seed)
    laptop, desk = machine(tmp_path / "a", "laptop"), machine(tmp_path / "b", "desk")
    machines = [laptop, desk]
    for m in machines:  # as the app does when it starts
        write_ignore_files(m.store.layout)
    sim = FileSync(laptop.store.root, desk.store.root, rng)
    for n in range(40):
        choice = rng.random()
        if choice < 0.25:
            sim.sync()
        elif choice < 0.4:
            merge_copies(rng.choice(machines).store)  # the app's look, each minute
        else:
            act(rng, rng.choice(machines), n)
    _settle(sim, machines)
    check(machines)
    assert sim.conflicts, "the rounds made no conflict copy: they test nothing"
    assert laptop.store.read_memory().text == desk.store.read_memory().text


def test_a_conflict_copy_of_memory_is_merged_then_removed(tmp_path: Path) -> None:
    laptop, desk = machine(tmp_path / "a", "laptop"), machine(tmp_path / "b", "desk")
    sim = FileSync(laptop.store.root, desk.store.root, random.Random(1))
    consolidate(laptop, 1)
    sim.sync()
    consolidate(laptop, 2)
    consolidate(desk, 3)
    sim.sync()
    copies = find_copies(laptop.store.root)
    assert {c.original.name for c in copies} == {"MEMORY.md", "HISTORY.md"}
    assert {c.tool for c in copies} == {"Syncthing"}
    done = merge_copies(laptop.store)
    assert done.merged and find_copies(laptop.store.root) == []
    text = laptop.store.read_memory().text
    assert "fact 2 from laptop" in text and "fact 3 from desk" in text
    # MEMORY.md's copy is named by the versions that hold its text; HISTORY.md has none.
    sources = dict(zip((m.relative for m in done.merged), done.sources, strict=True))
    assert sources["MEMORY.md"] in ("desk", "laptop")
    entries = {e.body for e in laptop.store.all_history_entries()}
    assert {e.split("] ", 1)[1] for e in entries} == {
        "laptop talked about topic 1.",
        "laptop talked about topic 2.",
        "desk talked about topic 3.",
    }


def test_the_ignore_files_keep_per_machine_files_out_and_the_users_lines_in(
    tmp_path: Path,
) -> None:
    store = machine(tmp_path, "laptop").store
    (tmp_path / ".stignore").write_text("// mine\nmy-notes/\n")
    written = write_ignore_files(store.layout)
    assert {p.name for p in written} == {".gitignore", ".stignore"}
    assert write_ignore_files(store.layout) == []  # up to date: nothing written again
    stignore = (tmp_path / ".stignore").read_text()
    assert stignore.startswith("// mine\nmy-notes/\n") and "/local/" in stignore
    assert "/sessions/*/*-private-*" in (tmp_path / ".gitignore").read_text()
    assert ignored("local/laptop/health.json") and ignored("sessions/laptop/.x.live")
    assert ignored("sessions/laptop/20261201-101010-private-abcdef.jsonl")
    assert not ignored("sessions/laptop/20261201-101010-abcdef.jsonl")
    assert not ignored("MEMORY.md") and not ignored("devices/laptop/versions/000001.md")
