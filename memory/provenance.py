"""Where each line of MEMORY.md came from: the version, session and model that last wrote
it (like `git blame`, computed from the versions), and the messages it most likely came
from (best effort, by the words they share)."""

from __future__ import annotations

import difflib
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from memory.edits import normal
from memory.grounding import telling
from memory.history import HistoryEntry
from memory.journal import session_started
from memory.store import MemoryStore, Version
from memory.versions import VersionKind

# Versions whose new lines a model wrote; every other kind's are the user's own.
MODEL_KINDS = frozenset({VersionKind.CONSOLIDATION, VersionKind.TIDY})


@dataclass(frozen=True)
class BlameLine:
    number: int  # 1-based line of MEMORY.md
    text: str
    version: Version | None  # None: written since the last version (an edit of yours)

    @property
    def writer(self) -> str:
        """Who wrote it, in a few words: a session and model, or the source."""
        if self.version is None:
            return "edited by you (not yet versioned)"
        if self.version.session:
            return f"session {self.version.session} · {self.version.model or '?'}"
        return self.version.source


def _lines(raw: bytes) -> list[str]:
    return raw.decode("utf-8", errors="replace").splitlines()


def _carry(
    base: list[tuple[str, Version | None]], lines: list[str], version: Version | None
) -> list[tuple[str, Version | None]]:
    """`lines` attributed: a line unchanged from `base` keeps its writer; others are
    `version`'s."""
    matcher = difflib.SequenceMatcher(None, [t for t, _ in base], lines, autojunk=False)
    out: list[tuple[str, Version | None]] = []
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            out.extend(base[i1:i2])
        else:
            out.extend((line, version) for line in lines[j1:j2])
    return out


def blame(store: MemoryStore) -> list[BlameLine]:
    """Each line of MEMORY.md now, with the version that last wrote it."""
    by_number: dict[int, list[tuple[str, Version | None]]] = {0: []}
    current: list[tuple[str, Version | None]] = []
    for version in store.versions():
        if version.kind is VersionKind.NOT_KEPT:
            continue
        try:
            lines = _lines(version.path.read_bytes())
        except OSError:
            continue
        # A restore or an undo brings back lines whose writers are already known.
        base = by_number.get(version.restored, current) if version.restored is not None else current
        current = by_number[version.number] = _carry(base, lines, version)
    now = _lines(store.read_memory().raw)
    return [
        BlameLine(n, text, v) for n, (text, v) in enumerate(_carry(current, now, None), start=1)
    ]


def authorship(store: MemoryStore, since: datetime) -> tuple[frozenset[str], frozenset[str]]:
    """The lines of MEMORY.md (normalised, memory.edits.normal) that the user wrote, and
    those a consolidation wrote from a session that began after `since`."""
    mine: set[str] = set()
    newer: set[str] = set()
    for line in blame(store):
        key = normal(line.text)
        if not key or line.text.lstrip().startswith("#"):
            continue
        version = line.version
        if version is None or version.kind not in MODEL_KINDS:
            mine.add(key)
            continue
        started = session_started(version.session or "")
        if started is not None and started > since:
            newer.add(key)
    return frozenset(mine), frozenset(newer)


def likely_messages(messages: list[dict[str, Any]], line: str, *, limit: int = 3) -> list[int]:
    """Indices of the messages `line` most likely came from, best first; [] when none
    shares a telling word with it."""
    wanted = telling(line)
    if not wanted:
        return []
    scored = []
    for index, message in enumerate(messages):
        if message.get("role") not in ("user", "assistant"):
            continue
        shared = len(wanted & telling(str(message.get("content") or "")))
        if shared:
            # The user's own words before the assistant's: memory is about the user.
            scored.append((shared, message.get("role") == "user", -index, index))
    scored.sort(reverse=True)
    return [index for *_, index in scored[:limit]]


def history_entry_for(store: MemoryStore, session: str) -> HistoryEntry | None:
    """The history entry a session's consolidation wrote (None if it cannot be found)."""
    written = {v.entry for v in store.versions() if v.session == session and v.entry}
    entries = store.all_history_entries()
    for entry in reversed(entries):
        if entry.text in written:
            return entry
    # Versions written before entries were recorded: the entry dated like the session.
    try:
        journal = store.find_session(session)
    except LookupError:
        return None
    stamps = set()
    for message in journal.messages[:1]:
        try:
            when = datetime.fromisoformat(str(message.get("time")))
        except ValueError:
            continue
        when = when if when.tzinfo else when.replace(tzinfo=UTC)
        stamps.add(when.astimezone().strftime("%Y-%m-%d %H:%M"))
    return next((e for e in reversed(entries) if e.stamp in stamps), None)


def explain(store: MemoryStore, line: BlameLine, *, excerpt: int = 400) -> str:
    """Who wrote `line`, the history entry of that session, and the messages the line most
    likely came from, as text for a person to read."""
    head = f"Line {line.number}: {line.text}"
    version = line.version
    if version is None:
        return f"{head}\n\nWritten by you since the last version (edited by you)."
    when = version.time[:16].replace("T", " ")
    if not version.session:
        by = f" by {version.model}" if version.model else ""
        return f"{head}\n\nWritten by version {version.number} on {when}: {version.source}{by}."
    parts = [
        head,
        f"Written by version {version.number} on {when}: session "
        f"{version.session}, model {version.model} ({version.source}).",
    ]
    entry = history_entry_for(store, version.session)
    parts.append(
        f"History entry:\n{entry.text}"
        if entry
        else "History entry: not found in HISTORY.md or its archives."
    )
    try:
        journal = store.find_session(version.session)
    except LookupError:
        parts.append("The session's journal is no longer on disk.")
        return "\n\n".join(parts)
    found = likely_messages(journal.messages, line.text)
    if not found:
        parts.append(
            f"No message of session {version.session} shares a telling word with "
            "this line (matching is by text, best effort)."
        )
        return "\n\n".join(parts)
    shown = []
    for index in sorted(found):
        message = journal.messages[index]
        content = " ".join(str(message.get("content") or "").split())
        if len(content) > excerpt:
            content = content[:excerpt] + "…"
        shown.append(
            f"▶ message {index + 1} ({message.get('role')}, "
            f"{str(message.get('time', ''))[:16].replace('T', ' ')}): {content}"
        )
    parts.append("Most likely from (best effort, by the words they share):\n" + "\n".join(shown))
    return "\n\n".join(parts)
