"""Where the searched files are, newest first: what `memory.recall.search` reads and what
`memory.recall.index` indexes (a module of its own, so that neither imports the other for it)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

from memory.data.layout import Layout

if TYPE_CHECKING:
    from memory.data.store import MemoryStore


# Where the searched files are: the data folder's one layout, for a caller that needs nothing
# else of the store (the command line: importing the store costs more than searching a small
# history). The old name, kept for its callers.
Places = Layout


def _session_day(path: Path) -> str:
    """ "YYYY-MM-DD" from a journal named by its session id (YYYYMMDD-HHMMSS-xxxxxx)."""
    name = path.name
    return f"{name[:4]}-{name[4:6]}-{name[6:8]}" if name[:8].isdigit() else ""


def _journals(folder: Path, *, reverse: bool = False) -> list[str]:
    """The names in `folder` that end in .jsonl, sorted (as its glob would list them; a
    listing is quicker, and thousands of journals are listed per search)."""
    try:
        names = os.listdir(folder)
    except OSError:
        return []
    return sorted((n for n in names if n.endswith(".jsonl")), reverse=reverse)


def searched_files(store: MemoryStore | Layout, since: str = "", until: str = "") -> list[Path]:
    """Newest first: open sessions (live and pending), HISTORY.md, then finished sessions
    and monthly archives by date. Files that cannot hold a line between `since` and
    `until` ("YYYY-MM-DD" or a prefix of it) are left out."""
    open_ = [store.sessions_dir / name for name in _journals(store.sessions_dir, reverse=True)]
    files: list[Path] = [p for p in open_ if not until or _session_day(p)[: len(until)] <= until]
    if store.history_path.exists():
        files.append(store.history_path)
    dated: list[tuple[str, Path]] = []
    for path in store.archive_files():
        month = path.stem  # YYYY-MM, or "undated"
        if (since and month < since[:7]) or (until and month > until[:7]):
            continue
        dated.append((f"{month}-99", path))  # after every session of its month
    done = store.done_dir
    for name in _journals(done):
        day = f"{name[:4]}-{name[4:6]}-{name[6:8]}" if name[:8].isdigit() else ""
        if until and day[: len(until)] > until:
            continue  # begun after `until`: none of its messages is earlier
        dated.append((day + name, done / name))
    dated.sort(reverse=True)
    return files + [path for _, path in dated]
