"""`kept eval memory`: how well memory works with a given model, measured end to end.

A dataset's sessions are replayed through the real consolidation (`consolidate_pending`)
into a throwaway data folder, then each question is asked through the real chat turn
(`memory.assistant.answer`: MEMORY.md in the system prompt, `search_history` at hand) in a
fresh session of its own, and the answers are scored. Nothing here imitates Kept: a model
that would lose a fact in daily use loses it here, and the numbers say where.

What is measured, per question category:
- strict accuracy: the answer holds, for every keyword group, one of its strings (case and
  accents folded) and none of the question's `wrong` strings (a stale value);
- judge accuracy (with a judge model): the judge, shown the question, the gold answer and
  the answer, says yes;
- tokens, cost and time per answer.
And per persona: the share of the user's own lines (the hand-written MEMORY.md and the
/remember lines) still in the final MEMORY.md, the share of the lines consolidation added
that are grounded in what the user said, and how many sessions were saved.

Datasets: Kept's own (memory/evaldata/personas.json, shipped) or a LoCoMo file the user
downloaded (see `load_locomo` for how its categories map to Kept's).
"""

from __future__ import annotations

import asyncio
import json
import re
import tempfile
import time
import unicodedata
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, replace
from datetime import UTC, datetime, timedelta
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Any

from memory.edits import PREVIOUSLY, normal
from memory.settings import MemorySettings, Review

if TYPE_CHECKING:
    from catalog import Catalog, RetryPolicy
    from memory.consolidation import Consolidation
    from memory.store import MemoryStore

SHIPPED = Path(__file__).resolve().parent / "evaldata" / "personas.json"
FORMAT_VERSION = 1


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


# --- the dataset ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Edit:
    """One gold edit of MEMORY.md, in save_memory's `edits` shape."""

    op: str  # "add", "replace" or "forget"
    line: str = ""  # add, replace: the new line (without "- ")
    old: str = ""  # replace, forget: the line of MEMORY.md it quotes
    section: str = ""
    reason: str = ""

    def to_json(self) -> dict[str, str]:
        """As save_memory's arguments carry it: only the fields its op uses."""
        fields = {"add": ("line", "section"), "replace": ("old", "line"), "forget": ("old",)}
        out = {"op": self.op}
        for name in (*fields[self.op], "reason"):
            value = getattr(self, name)
            if value:
                out[name] = value
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
        seed = (_bare(line) for line in self.memory_seed if not line.lstrip().startswith("#"))
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


def _bare(line: str) -> str:
    """A MEMORY.md line as shown in the report: no leading "- " or "* ", no outer spaces
    (compared, it is also case-folded and without its full stop: `memory.edits.normal`)."""
    line = line.strip()
    if line[:2] in ("- ", "* "):
        line = line[2:].strip()
    return line


class _Reader:
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


def load_dataset(path: Path | str | None = None) -> Dataset:
    """Kept's dataset (the shipped one when `path` is None) or a LoCoMo file, read whole
    and checked; DatasetError (one sentence) when it cannot be used."""
    path = Path(path) if path is not None else SHIPPED
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        raise DatasetError(f"{path} does not exist.") from None
    except OSError as exc:
        raise DatasetError(f"{path} cannot be read ({exc.strerror or exc}).") from None
    try:
        data = json.loads(raw.decode("utf-8"))
    except UnicodeDecodeError:
        raise DatasetError(f"{path} is not UTF-8 text.") from None
    except ValueError as exc:
        where = f" (line {exc.lineno})" if isinstance(exc, json.JSONDecodeError) else ""
        raise DatasetError(f"{path} is not valid JSON{where}.") from None
    except RecursionError:
        raise DatasetError(f"{path} nests its JSON too deeply to read.") from None
    if isinstance(data, dict) and "personas" in data:
        return _kept_dataset(data, str(path))
    if (
        isinstance(data, list)
        and data
        and all(isinstance(s, dict) and "conversation" in s and "qa" in s for s in data)
    ):
        return load_locomo(data, str(path))
    raise DatasetError(
        f"{path} is neither a Kept eval dataset (an object with 'personas') nor a LoCoMo "
        "file (a list of samples, each with 'conversation' and 'qa')."
    )


