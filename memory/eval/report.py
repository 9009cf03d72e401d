"""The report of a run: what each answer and each consolidation did, per persona, and the
scores per category, as printed and as `--json` writes them.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

from memory.eval.dataset import Category


@dataclass(frozen=True)
class Answer:
    """One question, asked in a fresh session, and how its answer scored."""

    persona: str
    question: str
    category: Category
    gold: str
    text: str
    ok: bool  # a model answered
    strict: bool
    judged: bool | None  # None: no judge, or the judge gave no yes/no
    model: str | None
    tokens: int
    cost: float
    seconds: float
    searches: int
    reason: str = ""  # why no model answered
    judge_cost: float = 0.0


@dataclass(frozen=True)
class SessionResult:
    """What the consolidation of one replayed session did."""

    session: str
    saved: bool
    model: str | None
    reason: str
    seconds: float
    tokens: int
    cost: float
    refused: tuple[str, ...] = ()  # why Kept refused replies (edits not grounded, ...)


@dataclass(frozen=True)
class PersonaReport:
    name: str
    sessions: tuple[SessionResult, ...]
    answers: tuple[Answer, ...]
    memory: str  # the final MEMORY.md
    user_lines: int  # the user's lines the gold keeps
    user_lines_kept: int
    new_lines: int
    new_lines_grounded: int
    ungrounded: tuple[str, ...]
    consolidation_seconds: float

    @property
    def saved(self) -> int:
        return sum(s.saved for s in self.sessions)


@dataclass(frozen=True)
class CategoryScore:
    category: str
    questions: int
    answered: int
    strict: float  # share strictly right, 0-1
    judge: float | None
    tokens_per_answer: float
    cost: float
    seconds_per_answer: float


@dataclass(frozen=True)
class Report:
    dataset: str
    source: str
    model: str
    judge: str | None
    personas: tuple[PersonaReport, ...]
    seconds: float

    @property
    def answers(self) -> list[Answer]:
        return [a for p in self.personas for a in p.answers]

    @property
    def sessions(self) -> list[SessionResult]:
        return [s for p in self.personas for s in p.sessions]

    def categories(self) -> list[CategoryScore]:
        """One score per category that has questions, in Category order, then "all"."""
        rows = []
        for category in Category:
            answers = [a for a in self.answers if a.category is category]
            if answers:
                rows.append(_score(category.value, answers, self.judge is not None))
        if self.answers:
            rows.append(_score("all", self.answers, self.judge is not None))
        return rows

    @property
    def user_lines(self) -> tuple[int, int]:
        """(kept, of) the user's own lines."""
        return sum(p.user_lines_kept for p in self.personas), sum(
            p.user_lines for p in self.personas
        )

    @property
    def grounded(self) -> tuple[int, int]:
        """(grounded, of) the lines consolidation added."""
        return (
            sum(p.new_lines_grounded for p in self.personas),
            sum(p.new_lines for p in self.personas),
        )

    @property
    def consolidation_cost(self) -> float:
        return sum(s.cost for s in self.sessions)

    @property
    def consolidation_seconds(self) -> float:
        return sum(p.consolidation_seconds for p in self.personas)

    @property
    def answer_cost(self) -> float:
        return sum(a.cost for a in self.answers)

    @property
    def judge_cost(self) -> float:
        return sum(a.judge_cost for a in self.answers)

    def to_dict(self) -> dict[str, Any]:
        """The whole report, as `--json` writes it."""
        kept, users = self.user_lines
        grounded, added = self.grounded
        return {
            "dataset": self.dataset,
            "source": self.source,
            "model": self.model,
            "judge": self.judge,
            "seconds": round(self.seconds, 3),
            "categories": [asdict(c) for c in self.categories()],
            "memory": {
                "user_lines_kept": kept,
                "user_lines": users,
                "new_lines_grounded": grounded,
                "new_lines": added,
                "sessions": len(self.sessions),
                "sessions_saved": sum(s.saved for s in self.sessions),
            },
            "cost": {
                "consolidation": self.consolidation_cost,
                "answers": self.answer_cost,
                "judge": self.judge_cost,
            },
            "personas": [asdict(p) for p in self.personas],
        }


def _score(name: str, answers: list[Answer], judged: bool) -> CategoryScore:
    answered = [a for a in answers if a.ok]
    return CategoryScore(
        name,
        len(answers),
        len(answered),
        sum(a.strict for a in answers) / len(answers),
        sum(a.judged is True for a in answers) / len(answers) if judged else None,
        sum(a.tokens for a in answered) / len(answered) if answered else 0.0,
        sum(a.cost for a in answers),
        sum(a.seconds for a in answers) / len(answers),
    )


def nothing_answered(report: Report) -> str:
    """The sentence to show when no session was saved and no question answered (the model
    never answered: a server down, a key refused), else ""."""
    if any(s.saved for s in report.sessions) or any(a.ok for a in report.answers):
        return ""
    reasons = [a.reason for a in report.answers if a.reason] + [
        s.reason for s in report.sessions if s.reason
    ]
    why = reasons[0].rstrip(".") if reasons else "no request was answered"
    return f"{report.model} saved no session and answered no question: {why}."
