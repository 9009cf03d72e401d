"""Changes to MEMORY.md you can see and decide on: the lines a consolidation added and
removed, and, with `[memory] review = "before"`, consolidations held as proposals until
you accept, edit or reject them.

A proposal is one JSON file in `proposals/`, written atomically; its session stays pending
meanwhile, so a quit or a crash loses nothing. Accepting it is an ordinary commit (versioned,
crash-safe); a proposal made against a MEMORY.md that has changed since is dropped and the
session consolidated again, so no edit is ever overwritten. A proposal file is checked when
read, like a model's reply: one edited on disk past what Kept writes is set aside, never
applied. Accepting and rejecting hold the session's claim, as a consolidation does.
"""

from __future__ import annotations

import contextlib
import difflib
import json
import logging
import re
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from memory.consolidation.reply import SavedMemory
from memory.data.files import atomic_write, digest, ensure_dir, locked
from memory.data.layout import claim_lock
from memory.data.store import MemoryStore, MemoryText, Version
from memory.data.versions import VersionKind, decisions
from memory.sanitize import clean_text
from memory.sessions.journal import Journal, Segment

log = logging.getLogger(__name__)


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
    it left MEMORY.md as it was). The version records the paragraph with its key; `entry`
    may be without it."""
    from memory.data.history import KEY_AT_END

    return next(
        (
            v
            for v in reversed(store.versions_of(session))
            if v.entry is not None and entry in (v.entry, KEY_AT_END.sub("", v.entry))
        ),
        None,
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
    # The decision on each edit, with the user's words it stood on (Decision.to_json).
    decisions: tuple[dict[str, Any], ...] = ()

    @property
    def change(self) -> LineChange:
        return line_change(self.base_text, self.memory_update)


def _folder(store: MemoryStore) -> Path:
    return store.layout.proposals_dir


def _path(store: MemoryStore, session: str, segment: Segment) -> Path:
    return _folder(store) / f"{session}.{segment}.json"


def propose(
    store: MemoryStore,
    session: str,
    segment: Segment,
    saved: SavedMemory,
    base: MemoryText,
    model: str,
    when: datetime,
) -> Proposal:
    """Hold a consolidation's result for review (atomically: it is there whole, or not),
    with the decision on each of its edits and the user's words each stood on."""
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
        "memory_update": saved.memory_update,
        "history_entry": saved.history_entry,
        "decisions": saved.decision_records(),
    }
    atomic_write(path, json.dumps(record, ensure_ascii=False))
    return _load(path, store)


class BadProposal(ValueError):
    """A proposal file that is not what Kept writes: it is set aside, never applied."""


_DIGEST = re.compile(r"[0-9a-f]{64}")
_SHORT = 500  # the most a model id or a time in a proposal may hold


def _text(record: dict[str, Any], name: str) -> str:
    """A text field of the record, lone surrogates replaced and control characters out."""
    value = record.get(name)
    if not isinstance(value, str):
        raise ValueError(f"its {name} is missing or not text")
    return clean_text(value.encode("utf-8", "surrogatepass").decode("utf-8", "replace"))


def _check(path: Path, record: object, store: MemoryStore) -> Proposal:
    """The record as a Proposal, checked like a reply; ValueError says what is wrong."""
    if not isinstance(record, dict):
        raise ValueError("it is not a JSON object")
    settings = store.settings
    session, model, made, when = (_text(record, n) for n in ("session", "model", "made", "when"))
    start, end = record.get("start"), record.get("end")
    if type(start) is not int or type(end) is not int or not 0 <= start < end:
        raise ValueError("its start and end are not a range of messages")
    if path.name != f"{session}.{start}-{end}.json":
        raise ValueError(f"it names session {session} [{start}-{end}], not its file's")
    if any(len(v) > _SHORT or "\n" in v for v in (model, made, when)):
        raise ValueError("its model or times are not one short line")
    try:
        datetime.fromisoformat(when)
    except ValueError:
        raise ValueError("its when is not a date and time") from None
    base_digest = _text(record, "base_digest")
    if not _DIGEST.fullmatch(base_digest):
        raise ValueError("its base_digest is not a digest")
    entry = " ".join(_text(record, "history_entry").split())
    if not entry or len(entry) > settings.history_entry_max_chars:
        raise ValueError(
            f"its history entry is {len(entry):,} characters, not 1 to "
            f"{settings.history_entry_max_chars:,}"
        )
    base_text, update = _text(record, "base_text"), _text(record, "memory_update")
    budget = settings.memory_max_chars
    # A MEMORY.md the user made longer than the budget stays theirs: a proposal made from
    # it (the base, or MEMORY.md as it is now) may be as long as it.
    if (
        len(base_text) > budget
        and digest(base_text.encode("utf-8")) != base_digest
        and base_text != store.read_memory().text
    ):
        raise ValueError(f"its base_text is over the {budget:,} budget")
    if len(update) > max(budget, len(base_text)):
        raise ValueError(
            f"its memory_update is {len(update):,} characters, over the {budget:,} budget"
        )
    return Proposal(
        session=session,
        segment=Segment(start, end),
        model=model,
        made=made,
        when=when,
        base_digest=base_digest,
        base_text=base_text,
        memory_update=update,
        history_entry=entry,
        path=path,
        decisions=decisions(record.get("decisions")),
    )


def _load(path: Path, store: MemoryStore) -> Proposal:
    """The proposal in `path`; BadProposal, the file set aside as `.damaged` for the user
    to look at, when it is not one Kept could have written. OSError when it cannot be read
    (FileNotFoundError: decided meanwhile)."""
    raw = path.read_bytes()
    try:
        return _check(path, json.loads(raw.decode("utf-8", errors="replace")), store)
    except (ValueError, RecursionError) as exc:
        why = str(exc) if not isinstance(exc, json.JSONDecodeError) else "it is not JSON"
        damaged = path.with_suffix(".damaged")
        with contextlib.suppress(OSError):  # a folder Kept may not write: it stays as it is
            path.rename(damaged)
        problem = BadProposal(
            f"{clean_text(str(path))} is not a change Kept can apply ({why}): it is set "
            f"aside as {clean_text(damaged.name)} for you to look at, and the session "
            "will be saved again."
        )
        log.warning("%s", problem)
        raise problem from None


def proposal_for(store: MemoryStore, session: str, segment: Segment) -> Proposal | None:
    """The proposal waiting for this segment; None when there is none (or it was bad, and
    is set aside: the session is consolidated again)."""
    try:
        return _load(_path(store, session, segment), store)
    except (FileNotFoundError, BadProposal):
        return None


def proposals(store: MemoryStore, problems: list[str] | None = None) -> list[Proposal]:
    """Proposals waiting for a decision, oldest first. One whose session was settled
    meanwhile (accepted just before a crash) is cleared; a bad one is set aside, and the
    sentence saying so goes to `problems`."""
    folder = _folder(store)
    if not folder.is_dir():
        return []
    found = []
    for path in sorted(folder.glob("*.json")):
        try:
            proposal = _load(path, store)
        except BadProposal as exc:
            if problems is not None:
                problems.append(str(exc))
            continue
        except OSError:
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
    return claim_lock(store.sessions_dir, session)


def accept(store: MemoryStore, proposal: Proposal, memory_text: str | None = None) -> None:
    """Commit the proposal, or the user's edit of its MEMORY.md (`memory_text`)."""
    from memory.consolidation.commit import commit

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
        saved = SavedMemory(proposal.history_entry, text, records=proposal.decisions)
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
