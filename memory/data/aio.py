"""The store for code on an event loop (the TUI): every call runs off the loop, in a thread
(asyncio.to_thread), by construction: "no blocking I/O on the loop" is not a rule to
remember but the only way in. Each method is the MemoryStore method of the same name."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import TYPE_CHECKING

from memory.data.layout import Layout
from memory.data.memory_file import MemoryText
from memory.data.session_files import SessionScan
from memory.data.store import MemoryStore
from memory.data.versions import Version, VersionKind

if TYPE_CHECKING:
    from catalog.health import HealthBook
    from memory.data.history import HistoryEntry
    from memory.sessions.journal import Journal
    from memory.settings import MemorySettings


class AsyncStore:
    """A MemoryStore for callers on an event loop; where things are (no I/O) is read at once."""

    def __init__(self, store: MemoryStore) -> None:
        self.store = store

    @property
    def layout(self) -> Layout:
        return self.store.layout

    @property
    def root(self) -> Path:
        return self.store.root

    @property
    def settings(self) -> MemorySettings:
        return self.store.settings

    async def ensure(self) -> None:
        await asyncio.to_thread(self.store.ensure)

    # --- MEMORY.md and its versions -----------------------------------------------------------

    async def read_memory(self) -> MemoryText:
        return await asyncio.to_thread(self.store.read_memory)

    async def memory_problem(self) -> str | None:
        return await asyncio.to_thread(self.store.memory_problem)

    async def save_edit(
        self,
        text: str,
        base_digest: str,
        *,
        source: VersionKind = VersionKind.EDIT,
        model: str | None = None,
    ) -> MemoryText | None:
        return await asyncio.to_thread(
            lambda: self.store.save_edit(text, base_digest, source=source, model=model)
        )

    async def discard_edit(self, text: str) -> int:
        return await asyncio.to_thread(self.store.discard_edit, text)

    async def remember(self, line: str, *, via: str | None = None) -> int:
        return await asyncio.to_thread(lambda: self.store.remember(line, via=via))

    async def restore(self, number: int) -> int:
        return await asyncio.to_thread(self.store.restore, number)

    async def undo(self, number: int) -> int:
        return await asyncio.to_thread(self.store.undo, number)

    async def version(self, number: int) -> Version | None:
        return await asyncio.to_thread(self.store.version, number)

    async def version_numbers(self) -> list[int]:
        return await asyncio.to_thread(self.store.version_numbers)

    async def versions(self, numbers: list[int] | None = None) -> list[Version]:
        return await asyncio.to_thread(self.store.versions, numbers)

    async def latest_version(self) -> Version | None:
        return await asyncio.to_thread(self.store.latest_version)

    async def version_text(self, number: int) -> bytes:
        return await asyncio.to_thread(self.store.version_text, number)

    # --- INSTRUCTIONS.md ----------------------------------------------------------------------

    async def read_instructions(self) -> MemoryText:
        return await asyncio.to_thread(self.store.read_instructions)

    async def save_instructions(self, text: str, base_digest: str) -> MemoryText | None:
        return await asyncio.to_thread(self.store.save_instructions, text, base_digest)

    async def keep_instruction_version(self, raw: bytes) -> None:
        await asyncio.to_thread(self.store.keep_instruction_version, raw)

    # --- HISTORY.md ---------------------------------------------------------------------------

    async def history_entries(self) -> list[HistoryEntry]:
        return await asyncio.to_thread(self.store.history_entries)

    async def all_history_entries(self) -> list[HistoryEntry]:
        return await asyncio.to_thread(self.store.all_history_entries)

    async def archive_files(self) -> list[Path]:
        return await asyncio.to_thread(self.store.archive_files)

    # --- sessions -----------------------------------------------------------------------------

    async def find_session(self, session_id: str) -> Journal:
        return await asyncio.to_thread(self.store.find_session, session_id)

    async def discard(self, journal: Journal) -> None:
        await asyncio.to_thread(self.store.discard, journal)

    async def scan_active(self) -> SessionScan:
        return await asyncio.to_thread(self.store.scan_active)

    async def scan_sessions(self) -> SessionScan:
        return await asyncio.to_thread(self.store.scan_sessions)

    async def pending_sessions(self) -> list[Journal]:
        return await asyncio.to_thread(self.store.pending_sessions)

    # --- model health -------------------------------------------------------------------------

    async def health(self) -> HealthBook:
        """The health book (made off the loop); what a walk on the loop observes, the book
        writes from a thread of its own (catalog.health)."""
        return await asyncio.to_thread(self.store.health)