def _kept_dataset(data: Mapping[str, Any], source: str) -> Dataset:
    read = _Reader(source)
    version = data.get("version")
    if version != FORMAT_VERSION:
        raise read.fail("", f"'version' is {version!r}; Kept reads version 1")
    personas: list[Persona] = []
    for number, item in enumerate(read.items(data["personas"], "'personas'", empty=False), 1):
        persona = _persona(read, read.obj(item, f"persona {number}"), number)
        if any(p.name == persona.name for p in personas):
            raise read.fail(f"persona {number}", f"the name {persona.name!r} is used twice")
        personas.append(persona)
    name = data.get("name")
    return Dataset(
        name if isinstance(name, str) and name else Path(source).stem, source, tuple(personas)
    )


def _persona(read: _Reader, data: Mapping[str, Any], number: int) -> Persona:
    name = read.text(data, "name", f"persona {number}")
    where = f"persona {number} ({name!r})"
    sessions: list[Session] = []
    for index, item in enumerate(read.items(data.get("sessions"), f"{where}, 'sessions'"), 1):
        session = _session(
            read, read.obj(item, f"{where}, session {index}"), f"{where}, session {index}"
        )
        if sessions and session.time < sessions[-1].time:
            raise read.bad(f"{where}, session {index}", "is dated before the session above it")
        sessions.append(session)
    questions = tuple(
        _question(read, read.obj(item, f"{where}, question {i}"), f"{where}, question {i}")
        for i, item in enumerate(read.items(data.get("questions"), f"{where}, 'questions'"), 1)
    )
    persona = Persona(
        name,
        read.text(data, "description", where, required=False),
        read.texts(data, "memory_seed", where),
        read.texts(data, "remember", where),
        tuple(sessions),
        questions,
    )
    gold_memory(persona, read)  # every quoted line must be there when it is quoted
    return persona


def _session(read: _Reader, data: Mapping[str, Any], where: str) -> Session:
    stamp = read.text(data, "time", where)
    try:
        when = datetime.fromisoformat(stamp.replace("Z", "+00:00"))
    except ValueError:
        raise read.fail(where, f"'time' {stamp!r} is not an ISO 8601 date") from None
    messages = []
    for i, item in enumerate(
        read.items(data.get("messages"), f"{where}, 'messages'", empty=False), 1
    ):
        message = read.obj(item, f"{where}, message {i}")
        role = message.get("role")
        if role not in ("user", "assistant"):
            raise read.fail(
                f"{where}, message {i}", f"'role' is {role!r}, not 'user' or 'assistant'"
            )
        messages.append(Message(role, read.text(message, "content", f"{where}, message {i}")))
    edits = []
    for i, item in enumerate(read.items(data.get("edits", []), f"{where}, 'edits'"), 1):
        edit = read.obj(item, f"{where}, edit {i}")
        op = edit.get("op")
        at = f"{where}, edit {i}"
        if op not in ("add", "replace", "forget"):
            raise read.fail(at, f"'op' is {op!r}, not 'add', 'replace' or 'forget'")
        edits.append(
            Edit(
                op,
                line=read.text(edit, "line", at) if op != "forget" else "",
                old=read.text(edit, "old", at) if op != "add" else "",
                section=read.text(edit, "section", at, required=False),
                reason=read.text(edit, "reason", at, required=False),
            )
        )
    return Session(
        when if when.tzinfo else when.replace(tzinfo=UTC),
        tuple(messages),
        read.text(data, "history_entry", where, required=False),
        tuple(edits),
    )


