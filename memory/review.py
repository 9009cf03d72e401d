"""Changes to MEMORY.md you can see and decide on: the lines a consolidation added and
removed, and, with `[memory] review = "before"`, consolidations held as proposals until
you accept, edit or reject them.

A proposal is one JSON file in `proposals/`, written atomically; its session stays pending
meanwhile, so a quit or a crash loses nothing. Accepting it is an ordinary commit (versioned,
crash-safe); a proposal made against a MEMORY.md that has changed since is dropped and the
session consolidated again, so no edit is ever overwritten. Accepting and rejecting hold
the session's claim, as a consolidation does.
"""

from __future__ import annotations

import difflib
import json
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from memory.files import atomic_write, ensure_dir, locked
from memory.journal import Journal, Segment
from memory.store import MemoryStore, MemoryText, Version
from memory.versions import VersionKind


@dataclass(frozen=True)
class LineChange:
    added: int
    removed: int

    def __str__(self) -> str:
        return f"+{self.added} −{self.removed} lines"

    @property
    def any(self) -> bool:
        return bool(self.added or self.removed)


def line_change(old: str, new: str) -> LineChange:
    """How many lines `new` adds to and removes from `old`."""
    added = removed = 0
    matcher = difflib.SequenceMatcher(None, old.splitlines(), new.splitlines(), autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag != "equal":
            removed += i2 - i1
            added += j2 - j1
    return LineChange(added, removed)


def unified(old: str, new: str, old_name: str, new_name: str) -> str:
    return "\n".join(
        difflib.unified_diff(old.splitlines(), new.splitlines(), old_name, new_name, lineterm="")
    )


def written_by(store: MemoryStore, session: str, entry: str) -> Version | None:
    """The version a consolidation of `session` with history entry `entry` wrote (None when
    it left MEMORY.md as it was)."""
    return next(
        (v for v in reversed(store.versions()) if v.session == session and v.entry == entry), None
    )


def version_texts(store: MemoryStore, version: Version) -> tuple[str, str]:
    """The text before `version` and the text it wrote."""
    previous = store.previous_version(version.number)
    old = previous.path.read_bytes() if previous else b""
    return (
        old.decode("utf-8", errors="replace"),
        version.path.read_bytes().decode("utf-8", errors="replace"),
    )


# --- proposals (review = "before") -----------------------------------------------------------


@dataclass(frozen=True)
class Proposal:
    """A consolidation waiting for the user's decision."""

    session: str
    segment: Segment
    model: str
    made: str  # when the chain answered
    when: str  # the session's time, which dates its history entry
    base_digest: str  # MEMORY.md the proposal was made from
    base_text: str
    memory_update: str
    history_entry: str  # without its date
    path: Path

    @property
    def change(self) -> LineChange:
        return line_change(self.base_text, self.memory_update)


def _folder(store: MemoryStore) -> Path:
    return store.root / "proposals"


def _path(store: MemoryStore, session: str, segment: Segment) -> Path:
    return _folder(store) / f"{session}.{segment}.json"


def propose(
    store: MemoryStore,
    session: str,
    segment: Segment,
    history_entry: str,
    memory_update: str,
    base: MemoryText,
    model: str,
    when: datetime,
) -> Proposal:
    """Hold a consolidation's result for review (atomically: it is there whole, or not)."""
    ensure_dir(_folder(store))
    path = _path(store, session, segment)
    record = {
        "session": session,
        "start": segment.start,
        "end": segment.end,
        "model": model,
        "made": datetime.now(UTC).isoformat(timespec="seconds"),
        "when": when.isoformat(timespec="seconds"),
        "base_digest": base.digest,
        "base_text": base.text,
        "memory_update": memory_update,
        "history_entry": history_entry,
    }
    atomic_write(path, json.dumps(record, ensure_ascii=False))
    return _load(path)


def _load(path: Path) -> Proposal:
    record = json.loads(path.read_bytes().decode("utf-8", errors="replace"))
    return Proposal(
        str(record["session"]),
        Segment(int(record["start"]), int(record["end"])),
        str(record["model"]),
        str(record["made"]),
        str(record["when"]),
        str(record["base_digest"]),
        str(record["base_text"]),
        str(record["memory_update"]),
        str(record["history_entry"]),
        path,
    )


def proposal_for(store: MemoryStore, session: str, segment: Segment) -> Proposal | None:
    path = _path(store, session, segment)
    try:
        return _load(path)
    except FileNotFoundError:
        return None
    except (ValueError, KeyError, TypeError):
        path.rename(path.with_suffix(".damaged"))  # the session is consolidated again
        return None


def proposals(store: MemoryStore) -> list[Proposal]:
    """Proposals waiting for a decision, oldest first. One whose session was settled
    meanwhile (accepted just before a crash) is cleared."""
    folder = _folder(store)
    if not folder.is_dir():
        return []
    found = []
    for path in sorted(folder.glob("*.json")):
        try:
            proposal = _load(path)
        except (OSError, ValueError, KeyError, TypeError):
            continue
        try:
            journal = store.find_session(proposal.session)
        except LookupError:
            continue
        if proposal.segment not in journal.pending:
            path.unlink(missing_ok=True)
            continue
        found.append(proposal)
    return found


class StaleProposal(Exception):
    """MEMORY.md changed after the proposal was made: it is dropped, never applied."""


def _claim(store: MemoryStore, session: str) -> Path:
    """The lock a consolidation of `session` holds: accepting or rejecting holds it too, so
    no two processes decide on, or move, one session's journal at once."""
    return store.sessions_dir / f".{session}.claim"


def accept(store: MemoryStore, proposal: Proposal, memory_text: str | None = None) -> None:
    """Commit the proposal, or the user's edit of its MEMORY.md (`memory_text`)."""
    from memory.commit import commit
    from memory.save_memory import SavedMemory

    with locked(_claim(store, proposal.session)):
        journal = store.find_session(proposal.session)
        if proposal.segment not in journal.pending:  # decided in another window meanwhile
            proposal.path.unlink(missing_ok=True)
            raise StaleProposal(
                "This change was already decided in another Kept window, so it was not "
                "applied again."
            )
        current = store.read_memory()
        edited = memory_text is not None and memory_text != proposal.memory_update
        text = memory_text if edited and memory_text is not None else proposal.memory_update
        saved = SavedMemory(proposal.history_entry, text)
        when = datetime.fromisoformat(proposal.when)
        if current.digest != proposal.base_digest or not commit(
            store,
            journal,
            proposal.segment,
            saved,
            current,
            proposal.model,
            when,
            source=VersionKind.REVIEWED if edited else VersionKind.CONSOLIDATION,
        ):
            proposal.path.unlink(missing_ok=True)
            raise StaleProposal(
                "MEMORY.md changed after this change was proposed, so it was not "
                "applied; the session will be consolidated again against it."
            )
    proposal.path.unlink(missing_ok=True)


def _close_rejected(store: MemoryStore, journal: Journal, proposal: Proposal) -> None:
    if proposal.segment in journal.pending:
        journal.mark_consolidated(proposal.segment, proposal.model, rejected=True)
    store.settle(journal)


def reject(store: MemoryStore, proposal: Proposal) -> None:
    """Nothing of the segment goes into memory: it is closed as rejected, journal kept."""
    with locked(_claim(store, proposal.session)):
        try:
            _close_rejected(store, store.find_session(proposal.session), proposal)
        except FileNotFoundError:  # moved to done/ as it was read: find it again
            _close_rejected(store, store.find_session(proposal.session), proposal)
    proposal.path.unlink(missing_ok=True)
