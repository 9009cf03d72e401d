"""MEMORY.md and its versions: read, written, remembered into, restored and undone.

Every text Kept writes becomes a version (memory.data.versions), and a text it finds that
no version holds is the user's own, kept as one before it is replaced: nothing is lost.
"""

from __future__ import annotations

import errno
import stat
from collections.abc import Callable
from contextlib import AbstractContextManager
from dataclasses import dataclass
from datetime import UTC, datetime
from enum import StrEnum
from pathlib import Path

from memory.data.files import atomic_write, digest, read_text
from memory.data.versions import VersionBook, VersionKind, Written


class MemoryProblem(OSError):
    """MEMORY.md cannot be written as asked; `strerror` is the sentence to show."""

    def __str__(self) -> str:
        return str(self.strerror)


class MemoryUnreadable(MemoryProblem):
    """MEMORY.md exists but cannot be read."""


class Refusal(StrEnum):
    """Why MEMORY.md was not written as asked."""

    EMPTY = "empty"  # nothing to remember
    OVER_BUDGET = "over_budget"  # the line would take MEMORY.md past its budget
    CHANGED = "changed"  # MEMORY.md changed after the version to undo


class MemoryRefused(ValueError):
    """MEMORY.md was not written, and nothing else was: the kind and the facts a sentence
    needs (`chars` MEMORY.md would have, its `budget`, the `version` to undo). Its str()
    is the fact alone; the app words the next step (app.words.memory)."""

    def __init__(self, kind: Refusal, *, chars: int = 0, budget: int = 0, version: int = 0) -> None:
        self.kind, self.chars, self.budget, self.version = kind, chars, budget, version
        super().__init__(str(self))

    def __str__(self) -> str:
        if self.kind is Refusal.EMPTY:
            return "Nothing to remember: the line is empty."
        if self.kind is Refusal.OVER_BUDGET:
            return f"MEMORY.md would be {self.chars:,} characters, over its {self.budget:,} budget."
        return f"MEMORY.md changed after version {self.version}, so it cannot be undone."


@dataclass(frozen=True)
class MemoryText:
    """MEMORY.md as read: its text, its exact bytes, and any problem with them."""

    text: str
    raw: bytes
    problem: str | None = None

    @property
    def digest(self) -> str:
        return digest(self.raw)


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


