"""Kept's memory: files on disk and the consolidation business layer. Never imports Textual."""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

# Names load on first use (PEP 562), so importing a part of this package never pays
# for the rest of it: the app's first screen needs only a few of them.
_WHERE = {
    "Consolidation": "memory.consolidation",
    "HistoryEntry": "memory.history",
    "Journal": "memory.journal",
    "LiveSession": "memory.session",
    "MemorySettings": "memory.settings",
    "MemoryStore": "memory.store",
    "MemoryText": "memory.store",
    "SavedMemory": "memory.save_memory",
    "Segment": "memory.journal",
    "Version": "memory.store",
    "consolidate": "memory.consolidation",
    "consolidate_pending": "memory.consolidation",
    "data_dir": "memory.files",
    "next_retry": "memory.consolidation",
    "parse_save_memory": "memory.save_memory",
    "recover": "memory.commit",
    "system_prompt": "memory.prompt",
}
__all__ = [
    "Consolidation",
    "HistoryEntry",
    "Journal",
    "LiveSession",
    "MemorySettings",
    "MemoryStore",
    "MemoryText",
    "SavedMemory",
    "Segment",
    "Version",
    "consolidate",
    "consolidate_pending",
    "data_dir",
    "next_retry",
    "parse_save_memory",
    "recover",
    "system_prompt",
]

if TYPE_CHECKING:
    from memory.commit import recover
    from memory.consolidation import (
        Consolidation,
        consolidate,
        consolidate_pending,
        next_retry,
    )
    from memory.files import data_dir
    from memory.history import HistoryEntry
    from memory.journal import Journal, Segment
    from memory.prompt import system_prompt
    from memory.save_memory import SavedMemory, parse_save_memory
    from memory.session import LiveSession
    from memory.settings import MemorySettings
    from memory.store import MemoryStore, MemoryText, Version


def __getattr__(name: str) -> Any:
    try:
        module = _WHERE[name]
    except KeyError:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}") from None
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value
