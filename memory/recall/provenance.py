"""Where each line of MEMORY.md came from: the version, session and model that last wrote
it (like `git blame`, computed from the versions), and the messages it most likely came
from (best effort, by the words they share)."""

from __future__ import annotations

import bisect
import difflib
import json
import logging
import os
import threading
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from memory.consolidation.edits import normal
from memory.consolidation.grounding import telling
from memory.data.files import digest, ensure_dir, read_text
from memory.data.history import HistoryEntry, parse_entries
from memory.data.store import MemoryStore, Version
from memory.data.versions import VersionKind
from memory.message import Message
from memory.sessions.journal import session_started

log = logging.getLogger(__name__)

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


def _carry(base: list[str], writers: list[int], lines: list[str], writer: int) -> list[int]:
    """Who wrote each of `lines`: a line unchanged from `base` keeps its writer (`writers`
    runs beside `base`); the others are `writer`'s."""
    matcher = difflib.SequenceMatcher(None, base, lines, autojunk=False)
    out: list[int] = []
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            out.extend(writers[i1:i2])
        else:
            out.extend([writer] * (j2 - j1))
    return out


class _Blame:
    """Blame computed version by version, each version's result kept in the store's
    blame_dir: versions are never rewritten, so a version's writers, once known, stay
    known. A new version costs one diff against its base; a hand edit of MEMORY.md only
    the last diff, made every time. A cache file that is missing, damaged, or made for
    another text or base is computed again (and so is every later one that needs it)."""

    def __init__(self, store: MemoryStore) -> None:
        self.store = store
        self.numbers = store.version_numbers()
        self.records: dict[int, Version | None] = {}
        self.writers: dict[int, list[int]] = {0: []}  # 0: MEMORY.md before any version
        self.tried: set[int] = set()
        self.unkept = False

    def version(self, number: int) -> Version | None:
        if number not in self.records:
            self.records[number] = self.store.version(number)
        return self.records[number]

    def text(self, number: int) -> tuple[list[str], str] | None:
        """A version's lines and the digest of its text, or None when it cannot be read."""
        version = self.version(number) if number else None
        if version is None:
            return None
        try:
            raw = version.path.read_bytes()
        except OSError:
            return None
        return _lines(raw), digest(raw)

    def kept(self, number: int) -> bool:
        """Was version `number` MEMORY.md (and can it be read)? Others are passed over."""
        version = self.version(number)
        return (
            version is not None
            and version.kind is not VersionKind.NOT_KEPT
            and self.text(number) is not None
        )

    def last_kept(self, below: int) -> int:
        """The newest version under `below` that was MEMORY.md; 0 when there is none."""
        for number in reversed(self.numbers[: bisect.bisect_left(self.numbers, below)]):
            if self.kept(number):
                return number
        return 0

    def base(self, number: int) -> int:
        """The version whose lines `number` was written over: the one a restore or an undo
        brought back, else the one before it."""
        version = self.version(number)
        restored = version.restored if version else None
        if restored is not None and (restored == 0 or (restored < number and self.kept(restored))):
            return restored
        return self.last_kept(number)

    def _cached(self, number: int, base: int, text: tuple[list[str], str]) -> list[int] | None:
        path = self.store.blame_dir / f"{number:06d}.json"
        try:
            cached = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None
        if not isinstance(cached, dict):
            return None
        writers = cached.get("writers")
        lines, text_digest = text
        if (
            cached.get("digest") != text_digest
            or cached.get("base") != base
            or not isinstance(writers, list)
            or len(writers) != len(lines)
            or not all(type(w) is int and 0 < w <= number for w in writers)
        ):
            return None
        return writers

    def _keep(self, number: int, base: int, text_digest: str, writers: list[int]) -> None:
        record = json.dumps({"digest": text_digest, "base": base, "writers": writers})
        folder = self.store.blame_dir
        try:
            ensure_dir(folder)
            # A cache: no fsync. A file torn by a crash is found damaged and made again.
            # Named for this thread too: the app may blame in two threads at once.
            tmp = folder / f".{number:06d}.{threading.get_ident()}.{os.getpid()}.tmp"
            tmp.write_text(record, encoding="utf-8")
            os.replace(tmp, folder / f"{number:06d}.json")
        except OSError as exc:  # blame is computed, just not kept: said once a look
            if not self.unkept:
                self.unkept = True
                log.warning("%s cannot be written (%s); blame is computed each time.", folder, exc)

    def of(self, number: int) -> list[int]:
        """The writer of each line of version `number` (a version that was MEMORY.md)."""
        stack = [number]
        while stack:
            top = stack[-1]
            if top in self.writers:
                stack.pop()
                continue
            base = self.base(top)
            text = self.text(top)
            if text is None:  # gone since it was listed: nothing of it to attribute
                self.writers[top] = []
                stack.pop()
                continue
            if top not in self.tried:
                self.tried.add(top)
                cached = self._cached(top, base, text)
                if cached is not None:
                    self.writers[top] = cached
                    stack.pop()
                    continue
            if base not in self.writers:
                stack.append(base)  # base < top: the walk ends at 0
                continue
            base_text = self.text(base)
            base_lines = base_text[0] if base_text else []
            writers = _carry(base_lines, self.writers[base], text[0], top)
            self._keep(top, base, text[1], writers)
            self.writers[top] = writers
            stack.pop()
        return self.writers[number]


