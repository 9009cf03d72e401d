"""Kept's memory: files on disk and the consolidation business layer. Never imports Textual."""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

# Names load on first use (PEP 562), so importing a part of this package never pays
# for the rest of it: the app's first screen needs only a few of them.
_WHERE = {
    "Consolidation": "memory.consolidation.run",
    "HistoryEntry": "memory.data.history",
    "Journal": "memory.sessions.journal",
    "LiveSession": "memory.sessions.live",
    "MemorySettings": "memory.settings",
    "MemoryStore": "memory.data.store",
    "MemoryText": "memory.data.store",
    "SavedMemory": "memory.consolidation.reply",
    "Segment": "memory.sessions.journal",
    "Version": "memory.data.store",
    "consolidate": "memory.consolidation.run",
    "consolidate_pending": "memory.consolidation.run",
    "data_dir": "memory.data.files",
    "next_retry": "memory.consolidation.run",
    "parse_save_memory": "memory.consolidation.reply",
    "recover": "memory.consolidation.commit",
    "system_prompt": "memory.chat.system_prompt",
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
    from memory.chat.system_prompt import system_prompt
    from memory.consolidation.commit import recover
    from memory.consolidation.reply import SavedMemory, parse_save_memory
    from memory.consolidation.run import (
        Consolidation,
        consolidate,
        consolidate_pending,
        next_retry,
    )
    from memory.data.files import data_dir
    from memory.data.history import HistoryEntry
    from memory.data.store import MemoryStore, MemoryText, Version
    from memory.sessions.journal import Journal, Segment
    from memory.sessions.live import LiveSession
    from memory.settings import MemorySettings


def __getattr__(name: str) -> Any:
    try:
        module = _WHERE[name]
    except KeyError:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}") from None
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value
