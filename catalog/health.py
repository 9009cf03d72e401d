"""Model health, shared by every Kept process: a failing model costs seconds once.

Each model is healthy, cooling down until a time (the walk gave up on it after transient
failures, or it asked for a pause with Retry-After), or written off (its key was refused:
lifted when the key changes, or after an hour in case the provider re-enabled it). The
transport orders its walk by this book: cooling models go after the healthy ones, never
dropped, so when everything else fails they still get their turn. When a cooldown ends,
one process claims a single probe of the model; an answer lets it back in, a failure
cools it down again for twice as long.

The book also keeps each model's latest answer times, so that a deadline can follow what
the model usually needs (`deadline`) and a hedge knows when a model is late (`p95`).

One JSON file in the data dir (the caller owns the folder and passes the path). Every
change is read-modify-write under an exclusive lock, written to a temporary file and put
in place with an atomic rename: two Kept processes never tear it, a crash leaves the old
or the new book, and it survives restarts. What a walk observes on an event loop is
queued and written by a thread of the book's own (the lock and the write never hold up
the loop; what piled up meanwhile goes in one write); every read of this book sees it at
once. It stays small: a bounded list of answer times per model, and at most MAX_MODELS
models. A damaged file is read as an empty book, and a record whose values are not what
the book writes (wrong types, negative, NaN, a cooldown beyond the longest one) is read as
a healthy model with a logged warning, never trusted.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import json
import logging
import math
import os
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Any

from catalog.transport.records import UNREACHABLE, Attempt, Kind, Outcome

if TYPE_CHECKING:
    from catalog.models import ModelEntry

log = logging.getLogger(__name__)

Models = dict[str, dict[str, Any]]
Change = Callable[[Models], None]

COOLDOWN = 120.0  # the first cooldown after the walk gave up on a model; doubles after
MAX_COOLDOWN = 1800.0
MAX_RETRY_AFTER = 3600.0  # a Retry-After longer than this is read as this
REFUSED_FOR = 3600.0  # a refused key is tried again after this, even unchanged
PROBE_HOLD = 120.0  # how long a claimed probe keeps other processes off the model
LATENCIES = 20  # answer times kept per model
MIN_SAMPLES = 3  # answers needed before a deadline or hedge follows them
MIN_DEADLINE = 8.0  # a deadline that follows latency is never shorter than this
MAX_MODELS = 100
MAX_LATENCY = 86_400.0  # an answer time beyond a day is not one the book wrote
MAX_COUNT = 1_000_000_000  # failures and cooldowns past this are not counts the book wrote
CLOCK_SLACK = 300.0  # a time this far past now (clocks of two processes) is still believed
_NUMBERS = ("seen", "refused_at", "cool_until", "probe_until")
_COUNTS = ("failures", "cooldowns")
_TEXTS = ("last", "refused")
_LABELS = {
    Kind.DEADLINE: "no answer in time",
    Kind.STALLED: "stalled stream",
    Kind.CONNECTION: "connection failure",
    Kind.TIMEOUT: "timeout",
    Kind.GATEWAY_TIMEOUT: "upstream timeout",
    Kind.OVERLOADED: "overloaded",
    Kind.RATE_LIMIT: "429",
    Kind.SERVER_ERROR: "server error",
    Kind.LATE: "late",
}


class State(StrEnum):
    HEALTHY = "healthy"
    COOLING = "cooling"  # tried after the healthy models until `until`
    PROBE = "probe"  # its cooldown ended: one try, at its place in the chain
    REFUSED = "refused"  # its key was refused: skipped until the key changes


@dataclass(frozen=True)
class ModelHealth:
    """One model's state as the book saw it, ready to be shown."""

    model: str
    state: State
    until: float = 0.0
    failures: int = 0  # consecutive failures that made it unreachable
    last: str = ""  # the last of them, short: "500", "no answer in time"
    p95: float | None = None
    answers: int = 0

    def describe(self) -> str:
        """`cooling down until 14:32 after 3 × 500`, `healthy (p95 1.2 s)`."""
        after = f" after {self.failures} × {self.last}" if self.failures and self.last else ""
        at = datetime.fromtimestamp(self.until).strftime("%H:%M") if self.until else ""
        if self.state is State.COOLING:
            return f"cooling down until {at}{after}"
        if self.state is State.REFUSED:
            return "written off: its key was refused"
        if self.state is State.PROBE:
            return f"cooldown over, on probation{after}"
        speed = f" (p95 {self.p95:.1f} s over {self.answers} answers)" if self.p95 else ""
        return f"healthy{speed}"


