"""What is pending, from index.pending.json: always what the journals say, read again only
where a journal changed."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from app.cli.main import main
from memory import MemoryStore
from memory.sessions.pending import INDEX, pending
from tests.support import pending_session


def summary(store: MemoryStore) -> list[tuple[object, ...]]:
    return [
        (
            s.id,
            [(p.segment, p.messages, p.chars) for p in s.parts],
            {k: [(f.reason, f.rejected) for f in v] for k, v in s.failures.items()},
        )
        for s in pending(store)
    ]


def truth(store: MemoryStore) -> list[tuple[object, ...]]:
    return [
        (
            j.id,
            [
                (
                    s,
                    len(j.segment_messages(s)),
                    sum(len(str(m.get("content") or "")) for m in j.segment_messages(s)),
                )
                for s in j.pending
            ],
            {
                k: [(f.reason, f.rejected) for f in v]
                for k, v in j.failures.items()
                if k in j.pending and v
            },
        )
        for j in store.pending_sessions()
    ]


def test_the_index_follows_every_change_to_the_journals() -> None:
    store = MemoryStore().ensure()
    first = pending_session(store)
    second = pending_session(store)
    assert summary(store) == truth(store) and len(summary(store)) == 2
    assert (store.layout.local_dir / INDEX).is_file()
    # A failure is appended to one journal: that journal is read again.
    (segment,) = second.pending
    second.mark_failed(segment, "every model refused", rejected=True)
    assert summary(store) == truth(store)
    (failed,) = [s for s in pending(store) if s.id == second.id]
    assert failed.failures[segment][0].reason == "every model refused"
    # Saved: no longer pending. A live session and a private one are never listed.
    first.mark_consolidated(first.pending[0], "gpt-4.1-mini")
    live = store.new_session("gpt-4.1-mini")
    live.append({"role": "user", "content": "still talking", "time": "2026-11-20T09:00:00"})
    private = store.new_session("gpt-4.1-mini", private=True)
    private.append({"role": "user", "content": "off the record", "time": "2026-11-20T09:00:00"})
    assert summary(store) == truth(store) and [s.id for s in pending(store)] == [second.id]
    # A damaged or foreign index is rebuilt from the journals.
    for damage in ("{", "[]", json.dumps({"version": 1, "journals": {second.path.name: [1]}})):
        (store.layout.local_dir / INDEX).write_text(damage)
        assert summary(store) == truth(store)


def test_an_unchanged_journal_is_not_read_again() -> None:
    """The index is trusted while a journal's size, time and inode stand: a journal
    replaced by one of another size is read, one left alone is not."""
    store = MemoryStore().ensure()
    journal = pending_session(store)
    assert pending(store)[0].parts[0].messages == len(journal.messages)
    index = json.loads((store.layout.local_dir / INDEX).read_text())
    row = index["journals"][journal.path.name]
    row[4][0][2] = 999  # what the index says of the one part: 999 messages
    (store.layout.local_dir / INDEX).write_text(json.dumps(index))
    assert pending(store)[0].parts[0].messages == 999
    journal.mark_failed(journal.pending[0], "no model answered")  # it grows: read again
    assert pending(store)[0].parts[0].messages == len(journal.messages)


def test_log_doctor_and_dry_run_say_what_is_pending(capsys: pytest.CaptureFixture[str]) -> None:
    store = MemoryStore().ensure()
    journal = pending_session(store)
    journal.mark_failed(journal.pending[0], "no model answered")
    assert main(["log"]) == 0
    out = capsys.readouterr().out
    assert f"{journal.id} [{journal.pending[0]}] {len(journal.messages)} messages" in out
    assert "last failure: no model answered" in out
    main(["doctor"])
    assert "pending sessions: 1 (`kept log` says why)" in capsys.readouterr().out
    main(["consolidate", "--dry-run"])
    assert f"1 sessions ({len(journal.messages)} messages) are pending." in capsys.readouterr().out


def test_an_import_leaves_what_it_imported_counted(tmp_path: Path) -> None:
    from tests.bench.bench_year import export

    conversations = tmp_path / "conversations.json"
    export(conversations, 3)
    assert main(["import", "--from", "chatgpt", str(conversations)]) == 0
    store = MemoryStore()
    index = json.loads((store.layout.local_dir / INDEX).read_text())
    assert len(index["journals"]) == 3
    assert summary(store) == truth(store) and len(summary(store)) == 3
