"""Edits to MEMORY.md that a consolidation proposes, and the lines of MEMORY.md they change.

A model never rewrites MEMORY.md: it proposes operations (add a line, replace a quoted line,
forget a quoted line), each with the user's own words as its evidence, and Kept decides each
one on its own (memory.consolidation.evidence):
- the quoted line is there, and a new line is a fact, not template junk;
- the evidence is what the user typed, and the line stands on it; a line the user wrote
  (/remember, an edit, a reviewed change) is changed only where they say that fact changed,
  naming it, and forgotten only where they ask, naming it;
- time is respected: a replaced fact stays as a dated "Previously:" line, and a session
  older than the one that wrote a fact cannot replace it (its value is kept as an earlier
  one instead);
- a line that restates one already there is not added twice;
- the result stays within the memory budget (the oldest "Previously:" lines go first).

What becomes of each edit is memory.consolidation.decisions'.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from enum import StrEnum
from typing import Any

from catalog import ReplyRejected
from catalog.transport import Kind
from memory.consolidation.grounding import fold, markup
from memory.consolidation.quotes import Quote, Said
from memory.message import Message
from memory.sanitize import clean_text

PREVIOUSLY = "Previously:"
_HEADING = re.compile(r"^(#{1,6})\s+(.*\S)\s*$")
BULLET = re.compile(r"^\s*(?:[-*+]\s+)?")
MAX_QUOTES = 5


class Op(StrEnum):
    ADD = "add"
    REPLACE = "replace"
    FORGET = "forget"


@dataclass(frozen=True)
class Edit:
    """One proposed change to MEMORY.md, with the user's words it stands on."""

    op: Op
    line: str = ""  # the new line (add, replace)
    old: str = ""  # the quoted line (replace, forget)
    section: str = ""  # where an added line goes: a heading's text, or a whole heading line
    reason: str = ""
    evidence: tuple[Quote, ...] = ()

    def __str__(self) -> str:
        if self.op is Op.ADD:
            return f"add '{_short(self.line)}'"
        if self.op is Op.REPLACE:
            return f"replace '{_short(self.old)}'"
        return f"forget '{_short(self.old)}'"


@dataclass(frozen=True)
class Context:
    """What the edits are checked against: the session, and who wrote what, when."""

    messages: Sequence[Message]
    when: datetime  # the session's time: dates a "Previously:" line
    budget: int
    user_lines: frozenset[str] = frozenset()  # normalised lines the user wrote
    newer_lines: frozenset[str] = frozenset()  # lines written from later sessions
    said: Said = field(init=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "said", Said.of(self.messages))


def _short(text: str, limit: int = 60) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def normal(line: str) -> str:
    """A line as compared: no bullet, spaces collapsed, case folded, no final full stop."""
    text = " ".join(BULLET.sub("", line, count=1).split())
    return fold(text).rstrip(".").strip()


def _field(item: Mapping[str, Any], name: str, index: int) -> str:
    value = item.get(name, "")
    if value is None:
        return ""
    if not isinstance(value, str):
        raise ReplyRejected(f"edit {index}: {name} must be a string, not {type(value).__name__}")
    return " ".join(clean_text(value).split()) if name != "section" else clean_text(value).strip()


def _evidence(value: Any, index: int) -> tuple[Quote, ...]:
    """An edit's quotes; a wrong shape is this edit's problem, found when it is checked
    (an edit without evidence is refused on its own, never the reply)."""
    if isinstance(value, dict):
        value = [value]
    if not isinstance(value, list):
        return ()
    quotes = []
    for item in value[:MAX_QUOTES]:
        if isinstance(item, str):
            item = {"quote": item}
        if not isinstance(item, dict):
            continue
        number, text = item.get("message"), item.get("quote", item.get("text"))
        if isinstance(number, str) and number.strip().lstrip("#").isdigit():
            number = int(number.strip().lstrip("#"))
        if not isinstance(number, int) or isinstance(number, bool):
            number = 0
        if isinstance(text, str) and text.strip():
            quotes.append(Quote(number, clean_text(text)))
    return tuple(quotes)


def parse_edits(value: Any) -> tuple[Edit, ...]:
    """save_memory's `edits` argument as Edits; raises ReplyRejected on a wrong shape."""
    if value is None:
        return ()
    if not isinstance(value, list):
        raise ReplyRejected(f"edits must be a list, not {type(value).__name__}")
    edits = []
    for index, item in enumerate(value, start=1):
        if not isinstance(item, dict):
            raise ReplyRejected(f"edit {index} must be an object, not {type(item).__name__}")
        try:
            op = Op(str(item.get("op", "")).strip().lower())
        except ValueError:
            given = _short(str(item.get("op")))
            raise ReplyRejected(
                f"edit {index}: op must be add, replace or forget, not '{given}'"
            ) from None
        edit = Edit(
            op,
            _field(item, "line", index),
            _field(item, "old", index),
            _field(item, "section", index),
            _field(item, "reason", index),
            _evidence(item.get("evidence"), index),
        )
        if op in (Op.ADD, Op.REPLACE) and not edit.line:
            raise ReplyRejected(f"edit {index} ({op}) has no line")
        if op in (Op.REPLACE, Op.FORGET) and not edit.old:
            raise ReplyRejected(f"edit {index} ({op}) does not quote the line it changes")
        edits.append(edit)
    return tuple(edits)


