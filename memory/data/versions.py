"""MEMORY.md's versions: what wrote each (a token on disk, worded only where it is shown),
its record, and the book of records in versions/ (NNNNNN.md and NNNNNN.json).

Numbers are read from the records' file names, so that nothing grows with history until a
record is asked for. A record written before kinds were tokens holds the shown wording
("restore of version 3") under "source"; it is still read, and parsed back here alone.
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from typing import Any

from catalog.sanitize import clean_text
from memory.data.files import atomic_write, digest, ensure_dir


class VersionKind(StrEnum):
    """What wrote a version; the value is the token kept on disk."""

    CONSOLIDATION = "consolidation"
    REVIEWED = "reviewed"  # a proposal the user edited, then accepted
    EDIT = "edited"
    NOT_KEPT = "not_kept"  # a version that never was MEMORY.md
    RESTORE = "restore"
    UNDO = "undo"
    REMEMBERED = "remembered"
    TIDY = "tidy"
    SYNCED = "synced"  # another device's change merged in (`via` names the device)
    OTHER = "other"  # a kind from a newer Kept, or a hand edit

    def describe(self, of: int | None = None, via: str | None = None) -> str:
        """The sentence part shown for a version of this kind: "restore of version 3",
        "remembered via Claude Code" (`via` names the tool a line came through)."""
        if self in (VersionKind.RESTORE, VersionKind.UNDO) and of is not None:
            return f"{self.value} of version {of}"
        if self is VersionKind.REMEMBERED and via:
            return f"{self.value} via {via}"
        if self is VersionKind.SYNCED:
            return f"merged from {via}" if via else "merged from another device"
        return _WORDING.get(self, self.value)

    @classmethod
    def of(cls, stored: str) -> VersionKind:
        """The kind a stored token, or an older record's wording, names."""
        return parse_source(stored)[0]


_WORDING = {
    VersionKind.REVIEWED: "consolidation, edited by you",
    VersionKind.EDIT: "edited by you",
    VersionKind.NOT_KEPT: "your edit, not kept",
}
_TOKENS = frozenset(kind.value for kind in VersionKind)
_NUMBERED = re.compile(r"^(restore|undo) of version (\d+)$")


def parse_source(stored: str) -> tuple[VersionKind, int | None, str | None]:
    """A kind, the version it names and the tool it came via, from a token or from the
    wording an older record kept ("undo of version 4", "remembered via Claude Code")."""
    if stored in _TOKENS:
        return VersionKind(stored), None, None
    for kind, words in _WORDING.items():
        if stored == words:
            return kind, None, None
    if match := _NUMBERED.match(stored):
        return VersionKind(match.group(1)), int(match.group(2)), None
    if stored.startswith("remembered via "):
        return VersionKind.REMEMBERED, None, stored.removeprefix("remembered via ")
    return VersionKind.OTHER, None, None


class NoSuchVersion(LookupError):
    """There is no version `number` (the app says where the versions are listed)."""

    def __init__(self, number: int) -> None:
        self.number = number
        super().__init__(str(self))

    def __str__(self) -> str:
        return f"There is no version {self.number}."


@dataclass(frozen=True)
class Version:
    """One version's record: what wrote it, when, from which session and model."""

    number: int
    time: str
    kind: VersionKind
    session: str | None
    model: str | None
    path: Path
    restored: int | None = None  # the version a restore (or an undo) brought back
    entry: str | None = None  # the history entry of the consolidation that wrote it
    of: int | None = None  # the version a restore brought back, or an undo undid
    via: str | None = None  # the tool a remembered line came through
    note: str | None = None  # a kind this Kept does not know: the words stored
    # A consolidation's decision on each edit, with the user's words it stood on
    # (memory.consolidation.edits.Decision.to_json), for review and blame to show.
    evidence: tuple[dict[str, Any], ...] = ()

    def describe(self) -> str:
        """What wrote it, as shown: "consolidation", "undo of version 3"."""
        if self.kind is VersionKind.OTHER and self.note:
            return self.note
        return self.kind.describe(self.of, self.via)

    @property
    def source(self) -> str:
        """The old name of `describe()`."""
        return self.describe()


def _text(meta: dict[str, Any], key: str) -> str | None:
    value = meta.get(key)
    return value if isinstance(value, str) else None


def _number(meta: dict[str, Any], key: str) -> int | None:
    value = meta.get(key)
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def record(number: int, meta: dict[str, Any], path: Path) -> Version:
    """A version from its record as stored, in the token format or the older wording."""
    stored = _text(meta, "kind")
    old = str(meta.get("source", "")) if stored is None else ""
    kind, of, via = parse_source(stored if stored is not None else old)
    return Version(
        number,
        str(meta.get("time", "")),
        kind,
        _text(meta, "session"),
        _text(meta, "model"),
        path,
        restored=_number(meta, "restored"),
        entry=_text(meta, "entry"),
        of=_number(meta, "of") if stored is not None else of,
        via=_text(meta, "via") if stored is not None else via,
        note=((_text(meta, "note") if stored is not None else old) or None)
        if kind is VersionKind.OTHER
        else None,
        evidence=decisions(meta.get("evidence")),
    )


def decisions(value: object) -> tuple[dict[str, Any], ...]:
    """The edit decisions a record or a proposal holds, each as stored, cleaned: a record
    anyone could have edited never reaches the terminal raw."""
    if not isinstance(value, list):
        return ()
    out = []
    for item in value[:200]:
        if not isinstance(item, dict):
            continue
        decision: dict[str, Any] = {
            k: clean_text(v) for k, v in item.items() if isinstance(v, str) and k in _KEYS
        }
        quotes = item.get("evidence")
        decision["evidence"] = [
            {
                "message": q["message"] if isinstance(q.get("message"), int) else 0,
                "quote": clean_text(str(q.get("quote", ""))),
                "time": clean_text(str(q.get("time", ""))),
            }
            for q in (quotes if isinstance(quotes, list) else [])[:10]
            if isinstance(q, dict)
        ]
        out.append(decision)
    return tuple(out)


