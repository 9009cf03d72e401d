"""What the app says when MEMORY.md was not written as asked (memory.data's MemoryRefused:
a kind and its facts), with the next step in the words of the surface the user is on (the
TUI's /memory, the shell's `kept memory versions`)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from memory.data.memory_file import MemoryRefused, Refusal
from memory.data.versions import NoSuchVersion

if TYPE_CHECKING:
    pass


def refused(exc: MemoryRefused, *, shell: bool = False) -> str:
    """Why MEMORY.md was not written, and what to do, in one sentence."""
    match exc.kind:
        case Refusal.EMPTY if shell:
            return "Nothing to remember: the line is empty."
        case Refusal.EMPTY:
            return (
                "Nothing to remember: write it after the command, e.g. "
                "/remember I prefer metric units."
            )
        case Refusal.OVER_BUDGET:
            tidy = "`kept memory tidy`" if shell else "/tidy"
            return (
                f"MEMORY.md would be {exc.chars:,} characters, over its "
                f"{exc.budget:,} budget; {tidy} it first."
            )
        case Refusal.CHANGED:
            versions = "`kept memory versions`" if shell else "/memory"
            return (
                f"MEMORY.md changed after version {exc.version}, so it cannot be "
                f"undone here; {versions} lists every version to restore."
            )


def no_such_version(exc: NoSuchVersion, *, shell: bool = False) -> str:
    """There is no such version, and where the versions are listed, in one sentence."""
    where = "`kept memory versions`" if shell else "/memory's Versions tab"
    return f"There is no version {exc.number}; {where} lists them."


def not_written(exc: Exception, *, shell: bool = False) -> str:
    """A store call's refusal, worded for the surface: the kinds above, else the OS's words."""
    if isinstance(exc, MemoryRefused):
        return refused(exc, shell=shell)
    if isinstance(exc, NoSuchVersion):
        return no_such_version(exc, shell=shell)
    return str(exc)