def _question(read: _Reader, data: Mapping[str, Any], where: str) -> Question:
    text = read.text(data, "question", where)
    try:
        category = Category(str(data.get("category")))
    except ValueError:
        raise read.fail(
            where,
            f"'category' is {data.get('category')!r}, not one of "
            f"{', '.join(c.value for c in Category)}",
        ) from None
    groups: list[tuple[str, ...]] = []
    for i, group in enumerate(read.items(data.get("keywords", []), f"{where}, 'keywords'"), 1):
        words = read.items(group, f"{where}, keyword group {i}", empty=False)
        if not all(isinstance(w, str) and w.strip() for w in words):
            raise read.bad(f"{where}, keyword group {i}", "should hold only non-empty text")
        groups.append(tuple(w.strip() for w in words))
    if not groups and category is Category.NEVER_SAID:
        groups = [NEVER_SAID_KEYWORDS]
    if not groups:
        raise read.bad(where, "has no 'keywords' to score its answer by")
    return Question(
        text,
        category,
        read.text(data, "answer", where, required=category is not Category.NEVER_SAID),
        tuple(groups),
        read.texts(data, "wrong", where),
    )


def gold_memory(persona: Persona, read: _Reader | None = None) -> list[str]:
    """MEMORY.md's lines (bare) after the gold edits of every session: what an ideal
    consolidation leaves. DatasetError when an edit quotes a line that is not there."""
    lines = list(persona.user_lines)
    for number, session in enumerate(persona.sessions, start=1):
        for index, edit in enumerate(session.edits, start=1):
            if edit.op == "add":
                lines.append(_bare(edit.line))
                continue
            keys = [normal(line) for line in lines]
            if normal(edit.old) not in keys:
                where = f"persona {persona.name!r}, session {number}, edit {index}"
                problem = f"'old' quotes {edit.old!r}, which MEMORY.md does not hold there"
                raise (read.fail(where, problem) if read else DatasetError(f"{where}: {problem}."))
            at = keys.index(normal(edit.old))
            if edit.op == "replace":
                lines[at] = _bare(edit.line)
            else:
                del lines[at]
    return lines


# --- LoCoMo --------------------------------------------------------------------------------

# LoCoMo's question categories (task_eval/evaluation.py in snap-research/locomo) as Kept's.
LOCOMO_CATEGORIES = {
    1: Category.CURRENT,  # multi-hop: facts gathered across sessions
    2: Category.DATE,  # temporal
    3: Category.PREFERENCE,  # open-domain: what the person would likely want or do
    4: Category.CURRENT,  # single-hop: one fact
    5: Category.NEVER_SAID,  # adversarial: asks about something the conversation never said
}
_LOCOMO_TIME = "%I:%M %p on %d %B, %Y"  # "1:56 pm on 8 May, 2023"
# Words of a gold answer that need no match: "the", "of", pronouns.
_FILLER_WORDS = (
    "a an the and or of in on at to for with by from is was be been her his their its she "
    "he they it that this as"
)
_FILLER = frozenset(_FILLER_WORDS.split())


