"""The consolidation log read back: each session's chain of attempts, and figures per model."""

from __future__ import annotations

import statistics
from dataclasses import dataclass, field
from typing import Any

from catalog.health import HealthBook, ModelHealth
from catalog.sanitize import clean_text
from memory.store import MemoryStore


@dataclass
class SessionLog:
    """Every attempt made for one segment of one session, oldest first."""

    session: str
    segment: str
    attempts: list[dict[str, Any]] = field(default_factory=list)
    committed: bool | None = None  # from the session's journal, when it can be read

    @property
    def saved(self) -> bool:
        """The journal's word when there is one: an answer can arrive and still not be
        committed (a later part failed, or the user's edit came first)."""
        if self.committed is not None:
            return self.committed
        return any(a.get("outcome") == "ok" for a in self.attempts)

    def chain(self) -> str:
        """`llama-3.3-70b → tool call failed → qwen3-32b → did not call save_memory →
        gpt-4.1-mini ✓ 4.1 s $0.0008`: skipped models and retries folded in."""
        parts: list[str] = []
        for attempt in self.attempts:
            outcome = attempt.get("outcome")
            if outcome in ("skipped", "retried"):  # a model's last try says how it ended
                continue
            model = str(attempt.get("model", "?"))
            if outcome == "ok":
                parts.append(
                    f"{model} ✓ {float(attempt.get('latency') or 0):.1f} s "
                    f"${float(attempt.get('cost') or 0):.4f}"
                )
            else:
                parts.append(f"{model} → {attempt.get('reason') or attempt.get('kind')}")
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


def sessions(store: MemoryStore) -> list[SessionLog]:
    """One entry per (session, segment), in the order they were first tried."""
    found: dict[tuple[str, str], SessionLog] = {}
    for record in store.read_log():
        key = (
            clean_text(str(record.get("session", "?"))),
            clean_text(str(record.get("segment", ""))),
        )
        found.setdefault(key, SessionLog(*key)).attempts.append(record)
    journals: dict[str, set[str] | None] = {}
    for log in found.values():
        if log.session not in journals:
            try:
                journal = store.find_session(log.session)
                journals[log.session] = {str(s) for s in journal.consolidated}
            except (LookupError, OSError):
                journals[log.session] = None
        done = journals[log.session]
        log.committed = None if done is None else log.segment in done
    return list(found.values())


def figures(store: MemoryStore) -> list[ModelFigures]:
    """Per model: requests made, how many were saved, median latency, total cost."""
    by_model: dict[str, list[dict[str, Any]]] = {}
    for record in store.read_log():
        if record.get("outcome") == "skipped" or (
            record.get("outcome") == "cancelled" and record.get("kind") != "late"
        ):
            continue  # a request that lost a hedge was sent, and paid for: it counts
        by_model.setdefault(clean_text(str(record.get("model", "?"))), []).append(record)
    return [
        ModelFigures(
            model=model,
            attempts=len(records),
            successes=sum(r.get("outcome") == "ok" for r in records),
            median_latency=statistics.median(float(r.get("latency") or 0) for r in records),
            cost=sum(float(r.get("cost") or 0) for r in records),
        )
        for model, records in sorted(by_model.items())
    ]


def model_health(store: MemoryStore) -> list[ModelHealth]:
    """Each model's state as every Kept process learned it, the troubled ones first."""
    return HealthBook(store.health_path).all()
