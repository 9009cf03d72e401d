"""What wrote each version of MEMORY.md, named once."""

from __future__ import annotations

from enum import StrEnum


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

    def prose(self, of: int | None = None) -> str:
        if self in (VersionKind.RESTORE, VersionKind.UNDO) and of is not None:
            return f"{self.value} of version {of}"
        return self.value

    @classmethod
    def of(cls, prose: str) -> VersionKind:
        """The kind a version's stored prose names: the one place it is read back."""
        for kind in cls:
            if prose == kind.value or prose.startswith(f"{kind.value} of version "):
                return kind
        return cls.OTHER
