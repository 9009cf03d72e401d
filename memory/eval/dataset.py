"""What an eval dataset is: personas, each with the user's own lines, past sessions and
their gold consolidations, and questions in five categories; as frozen records, whichever
file they were read from (Kept's format or LoCoMo's).

`Reader` lives here too: both formats are checked with it, so that every mistake in a data
file is one DatasetError sentence naming the file and the place.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import UTC, datetime, timedelta
from enum import StrEnum
from typing import Any

from memory.consolidation.edits import normal


class Category(StrEnum):
    """What a question tests."""

    CURRENT = "current"  # a fact still true
    CHANGED = "changed"  # a fact that changed: the newest value is the answer
    DATE = "date"  # when something happened or changed
    PREFERENCE = "preference"  # likes, dislikes, how the user wants answers
    NEVER_SAID = "never_said"  # never told: the right answer admits not knowing


# The right answer to a never_said question admits not knowing, in one of these words.
NEVER_SAID_KEYWORDS: tuple[str, ...] = (
    "don't know",
    "do not know",
    "not sure",
    "haven't told",
    "have not told",
    "never told",
    "didn't mention",
    "did not mention",
    "no record",
    "not mentioned",
)


class DatasetError(ValueError):
    """A data file that cannot be used; the message is one sentence naming file and problem."""


@dataclass(frozen=True)
class Quote:
    """One piece of an edit's evidence: words the user typed in message `message` (1-based,
    within the edit's session), copied verbatim."""

    message: int
    quote: str


# An edit as save_memory's arguments carry it.
EditJson = dict[str, str | list[dict[str, int | str]]]


@dataclass(frozen=True)
class Edit:
    """One gold edit of MEMORY.md, in save_memory's `edits` shape."""

    op: str  # "add", "replace" or "forget"
    line: str = ""  # add, replace: the new line (without "- ")
    old: str = ""  # replace, forget: the line of MEMORY.md it quotes
    section: str = ""
    reason: str = ""
    # The user's words that support it: for a forget, the request; for a replace, the user
    # saying it changed.
    evidence: tuple[Quote, ...] = ()

    def to_json(self) -> EditJson:
        """As save_memory's arguments carry it: only the fields its op uses, then the
        evidence as `[{"message": n, "quote": q}]`."""
        fields = {"add": ("line", "section"), "replace": ("old", "line"), "forget": ("old",)}
        out: EditJson = {"op": self.op}
        for name in fields[self.op]:
            value = getattr(self, name)
            if value:
                out[name] = value
        out["evidence"] = [{"message": q.message, "quote": q.quote} for q in self.evidence]
        if self.reason:
            out["reason"] = self.reason
        return out


@dataclass(frozen=True)
class Message:
    role: str  # "user" or "assistant"
    content: str


@dataclass(frozen=True)
class Session:
    """One past conversation: when it began, what was said, and the gold consolidation."""

    time: datetime  # aware; each message is a minute after the one before
    messages: tuple[Message, ...]
    history_entry: str = ""
    edits: tuple[Edit, ...] = ()

    def journal_messages(self) -> list[dict[str, str]]:
        """The messages as a journal holds them, each with its time."""
        return [
            {
                "role": m.role,
                "content": m.content,
                "time": (self.time + timedelta(minutes=i)).isoformat(timespec="seconds"),
            }
            for i, m in enumerate(self.messages)
        ]


@dataclass(frozen=True)
class Question:
    question: str
    category: Category
    answer: str  # the gold answer, for the judge and the report
    keywords: tuple[tuple[str, ...], ...]  # every group must match one of its strings
    wrong: tuple[str, ...] = ()  # any of these makes the answer wrong (a stale value)


@dataclass(frozen=True)
class Persona:
    name: str
    description: str
    memory_seed: tuple[str, ...]  # the user's hand-written MEMORY.md, line by line
    remember: tuple[str, ...]  # /remember lines, before the first session
    sessions: tuple[Session, ...]
    questions: tuple[Question, ...]

    def user_messages(self) -> list[dict[str, Any]]:
        """Everything the user said, as journal-style messages (what grounding reads)."""
        return [
            message
            for session in self.sessions
            for message in session.journal_messages()
            if message["role"] == "user"
        ]

    @property
    def user_lines(self) -> tuple[str, ...]:
        """The lines the user wrote: seed lines (not headings) and remember lines."""
        seed = (bare(line) for line in self.memory_seed if not line.lstrip().startswith("#"))
        remembered = (" ".join(line.split()) for line in self.remember)
        return tuple(dict.fromkeys(line for line in (*seed, *remembered) if line))

    @property
    def user_lines_changed(self) -> frozenset[str]:
        """User lines the gold replaces or forgets: the user asked, so they may go."""
        quoted = {normal(e.old) for s in self.sessions for e in s.edits if e.op != "add"}
        return frozenset(line for line in self.user_lines if normal(line) in quoted)

    @property
    def now(self) -> datetime:
        """When the questions are asked: the day after the last session."""
        last = self.sessions[-1] if self.sessions else None
        return (last.time if last else datetime(2026, 1, 1, 12, tzinfo=UTC)) + timedelta(days=1)


