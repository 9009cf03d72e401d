"""Conflict copies: the names Syncthing, Dropbox, Nextcloud, ownCloud and iCloud give them."""

from __future__ import annotations

import os
from fnmatch import fnmatch
from pathlib import Path

import pytest

from memory.sync.copies import COPY_GLOBS, ConflictCopy, find_copies

COPIES = [
    ("MEMORY.sync-conflict-20261201-123456-ABCDEF7.md", "MEMORY.md", "Syncthing"),
    ("HISTORY.sync-conflict-20261201-123456.md", "HISTORY.md", "Syncthing"),
    (
        "MEMORY.sync-conflict-20261201-123456-ABCDEF7.sync-conflict-20261202-000001-XYZ1234.md",
        "MEMORY.md",
        "Syncthing",
    ),
    ("MEMORY (Alice's conflicted copy 2026-12-01).md", "MEMORY.md", "Dropbox"),
    ("MEMORY (Alice's conflicted copy 2026-12-01) (1).md", "MEMORY.md", "Dropbox"),
    ("MEMORY (Alice's conflicted copy 2026-12-01 (2)).md", "MEMORY.md", "Dropbox"),
    ("INSTRUCTIONS (conflicted copy 2026-12-01).md", "INSTRUCTIONS.md", "Dropbox"),
    ("MEMORY (Zoë’s MacBook's conflicted copy 2026-12-01).md", "MEMORY.md", "Dropbox"),
    ("MEMORY (conflicted copy 2026-12-01 123456).md", "MEMORY.md", "Nextcloud"),
    ("HISTORY (conflicted copy alice 2026-12-01 123456).md", "HISTORY.md", "Nextcloud"),
    ("MEMORY_conflict-20261201-123456.md", "MEMORY.md", "ownCloud"),
    ("INSTRUCTIONS_conflict-alice-20261201-123456.md", "INSTRUCTIONS.md", "ownCloud"),
    ("MEMORY 2.md", "MEMORY.md", "iCloud"),
    ("HISTORY 13.md", "HISTORY.md", "iCloud"),
]


def touch(path: Path, mtime: int) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("- a fact\n", encoding="utf-8")
    os.utime(path, ns=(mtime, mtime))
    return path


@pytest.mark.parametrize(("name", "original", "tool"), COPIES)
def test_each_tools_copy_is_found_with_its_original(
    tmp_path: Path, name: str, original: str, tool: str
) -> None:
    touch(tmp_path / original, 1)
    copy = touch(tmp_path / name, 2)
    assert find_copies(tmp_path) == [ConflictCopy(copy, tmp_path / original, tool)]


@pytest.mark.parametrize(
    "name",
    [
        "MEMORY.md",
        "MEMORY.md.tmp",
        "MEMORY.md.20261201-123456.orig",
        "notes.md",
        "notes.sync-conflict-20261201-123456-ABCDEF7.md",
        "notes (Alice's conflicted copy 2026-12-01).md",
        "notes 2.md",
        "MEMORY 2.txt",
        "MEMORY 2 2.md",
        "MEMORY 1.md",
        "MEMORY 100.md",
        "memory 2.md",
        "MEMORY.sync-conflict-2026-12-01.md",
        "MEMORY (conflicted copy).md",
        "MEMORY_conflict.md",
        "MEMORY.sync-conflict-20261201-123456-ABCDEF7.md.tmp",
        ".MEMORY.md.swp",
    ],
)
def test_other_files_are_not_copies(tmp_path: Path, name: str) -> None:
    touch(tmp_path / name, 1)
    assert find_copies(tmp_path) == []


def test_a_copy_of_an_archived_month_maps_to_that_month(tmp_path: Path) -> None:
    month = tmp_path / "history" / "2026-11.md"
    touch(month, 1)
    syncthing = touch(month.with_name("2026-11.sync-conflict-20261201-123456-ABCDEF7.md"), 2)
    icloud = touch(month.with_name("2026-11 2.md"), 3)
    touch(month.with_name("MEMORY 2.md"), 4)  # MEMORY.md is not an archive
    touch(tmp_path / "2026-11 2.md", 5)  # nor is a month at the top
    assert find_copies(tmp_path) == [
        ConflictCopy(syncthing, month, "Syncthing"),
        ConflictCopy(icloud, month, "iCloud"),
    ]


def test_copies_come_oldest_first_then_by_name(tmp_path: Path) -> None:
    newest = touch(tmp_path / "MEMORY 2.md", 3_000_000_000)
    tie_b = touch(tmp_path / "MEMORY_conflict-20261201-123456.md", 2_000_000_000)
    tie_a = touch(tmp_path / "HISTORY 2.md", 2_000_000_000)
    oldest = touch(tmp_path / "history" / "2026-10 2.md", 1_000_000_000)
    found = [c.path for c in find_copies(tmp_path)]
    assert found == [oldest, tie_a, tie_b, newest]


def test_unicode_in_a_copys_name(tmp_path: Path) -> None:
    names = [
        "MEMORY (José Müller's conflicted copy 2026-12-01).md",
        "MEMORY (conflicted copy 山田 2026-12-01 123456).md",
        "MEMORY_conflict-zoë-20261201-123456.md",
    ]
    for mtime, name in enumerate(names):
        touch(tmp_path / name, mtime)
    found = find_copies(tmp_path)
    assert [c.path.name for c in found] == names
    assert {c.original for c in found} == {tmp_path / "MEMORY.md"}


def test_a_missing_folder_has_no_copies(tmp_path: Path) -> None:
    assert find_copies(tmp_path / "nowhere") == []
    touch(tmp_path / "a-file", 1)
    assert find_copies(tmp_path / "a-file") == []


def test_folders_named_like_copies_are_not_copies(tmp_path: Path) -> None:
    (tmp_path / "MEMORY 2.md").mkdir()
    (tmp_path / "history").mkdir()
    (tmp_path / "history" / "2026-11 2.md").mkdir()
    assert find_copies(tmp_path) == []


def test_the_globs_match_every_copy_but_icloud_and_no_original() -> None:
    for name, _, tool in COPIES:
        matched = any(fnmatch(name, glob) for glob in COPY_GLOBS)
        assert matched == (tool != "iCloud"), name
    for name in ("MEMORY.md", "INSTRUCTIONS.md", "HISTORY.md", "2026-11.md"):
        assert not any(fnmatch(name, glob) for glob in COPY_GLOBS)
