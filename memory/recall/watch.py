"""Watching the memory files, so what a user sees follows what is on disk."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path

from memory.data.store import MemoryStore


async def memory_changes(
    store: MemoryStore,
    stop: asyncio.Event | None = None,
) -> AsyncIterator[set[Path]]:
    """Yield the memory files (MEMORY.md, INSTRUCTIONS.md, HISTORY.md, history/*.md) that
    changed.

    An editor's write-and-rename arrives as one batch, so one reload follows one save.
    """
    from watchfiles import awatch

    store.ensure()
    watched = {store.memory_path.name, store.instructions_path.name, store.history_path.name}

    def wanted(_change: object, path: str) -> bool:
        p = Path(path)
        return p.name in watched or (p.parent == store.archive_dir and p.suffix == ".md")

    async for changes in awatch(
        store.root,
        store.archive_dir,
        watch_filter=wanted,
        stop_event=stop,
        debounce=200,
        step=50,
        recursive=False,
    ):
        yield {Path(path) for _, path in changes}
