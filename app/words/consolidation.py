"""What the app says of a consolidation no model's result could be kept from: the reason,
and the user's next step in the words of the surface they are on (the TUI's /tidy, the
shell's `kept memory tidy`)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from memory.consolidation.outcome import Cause

if TYPE_CHECKING:
    from memory.consolidation.outcome import Consolidation


def next_step(cause: Cause | None, *, shell: bool = False) -> str:
    """What the user can do about `cause`, in one sentence; "" when it is not theirs to fix."""
    match cause:
        case Cause.MEMORY_FULL:
            tidy = "`kept memory tidy`" if shell else "/tidy"
            return f"MEMORY.md is full: {tidy} it (or raise [memory] memory_max_chars)."
        case Cause.KEY_REFUSED:
            fix = (
                "store a new one with `keyring set kept <gateway>`"
                if shell
                else "fix it with /keys"
            )
            return f"A key was refused: {fix}."
        case Cause.NO_MODEL | Cause.UNREACHABLE:
            from app.words.models import blocked_step

            return blocked_step(
                "no-model" if cause is Cause.NO_MODEL else "unreachable", shell=shell
            )
        case None:
            return ""


def not_saved(result: Consolidation) -> str:
    """The TUI's notice of a consolidation that failed: it will be retried, and why."""
    step = next_step(result.cause)
    if not step:
        return f"Memory not saved yet — will retry. {result.reason}"
    return f"Memory not saved yet — will retry. {result.reason.rstrip('.')}. {step}"


def last_failure(reason: str, cause: str, *, shell: bool = False) -> str:
    """A pending session's last failure as /log and `kept log` show it: the reason, then the
    next step its cause calls for (a cause read back from the journal: a Cause value)."""
    step = next_step(Cause(cause) if cause in Cause.__members__.values() else None, shell=shell)
    return f"{reason.rstrip('.')}. {step}" if step else reason
