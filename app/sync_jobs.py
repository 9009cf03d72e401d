"""Sync in the app: a sync tool's conflict copies merged when they appear (looked for at
start and every minute), and `kept sync` after each saved consolidation when
`[memory] sync_after_consolidation` is on. What came from another device is said once, and
the status bar names the device."""

from __future__ import annotations

import asyncio
import contextlib
from typing import TYPE_CHECKING

from memory.data.versions import VersionKind

if TYPE_CHECKING:
    from app.main import KeptApp
    from memory.sync.copies_merge import CopiesMerged
    from memory.sync.gitsync import SyncReport


class SyncJobs:
    def __init__(self, app: KeptApp) -> None:
        self.app = app
        self.came_from = ""  # the device the last change from elsewhere came from
        self._first = True

    def _say(self, message: str, severity: str = "information") -> None:
        self.app.notify(message, title="Sync", severity=severity, timeout=10, markup=False)  # type: ignore[arg-type]

    def look(self) -> None:
        """Merge the conflict copies a sync tool left, if any (a listing when there are none)."""
        self.app.run_worker(self._look(), group="sync-copies", exclusive=True, exit_on_error=False)

    async def _look(self) -> None:
        from memory.sync.copies_merge import merge_copies

        if self._first:  # a `kept sync` in a shell merged another device's change last
            self._first = False
            from memory.sync.ignore import write_ignore_files

            with contextlib.suppress(OSError):  # a folder Kept may not write: said elsewhere
                await asyncio.to_thread(write_ignore_files, self.app.store.layout)
            latest = await asyncio.to_thread(self.app.store.latest_version)
            if latest is not None and latest.kind is VersionKind.SYNCED:
                self.came_from = latest.via or "another device"
                self.app.jobs.came_from(self.came_from)

        try:
            done: CopiesMerged = await asyncio.to_thread(merge_copies, self.app.store)
        except OSError as exc:
            self._say(
                f"A conflict copy could not be merged: {exc}. It stays; nothing is lost.", "warning"
            )
            return
        for sentence in done.unreadable:
            self._say(sentence, "warning")
        if done.merged:
            self._came(", ".join(dict.fromkeys(done.sources)), done.proposals)

    def after_save(self) -> None:
        if self.app.store.settings.sync_after_consolidation:
            self.app.run_worker(self._sync(), group="sync", exclusive=True, exit_on_error=False)

    async def _sync(self) -> None:
        from memory.sync.git import GitError, GitFailure, Repo
        from memory.sync.gitsync import SyncBusy, record_sync, sync

        store = self.app.store
        try:
            if not await asyncio.to_thread(Repo(store.root).is_repo):
                return
            report: SyncReport = await asyncio.to_thread(sync, store)
        except SyncBusy:
            return  # the other sync carries this change too
        except GitError as exc:
            if exc.kind is not GitFailure.NOT_A_REPO:
                await asyncio.to_thread(record_sync, store, None, str(exc))
                self._say(f"Not synced: {exc} The next sync catches up.", "warning")
            return
        if report.shared:
            self._came(", ".join(sorted(report.devices)) or "another device", report.proposals)

    def _came(self, source: str, proposals: int) -> None:
        self.came_from = source
        held = (
            f" {proposals} change{'s' if proposals != 1 else ''} both made to the same lines "
            "wait for you: Ctrl+R."
            if proposals
            else ""
        )
        self._say(f"Memory merged with {source}'s.{held}")
        self.app.jobs.came_from(source)
