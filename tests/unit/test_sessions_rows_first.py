"""/sessions at scale: the rows are read, shown, and only then is the list's cache (some
3 MB of JSON at 10,000 sessions) written, and only when it changed."""

from __future__ import annotations

import json

from memory import MemoryStore
from memory.sessions.browse import INDEX, list_sessions, read_sessions
from tests.support import pending_session


def test_the_rows_come_before_the_list_cache_is_written() -> None:
    store = MemoryStore().ensure()
    pending_session(store, [{"role": "user", "content": "Bikes in Lisbon"}])
    index = store.layout.local_dir / INDEX
    rows, save = read_sessions(store)
    assert [s.title for s in rows] == ["Bikes in Lisbon"]
    assert not index.exists()  # not yet: the screen shows the rows first
    save()
    assert len(json.loads(index.read_text())["sessions"]) == 1
    written = index.stat().st_mtime_ns, index.read_bytes()
    again, save = read_sessions(store)
    assert again == rows
    save()  # nothing changed: nothing written
    assert (index.stat().st_mtime_ns, index.read_bytes()) == written
    assert list_sessions(store) == rows
