"""What Kept makes of each edit a reply proposes: applied, held for a second opinion or
the user's review, refused with its reason, or nothing to do; and MEMORY.md with the edits
that stand (memory.consolidation.edits has the edits and the lines they change; the
checks against the user's words are memory.consolidation.evidence's).

A refused edit is dropped; an uncertain one is applied but held, so the whole change waits
for review with its quotes. The others stand: one bad line never costs the reply.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from memory.consolidation.edits import (
    BULLET,
    PREVIOUSLY,
    Context,
    Edit,
    Op,
    as_bullet,
    find_line,
    insert_after,
    insert_line,
    is_content,
    normal,
    section_problem,
    within_budget,
)
from memory.consolidation.evidence import Check, Claim, Verdict, check
from memory.consolidation.grounding import fold, junk
from memory.consolidation.language import close, numbers, words
from memory.consolidation.meaning import negated
from memory.consolidation.quotes import Found


class Fate(StrEnum):
    """What became of one edit."""

    APPLIED = "applied"
    HELD = "held"  # applied, but the change waits for a second opinion or the user
    REFUSED = "refused"
    UNCHANGED = "unchanged"  # nothing to do: already there, or a newer fact stands


@dataclass(frozen=True)
class Decision:
    """One edit and what Kept made of it, with why and the quotes it stood on."""

    edit: Edit
    fate: Fate
    reason: str = ""
    found: tuple[Found, ...] = ()

    def __str__(self) -> str:
        return f"{self.edit} was {self.fate}" + (f": {self.reason}" if self.reason else "")

    def to_json(self) -> dict[str, Any]:
        """As a version record or a proposal keeps it (review and blame read it back)."""
        out: dict[str, Any] = {"op": str(self.edit.op), "fate": str(self.fate)}
        for name in ("line", "old", "reason"):
            value = getattr(self.edit, name)
            if value:
                out[name] = value
        if self.reason:
            out["why"] = self.reason
        out["evidence"] = [f.to_json() for f in self.found]
        return out


@dataclass(frozen=True)
class Applied:
    """MEMORY.md with a reply's edits applied, and the decision on each."""

    text: str
    decisions: tuple[Decision, ...]

    @property
    def held(self) -> tuple[Decision, ...]:
        return tuple(d for d in self.decisions if d.fate is Fate.HELD)

    @property
    def refused(self) -> tuple[Decision, ...]:
        return tuple(d for d in self.decisions if d.fate is Fate.REFUSED)


def _shape_problem(edit: Edit, lines: list[str]) -> str | None:
    """Why a new line cannot go in whatever its evidence: a bad section, or not a fact."""
    problem = section_problem(edit.section, lines) if edit.section else None
    return problem or junk(edit.line)


def _claim(edit: Edit, context: Context, old_line: str) -> Claim:
    return Claim(
        edit.line,
        old_line,
        edit.evidence,
        forget=edit.op is Op.FORGET,
        users_line=bool(old_line) and normal(old_line) in context.user_lines,
    )


def _judged(found: Check, verdict: Verdict | None, judge: str) -> Check:
    """A check with the second opinion's word on it: a line it does not find supported
    is refused; one it supports stands even where Kept alone could not tell."""
    if verdict is None or found.verdict is Verdict.REFUSED:
        return found
    if verdict is Verdict.REFUSED:
        return Check.refused(f"{judge} found that its evidence does not support it", found.found)
    return Check(Verdict.CHECKED, "", found.found)


