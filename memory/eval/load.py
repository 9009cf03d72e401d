"""Reading a data file into a Dataset: Kept's own format, checked field by field (every
quoted line of a gold edit must be in MEMORY.md when it is quoted, and every gold edit
carries evidence: words copied from a user message of its session), or a LoCoMo file,
recognised by its shape and handed to `locomo`.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from memory.eval.dataset import (
    NEVER_SAID_KEYWORDS,
    Category,
    Dataset,
    DatasetError,
    Edit,
    Message,
    Persona,
    Question,
    Quote,
    Reader,
    Session,
    gold_memory,
)
from memory.eval.locomo import load_locomo

# The dataset Kept ships: in memory/evaldata/, beside this package, so that package-data
# (`memory = ["evaldata/*.json"]`) ships it.
SHIPPED = Path(__file__).resolve().parents[1] / "evaldata" / "personas.json"
FORMAT_VERSION = 1


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
    read = Reader(source)
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


def _persona(read: Reader, data: Mapping[str, Any], number: int) -> Persona:
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


def _session(read: Reader, data: Mapping[str, Any], where: str) -> Session:
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
                evidence=_evidence(read, edit, at, messages),
            )
        )
    return Session(
        when if when.tzinfo else when.replace(tzinfo=UTC),
        tuple(messages),
        read.text(data, "history_entry", where, required=False),
        tuple(edits),
    )


def _evidence(
    read: Reader, edit: Mapping[str, Any], at: str, messages: Sequence[Message]
) -> tuple[Quote, ...]:
    """An edit's evidence: at least one quote, each naming a user message of its session
    (1-based) and copied from it (spacing and case aside)."""
    if edit.get("evidence") is None:
        raise read.fail(at, "'evidence' is missing")
    quotes = []
    for k, item in enumerate(read.items(edit["evidence"], f"{at}, 'evidence'", empty=False), 1):
        where = f"{at}, evidence {k}"
        entry = read.obj(item, where)
        number = entry.get("message")
        if not isinstance(number, int) or isinstance(number, bool):
            raise read.fail(where, f"'message' is {number!r}, not a message number")
        if not 1 <= number <= len(messages):
            raise read.fail(
                where, f"'message' is {number}, but the session has {len(messages)} messages"
            )
        said = messages[number - 1]
        if said.role != "user":
            raise read.fail(where, f"message {number} is the {said.role}'s, not the user's")
        quote = read.text(entry, "quote", where)
        if _folded(quote) not in _folded(said.content):
            raise read.fail(where, f"the quote {quote!r} is not in message {number}")
        quotes.append(Quote(number, quote))
    return tuple(quotes)


def _folded(text: str) -> str:
    """Text as a quote is compared: spacing collapsed, case folded, curly quotes straight."""
    return " ".join(text.translate(_STRAIGHT).split()).casefold()


_STRAIGHT = str.maketrans({"\u2018": "'", "\u2019": "'", "\u201c": '"', "\u201d": '"'})


def _question(read: Reader, data: Mapping[str, Any], where: str) -> Question:
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
