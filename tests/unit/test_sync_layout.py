"""A data folder several machines can share: this machine's device id, each device's own
files, and the upgrade of a folder made before devices had files of their own."""

from __future__ import annotations

import hashlib
import os
import shutil
import tarfile
from collections import Counter
from pathlib import Path

import pytest

from memory.consolidation.review import proposals
from memory.data.device import this_device
from memory.data.layout import Layout
from memory.data.store import MemoryStore
from memory.sessions.browse import list_sessions

FIXTURE = Path(__file__).parent.parent / "fixtures" / "data-before-devices.tar.gz"
# What the fixture holds (made by the Kept before devices, with its own code).
DONE, PENDING, PROPOSED, ACTIVE = (
    "20261202-014610-c169d3",
    "20261202-014610-cb7fc0",
    "20261202-014610-e62c7c",
    "20261202-014610-a5df3e",
)
DERIVED = {"index.pending.json", "index.sessions.json"}  # caches: rebuilt, not kept


def _old_folder(tmp_path: Path) -> Path:
    root = tmp_path / "old"
    root.mkdir()
    with tarfile.open(FIXTURE) as archive:
        archive.extractall(root, filter="data")
    return root


def _contents(root: Path) -> Counter[str]:
    """Every file's bytes (as a digest) but the caches and locks: what must never be lost."""
    found: Counter[str] = Counter()
    for path in root.rglob("*"):
        derived = path.name in DERIVED or path.name == ".scanned"  # the marks' own note
        if path.is_file() and not derived and not path.name.endswith(".lock"):
            found[hashlib.sha256(path.read_bytes()).hexdigest()] += 1
    return found


