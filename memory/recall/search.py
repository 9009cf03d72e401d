"""Searching what Kept remembers: HISTORY.md, its archives, and every session's journal
(live, pending and finished), newest first; and the `search_history` tool a chat model uses.

The rooms of a search: what is looked for and found (memory.recall.pattern), which files
(memory.recall.places), which of them the trigram index rules out unread
(memory.recall.index), the scan of the others (memory.recall.scan, exact by construction),
and a regular expression's child process (memory.recall.child), which can be stopped.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from memory.recall.child import grep_in_child
from memory.recall.pattern import Match as Match  # re-exported: callers know them from here
from memory.recall.pattern import Pattern as Pattern
from memory.recall.pattern import Route as Route
from memory.recall.pattern import Scope as Scope
from memory.recall.places import Places as Places
from memory.recall.places import searched_files as searched_files
from memory.recall.scan import scan

if TYPE_CHECKING:  # not imported at run time: `kept memory grep` loads only what it needs
    from memory.data.history import HistoryEntry
    from memory.data.store import MemoryStore

REGEX_SECONDS = 30.0  # a regular expression's whole search, at most


def grep(
    store: MemoryStore | Places,
    pattern: Pattern,
    scope: Scope | None = None,
    *,
    errors: list[str] | None = None,
    seconds: float | None = None,
    cancelled: Callable[[], bool] | None = None,
    route: Route | None = None,
) -> Iterator[Match]:
    """Every line of history, and every message of a session, that matches: newest first
    (files by date, the last line of each first), within `scope`.

    A regular expression is searched in a child process, stopped after `seconds`
    (REGEX_SECONDS by default) or as soon as `cancelled()` says so; a search stopped for
    its time is said in `errors`, in a sentence.

    A literal asks the search index (memory.recall.index) which files cannot hold it, and reads
    only the others; `route` is told how that went once every file is searched. When many
    files are not in the index, a background process is started to index them."""
    scope = scope or Scope()
    if pattern.regex:
        limit = REGEX_SECONDS if seconds is None else seconds
        yield from grep_in_child(
            store, pattern, scope, seconds=limit, cancelled=cancelled, errors=errors
        )
        return
    files = searched_files(store, scope.since, scope.until)
    judge = None
    needles = pattern.trigrams()
    if needles is not None:
        from memory.recall.index import Judge

        judge = Judge(store.root, needles)
    skip = judge.rules_out if judge is not None else None
    yield from scan(store, pattern, scope, errors, files, skip)
    if route is not None and judge is not None:
        route.skipped, route.ready = judge.skipped, judge.ready


@dataclass(frozen=True)
class SearchResult:
    entries: tuple[HistoryEntry, ...]  # newest first
    total: int
    messages: tuple[Match, ...] = ()  # said in a session's transcript, newest first
    total_messages: int = 0


def search_history(
    store: MemoryStore,
    pattern: str,
    *,
    regex: bool = False,
    ignore_case: bool = True,
    limit: int = 20,
    exclude: tuple[str, ...] = (),
) -> SearchResult:
    """History entries, and messages of past sessions (not those in `exclude`), matching
    `pattern`, newest first. Raises re.error on a bad regex."""
    flags = re.IGNORECASE if ignore_case else 0
    matcher = re.compile(pattern if regex else re.escape(pattern), flags)
    found = [
        e for e in _history_entries(store, pattern, regex, ignore_case) if matcher.search(e.text)
    ]
    found.reverse()
    compiled = Pattern(pattern, regex=regex, ignore_case=ignore_case)
    messages: list[Match] = []
    total = 0
    for match in grep(store, compiled, Scope(exclude=exclude)):
        if match.role is None:
            continue
        total += 1
        if len(messages) < limit:
            messages.append(match)
    return SearchResult(tuple(found[:limit]), len(found), tuple(messages), total)


def _history_entries(
    store: MemoryStore, pattern: str, regex: bool, ignore_case: bool
) -> list[HistoryEntry]:
    """Every history entry, oldest first, less those in files the search index rules out
    for a literal (an entry is matched with re, so its case rules are the index's too)."""
    from memory.recall import index

    grams = [] if regex else index.trigrams(pattern, unicode_case=ignore_case)
    paths = [*store.archive_files(), store.history_path]
    skip = index.lookup(store.root, paths, {".md": grams}).skip if grams else frozenset()
    if not skip:
        return store.all_history_entries()
    from memory.data.files import read_text
    from memory.data.history import parse_entries

    return [e for p in paths if p not in skip for e in parse_entries(read_text(p)[0], p)]


SEARCH_HISTORY_TOOL = {
    "type": "function",
    "function": {
        "name": "search_history",
        "description": "Search earlier sessions with the user: the summaries (one dated "
        "paragraph per session) and every word said in them. "
        "Case-insensitive; returns matching paragraphs and messages (session, "
        "date, who said it), newest first.",
        "parameters": {
            "type": "object",
            "properties": {
                "pattern": {"type": "string", "description": "A word or phrase to look for."}
            },
            "required": ["pattern"],
        },
    },
}


def describe_message(match: Match, width: int = 300) -> str:
    """A transcript hit in one line: date, session, who, and the line that matched."""
    text = match.text if len(match.text) <= width else match.text[:width] + "…"
    return f"[{match.stamp or '?'}] session {match.session}, {match.role}: {text}"


def run_search_tool(
    store: MemoryStore, arguments: str, *, max_chars: int = 8_000, exclude: tuple[str, ...] = ()
) -> str:
    """The tool's answer as text for the model; bad arguments get a sentence, not a crash.
    `exclude` leaves out the session being answered (it would only find the question)."""
    try:
        args = json.loads(arguments or "{}")
        pattern = args["pattern"]
        if not isinstance(pattern, str) or not pattern.strip():
            raise ValueError
    except (ValueError, KeyError, TypeError):
        return 'Error: call search_history with {"pattern": "a word or phrase"}.'
    from memory.consolidation.redact import redact

    result = search_history(store, pattern.strip(), exclude=exclude)
    if not result.entries and not result.messages:
        return f"No earlier session mentions {redact(pattern.strip())!r}."
    # Whichever provider asks, a credential said in an earlier session does not reach it:
    # each text is redacted whole, before it is cut to fit.
    lines, used = [], 0
    for entry in result.entries:
        text = redact(entry.body)
        if used + len(text) > max_chars // 2:
            break
        lines.append(text)
        used += len(text)
    more = result.total - len(lines)
    tail = (
        f"\n({more} older matching summaries not shown; search with a narrower phrase.)"
        if more
        else ""
    )
    said: list[str] = []
    for match in result.messages:
        line = describe_message(replace(match, text=redact(match.text)))
        if used + len(line) > max_chars:
            break
        said.append(line)
        used += len(line)
    if said:
        more_said = result.total_messages - len(said)
        tail += (
            "\n\nSaid in earlier sessions:\n"
            + "\n".join(said)
            + (f"\n({more_said} older messages not shown.)" if more_said else "")
        )
    return ("\n\n".join(lines) + tail).strip()
