"""Trust follows evidence: each model's record of memory edits accepted and refused, read
from the consolidation log, decides whether its next change waits for the user's review.

With `[memory] review = "auto"` (the default) a change waits when it comes from a local
model (small models write valid, invented memory) or from a model whose recent edits Kept
refused; every other model's change is saved at once, shown after. `review_by_model` names
a model's rule outright.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from catalog import Catalog
from catalog.catalog import UnknownModelError
from catalog.transport import Kind, Outcome
from memory.consolidation.log import LogRecord
from memory.settings import MemorySettings, Review

# How many of a model's latest answers its record looks at.
RECENT = 10


@dataclass(frozen=True)
class TrustRecord:
    """A model's latest answers to consolidations: how many were accepted, how many had
    edits Kept refused (answers refused for their shape are not counted either way)."""

    model: str
    accepted: int = 0
    refused: int = 0

    def __str__(self) -> str:
        return f"{self.accepted} accepted, {self.refused} refused of its last {RECENT}"


def records(log: Iterable[LogRecord]) -> dict[str, TrustRecord]:
    """Each model's record from the log's lines (oldest first), over its last RECENT."""
    latest: dict[str, list[bool]] = {}
    for line in log:
        if line.purpose:  # a second opinion is not an answer to a consolidation
            continue
        if line.outcome == Outcome.OK:
            latest.setdefault(line.model, []).append(True)
        elif line.kind == Kind.REFUSED_EDIT:
            latest.setdefault(line.model, []).append(False)
    out = {}
    for model, answers in latest.items():
        recent = answers[-RECENT:]
        out[model] = TrustRecord(model, sum(recent), len(recent) - sum(recent))
    return out


@dataclass(frozen=True)
class ReviewRule:
    """Whether a model's change waits for the user, and why, in a few words."""

    before: bool
    why: str


def review_rule(
    model: str, settings: MemorySettings, catalog: Catalog, record: TrustRecord | None
) -> ReviewRule:
    """The rule for `model`'s next change to MEMORY.md."""
    chosen = settings.review_by_model.get(model)
    if chosen is not None and chosen is not Review.AUTO:
        return ReviewRule(chosen is Review.BEFORE, f"review_by_model says {chosen}")
    if chosen is None and settings.review is not Review.AUTO:
        return ReviewRule(settings.review is Review.BEFORE, f"review = {settings.review}")
    if record is not None and record.refused:
        return ReviewRule(True, f"recent edits were refused ({record})")
    try:
        entry = catalog.get(model)
    except UnknownModelError:
        return ReviewRule(True, "not in the catalog")
    if not catalog.gateway_of(entry).needs_key:
        return ReviewRule(True, "a local model")
    return ReviewRule(False, "a hosted model with no refused edits")