@dataclass(frozen=True)
class Dataset:
    name: str
    source: str  # the file it was read from
    personas: tuple[Persona, ...]
    kind: str = "kept"  # "kept" or "locomo"

    def only(self, names: Sequence[str]) -> Dataset:
        """The dataset with just these personas; DatasetError names one it lacks."""
        if not names:
            return self
        known = {p.name: p for p in self.personas}
        for name in names:
            if name not in known:
                raise DatasetError(
                    f"{self.source} has no persona {name!r}; it has "
                    f"{', '.join(repr(n) for n in known)}."
                )
        return replace(self, personas=tuple(known[n] for n in dict.fromkeys(names)))


def bare(line: str) -> str:
    """A MEMORY.md line as shown in the report: no leading "- " or "* ", no outer spaces
    (compared, it is also case-folded and without its full stop:
    `memory.consolidation.edits.normal`)."""
    line = line.strip()
    if line[:2] in ("- ", "* "):
        line = line[2:].strip()
    return line


class Reader:
    """Typed access to parsed JSON, each mistake a DatasetError naming where it is."""

    def __init__(self, source: str) -> None:
        self.source = source

    def fail(self, where: str, problem: str) -> DatasetError:
        """ "file: where: problem." (`where` may be empty)."""
        return DatasetError(
            f"{self.source}: {where}: {problem}." if where else f"{self.source}: {problem}."
        )

    def bad(self, subject: str, problem: str) -> DatasetError:
        """ "file: subject problem." """
        return DatasetError(f"{self.source}: {subject} {problem}.")

    def obj(self, value: Any, where: str) -> Mapping[str, Any]:
        if not isinstance(value, dict):
            raise self.bad(where, f"should be an object, not {_kind(value)}")
        return value

    def items(self, value: Any, where: str, *, empty: bool = True) -> list[Any]:
        if not isinstance(value, list):
            raise self.bad(where, f"should be a list, not {_kind(value)}")
        if not value and not empty:
            raise self.bad(where, "is empty")
        return value

    def text(self, data: Mapping[str, Any], key: str, where: str, *, required: bool = True) -> str:
        value = data.get(key)
        if value is None and not required:
            return ""
        if not isinstance(value, str) or (required and not value.strip()):
            what = "missing" if value is None else f"not text ({_kind(value)})"
            if isinstance(value, str):
                what = "empty"
            raise self.fail(where, f"'{key}' is {what}")
        return value.strip()

    def texts(self, data: Mapping[str, Any], key: str, where: str) -> tuple[str, ...]:
        values = self.items(data.get(key, []), f"{where}, '{key}'")
        for i, value in enumerate(values, start=1):
            if not isinstance(value, str) or not value.strip():
                raise self.bad(f"{where}, '{key}' item {i}", "should be non-empty text")
        return tuple(v.strip() for v in values)


def _kind(value: Any) -> str:
    return {dict: "an object", list: "a list", str: "text", type(None): "null"}.get(
        type(value), type(value).__name__
    )


def gold_memory(persona: Persona, read: Reader | None = None) -> list[str]:
    """MEMORY.md's lines (bare) after the gold edits of every session: what an ideal
    consolidation leaves. DatasetError when an edit quotes a line that is not there."""
    lines = list(persona.user_lines)
    for number, session in enumerate(persona.sessions, start=1):
        for index, edit in enumerate(session.edits, start=1):
            if edit.op == "add":
                lines.append(bare(edit.line))
                continue
            keys = [normal(line) for line in lines]
            if normal(edit.old) not in keys:
                where = f"persona {persona.name!r}, session {number}, edit {index}"
                problem = f"'old' quotes {edit.old!r}, which MEMORY.md does not hold there"
                raise (read.fail(where, problem) if read else DatasetError(f"{where}: {problem}."))
            at = keys.index(normal(edit.old))
            if edit.op == "replace":
                lines[at] = bare(edit.line)
            else:
                del lines[at]
    return lines
