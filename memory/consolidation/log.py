"""The consolidation log read back: each session's chain of attempts, and figures per model."""

from __future__ import annotations

import statistics
from dataclasses import dataclass, field
from typing import Any

from catalog import Attempt
from catalog.health import HealthBook, ModelHealth
from catalog.sanitize import clean_text
from catalog.transport import Kind, Outcome
from memory.data.store import MemoryStore


def _text(value: object, default: str = "") -> str:
    # The log is a file anyone could have written to: nothing in it reaches a terminal raw.
    return clean_text(value) if isinstance(value, str) else default


def _number(value: object) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return 0.0
    return float(value)


@dataclass(frozen=True)
class LogRecord:
    """One line of consolidation.jsonl: one request (or skipped model) of one attempt to
    save one segment of one session. Read and written here only."""

    session: str
    segment: str
    model: str
    outcome: str  # an Outcome's value; a line from another version may hold another word
    kind: str = ""
    reason: str = ""
    latency: float = 0.0
    cost: float = 0.0
    purpose: str = ""  # "second_opinion": a judge's request, not an attempt to save

    @classmethod
    def parse(cls, raw: dict[str, Any]) -> LogRecord:
        """A line as read back: missing or mistyped fields (older Kept, a hand edit) become
        empty or zero, never an error."""
        return cls(
            session=_text(raw.get("session"), "?"),
            segment=_text(raw.get("segment")),
            model=_text(raw.get("model"), "?"),
            outcome=_text(raw.get("outcome")),
            kind=_text(raw.get("kind")),
            reason=_text(raw.get("reason")),
            latency=_number(raw.get("latency")),
            cost=_number(raw.get("cost")),
            purpose=_text(raw.get("purpose")),
        )

    @staticmethod
    def line(session: str, segment: str, attempt: Attempt) -> dict[str, Any]:
        """What is written for an attempt: these fields and everything the attempt records."""
        return {"session": session, "segment": segment, **attempt.to_dict()}


def read_records(store: MemoryStore) -> list[LogRecord]:
    return [LogRecord.parse(raw) for raw in store.read_log()]


# The outcome of a line that records an edit Kept dropped from a reply it kept.
DROPPED = "dropped"


@dataclass
class SessionLog:
    """Every attempt made for one segment of one session, oldest first."""

    session: str
    segment: str
    attempts: list[LogRecord] = field(default_factory=list)
    committed: bool | None = None  # from the session's journal, when it can be read

    @property
    def saved(self) -> bool:
        """The journal's word when there is one: an answer can arrive and still not be
        committed (a later part failed, or the user's edit came first)."""
        if self.committed is not None:
            return self.committed
        return any(a.outcome == Outcome.OK and not a.purpose for a in self.attempts)

    @property
    def dropped(self) -> list[str]:
        """The edits Kept dropped from the replies it kept, each with its reason."""
        return [a.reason for a in self.attempts if a.outcome == DROPPED and a.reason]

    def chain(self) -> str:
        """`llama-3.3-70b → tool call failed → qwen3-32b → did not call save_memory →
        gpt-4.1-mini ✓ 4.1 s $0.0008`: skipped models and retries folded in."""
        parts: list[str] = []
        for attempt in self.attempts:
            if attempt.outcome in (Outcome.SKIPPED, Outcome.RETRIED, DROPPED):
                continue  # a model's last try says how it ended; dropped edits: `dropped`
            if attempt.purpose:
                verdict = "✓" if attempt.outcome == Outcome.OK else "→ " + attempt.reason
                parts.append(f"second opinion by {attempt.model} {verdict}")
            elif attempt.outcome == Outcome.OK:
                parts.append(f"{attempt.model} ✓ {attempt.latency:.1f} s ${attempt.cost:.4f}")
            else:
                parts.append(f"{attempt.model} → {attempt.reason or attempt.kind or None}")
        # The log is a file anyone could have written to: nothing in it reaches a terminal raw.
        return clean_text(" → ".join(parts)) if parts else "no request made (no key for any model)"


@dataclass(frozen=True)
class ModelFigures:
    model: str
    attempts: int
    successes: int
    median_latency: float
    cost: float

    @property
    def success_rate(self) -> float:
        return self.successes / self.attempts if self.attempts else 0.0


def sessions(store: MemoryStore, last: int | None = None) -> list[SessionLog]:
    """One entry per (session, segment), in the order they were first tried; the `last`
    ones only, when given (only their journals are read)."""
    found: dict[tuple[str, str], SessionLog] = {}
    for record in read_records(store):
        key = (record.session, record.segment)
        found.setdefault(key, SessionLog(*key)).attempts.append(record)
    logs = list(found.values())
    if last is not None:
        logs = logs[-last:] if last > 0 else []
    journals: dict[str, set[str] | None] = {}
    for log in logs:
        if log.session not in journals:
            try:
                journal = store.find_session(log.session)
                journals[log.session] = {str(s) for s in journal.consolidated}
            except (LookupError, OSError):
                journals[log.session] = None
        done = journals[log.session]
        log.committed = None if done is None else log.segment in done
    return logs


def figures(store: MemoryStore) -> list[ModelFigures]:
    """Per model: requests made, how many were saved, median latency, total cost."""
    by_model: dict[str, list[LogRecord]] = {}
    for record in read_records(store):
        if record.outcome in (Outcome.SKIPPED, DROPPED) or record.purpose:
            continue  # no request to save (a dropped edit, a second opinion)
        if record.outcome == Outcome.CANCELLED and record.kind != Kind.LATE:
            continue  # a request that lost a hedge was sent, and paid for: it counts
        by_model.setdefault(record.model, []).append(record)
    return [
        ModelFigures(
            model=model,
            attempts=len(records),
            successes=sum(r.outcome == Outcome.OK for r in records),
            median_latency=statistics.median(r.latency for r in records),
            cost=sum(r.cost for r in records),
        )
        for model, records in sorted(by_model.items())
    ]


def model_health(store: MemoryStore) -> list[ModelHealth]:
    """Each model's state as every Kept process learned it, the troubled ones first."""
    return HealthBook(store.health_path).all()