def fingerprint(key: str | None) -> str:
    """Enough of a key's hash to notice it changed; the key itself is never written."""
    return hashlib.sha256((key or "").encode()).hexdigest()[:12]


def _p95(values: Sequence[float]) -> float | None:
    if len(values) < MIN_SAMPLES:
        return None
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(0.95 * len(ordered)))]


def _label(kind: Kind, status: int | None) -> str:
    return str(status) if status else _LABELS.get(kind, kind.value)


def _number(value: object) -> bool:
    return (
        isinstance(value, int | float)
        and not isinstance(value, bool)
        and math.isfinite(value)
        and value >= 0
    )


def _problem(model: str, record: dict[str, Any], now: float) -> str | None:
    """What is wrong with a record read from the file (None: the book could have written it)."""
    if not model.isprintable() or len(model) > 500:
        return "its name is not a model name"
    for name in _NUMBERS:
        if name in record and not _number(record[name]):
            return f"{name} is not a time"
    for name in _COUNTS:
        value = record.get(name, 0)
        if not (isinstance(value, int) and not isinstance(value, bool) and 0 <= value <= MAX_COUNT):
            return f"{name} is not a count"
    for name in _TEXTS:
        value = record.get(name, "")
        if not (isinstance(value, str) and value.isprintable() and len(value) <= 100):
            return f"{name} is not a short text"
    latencies = record.get("latencies", [])
    if not isinstance(latencies, list) or not all(
        _number(x) and x <= MAX_LATENCY for x in latencies
    ):
        return "latencies is not a list of answer times"
    furthest = {
        "cool_until": max(MAX_COOLDOWN, MAX_RETRY_AFTER),
        "probe_until": PROBE_HOLD,
        "refused_at": 0.0,
        "seen": 0.0,
    }
    for name, ahead in furthest.items():
        if float(record.get(name, 0)) > now + ahead + CLOCK_SLACK:
            return f"{name} is further ahead than the book ever writes"
    return None


