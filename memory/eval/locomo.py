"""LoCoMo (snap-research/locomo) as Kept's dataset: conversations between two people, whose
questions ask about both, read so that they measure the same things as Kept's own personas.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from memory.eval.dataset import (
    NEVER_SAID_KEYWORDS,
    Category,
    Dataset,
    Message,
    Persona,
    Question,
    Reader,
    Session,
)
from memory.eval.score import fold

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
    read = Reader(source)
    personas = [
        _persona(read, read.obj(item, f"sample {number}"), number)
        for number, item in enumerate(samples, start=1)
    ]
    return Dataset(Path(source).stem, source, tuple(personas), kind="locomo")


def _persona(read: Reader, sample: Mapping[str, Any], number: int) -> Persona:
    name = str(sample.get("sample_id") or f"sample-{number}")
    where = f"sample {number} ({name!r})"
    conversation = read.obj(sample.get("conversation"), f"{where}, 'conversation'")
    speakers = [str(conversation.get(k) or "") for k in ("speaker_a", "speaker_b")]
    numbers = sorted(
        int(match.group(1))
        for key in conversation
        if (match := re.fullmatch(r"session_(\d+)", key))
    )
    found = (_session(read, conversation, n, where) for n in numbers)
    sessions = sorted((s for s in found if s is not None), key=lambda s: s.time)
    questions = [
        _question(read, read.obj(entry, f"{where}, question {i}"), f"{where}, question {i}")
        for i, entry in enumerate(read.items(sample.get("qa"), f"{where}, 'qa'"), start=1)
    ]
    return Persona(
        name,
        f"LoCoMo conversation between {speakers[0]} and {speakers[1]}",
        (),
        (),
        tuple(sessions),
        tuple(questions),
    )


def _session(read: Reader, conversation: Mapping[str, Any], n: int, where: str) -> Session | None:
    """Session `n`: each turn a user message in its speaker's name; None when it says
    nothing."""
    turns = read.items(conversation[f"session_{n}"], f"{where}, 'session_{n}'")
    if not turns:
        return None
    stamp = conversation.get(f"session_{n}_date_time")
    try:
        when = datetime.strptime(str(stamp).strip(), _LOCOMO_TIME).replace(tzinfo=UTC)
    except ValueError:
        raise read.fail(
            where,
            f"'session_{n}_date_time' is {stamp!r}, not a date like '1:56 pm on 8 May, 2023'",
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
    return Session(when, tuple(messages)) if messages else None


def _question(read: Reader, qa: Mapping[str, Any], where: str) -> Question:
    category = LOCOMO_CATEGORIES.get(qa.get("category"))  # type: ignore[arg-type]
    if category is None:
        raise read.fail(where, f"'category' is {qa.get('category')!r}, not 1-5")
    question = read.text(qa, "question", where)
    if category is Category.NEVER_SAID:
        return Question(
            question,
            category,
            "Not mentioned in the conversation.",
            ((*NEVER_SAID_KEYWORDS, "no information"),),
        )
    answer = qa.get("answer")
    if answer is None or not str(answer).strip():
        raise read.bad(where, "has no 'answer'")
    gold = str(answer).strip()
    if qa.get("category") == 3:
        gold = gold.split(";")[0].strip()
    return Question(question, category, gold, _answer_keywords(gold))


def _answer_keywords(answer: str) -> tuple[tuple[str, ...], ...]:
    words = [w for w in re.findall(r"[\w'-]+", fold(answer)) if w not in _FILLER]
    return tuple((w,) for w in dict.fromkeys(words)) or ((fold(answer),),)
