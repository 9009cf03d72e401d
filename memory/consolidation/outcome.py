"""What became of one consolidation: one status, set where the outcome is decided, and a
named constructor per outcome, so no caller re-derives the state from the other fields."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # light on purpose: the app's status bar imports it before the first frame
    from catalog import Attempt
    from memory.sessions.journal import Segment

AWAITING_REVIEW = "awaiting your review"
BUSY = "another Kept process is saving this session right now"


class Status(StrEnum):
    """How a consolidation of one segment ended."""

    SAVED = "saved"  # this run wrote it into memory
    SAVED_BEFORE = "saved before"  # found saved already (earlier, or by another process)
    PROPOSED = "proposed"  # held for the user's review, just now
    AWAITING_REVIEW = "awaiting review"  # a proposal made earlier still waits for the user
    TOO_LONG = "too long"  # more requests than allowed unasked: the estimate waits for a go
    BUSY = "busy"  # another process holds the session's claim
    FAILED = "failed"  # no model saved it: it stays pending and is retried later


class Cause(StrEnum):
    """Why no result could be kept, when the user has a next step (the app words it)."""

    MEMORY_FULL = "memory full"  # the edits would take MEMORY.md past its budget
    KEY_REFUSED = "key refused"  # a gateway refused its key
    NO_MODEL = "no model"  # no hosted gateway has a key and no local model is declared
    UNREACHABLE = "unreachable"  # every model left is on a server that did not answer


@dataclass(frozen=True)
class Consolidation:
    """What became of one segment of one session. Built by the named constructors."""

    session: str
    segment: Segment | None
    status: Status
    model: str | None = None
    attempts: tuple[Attempt, ...] = ()
    reason: str = ""  # why it is not saved; the estimate when TOO_LONG
    elapsed: float = 0.0
    history_entry: str = ""
    cause: Cause | None = None  # FAILED: what the user can act on, if anything

    @classmethod
    def committed(
        cls,
        session: str,
        segment: Segment,
        model: str | None,
        attempts: tuple[Attempt, ...],
        elapsed: float,
        history_entry: str,
    ) -> Consolidation:
        return cls(session, segment, Status.SAVED, model, attempts, "", elapsed, history_entry)

    @classmethod
    def saved_before(
        cls, session: str, segment: Segment, reason: str = "already saved", elapsed: float = 0.0
    ) -> Consolidation:
        return cls(session, segment, Status.SAVED_BEFORE, reason=reason, elapsed=elapsed)

    @classmethod
    def for_review(
        cls,
        session: str,
        segment: Segment,
        model: str | None,
        attempts: tuple[Attempt, ...],
        elapsed: float,
        history_entry: str,
    ) -> Consolidation:
        return cls(
            session,
            segment,
            Status.PROPOSED,
            model,
            attempts,
            AWAITING_REVIEW,
            elapsed,
            history_entry,
        )

    @classmethod
    def awaiting_review(cls, session: str, segment: Segment) -> Consolidation:
        return cls(session, segment, Status.AWAITING_REVIEW, reason=AWAITING_REVIEW)

    @classmethod
    def too_long(cls, session: str, segment: Segment, estimate: str) -> Consolidation:
        return cls(session, segment, Status.TOO_LONG, reason=estimate)

    @classmethod
    def busy(cls, session: str, segment: Segment) -> Consolidation:
        return cls(session, segment, Status.BUSY, reason=BUSY)

    @classmethod
    def failed(
        cls,
        session: str,
        segment: Segment,
        reason: str,
        attempts: tuple[Attempt, ...] = (),
        elapsed: float = 0.0,
        cause: Cause | None = None,
    ) -> Consolidation:
        return cls(session, segment, Status.FAILED, None, attempts, reason, elapsed, cause=cause)

    # Views of the status for readers that ask one question of it (memory/eval, the
    # benchmarks, `estimate` for the command line's go-ahead).
    @property
    def saved(self) -> bool:
        return self.status in (Status.SAVED, Status.SAVED_BEFORE)

    @property
    def proposed(self) -> bool:
        return self.status in (Status.PROPOSED, Status.AWAITING_REVIEW)

    @property
    def estimate(self) -> str:
        """What saving a long session would take, for the user to confirm; "" otherwise."""
        return self.reason if self.status is Status.TOO_LONG else ""

    @property
    def cost(self) -> float:
        return sum(a.cost for a in self.attempts)