def blame(store: MemoryStore) -> list[BlameLine]:
    """Each line of MEMORY.md now, with the version that last wrote it."""
    state = _Blame(store)
    last = state.last_kept(max(state.numbers, default=0) + 1)
    base_text = state.text(last)
    base_lines = base_text[0] if base_text else []
    now = _lines(store.read_memory().raw)
    writers = _carry(base_lines, state.of(last), now, 0)
    return [
        BlameLine(n, text, state.version(writer) if writer else None)
        for n, (text, writer) in enumerate(zip(now, writers, strict=True), start=1)
    ]


def authorship(store: MemoryStore, since: datetime) -> tuple[frozenset[str], frozenset[str]]:
    """The lines of MEMORY.md (normalised, memory.consolidation.edits.normal) that the user
    wrote, and those a consolidation wrote from a session that began after `since`."""
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


def likely_messages(
    messages: Sequence[Message | Mapping[str, Any]], line: str, *, limit: int = 3
) -> list[int]:
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


def _newest_first(store: MemoryStore) -> Iterator[HistoryEntry]:
    """History entries, HISTORY.md's newest first, then each archive's, the newest archive
    first: a look for one entry reads only as far back as it must."""
    yield from reversed(store.history_entries())
    for path in reversed(store.archive_files()):
        yield from reversed(parse_entries(read_text(path)[0], path))


def history_entry_for(
    store: MemoryStore, session: str, version: Version | None = None
) -> HistoryEntry | None:
    """The history entry a session's consolidation wrote (None if it cannot be found).
    `version`, one the session wrote, names it; without one, the records that mention
    the session are read (and only those)."""
    if version is not None and version.session == session and version.entry:
        written = {version.entry}
    else:
        written = {v.entry for v in store.versions_of(session) if v.entry}
    for entry in _newest_first(store):
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
    return next((e for e in _newest_first(store) if e.stamp in stamps), None)


def explain(store: MemoryStore, line: BlameLine, *, excerpt: int = 400, said: str = "") -> str:
    """Who wrote `line`, the history entry of that session, and the messages the line most
    likely came from, as text for a person to read; `said`, a paragraph of the user's words
    the line stood on when it was written (its version's record), goes after who wrote it."""
    head = f"Line {line.number}: {line.text}"
    version = line.version
    if version is None:
        return f"{head}\n\nWritten by you since the last version (edited by you)."
    when = version.time[:16].replace("T", " ")
    if not version.session:
        by = f" by {version.model}" if version.model else ""
        written = f"Written by version {version.number} on {when}: {version.source}{by}."
        return "\n\n".join(p for p in (head, written, said) if p)
    parts = [
        head,
        f"Written by version {version.number} on {when}: session "
        f"{version.session}, model {version.model} ({version.source}).",
    ]
    if said:
        parts.append(said)
    entry = history_entry_for(store, version.session, version)
    parts.append(
        f"History entry:\n{entry.body}"
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