_KEYS = frozenset({"op", "fate", "line", "old", "reason", "why"})


def version_numbers(folder: Path) -> list[int]:
    """The number of every version record in `folder` (NNNNNN.json), oldest first: one
    listing of the folder, no record read. A damaged record still holds its number, so a
    new version never takes it."""
    try:
        with os.scandir(folder) as entries:
            names = [entry.name for entry in entries]
    except (FileNotFoundError, NotADirectoryError):
        return []
    return sorted(
        int(name[:-5])
        for name in names
        if name.endswith(".json") and name[:-5].isascii() and name[:-5].isdigit()
    )


@dataclass(frozen=True)
class Written:
    """What a new version records beside its text: the token, and what it names."""

    kind: VersionKind | str  # a string: a token, or an older record's wording
    time: str
    session: str | None = None
    model: str | None = None
    restored: int | None = None
    entry: str | None = None
    of: int | None = None
    via: str | None = None
    evidence: tuple[dict[str, Any], ...] = ()

    def meta(self, raw: bytes) -> dict[str, Any]:
        kind, of, via = (
            (self.kind, None, None)
            if isinstance(self.kind, VersionKind)
            else parse_source(self.kind)
        )
        meta: dict[str, Any] = {"time": self.time, "kind": kind.value}
        if kind is VersionKind.OTHER and str(self.kind) != kind.value:
            meta["note"] = str(self.kind)
        meta.update(session=self.session, model=self.model, digest=digest(raw))
        optional = {
            "restored": self.restored,
            "entry": self.entry,
            "of": self.of if self.of is not None else of,
            "via": self.via if self.via is not None else via,
        }
        meta.update({k: v for k, v in optional.items() if v is not None})
        if self.evidence:
            meta["evidence"] = list(self.evidence)
        return meta


@dataclass
class VersionBook:
    """versions/: each MEMORY.md text Kept wrote or replaced, with its record."""

    folder: Path

    def _meta_path(self, number: int) -> Path:
        return self.folder / f"{number:06d}.json"

    def numbers(self) -> list[int]:
        return version_numbers(self.folder)

    def version(self, number: int) -> Version | None:
        """Version `number` as its record says, or None when it has no readable record."""
        meta_path = self._meta_path(number)
        try:
            meta = json.loads(meta_path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None
        return (
            record(number, meta, meta_path.with_suffix(".md")) if isinstance(meta, dict) else None
        )

    def versions(self, numbers: list[int] | None = None) -> list[Version]:
        """Every version (or those `numbers` name) with a readable record, oldest first."""
        found = (self.version(n) for n in (self.numbers() if numbers is None else numbers))
        return [v for v in found if v is not None]

    def of_session(self, session: str) -> list[Version]:
        """The versions a session's consolidations wrote: only the records whose text
        names the session are parsed."""
        wanted = json.dumps(session)
        found = []
        for number in self.numbers():
            try:
                text = self._meta_path(number).read_text(encoding="utf-8")
            except OSError:
                continue
            if wanted in text and (version := self.version(number)) and version.session == session:
                found.append(version)
        return found

    def latest(self) -> Version | None:
        """The newest version with a readable record: the records are read newest first,
        and only until one can be read."""
        for number in reversed(self.numbers()):
            if (version := self.version(number)) is not None:
                return version
        return None

    def latest_digest(self) -> str | None:
        latest = self.latest()
        if latest is None:
            return None
        try:
            return digest(latest.path.read_bytes())
        except OSError:
            return None

    def previous(self, number: int) -> Version | None:
        """The version that was MEMORY.md just before version `number` was written (None:
        MEMORY.md was empty). An edit the user chose not to keep was never MEMORY.md."""
        # Newest first, and only back to the first that was MEMORY.md: not every record.
        for earlier in reversed([n for n in self.numbers() if n < number]):
            version = self.version(earlier)
            if version is not None and version.kind is not VersionKind.NOT_KEPT:
                return version
        return None

    def text(self, number: int) -> bytes:
        """Version `number`'s text; NoSuchVersion (a LookupError) when there is none."""
        try:
            return (self.folder / f"{number:06d}.md").read_bytes()
        except FileNotFoundError:
            raise NoSuchVersion(number) from None

    def save(self, raw: bytes, written: Written) -> int:
        """Keep one MEMORY.md text as a numbered version (content first, then its record)."""
        ensure_dir(self.folder)
        number = max(self.numbers(), default=0) + 1
        atomic_write(self.folder / f"{number:06d}.md", raw)
        atomic_write(self._meta_path(number), json.dumps(written.meta(raw)))
        return number

    def forget_entry(self, entry: str) -> int:
        """Remove a forgotten history entry's text from every record that keeps it (the
        version, and the MEMORY.md it holds, stay; each record stays valid JSON). The
        caller holds the lock. Returns how many records changed."""
        changed = 0
        # A record is parsed only when its text holds the entry as JSON writes it.
        wanted = {json.dumps(entry)[1:-1], json.dumps(entry, ensure_ascii=False)[1:-1]}
        for number in self.numbers():
            meta_path = self._meta_path(number)
            try:
                text = meta_path.read_text(encoding="utf-8")
                if not any(form in text for form in wanted):
                    continue
                meta = json.loads(text)
            except (OSError, ValueError):
                continue
            if isinstance(meta, dict) and meta.get("entry") == entry:
                del meta["entry"]
                atomic_write(meta_path, json.dumps(meta))
                changed += 1
        return changed
