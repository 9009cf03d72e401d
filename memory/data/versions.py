"""What wrote each version of MEMORY.md, named once; and the versions' numbers, read from
their file names (NNNNNN.json) so that nothing grows with history until a record is asked for."""

from __future__ import annotations

import os
from enum import StrEnum
from pathlib import Path


class VersionKind(StrEnum):
    """What wrote a version. The value is the prose shown to the user and kept on disk;
    a restore and an undo add the version they name ("restore of version 3")."""

    CONSOLIDATION = "consolidation"
    REVIEWED = "consolidation, edited by you"  # a proposal the user edited, then accepted
    EDIT = "edited by you"
    NOT_KEPT = "your edit, not kept"  # a version that never was MEMORY.md
    RESTORE = "restore"
    UNDO = "undo"
    REMEMBERED = "remembered"
    TIDY = "tidy"
    OTHER = "other"  # prose from a newer Kept, or a hand edit

    def prose(self, of: int | None = None, via: str | None = None) -> str:
        """The prose kept on disk; `via` names the tool (an MCP client) a line came
        through: "remembered via Claude Code"."""
        if self in (VersionKind.RESTORE, VersionKind.UNDO) and of is not None:
            return f"{self.value} of version {of}"
        if self is VersionKind.REMEMBERED and via:
            return f"{self.value} via {via}"
        return self.value

    @classmethod
    def of(cls, prose: str) -> VersionKind:
        """The kind a version's stored prose names: the one place it is read back."""
        for kind in cls:
            if prose == kind.value or prose.startswith(f"{kind.value} of version "):
                return kind
        if prose.startswith(f"{cls.REMEMBERED.value} via "):
            return cls.REMEMBERED
        return cls.OTHER


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