def test_the_device_id_is_made_once_in_the_machines_state_folder(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.delenv("KEPT_DEVICE")
    monkeypatch.setenv("KEPT_STATE_DIR", str(tmp_path / "state"))
    first = this_device()
    assert first == this_device() == (tmp_path / "state" / "device").read_text().strip()
    assert first.rsplit("-", 1)[1].isalnum() and first == first.lower()
    (tmp_path / "state" / "device").write_text("NOT A NAME!\n")  # damaged: made again
    assert this_device() != first and this_device() == this_device()


def test_a_device_named_in_the_environment_must_be_a_name(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KEPT_DEVICE", "laptop")
    assert this_device() == "laptop"
    monkeypatch.setenv("KEPT_DEVICE", "../etc")
    with pytest.raises(ValueError, match="not a device name Kept can use"):
        this_device()


def test_each_device_writes_its_own_files_and_reads_every_devices_sessions(
    tmp_path: Path,
) -> None:
    laptop = MemoryStore(tmp_path, device="laptop").ensure()
    desk = MemoryStore(tmp_path, device="desk").ensure()
    journal = desk.new_session("m")
    journal.append({"role": "user", "content": "hello from the desk"})
    assert journal.path.parent == tmp_path / "sessions" / "desk"
    assert laptop.versions_dir != desk.versions_dir and laptop.log_path != desk.log_path
    assert laptop.commit_path.parent == tmp_path / "local" / "laptop"
    assert laptop.layout.devices() == ["laptop", "desk"]
    assert laptop.find_session(journal.id).messages[0]["content"] == "hello from the desk"
    assert [s.id for s in list_sessions(laptop)] == [journal.id]
    assert laptop.active_sessions() == []  # the desk's window, not one of the laptop's
    with pytest.raises(ValueError, match="written on desk, so only desk can continue it"):
        from memory.sessions.live import LiveSession

        LiveSession.reopen(laptop, journal.id)


def test_a_folder_from_before_devices_is_upgraded_whole(tmp_path: Path) -> None:
    root = _old_folder(tmp_path)
    before = _contents(root)
    store = MemoryStore(root, device="laptop").ensure()
    assert _contents(root) == before  # every file kept, none doubled
    layout = Layout(root, "laptop")
    for gone in ("versions", "consolidation.jsonl", "health.json", "proposals", "sessions/done"):
        assert not (root / gone).exists(), gone
    assert not any(name in os.listdir(root) for name in DERIVED)
    assert {j.id for j in store.pending_sessions()} == {PENDING, PROPOSED}
    assert [j.id for j in store.active_sessions()] == [ACTIVE]
    assert store.find_session(DONE).path.parent == layout.done_dir
    assert [p.session for p in proposals(store)] == [PROPOSED]
    assert len(store.versions()) == 2 and len(store.instruction_versions()) == 1
    assert len(store.read_log()) == 1 and layout.health_path.read_text() == "{}\n"
    assert "Lives in Lisbon" in store.read_memory().text
    assert {s.id for s in list_sessions(store)} == {DONE, PENDING, PROPOSED, ACTIVE}


@pytest.mark.parametrize("crash_after", range(10))
def test_an_upgrade_killed_after_any_move_is_finished_by_the_next_start(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, crash_after: int
) -> None:
    """Each step is one rename: stopped after any of them, the next start moves the rest,
    and nothing is lost or doubled."""

    root = _old_folder(tmp_path)
    before = _contents(root)
    renames = 0
    real_rename = os.rename

    def rename_then_die(source: str | Path, target: str | Path) -> None:
        nonlocal renames
        if renames == crash_after:
            raise KeyboardInterrupt  # the process dies here: nothing after it runs
        renames += 1
        real_rename(source, target)

    monkeypatch.setattr(os, "rename", rename_then_die)
    try:
        MemoryStore(root, device="laptop").ensure()
    except KeyboardInterrupt:
        pass
    else:
        assert crash_after >= renames == 9  # every move made: there was nothing left to stop
    monkeypatch.setattr(os, "rename", real_rename)
    store = MemoryStore(root, device="laptop").ensure()
    assert _contents(root) == before
    assert {j.id for j in store.pending_sessions()} == {PENDING, PROPOSED}
    assert store.find_session(DONE).state == "consolidated"
    assert len(store.versions()) == 2 and len(store.read_log()) == 1


def test_the_first_command_after_an_update_upgrades_the_folder_and_finds_everything(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """`kept memory grep` reads the sessions without opening the store: the upgrade runs
    before any verb, so an old folder's sessions are found at once."""
    from app.cli.main import main

    root = _old_folder(tmp_path)
    monkeypatch.setenv("KEPT_DATA_DIR", str(root))
    assert main(["memory", "grep", "dentist"]) == 0
    out = capsys.readouterr().out
    assert out.startswith(f"sessions/this-machine/{PENDING}.jsonl:")
    assert not (root / "sessions" / f"{PENDING}.jsonl").exists()


def test_a_session_two_devices_hold_is_consolidated_by_one_of_them(tmp_path: Path) -> None:
    """One data folder copied to two machines, each upgraded on its own: the same pending
    session is under both devices, and only the first in name order saves it."""
    root = _old_folder(tmp_path)
    desk = MemoryStore(root, device="desk").ensure()
    shutil.copytree(desk.sessions_dir, root / "sessions" / "laptop")
    laptop = MemoryStore(root, device="laptop")
    assert {j.id for j in desk.pending_sessions()} == {PENDING, PROPOSED}
    assert laptop.pending_sessions() == []


def test_a_private_session_an_older_kept_left_behind_is_deleted_not_moved(tmp_path: Path) -> None:
    """Its id does not say it is private (ids said so only later): moved, no ignore file
    would keep it from a sync. Off the record means it goes, as at any start."""
    root = _old_folder(tmp_path)
    left = root / "sessions" / "20261101-100000-abcdef.jsonl"
    left.write_text('{"kept":"session","id":"20261101-100000-abcdef","private":true}\n')
    (root / ".sessions.open" / left.stem).touch()
    an_hour_ago = left.stat().st_mtime - 3600  # its window died long ago
    os.utime(left, (an_hour_ago, an_hour_ago))
    MemoryStore(root, device="laptop").ensure()
    assert not list(root.rglob("20261101-100000-abcdef.jsonl"))
