"""INSTRUCTIONS.md (what the assistant should always do) and the texts it replaced, in
versions/instructions/NNNNNN.md."""

from __future__ import annotations

from collections.abc import Callable
from contextlib import AbstractContextManager
from pathlib import Path

from memory.data.files import atomic_write, digest, ensure_dir, read_text
from memory.data.memory_file import MemoryText


class InstructionsFile:
    """INSTRUCTIONS.md, written only under the data folder's lock (`lock`)."""

    def __init__(
        self, path: Path, versions_dir: Path, lock: Callable[[], AbstractContextManager[None]]
    ) -> None:
        self.path = path
        self.versions_dir = versions_dir
        self._lock = lock

    def read(self) -> MemoryText:
        """What the assistant should always do (tone, language, format), as the user wrote it."""
        text, raw = read_text(self.path)
        return MemoryText(text, raw)

    def versions(self) -> list[Path]:
        """Every INSTRUCTIONS.md text Kept replaced or wrote, oldest first."""
        if not self.versions_dir.is_dir():
            return []
        return sorted(self.versions_dir.glob("*.md"))

    def save(self, text: str, base_digest: str) -> MemoryText | None:
        """Save an edit made from the text whose digest is `base_digest`, the previous text
        kept as a version. None when saved, else the text now on disk (nothing written:
        the caller lets the user choose), as with MEMORY.md."""
        with self._lock():
            current = self.read()
            if current.digest != base_digest:
                return current
            versions = self.versions()
            known = digest(versions[-1].read_bytes()) if versions else None
            if current.raw and known != current.digest:
                self._version(current.raw)
            atomic_write(self.path, text)
            self._version(text.encode("utf-8"))
        return None

    def keep_version(self, raw: bytes) -> None:
        """Keep a text the user chose not to keep (a conflict they resolved)."""
        with self._lock():
            self._version(raw)

    def _version(self, raw: bytes) -> None:
        ensure_dir(self.versions_dir)
        taken = (int(p.stem) for p in self.versions() if p.stem.isdigit())
        atomic_write(self.versions_dir / f"{max(taken, default=0) + 1:06d}.md", raw)
