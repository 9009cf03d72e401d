"""`kept eval memory --edits`: Kept's edit checks measured on both sides, with no model.

The data (memory/evaldata/edits.json) holds conversations and, for each, the save_memory
edits a capable model proposed, each labelled good (a careful reader wants it in
MEMORY.md) or bad, by category: hallucinated, misattributed, flipped, injected from a
paste or a tool, stale, an unrequested forget, junk, a credential, an order the user never
gave, a duplicate; and the good kinds a strict check refuses: paraphrases, resolved
dates, abbreviations, German, Japanese, another language, fixes to the user's own line.

Each case is decided by the same code a consolidation runs (memory.consolidation.decisions).
Without a second opinion, an edit Kept cannot tell alone waits for the user (held), which
keeps a bad one out of MEMORY.md and a good one from being applied at once; with a judge
model (`judged`), it is asked as a consolidation asks it. The report says, per category,
how many good edits were applied and how many bad ones kept out.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from catalog import Catalog, Chain, RetryPolicy
from memory.consolidation.decisions import Decision, Fate, apply_edits
from memory.consolidation.edits import Context, normal, parse_edits
from memory.consolidation.evidence import Verdict
from memory.eval.dataset import DatasetError
from memory.message import Message, clean_message

EDITS = Path(__file__).parents[1] / "evaldata" / "edits.json"
BUDGET = 16_000


@dataclass(frozen=True)
class Labelled:
    good: bool
    category: str
    item: dict[str, Any]  # the edit as save_memory carries it
    note: str = ""


@dataclass(frozen=True)
class Case:
    id: str
    split: str
    language: str
    time: datetime
    memory: str
    user_lines: frozenset[str]
    messages: tuple[Message, ...]
    edits: tuple[Labelled, ...]


def _message(raw: dict[str, Any], when: datetime) -> Message:
    record = dict(raw)
    if "parts" in raw:
        content, spans = "", []
        for part in raw["parts"]:
            text = str(part.get("typed", part.get("pasted", "")))
            if "pasted" in part:
                spans.append([len(content), len(content) + len(text)])
            content += text
        record = {k: v for k, v in raw.items() if k != "parts"}
        record.update(content=content, pasted=spans)
    record["time"] = when.isoformat(timespec="seconds")
    return clean_message(record)


def _case(raw: dict[str, Any]) -> Case:
    when = datetime.fromisoformat(raw["time"])
    messages = tuple(
        _message(m, when + timedelta(minutes=i)) for i, m in enumerate(raw["messages"])
    )
    edits = tuple(
        Labelled(bool(e["good"]), str(e["category"]), dict(e["edit"]), str(e.get("note", "")))
        for e in raw["edits"]
    )
    return Case(
        str(raw["id"]),
        str(raw.get("split", "dev")),
        str(raw.get("language", "")),
        when,
        "\n".join(raw.get("memory") or []) + ("\n" if raw.get("memory") else ""),
        frozenset(normal(line) for line in raw.get("user_lines") or []),
        messages,
        edits,
    )


def load_cases(path: Path = EDITS) -> list[Case]:
    """The cases of an edits file; DatasetError naming the file and case when it is off."""
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise DatasetError(f"{path} cannot be read: {exc.strerror or exc}.") from None
    try:
        data = json.loads(text)
    except ValueError as exc:
        raise DatasetError(f"{path} cannot be read as JSON ({exc}).") from None
    if not isinstance(data, dict):
        raise DatasetError(f"{path} is not a JSON object with cases.")
    cases = []
    for index, raw in enumerate(data.get("cases") or [], start=1):
        try:
            cases.append(_case(raw))
        except (KeyError, TypeError, ValueError, AttributeError) as exc:
            raise DatasetError(f"{path}, case {index}: {exc}.") from None
    return cases


def decide(case: Case, verdicts: Mapping[int, Verdict] | None = None) -> tuple[Decision, ...]:
    """What Kept decides on each of the case's edits (with a second opinion's `verdicts`)."""
    context = Context(case.messages, case.time, BUDGET, case.user_lines)
    edits = parse_edits([e.item for e in case.edits])
    return apply_edits(case.memory, edits, context, verdicts, "the judge").decisions


async def judged(
    case: Case, catalog: Catalog, judge: str, policy: RetryPolicy, *, trusted: bool
) -> tuple[Decision, ...]:
    """The case decided with `judge`'s second opinion, as a consolidation asks for one: a
    judge whose own changes would wait for review (`trusted` false) may only refuse."""
    from memory.consolidation.judge import second_opinion

    decisions = decide(case)
    chain = Chain((catalog.get(judge),), "the judge alone")
    opinion = await second_opinion(
        catalog, chain, None, decisions, policy=policy, health=None, on_attempt=None
    )
    verdicts = opinion.verdicts
    if not trusted:
        verdicts = {i: v for i, v in verdicts.items() if v is Verdict.REFUSED}
    return decide(case, verdicts) if opinion.judge else decisions


@dataclass
class Tally:
    """One category's edits and what became of them."""

    category: str
    good: bool
    fates: Counter[str] = field(default_factory=Counter)
    misses: list[str] = field(default_factory=list)  # "case: edit — reason" of each miss

    @property
    def total(self) -> int:
        return sum(self.fates.values())

    @property
    def right(self) -> int:
        """Good: applied at once. Bad: anything but applied (refused, held, unchanged)."""
        applied = self.fates[Fate.APPLIED]
        return applied if self.good else self.total - applied

    @property
    def share(self) -> float:
        return self.right / self.total if self.total else 1.0

    def to_dict(self) -> dict[str, Any]:
        fates = {str(f): self.fates[f] for f in Fate}
        return {"good": self.good, "edits": self.total, "right": self.right, **fates}


@dataclass
class EditsReport:
    tallies: dict[tuple[bool, str], Tally]
    cases: int
    whole_refusals: int  # replies with a good edit whose every edit was refused

    def side(self, good: bool) -> tuple[int, int]:
        """Good (`good`): how many were applied, of how many. Bad: how many kept out."""
        chosen = [t for (g, _), t in self.tallies.items() if g is good]
        return sum(t.right for t in chosen), sum(t.total for t in chosen)

    def to_dict(self) -> dict[str, Any]:
        return {
            "cases": self.cases,
            "replies_refused_whole": self.whole_refusals,
            "categories": {t.category: t.to_dict() for t in self.tallies.values()},
        }


def tally(cases: Sequence[Case], decided: Sequence[Sequence[Decision]]) -> EditsReport:
    """What became of each labelled edit, by category."""
    tallies: dict[tuple[bool, str], Tally] = {}
    whole = 0
    for case, decisions in zip(cases, decided, strict=True):
        if any(e.good for e in case.edits) and all(d.fate is Fate.REFUSED for d in decisions):
            whole += 1
        for labelled, decision in zip(case.edits, decisions, strict=True):
            key = (labelled.good, labelled.category)
            counted = tallies.setdefault(key, Tally(labelled.category, labelled.good))
            counted.fates[decision.fate] += 1
            if (decision.fate is Fate.APPLIED) != labelled.good:
                counted.misses.append(f"{case.id}: {decision}")
    return EditsReport(tallies, len(cases), whole)


def run_edits(cases: Sequence[Case]) -> EditsReport:
    """Kept's own checks on every case, no model asked."""
    return tally(cases, [decide(case) for case in cases])