def load_locomo(samples: list[Any], source: str) -> Dataset:
    """A LoCoMo file (a list of samples: "conversation" with "speaker_a", "speaker_b",
    "session_N" turns and "session_N_date_time", and "qa") as Kept's dataset.

    LoCoMo's conversations are between two people, and its questions ask about both, so
    every turn is replayed as a user message that starts with its speaker's name ("Caroline:
    ..."): what either says is the user's telling, which memory may keep. A shared photo
    adds its caption. Categories map as LOCOMO_CATEGORIES says: single-hop and multi-hop
    are "current", temporal is "date", open-domain (what the person would likely do or
    want) is "preference", adversarial is "never_said"; none is "changed", since LoCoMo
    does not ask for the newest value of a fact that changed. A gold answer becomes one
    keyword group per telling word (all must be in the answer; for open-domain only the
    first of its ';'-separated answers), so strict accuracy on LoCoMo is a lower bound:
    the judge (--judge) reads paraphrases. LoCoMo has no gold consolidation.
    """
    read = _Reader(source)
    personas: list[Persona] = []
    for number, item in enumerate(samples, start=1):
        sample = read.obj(item, f"sample {number}")
        name = str(sample.get("sample_id") or f"sample-{number}")
        where = f"sample {number} ({name!r})"
        conversation = read.obj(sample.get("conversation"), f"{where}, 'conversation'")
        speakers = [str(conversation.get(k) or "") for k in ("speaker_a", "speaker_b")]
        sessions = []
        numbers = sorted(
            int(match.group(1))
            for key in conversation
            if (match := re.fullmatch(r"session_(\d+)", key))
        )
        for n in numbers:
            turns = read.items(conversation[f"session_{n}"], f"{where}, 'session_{n}'")
            if not turns:
                continue
            stamp = conversation.get(f"session_{n}_date_time")
            try:
                when = datetime.strptime(str(stamp).strip(), _LOCOMO_TIME).replace(tzinfo=UTC)
            except ValueError:
                raise read.fail(
                    where,
                    f"'session_{n}_date_time' is {stamp!r}, not a date like "
                    "'1:56 pm on 8 May, 2023'",
                ) from None
            messages = []
            for i, turn in enumerate(turns, start=1):
                data = read.obj(turn, f"{where}, session {n}, turn {i}")
                text = read.text(data, "text", f"{where}, session {n}, turn {i}", required=False)
                caption = data.get("blip_caption")
                if isinstance(caption, str) and caption.strip():
                    text = f"{text} [shares {caption.strip()}]".strip()
                if text:
                    speaker = str(data.get("speaker") or "?")
                    messages.append(Message("user", f"{speaker}: {text}"))
            if messages:
                sessions.append(Session(when, tuple(messages)))
        sessions.sort(key=lambda s: s.time)
        questions = []
        for i, entry in enumerate(read.items(sample.get("qa"), f"{where}, 'qa'"), start=1):
            qa = read.obj(entry, f"{where}, question {i}")
            category = LOCOMO_CATEGORIES.get(qa.get("category"))  # type: ignore[arg-type]
            if category is None:
                raise read.fail(
                    f"{where}, question {i}", f"'category' is {qa.get('category')!r}, not 1-5"
                )
            question = read.text(qa, "question", f"{where}, question {i}")
            if category is Category.NEVER_SAID:
                questions.append(
                    Question(
                        question,
                        category,
                        "Not mentioned in the conversation.",
                        ((*NEVER_SAID_KEYWORDS, "no information"),),
                    )
                )
                continue
            answer = qa.get("answer")
            if answer is None or not str(answer).strip():
                raise read.bad(f"{where}, question {i}", "has no 'answer'")
            gold = str(answer).strip()
            if qa.get("category") == 3:
                gold = gold.split(";")[0].strip()
            questions.append(Question(question, category, gold, _answer_keywords(gold)))
        personas.append(
            Persona(
                name,
                f"LoCoMo conversation between {speakers[0]} and {speakers[1]}",
                (),
                (),
                tuple(sessions),
                tuple(questions),
            )
        )
    return Dataset(Path(source).stem, source, tuple(personas), kind="locomo")


def _answer_keywords(answer: str) -> tuple[tuple[str, ...], ...]:
    words = [w for w in re.findall(r"[\w'-]+", fold(answer)) if w not in _FILLER]
    return tuple((w,) for w in dict.fromkeys(words)) or ((fold(answer),),)


# --- scoring -------------------------------------------------------------------------------


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
        _bare(line)
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


# --- the report ----------------------------------------------------------------------------


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


# --- running it ----------------------------------------------------------------------------


def pinned(catalog: Catalog, model: str) -> Catalog:
    """A catalog holding only `model`, with no fallback: every answer and every save in the
    eval is that model's own, never a fallback's. Raises UnknownModelError."""
    from catalog import Catalog
    from catalog.config import CatalogConfig

    entry = replace(catalog.get(model), fallback=None)
    config = CatalogConfig(
        gateway_urls=dict(catalog.config.gateway_urls),
        transport=dict(catalog.config.transport),
        broken_gateways=dict(catalog.config.broken_gateways),
    )
    return Catalog((entry,), config, catalog.keys)