def is_content(line: str) -> bool:
    return bool(line.strip()) and not _HEADING.match(line)


def edits_from_rewrite(old_text: str, new_text: str) -> tuple[Edit, ...]:
    """The edits a whole new MEMORY.md implies (a model that sent `memory_update` anyway):
    each is then checked like any other, so a rewrite cannot slip past the checks."""
    old, new = old_text.splitlines(), new_text.splitlines()
    heading = ""
    headings = []
    for line in new:
        if _HEADING.match(line):
            heading = line.strip()
        headings.append(heading)
    edits: list[Edit] = []
    matcher = difflib.SequenceMatcher(None, old, new, autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            continue
        gone = [line for line in old[i1:i2] if is_content(line)]
        came = [j for j in range(j1, j2) if is_content(new[j])]
        pairs = min(len(gone), len(came)) if tag == "replace" else 0
        for k in range(pairs):
            edits.append(Edit(Op.REPLACE, new[came[k]].strip(), gone[k].strip()))
        edits.extend(Edit(Op.FORGET, old=line.strip()) for line in gone[pairs:])
        edits.extend(Edit(Op.ADD, new[j].strip(), section=headings[j]) for j in came[pairs:])
    return tuple(edits)


def as_bullet(text: str) -> str:
    body = BULLET.sub("", text, count=1).strip()
    return f"- {body}"


def find_line(lines: list[str], quoted: str) -> int | None:
    wanted = normal(quoted)
    for index, line in enumerate(lines):
        if is_content(line) and normal(line) == wanted:
            return index
    return None


def insert_line(lines: list[str], section: str, line: str) -> None:
    """Add `line` at the end of `section` (created at the end when missing), or at the end."""
    if section:
        name = _HEADING.sub(r"\2", section) if _HEADING.match(section) else section
        start = _heading_index(lines, name)
        if start is None:
            if lines and lines[-1].strip():
                lines.append("")
            lines.append(section if _HEADING.match(section) else f"## {section}")
            lines.append(line)
            return
        end = start + 1
        while end < len(lines) and not _HEADING.match(lines[end]):
            end += 1
        while end > start + 1 and not lines[end - 1].strip():
            end -= 1
        lines.insert(end, line)
        return
    while lines and not lines[-1].strip():
        lines.pop()
    lines.append(line)


def section_problem(section: str, lines: list[str]) -> str | None:
    """Why a heading an edit would create is refused: markup or junk, too long, or one that
    speaks as the user's instructions (they live in INSTRUCTIONS.md, which only the user
    writes). An existing heading is always fine."""
    name = _HEADING.sub(r"\2", section).strip() if _HEADING.match(section) else section
    if _heading_index(lines, name) is not None:
        return None
    if markup(name) or "\n" in name:
        return "its new section's name is template or markup text"
    if len(name) > 80:
        return "its new section's name is over 80 characters"
    if "instruction" in fold(name):
        return "a new section of MEMORY.md cannot speak as the user's instructions"
    return None


def _heading_index(lines: list[str], name: str) -> int | None:
    wanted = fold(name).strip()
    return next(
        (
            i
            for i, text in enumerate(lines)
            if (m := _HEADING.match(text)) and fold(m.group(2)) == wanted
        ),
        None,
    )


class MemoryFull(ReplyRejected):
    """The edits would take MEMORY.md past its budget: none fits until it is tidied or the
    budget raised (the app words that next step)."""


def insert_after(lines: list[str], at: int, line: str) -> bool:
    if find_line(lines, line) is None:
        lines.insert(at + 1, line)
        return True
    return False


def within_budget(lines: list[str], budget: int, before: int) -> str:
    """The text, the oldest "Previously:" lines dropped while it is over `budget` and longer
    than it was (`before`): a memory the user made longer than the budget is theirs."""

    def joined() -> str:
        # Headings alone are not a memory: everything forgotten leaves an empty file.
        return "\n".join(lines).strip("\n") + "\n" if any(map(is_content, lines)) else ""

    result = joined()
    while len(result) > max(budget, before):
        earlier = [i for i, s in enumerate(lines) if normal(s).startswith(fold(PREVIOUSLY))]
        if not earlier:
            raise MemoryFull(
                f"the edits would make MEMORY.md {len(result):,} characters, over its "
                f"{budget:,} budget",
                Kind.REFUSED_EDIT,
            )
        del lines[earlier[0]]
        result = joined()
    return result