class HealthBook:
    """Per-model health in one file (None: in memory only, for a caller with no data dir).

    `clock` is wall time (cooldowns are shown as clock times, and outlive the process)."""

    def __init__(self, path: Path | None = None, clock: Callable[[], float] = time.time) -> None:
        self.path = path
        self.clock = clock
        self._memory: Models = {}
        self._warned: set[tuple[str, str]] = set()
        # Changes observed and not yet in the file, oldest first: every read applies them.
        self._queued: list[Change] = []
        # Guards the queue, and the moment a write replaces the file and leaves the queue,
        # so that a read never sees a change twice, nor misses it.
        self._guard = threading.Lock()
        self._committing = threading.Lock()  # one read-modify-write at a time in a process
        self._writer: threading.Thread | None = None

    # --- the file ------------------------------------------------------------------------

    def _read(self) -> Models:
        with self._guard:
            models = self._stored()
            for change in self._queued:
                change(models)
        return models

    def _stored(self) -> Models:
        if self.path is None:
            return {m: dict(r) for m, r in json.loads(json.dumps(self._memory)).items()}
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return {}
        models = data.get("models") if isinstance(data, dict) else None
        if not isinstance(models, dict):
            return {}
        now, sane = self.clock(), {}
        for model, record in models.items():
            problem = "it is not a record" if not isinstance(record, dict) else None
            problem = problem or _problem(model, record, now)
            if problem is None:
                sane[model] = record
            elif (model, problem) not in self._warned:  # once per process, not per walk
                self._warned.add((model, problem))
                log.warning(
                    "%s: the health of %r is read as healthy (%s).", self.path, model, problem
                )
        return sane

    def _write(self, models: Models, written: int) -> None:
        """Put `models` in place of the book; the first `written` queued changes are in it."""
        if len(models) > MAX_MODELS:  # the least recently seen go first
            keep = sorted(models, key=lambda m: float(models[m].get("seen", 0)))[-MAX_MODELS:]
            models = {m: models[m] for m in keep}
        if self.path is None:
            with self._guard:
                self._memory = models
                del self._queued[:written]
            return
        tmp = self.path.with_name(f".{self.path.name}.{os.getpid()}.tmp")
        tmp.write_text(json.dumps({"version": 1, "models": models}), encoding="utf-8")
        os.chmod(tmp, 0o600)
        with self._guard:
            os.replace(tmp, self.path)
            del self._queued[:written]

    def _locked(self) -> contextlib.AbstractContextManager[object]:
        """The book's lock across processes (none for a book in memory)."""
        if self.path is None:
            return contextlib.nullcontext()
        self.path.parent.mkdir(parents=True, exist_ok=True)
        # The OS's own lock (flock, or LockFileEx on Windows): exclusive, and let go when
        # the process holding it dies, so a crash never leaves the book locked. Imported
        # here: start-up never waits for a module the first change can load.
        from filelock import FileLock

        return FileLock(self.path.with_name(f".{self.path.name}.lock"), mode=0o600)

    def _commit(self, change: Change | None = None) -> None:
        """Write every queued change, then `change`, in one read-modify-write under the
        lock. A book that cannot be written never stops a request: what it could not
        write is dropped."""
        with self._committing:
            with self._guard:
                batch = list(self._queued)
            if not batch and change is None:
                return
            written = False
            try:
                with contextlib.suppress(OSError), self._locked():
                    models = self._stored()
                    for queued in batch:
                        queued(models)
                    if change is not None:
                        change(models)
                    self._write(models, len(batch))
                    written = True
            finally:
                if not written:  # a failed batch is never applied again by every read
                    with self._guard:
                        del self._queued[: len(batch)]

    def _observed(self, change: Change) -> None:
        """Take a change learned from an attempt. On an event loop it is written by the
        book's writer thread, never on the loop; elsewhere it is written before this
        returns."""
        with self._guard:
            self._queued.append(change)
            later = self.path is not None and _on_a_loop()
            if later and self._writer is None:
                self._writer = threading.Thread(
                    target=self._drain, name="kept-health-book", daemon=False
                )
                self._writer.start()
        if not later:
            self._commit()

    def _drain(self) -> None:
        """The writer thread: writes until nothing is queued. Not a daemon, so a process
        that ends after a walk still writes what the walk learned."""
        try:
            while True:
                self._commit()
                with self._guard:
                    if not self._queued:
                        return
        finally:
            with self._guard:
                self._writer = None

    def flush(self) -> None:
        """Write what this book has queued now (blocking: call it off the event loop)."""
        self._commit()

    # --- reading -------------------------------------------------------------------------

    def _health(self, model: str, record: dict[str, Any] | None, now: float) -> ModelHealth:
        record = record or {}
        latencies = [float(x) for x in record.get("latencies", ()) if isinstance(x, int | float)]
        p95 = _p95(latencies)
        failures, last = int(record.get("failures", 0) or 0), str(record.get("last", ""))
        refused_at = float(record.get("refused_at", 0) or 0)
        if record.get("refused") and now - refused_at < REFUSED_FOR:
            return ModelHealth(
                model, State.REFUSED, refused_at, failures, last, p95, len(latencies)
            )
        until = float(record.get("cool_until", 0) or 0)
        probing = float(record.get("probe_until", 0) or 0)
        if until > now or probing > now:  # cooling, or another walk is probing it
            return ModelHealth(
                model, State.COOLING, max(until, probing), failures, last, p95, len(latencies)
            )
        if until:
            return ModelHealth(model, State.PROBE, until, failures, last, p95, len(latencies))
        return ModelHealth(model, State.HEALTHY, 0.0, failures, last, p95, len(latencies))

    def get(self, model: str) -> ModelHealth:
        return self._health(model, self._read().get(model), self.clock())

    def all(self) -> list[ModelHealth]:
        """Every model the book knows, the troubled ones first."""
        now = self.clock()
        rows = [self._health(m, r, now) for m, r in self._read().items()]
        return sorted(rows, key=lambda h: (h.state is State.HEALTHY, h.model))

    def refused(self, model: str, key: str | None) -> bool:
        """True when this very key was refused for `model` within the last hour."""
        record = self._read().get(model) or {}
        return (
            record.get("refused") == fingerprint(key)
            and self.clock() - float(record.get("refused_at", 0) or 0) < REFUSED_FOR
        )

    def p95(self, model: str) -> float | None:
        return self.get(model).p95

    def deadline(self, model: str, configured: float) -> float:
        """max(3 × p95 of its answers, 8 s), capped by `configured`: a hang is noticed in
        seconds for a model that answers in two. `configured` until it has answered."""
        p95 = self.p95(model)
        return configured if p95 is None else min(configured, max(3 * p95, MIN_DEADLINE))

    # --- the walk ------------------------------------------------------------------------

    def order(self, entries: Sequence[ModelEntry]) -> tuple[list[ModelEntry], set[str]]:
        """The walk: healthy models in chain order, then the cooling ones (never dropped).
        Also the models whose cooldown is over: this walk probes them once (the claim is
        written, so another process waits for its verdict)."""
        now = self.clock()
        probes: set[str] = set()
        cooling: set[str] = set()

        def claim(models: Models) -> None:
            for entry in entries:
                health = self._health(entry.id, models.get(entry.id), now)
                if health.state is State.COOLING:
                    cooling.add(entry.id)
                elif health.state is State.PROBE:
                    probes.add(entry.id)
                    models[entry.id]["probe_until"] = now + PROBE_HOLD

        models = self._read()
        if any(
            self._health(e.id, r, now).state is State.PROBE
            for e in entries
            if (r := models.get(e.id))
        ):
            self._commit(claim)  # written before the walk starts: another process sees it
        else:
            claim(models)
        ordered = [e for e in entries if e.id not in cooling] + [
            e for e in entries if e.id in cooling
        ]
        return ordered, probes

    def cooling(self, model: str) -> bool:
        return self.get(model).state is State.COOLING

    def observe(
        self, attempt: Attempt, *, key: str | None = None, retry_after: float | None = None
    ) -> None:
        """Learn from one attempt of a walk (every outcome but a skip)."""
        outcome, kind = attempt.outcome, attempt.kind
        now = self.clock()

        def change(models: Models) -> None:
            record = models.setdefault(attempt.model, {})
            record["seen"] = now
            if outcome in (Outcome.OK, Outcome.REJECTED):  # it answered: reachable again
                latencies = [*record.get("latencies", ()), round(attempt.latency, 3)]
                record.update(
                    latencies=latencies[-LATENCIES:],
                    failures=0,
                    last="",
                    cool_until=0,
                    cooldowns=0,
                    probe_until=0,
                )
                record.pop("refused", None)
            elif kind is Kind.AUTH:
                record.update(refused=fingerprint(key), refused_at=now)
            elif outcome in (Outcome.RETRIED, Outcome.FAILED) and kind in UNREACHABLE:
                record["failures"] = min(int(record.get("failures", 0) or 0) + 1, MAX_COUNT)
                record["last"] = _label(kind, attempt.status)
                if outcome is Outcome.FAILED or retry_after is not None:
                    # The walk gave up on it (or it asked for a pause): cool it down.
                    _cool(record, now, retry_after)
            elif kind is Kind.LATE:
                # It lost a hedge: late twice in a row, or past the shortest deadline once,
                # and it cools down like a model that did not answer.
                record["failures"] = min(int(record.get("failures", 0) or 0) + 1, MAX_COUNT)
                record["last"] = "late"
                if record["failures"] >= 2 or attempt.latency >= MIN_DEADLINE:
                    _cool(record, now, None)
            elif outcome is Outcome.CANCELLED:
                record["probe_until"] = 0
            else:
                return

        self._observed(change)


def _on_a_loop() -> bool:
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return False
    return True


def _cool(record: dict[str, Any], now: float, retry_after: float | None) -> None:
    """Start a cooldown: twice as long as the last one, or as long as Retry-After asked."""
    cooldowns = int(record.get("cooldowns", 0) or 0)
    # The exponent stops once the pause reached MAX_COOLDOWN: 2**1024 is past any float.
    doubling = min(cooldowns, math.ceil(math.log2(MAX_COOLDOWN / COOLDOWN)))
    pause = min(COOLDOWN * 2**doubling, MAX_COOLDOWN)
    if retry_after is not None and math.isfinite(retry_after):
        pause = max(pause, min(retry_after, MAX_RETRY_AFTER))
    record.update(cool_until=now + pause, cooldowns=doubling + 1, probe_until=0)