def cannot_answer(catalog: Catalog, model: str, *, probe: bool = True) -> str:
    """ "" when `model` can be asked, else the sentence why not (no key, unknown model, no
    server answering at a keyless gateway's address), before any request is paid for."""
    from catalog import UnknownModelError

    try:
        entry = catalog.get(model)
    except UnknownModelError as exc:
        return str(exc)
    route = catalog.route(entry)
    if route.problem:
        return f"{model} cannot be asked: {route.problem.rstrip('.')}."
    if probe and not route.gateway.needs_key and route.api_base:
        from catalog.probe import reachable

        problem = reachable(route.api_base)
        if problem:
            return f"{model} cannot be asked: {problem.rstrip('.')}."
    return ""


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


async def _judge(
    catalog: Catalog, judge: str, question: Question, text: str, policy: RetryPolicy | None
) -> tuple[bool | None, float]:
    from catalog import complete

    result = await complete(catalog, judge, judge_messages(question, text), policy=policy)
    if not result.ok or result.reply is None:
        return None, result.cost
    return verdict(result.reply.text), result.cost


def _replay(store: MemoryStore, persona: Persona, model: str) -> None:
    """The persona's MEMORY.md and /remember lines as the user's own versions, then each
    session as an ordinary closed journal, pending, with the dataset's times."""
    from memory import journal as journals

    store.ensure()
    if persona.memory_seed:
        seed = "\n".join(persona.memory_seed) + "\n"
        store.save_edit(seed, store.read_memory().digest)
    for line in persona.remember:
        store.remember(line)
    for index, session in enumerate(persona.sessions):
        # Ids begin with the session's time, so consolidation takes them oldest first.
        session_id = session.time.astimezone(UTC).strftime("%Y%m%d-%H%M%S-") + f"{index:06x}"
        journal = journals.create(store.sessions_dir, model, session_id)
        for message in session.journal_messages():
            journal.append(message)
        journal.mark_pending(close=True)


Progress = Callable[[str], None]


async def eval_persona(
    persona: Persona,
    catalog: Catalog,
    model: str,
    root: Path,
    *,
    settings: MemorySettings | None = None,
    judge: str | None = None,
    judge_catalog: Catalog | None = None,
    policy: RetryPolicy | None = None,
    on_progress: Progress | None = None,
) -> PersonaReport:
    """Replay one persona into a fresh data folder at `root`, ask its questions, score them.
    `catalog` should be `pinned` to `model` (run_eval does it)."""
    from memory.consolidation import consolidate_pending
    from memory.store import MemoryStore

    say = on_progress or (lambda _line: None)
    base = settings or MemorySettings()
    # Every change is saved, whichever model makes it: the eval measures what would be
    # kept, and nobody is there to review it.
    trusting = replace(base, review=Review.AFTER, review_by_model={}, consolidation_model=model)
    store = MemoryStore(root, trusting)
    await asyncio.to_thread(_replay, store, persona, model)
    started = time.monotonic()
    done = 0

    def saved(result: Consolidation) -> None:
        nonlocal done
        done += 1
        how = "saved" if result.saved else f"pending ({result.reason.rstrip('.')})"
        say(f"{persona.name}: session {done}/{len(persona.sessions)} {how}")

    results = await consolidate_pending(
        store, catalog, policy=policy, chat_model=model, on_result=saved
    )
    consolidation_seconds = time.monotonic() - started
    sessions = tuple(_session_result(r) for r in results)
    answers = []
    for number, question in enumerate(persona.questions, start=1):
        answers.append(
            await _ask(store, catalog, model, persona, question, policy, judge, judge_catalog)
        )
        say(f"{persona.name}: question {number}/{len(persona.questions)}")
    memory = (await asyncio.to_thread(store.read_memory)).text
    return _memory_scores(persona, memory, sessions, tuple(answers), consolidation_seconds)


