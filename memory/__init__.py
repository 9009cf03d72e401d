"""Kept's memory: files on disk and the consolidation business layer. Never imports Textual."""

from memory.consolidate import (
    Consolidation,
    SavedMemory,
    consolidate,
    consolidate_pending,
    next_retry,
    parse_save_memory,
    recover,
)
from memory.journal import Journal, Segment
from memory.prompt import system_prompt
from memory.session import LiveSession
from memory.settings import MemorySettings, load_memory_settings
from memory.storage import data_dir
from memory.store import HistoryEntry, MemoryStore, MemoryText, Version

__all__ = [
    "Consolidation", "HistoryEntry", "Journal", "LiveSession", "MemorySettings", "MemoryStore",
    "MemoryText", "SavedMemory", "Segment", "Version", "consolidate", "consolidate_pending",
    "data_dir", "load_memory_settings", "next_retry", "parse_save_memory", "recover",
    "system_prompt",
]
