"""Scoring: strict (keywords, no model: repeatable, free, a lower bound), the judge (a
model shown the question, the gold answer and the answer), and what became of the user's
lines and the lines consolidation added.
"""

from __future__ import annotations

import re
import unicodedata
from typing import TYPE_CHECKING

from memory.consolidation.edits import PREVIOUSLY, normal
from memory.eval.dataset import Category, Persona, Question, bare
from memory.eval.report import Answer, PersonaReport, SessionResult

if TYPE_CHECKING:
    from catalog import Catalog, RetryPolicy


def fold(text: str) -> str:
    """Lower case, accents and typographic apostrophes folded, spaces collapsed."""
    text = text.replace("\u2019", "'").replace("\u2018", "'")
    decomposed = unicodedata.normalize("NFKD", text.casefold())
    plain = "".join(c for c in decomposed if not unicodedata.combining(c))
    return " ".join(plain.split())


def strictly_right(answer: str, question: Question) -> bool:
    """Every keyword group has a string in the answer, and no `wrong` string is in it."""
    text = fold(answer)
    if any(fold(w) in text for w in question.wrong):
        return False
    return all(any(fold(k) in text for k in group) for group in question.keywords)


def memory_lines(text: str) -> list[str]:
    """MEMORY.md's lines that hold a fact (bare): not headings, not blank."""
    return [
        bare(line)
        for line in text.splitlines()
        if line.strip() and not line.lstrip().startswith("#")
    ]


def new_lines(persona: Persona, text: str) -> list[str]:
    """The lines consolidation added: not the user's own, not Kept's record of a replaced
    fact (that fact was the user's or was added earlier, and is judged there)."""
    own = {normal(line) for line in persona.user_lines}
    return [
        line
        for line in memory_lines(text)
        if normal(line) not in own and not line.startswith(PREVIOUSLY)
    ]


JUDGE_SYSTEM = (
    "You grade a personal assistant's answers. You are shown a question about the user, "
    "the gold answer, and the assistant's answer. Reply with one word: yes if the "
    "assistant's answer is right given the gold answer, no otherwise."
)


def judge_messages(question: Question, text: str) -> list[dict[str, str]]:
    gold = question.answer or "The user never said; the right answer admits not knowing."
    if question.category is Category.NEVER_SAID:
        gold += " (The user never told the assistant this: the right answer admits not knowing.)"
    return [
        {"role": "system", "content": JUDGE_SYSTEM},
        {
            "role": "user",
            "content": f"Question: {question.question}\nGold answer: {gold}\n"
            f"Assistant's answer: {text}\n\nIs the assistant's answer right? Reply yes or no.",
        },
    ]


def verdict(text: str) -> bool | None:
    """The judge's yes (True) or no (False); None when it said neither first."""
    found = re.match(r"[\W_]*(yes|no)\b", fold(text))
    return None if found is None else found.group(1) == "yes"


async def ask_judge(
    catalog: Catalog, judge: str, question: Question, text: str, policy: RetryPolicy | None
) -> tuple[bool | None, float]:
    """The judge's verdict on one answer (None when it gave no yes or no), and its cost."""
    from catalog import complete

    result = await complete(catalog, judge, judge_messages(question, text), policy=policy)
    if not result.ok or result.reply is None:
        return None, result.cost
    return verdict(result.reply.text), result.cost


def memory_scores(
    persona: Persona,
    memory: str,
    sessions: tuple[SessionResult, ...],
    answers: tuple[Answer, ...],
    seconds: float,
) -> PersonaReport:
    """The persona's report: its sessions and answers, and what became of the user's own
    lines (a line the gold replaces or forgets may go) and of the lines added."""
    from memory.consolidation.grounding import grounded

    kept_lines = {normal(line) for line in memory_lines(memory)}
    expected = [line for line in persona.user_lines if line not in persona.user_lines_changed]
    added = new_lines(persona, memory)
    said = persona.user_messages()
    ungrounded = tuple(line for line in added if not grounded(line, said))
    return PersonaReport(
        persona.name,
        sessions,
        answers,
        memory,
        len(expected),
        sum(normal(line) in kept_lines for line in expected),
        len(added),
        len(added) - len(ungrounded),
        ungrounded,
        seconds,
    )
