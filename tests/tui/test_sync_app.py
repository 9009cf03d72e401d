"""Sync in the app: a conflict copy merged at start and named in the status bar, lines two
devices changed differently decided with Ctrl+R, and /log saying where sync stands."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from app.screens.change import ChangeDialog
from app.screens.log import LogScreen
from memory import MemoryStore
from memory.sync.gitsync import SyncReport, record_sync
from memory.sync.proposals import propose_sync
from memory.sync.shared import merge_shared
from tests.fakes.provider import FakeProvider
from tests.support import make_app, until


def _desk_wrote(store: MemoryStore, text: str, elsewhere: Path) -> None:
    """The desk's version of MEMORY.md, its folder synced here."""
    desk = MemoryStore(elsewhere, device="desk")
    desk.save_edit(text, desk.read_memory().digest)
    shutil.copytree(desk.layout.device_dir, store.root / "devices" / "desk")


async def test_a_conflict_copy_is_merged_at_start_and_the_status_names_the_device(
    fake: FakeProvider, tmp_path: Path
) -> None:
    app = make_app(fake)
    store = app.store.ensure()
    store.remember("Ana likes tea")
    theirs = "- Ana likes tea\n- Ana moved to Lisbon\n"
    _desk_wrote(store, theirs, tmp_path / "desk")  # its text landed here as a copy
    copy = store.root / "MEMORY.sync-conflict-20261201-101010-ABCDEF1.md"
    copy.write_text(theirs)
    async with app.run_test(size=(100, 30)):
        await until(lambda: not copy.exists(), message="the copy merged")
        await until(
            lambda: str(app.memory_status) == "Memory merged from desk", message="the status"
        )
        assert any("Memory merged with desk's." in n for n in app.notices)
    assert "Ana moved to Lisbon" in store.read_memory().text


async def test_lines_both_devices_changed_are_decided_with_ctrl_r(fake: FakeProvider) -> None:
    app = make_app(fake)
    store = app.store.ensure()
    store.remember("lives in Porto")
    base = store.read_memory()
    store.save_edit(base.text.replace("Porto", "Braga"), base.digest)  # this device's change
    theirs = base.text.replace("Porto", "Lisbon").encode()  # the desk's, of the same line
    merged = merge_shared(store, "MEMORY.md", theirs, base.raw, "desk")
    assert merged.conflicts and "Lisbon" in store.read_memory().text
    propose_sync(store, merged, "desk")
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.press("ctrl+r")
        await until(lambda: isinstance(app.screen, ChangeDialog), message="the choice")
        await pilot.press("t")  # Take desk's
        await until(lambda: "Braga" not in store.read_memory().text, message="their lines")
        assert "MEMORY.md now has desk's lines." in app.notices
    assert store.versions()[-1].describe() == "merged from desk"


async def test_the_log_says_where_sync_stands_only_for_a_folder_that_syncs(
    fake: FakeProvider, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    app = make_app(fake)
    store = app.store.ensure()
    async with app.run_test(size=(100, 40)) as pilot:
        await pilot.press(*"/log", "enter")
        await until(lambda: isinstance(app.screen, LogScreen), message="/log")
        await app.workers.wait_for_complete()  # the sync lines were read, and found empty
        await pilot.pause()
        assert not app.screen.query_one("#sync").display
    remote = tmp_path / "remote.git"
    subprocess.run(["git", "init", "-q", "--bare", str(remote)], check=True)
    subprocess.run(["git", "init", "-q", "-b", "main", str(store.root)], check=True)
    subprocess.run(
        ["git", "-C", str(store.root), "remote", "add", "origin", str(remote)], check=True
    )
    record_sync(store, SyncReport(pushed=True))
    app = make_app(fake)
    async with app.run_test(size=(100, 40)) as pilot:
        await pilot.press(*"/log", "enter")
        await until(
            lambda: app.screen.query("#sync") and app.screen.query_one("#sync").display,
            message="the sync lines",
        )
        shown = str(app.screen.query_one("#sync").render())
        assert f"syncs with {remote}" in shown and "Last sync here:" in shown


async def test_a_change_a_shell_sync_merged_is_named_in_the_status_at_start(
    fake: FakeProvider,
) -> None:
    from memory.data.versions import VersionKind

    app = make_app(fake)
    store = app.store.ensure()
    store.remember("Ana likes tea")
    current = store.read_memory()
    store.save_edit(
        current.text + "- from the desk\n", current.digest, source=VersionKind.SYNCED, via="desk"
    )
    async with app.run_test(size=(100, 30)):
        await until(
            lambda: str(app.memory_status) == "Memory merged from desk", message="the status"
        )