class MemoryFile:
    """MEMORY.md, written only under the data folder's lock (`lock`), after finishing a
    save a crash interrupted (`recover`)."""

    def __init__(
        self,
        path: Path,
        versions: VersionBook,
        lock: Callable[[], AbstractContextManager[None]],
        recover: Callable[[], None],
    ) -> None:
        self.path = path
        self.versions = versions
        self._lock = lock
        self._recover = recover

    def read(self) -> MemoryText:
        """MEMORY.md as it is; raises MemoryUnreadable (an OSError) with the sentence to
        show when the file is there but cannot be read."""
        try:
            text, raw = read_text(self.path)
        except OSError as exc:
            raise MemoryUnreadable(
                exc.errno,
                f"{self.path} cannot be read "
                f"({exc.strerror or exc}); check its owner and mode. "
                "Kept will not write over it.",
                str(self.path),
            ) from None
        try:
            raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            return MemoryText(
                text,
                raw,
                f"{self.path} is not valid UTF-8 (byte "
                f"{raw[exc.start]:#04x} at offset {exc.start}); Kept reads it "
                "with replacement characters and keeps the original bytes as a "
                "version before writing it.",
            )
        if "\x00" in text:
            return MemoryText(
                text,
                raw,
                f"{self.path} looks binary (it holds NUL "
                "bytes), not Markdown; restore a version or replace it.",
            )
        return MemoryText(text, raw)

    def write(self, text: str | bytes) -> None:
        """Replace MEMORY.md; refused, with the sentence why, when it is a link or
        read-only (the user's choice is respected, never silently undone)."""
        problem = self.problem()
        if problem is not None:
            raise MemoryProblem(errno.EACCES, problem, str(self.path))
        atomic_write(self.path, text)

    def problem(self) -> str | None:
        """Why Kept must not write MEMORY.md now, in a sentence, or None. Checked before a
        consolidation asks any model: a file that cannot be saved costs no request."""
        path = self.path
        if path.is_symlink():
            return (
                f"{path} is a symbolic link; Kept does not write through links, so "
                "memory is not saved. Put the file itself there."
            )
        if not path.exists():
            return None
        if not path.is_file():
            return f"{path} is not a regular file; move it away so Kept can save memory."
        if not path.stat().st_mode & stat.S_IWUSR:
            return (
                f"{path} is read-only (mode {stat.S_IMODE(path.stat().st_mode):o}); "
                "Kept respects that and saves no memory: `chmod 600` it to let Kept "
                "write it."
            )
        try:
            self.read()
        except MemoryUnreadable as exc:
            return exc.strerror
        return None

    def keep_unversioned(self, current: MemoryText, now: str) -> None:
        # Kept versions everything it writes, so text it has no version of is the user's.
        if current.raw and self.versions.latest_digest() != current.digest:
            self.versions.save(current.raw, Written(VersionKind.EDIT, now))

    def save_edit(
        self,
        text: str,
        base_digest: str,
        source: VersionKind,
        model: str | None,
        *,
        via: str | None = None,
    ) -> MemoryText | None:
        """Save the user's edit of MEMORY.md (or a tidy they accepted), made from the text
        whose digest is `base_digest`. Returns None when saved, or the text now on disk
        when it changed meanwhile (nothing is written then: the caller lets the user
        choose)."""
        now = _now()
        with self._lock():
            self._recover()
            current = self.read()
            if current.digest != base_digest:
                return current
            self.keep_unversioned(current, now)
            self.write(text)
            self.versions.save(text.encode("utf-8"), Written(source, now, model=model, via=via))
        return None

    def discard_edit(self, text: str) -> int:
        """Keep an edit the user chose not to save (MEMORY.md changed under it and they
        kept that) as a version that never was MEMORY.md: nothing they typed is lost.
        Numbered under the lock, since version numbers are shared with Kept's writes."""
        with self._lock():
            return self.versions.save(text.encode("utf-8"), Written(VersionKind.NOT_KEPT, _now()))

    def restore(self, number: int) -> int:
        """Make version `number` the current MEMORY.md; the restore is a new version."""
        raw = self.versions.text(number)
        now = _now()
        with self._lock():
            self._recover()
            self.keep_unversioned(self.read(), now)
            self.write(raw)
            return self.versions.save(
                raw, Written(VersionKind.RESTORE, now, restored=number, of=number)
            )

    def undo(self, number: int) -> int:
        """Put back the MEMORY.md that version `number` replaced; the undo is itself a new
        version. Raises MemoryRefused (a ValueError), writing nothing, if MEMORY.md changed
        since."""
        written = self.versions.text(number)
        previous = self.versions.previous(number)
        raw = previous.path.read_bytes() if previous else b""
        now = _now()
        with self._lock():
            self._recover()
            if self.read().digest != digest(written):
                raise MemoryRefused(Refusal.CHANGED, version=number)
            self.write(raw)
            restored = previous.number if previous else 0
            return self.versions.save(
                raw, Written(VersionKind.UNDO, now, restored=restored, of=number)
            )

    def remember(self, line: str, via: str | None, max_chars: int) -> int:
        """Add one line to MEMORY.md at once, with no model call (/remember); the result is
        a version naming `via`, the tool the line came through (an MCP client), when
        given. Returns its number; raises MemoryRefused (a ValueError), writing nothing,
        when the line is empty or MEMORY.md would outgrow `max_chars`."""
        from memory.consolidation.redact import redact
        from memory.sanitize import clean_text

        # Redacted before the spaces are joined: a key wrapped onto a second line is one.
        line = " ".join(redact(clean_text(line)).split())
        if not line:
            raise MemoryRefused(Refusal.EMPTY)
        now = _now()
        with self._lock():
            self._recover()
            current = self.read()
            body = current.text.rstrip("\n")
            text = f"{body}\n- {line}\n" if body else f"- {line}\n"
            if len(text) > max_chars:
                raise MemoryRefused(Refusal.OVER_BUDGET, chars=len(text), budget=max_chars)
            self.keep_unversioned(current, now)
            self.write(text)
            return self.versions.save(
                text.encode("utf-8"), Written(VersionKind.REMEMBERED, now, entry=line, via=via)
            )