def _session_result(result: Consolidation) -> SessionResult:
    from catalog import Outcome

    return SessionResult(
        result.session,
        result.saved,
        result.model,
        result.reason,
        result.elapsed,
        sum(a.prompt_tokens + a.completion_tokens for a in result.attempts),
        result.cost,
        tuple(a.reason for a in result.attempts if a.outcome is Outcome.REJECTED),
    )


async def _ask(
    store: MemoryStore,
    catalog: Catalog,
    model: str,
    persona: Persona,
    question: Question,
    policy: RetryPolicy | None,
    judge: str | None,
    judge_catalog: Catalog | None,
) -> Answer:
    """One question in a fresh private session: the real chat turn, whose journal is gone
    afterwards, so no later question's search finds an earlier question or answer."""
    from memory.assistant import answer
    from memory.session import LiveSession

    now = persona.now
    session = await asyncio.to_thread(LiveSession.start, store, model, private=True)
    try:
        session.append({"role": "user", "content": question.question, "time": now.isoformat()})
        started = time.monotonic()
        turn = await answer(session, catalog, model, policy=policy, now=now)
        seconds = time.monotonic() - started
    finally:
        await asyncio.to_thread(session.close)
    judged, judge_cost = None, 0.0
    if judge is not None and judge_catalog is not None:
        if turn.ok:
            judged, judge_cost = await _judge(judge_catalog, judge, question, turn.text, policy)
        else:
            judged = False
    return Answer(
        persona.name,
        question.question,
        question.category,
        question.answer,
        turn.text,
        turn.ok,
        turn.ok and strictly_right(turn.text, question),
        judged,
        turn.model,
        turn.prompt_tokens + turn.completion_tokens,
        turn.cost,
        seconds,
        len(turn.searches),
        "" if turn.ok else turn.reason,
        judge_cost,
    )


def _memory_scores(
    persona: Persona,
    memory: str,
    sessions: tuple[SessionResult, ...],
    answers: tuple[Answer, ...],
    seconds: float,
) -> PersonaReport:
    from memory.grounding import grounded

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


async def run_eval(
    dataset: Dataset,
    catalog: Catalog,
    model: str,
    *,
    settings: MemorySettings | None = None,
    judge: str | None = None,
    policy: RetryPolicy | None = None,
    workdir: Path | None = None,
    on_progress: Progress | None = None,
) -> Report:
    """Every persona of `dataset`, each in a throwaway data folder (under `workdir` when
    given, kept there; else a temporary one, removed), `model` consolidating and answering
    alone, `judge` (when given) grading. A persona for which the model saved nothing and
    answered nothing ends the run there (`nothing_answered` says why). Raises
    UnknownModelError for an unknown model."""
    started = time.monotonic()
    own = pinned(catalog, model)
    graders = pinned(catalog, judge) if judge is not None else None
    reports = []
    with tempfile.TemporaryDirectory(prefix="kept-eval-") as scratch:
        base = workdir or Path(scratch)
        for index, persona in enumerate(dataset.personas, start=1):
            root = base / f"{index:03d}-{_safe(persona.name)}"
            reports.append(
                await eval_persona(
                    persona,
                    own,
                    model,
                    root,
                    settings=settings,
                    judge=judge,
                    judge_catalog=graders,
                    policy=policy,
                    on_progress=on_progress,
                )
            )
            done = reports[-1]
            if not any(s.saved for s in done.sessions) and not any(a.ok for a in done.answers):
                break  # the model answered nothing at all: the next personas would not fare better
    return Report(
        dataset.name,
        dataset.source,
        model,
        judge,
        tuple(reports),
        time.monotonic() - started,
    )


def _safe(name: str) -> str:
    return re.sub(r"[^\w.-]+", "-", name)[:40] or "persona"


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
