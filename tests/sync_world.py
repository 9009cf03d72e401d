"""Two machines sharing one memory, for the sync tests: each a data folder with its own device
id, doing what users do (sessions consolidated, /remember, hand edits, the same line changed
on both), and the invariants that must hold once both have synced."""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

from memory.consolidation.commit import commit
from memory.consolidation.reply import SavedMemory
from memory.data.files import atomic_write
from memory.data.history import entry_key
from memory.data.store import MemoryStore
from memory.settings import MemorySettings
from memory.sync.copies import find_copies
from memory.sync.proposals import sync_proposals

SETTINGS = MemorySettings(history_window_chars=1_000)  # small: months roll into history/


@dataclass
class Machine:
    """One device and what it did."""

    store: MemoryStore
    said: dict[str, list[str]] = field(default_factory=dict)  # session id -> what was said
    keys: set[str] = field(default_factory=set)  # history entries its consolidations wrote
    lines: set[str] = field(default_factory=set)  # memory lines it added

    @property
    def name(self) -> str:
        return self.store.device


def machine(root: Path, device: str) -> Machine:
    return Machine(MemoryStore(root, SETTINGS, device=device).ensure())


def consolidate(m: Machine, n: int) -> None:
    """A session of two messages, saved into memory as a consolidation does it."""
    store = m.store
    journal = store.new_session("test/model")
    said = [f"{m.name} session {n}: hello", f"{m.name} session {n}: noted"]
    journal.append({"role": "user", "content": said[0]})
    journal.append({"role": "assistant", "content": said[1]})
    segment = journal.mark_pending(close=True)
    assert segment is not None
    base = store.read_memory()
    line = f"- fact {n} from {m.name}"
    saved = SavedMemory(f"{m.name} talked about topic {n}.", base.text + line + "\n")
    assert commit(
        store,
        journal,
        segment,
        saved,
        base,
        "test/model",
        datetime(2026, 11, 1 + n % 28, 9, n % 60),
    )
    store.settle(store.find_session(journal.id))
    m.said[journal.id] = said
    m.keys.add(entry_key(journal.id, segment.start, segment.end))
    m.lines.add(line)


def remember(m: Machine, n: int) -> None:
    line = f"remembered {n} on {m.name}"
    m.store.remember(line)
    m.lines.add(f"- {line}")


def hand_edit(m: Machine, n: int) -> None:
    """The user's own edit, in an editor, outside Kept."""
    path = m.store.memory_path
    text = path.read_text(encoding="utf-8") if path.exists() else ""
    line = f"- typed by hand {n} on {m.name}"
    atomic_write(path, text + line + "\n")
    m.lines.add(line)


def change_shared_line(m: Machine, n: int) -> None:
    """Change the first line both devices have (the same line, differently on each)."""
    current = m.store.read_memory()
    lines = current.text.splitlines()
    if not lines:
        return
    lines[0] = f"{lines[0]} (changed {n} on {m.name})"
    m.store.save_edit("\n".join(lines) + "\n", current.digest)
    m.lines.add(lines[0])


ACTIONS = (consolidate, consolidate, remember, hand_edit, change_shared_line)


def act(rng: random.Random, m: Machine, n: int) -> None:
    rng.choice(ACTIONS)(m, n)


def _waiting_lines(m: Machine) -> set[str]:
    return {line for p in sync_proposals(m.store) for line in (*p.theirs, *p.ours)}


def check(machines: list[Machine]) -> None:
    """Every message of every session exactly once on both; every history entry once; every
    memory line added on either side present (or waiting in a proposal); no conflict copy."""
    said = {sid: msgs for m in machines for sid, msgs in m.said.items()}
    keys = set().union(*(m.keys for m in machines))
    for m in machines:
        store = m.store
        for sid, messages in said.items():
            journal = store.find_session(sid)
            assert [msg["content"] for msg in journal.messages] == messages, (m.name, sid)
            copies = list(store.root.glob(f"sessions/*/{sid}.jsonl"))
            copies += list(store.root.glob(f"sessions/*/done/{sid}.jsonl"))
            assert len(copies) == 1, (m.name, sid, copies)
        entries = store.all_history_entries()
        found = [e.key for e in entries]
        assert len(found) == len(set(found)), (m.name, "an entry twice")
        assert set(found) == keys, (m.name, keys ^ set(found))
        memory = set(store.read_memory().text.splitlines())
        waiting = set().union(*(_waiting_lines(o) for o in machines))
        for line in set().union(*(o.lines for o in machines)):
            changed = any(kept.startswith(line) for kept in memory | waiting)
            assert line in memory or line in waiting or changed, (m.name, line)
        assert find_copies(store.root) == [], m.name
