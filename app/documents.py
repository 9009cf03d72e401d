"""The files /memory edits, MEMORY.md and INSTRUCTIONS.md, behind one protocol: the screen
reads, saves and keeps an edit aside the same way for both, and asks the file for what
differs (its name, its tab, how the store saves it). Every call goes through the async
store: it runs off the event loop."""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

from memory.data.aio import AsyncStore

if TYPE_CHECKING:
    from pathlib import Path

    from app.main import KeptApp
    from memory import MemoryText


def async_store(app: KeptApp) -> AsyncStore:
    """The App's store for code on the event loop (a thin wrapper: made at each call)."""
    return AsyncStore(app.store)


class EditableDocument(Protocol):
    """A file of the data folder the user edits in /memory."""

    @property
    def name(self) -> str:
        """The file's name, as the screen says it: "MEMORY.md"."""
        ...

    @property
    def tab(self) -> str:
        """The id of the /memory tab that shows it, and of the view there."""
        ...

    @property
    def path(self) -> Path:
        """Where it is: a change on disk there is a change under the edit."""
        ...

    async def read(self) -> MemoryText:
        """The text as it is on disk; an OSError says why it cannot be read."""
        ...

    async def save(self, text: str, base: MemoryText) -> MemoryText | None:
        """Save an edit of `base`: None when saved (the previous text kept as a version),
        else the text now on disk, nothing written (the user chooses)."""
        ...

    async def keep(self, text: str) -> None:
        """Keep an edit the user chose not to save as a version: nothing typed is lost."""
        ...


class MemoryDocument:
    """MEMORY.md: an edit is a version of it, as a consolidation's is."""

    name = "MEMORY.md"
    tab = "memory-tab"

    def __init__(self, store: AsyncStore) -> None:
        self._store = store

    @property
    def path(self) -> Path:
        return self._store.layout.memory_path

    async def read(self) -> MemoryText:
        return await self._store.read_memory()

    async def save(self, text: str, base: MemoryText) -> MemoryText | None:
        return await self._store.save_edit(text, base.digest)

    async def keep(self, text: str) -> None:
        await self._store.discard_edit(text)


class InstructionsDocument:
    """INSTRUCTIONS.md: what Kept should always do; its versions are its own."""

    name = "INSTRUCTIONS.md"
    tab = "instructions-tab"

    def __init__(self, store: AsyncStore) -> None:
        self._store = store

    @property
    def path(self) -> Path:
        return self._store.layout.instructions_path

    async def read(self) -> MemoryText:
        return await self._store.read_instructions()

    async def save(self, text: str, base: MemoryText) -> MemoryText | None:
        return await self._store.save_instructions(text, base.digest)

    async def keep(self, text: str) -> None:
        await self._store.keep_instruction_version(text.encode("utf-8"))
