"""Searching what Kept remembers: HISTORY.md and its archives."""

from __future__ import annotations

import re
from dataclasses import dataclass

from memory.store import HistoryEntry, MemoryStore


@dataclass(frozen=True)
class SearchResult:
    entries: tuple[HistoryEntry, ...]  # newest first
    total: int


def search_history(store: MemoryStore, pattern: str, *, regex: bool = False,
                   ignore_case: bool = True, limit: int = 20) -> SearchResult:
    """History entries matching `pattern`, newest first. Raises re.error on a bad regex."""
    flags = re.IGNORECASE if ignore_case else 0
    matcher = re.compile(pattern if regex else re.escape(pattern), flags)
    found = [e for e in store.all_history_entries() if matcher.search(e.text)]
    found.reverse()
    return SearchResult(tuple(found[:limit]), len(found))


SEARCH_HISTORY_TOOL = {
    "type": "function",
    "function": {
        "name": "search_history",
        "description": "Search the summaries of earlier sessions with the user (one dated "
                       "paragraph per session). Case-insensitive; returns matching "
                       "paragraphs, newest first.",
        "parameters": {
            "type": "object",
            "properties": {"pattern": {"type": "string",
                                       "description": "A word or phrase to look for."}},
            "required": ["pattern"],
        },
    },
}


def run_search_tool(store: MemoryStore, arguments: str, *, max_chars: int = 8_000) -> str:
    """The tool's answer as text for the model; bad arguments get a sentence, not a crash."""
    import json

    try:
        args = json.loads(arguments or "{}")
        pattern = args["pattern"]
        if not isinstance(pattern, str) or not pattern.strip():
            raise ValueError
    except (ValueError, KeyError, TypeError):
        return 'Error: call search_history with {"pattern": "a word or phrase"}.'
    result = search_history(store, pattern.strip())
    if not result.entries:
        return f"No earlier session mentions {pattern.strip()!r}."
    lines, used = [], 0
    for entry in result.entries:
        if used + len(entry.text) > max_chars:
            break
        lines.append(entry.text)
        used += len(entry.text)
    more = result.total - len(lines)
    tail = f"\n({more} older matches not shown; search with a narrower phrase.)" if more else ""
    return "\n\n".join(lines) + tail