@dataclass
class _Applying:
    """The edits being applied, line by line, and what became of each."""

    lines: list[str]
    context: Context
    month: str
    decisions: list[Decision] = field(default_factory=list)

    def decide(
        self, edit: Edit, fate: Fate, reason: str = "", found: tuple[Found, ...] = ()
    ) -> None:
        self.decisions.append(Decision(edit, fate, reason, found))

    def apply(self, edit: Edit, verdict: Verdict | None, judge: str) -> None:
        lines = self.lines
        at = None if edit.op is Op.ADD else find_line(lines, edit.old)
        if edit.op is not Op.ADD and at is None:
            self.decide(edit, Fate.REFUSED, "MEMORY.md has no such line (quote one exactly)")
            return
        old_line = "" if at is None else lines[at]
        problem = None if edit.op is Op.FORGET else _shape_problem(edit, lines)
        if problem:
            self.decide(edit, Fate.REFUSED, problem)
            return
        found = _judged(
            check(_claim(edit, self.context, old_line), self.context.said), verdict, judge
        )
        if found.verdict is Verdict.REFUSED:
            self.decide(edit, Fate.REFUSED, found.reason, found.found)
            return
        fate = Fate.HELD if found.verdict is Verdict.UNCERTAIN else Fate.APPLIED
        if self._change(edit, at, old_line):
            self.decide(edit, fate, found.reason, found.found)
        else:
            self.decide(edit, Fate.UNCHANGED, self._why_unchanged(edit, old_line), found.found)

    def _why_unchanged(self, edit: Edit, old_line: str) -> str:
        if edit.op is Op.ADD:
            return "MEMORY.md says that already"
        if normal(old_line) in self.context.newer_lines:
            return "a later session wrote that line"
        return "the line is already so"

    def _change(self, edit: Edit, at: int | None, old_line: str) -> bool:
        """Carry out a checked edit; False when it changes nothing."""
        lines, context = self.lines, self.context
        if edit.op is Op.ADD:
            if find_line(lines, edit.line) is not None or restated(edit.line, lines):
                return False
            insert_line(lines, edit.section, as_bullet(edit.line))
            return True
        assert at is not None
        key = normal(old_line)
        if edit.op is Op.FORGET:
            if key in context.newer_lines:
                return False  # a later session wrote it: this older one cannot take it back
            del lines[at]
            return True
        if normal(edit.line) == key:
            return False
        if key in context.newer_lines:
            # The fact in memory is newer than this session: what the session said is an
            # earlier value, kept as such.
            earlier = BULLET.sub("", edit.line, count=1).strip()
            return insert_after(lines, at, f"- {PREVIOUSLY} {earlier} (as of {self.month})")
        before = BULLET.sub("", old_line, count=1).strip()
        lines[at] = as_bullet(edit.line)
        insert_after(lines, at, f"- {PREVIOUSLY} {before} (until {self.month})")
        return True


def restated(line: str, lines: Sequence[str]) -> bool:
    """Whether `line` says no more than a line already there: each of its words is one of
    that line's, or near one ("Teaches in Leeds" and "Works as a teacher in Leeds"), and
    neither denies what the other says."""
    ours = _fact_words(line)
    if not ours:
        return False
    for existing in lines:
        if not is_content(existing) or normal(existing).startswith(fold(PREVIOUSLY)):
            continue
        theirs = _fact_words(existing)
        if negated(line) != negated(existing):
            continue
        if numbers(line) - numbers(existing):
            continue  # "Runs 10 km" says more than "Runs 5 km"
        if theirs and all(any(close(w, t) for t in theirs) for w in ours):
            return True
    return False


def _fact_words(line: str) -> set[str]:
    small = {"a", "an", "the", "is", "are", "in", "at", "of", "to", "and", "e", "o", "de"}
    return {w for w in words(BULLET.sub("", line, count=1)) if w not in small}


def apply_edits(
    text: str,
    edits: Sequence[Edit],
    context: Context,
    verdicts: Mapping[int, Verdict] | None = None,
    judge: str = "",
) -> Applied:
    """MEMORY.md with each of `edits` that holds up applied, and the decision on each.
    `verdicts`, by an edit's index, are a second opinion's (`judge`): REFUSED where it found
    the evidence does not support the line, CHECKED where it does."""
    applying = _Applying(text.splitlines(), context, context.when.strftime("%Y-%m"))
    for index, edit in enumerate(edits):
        applying.apply(edit, (verdicts or {}).get(index), judge)
    return Applied(
        within_budget(applying.lines, context.budget, len(text)), tuple(applying.decisions)
    )
