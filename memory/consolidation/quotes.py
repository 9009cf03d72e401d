"""The user's words as evidence: each message of a session as the checks read it (who
wrote it, when, what was typed and what pasted), and where a quote a model gives was
typed by the user, with the clause and sentence around it.

A journal marks what was pasted (memory.message); text that looks pasted though nothing
marked it (an e-mail header, a quoted reply, a fenced block, a long run of lines: an
import, an older journal) counts as pasted too.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date, datetime
from typing import Any

from memory.consolidation import meaning
from memory.consolidation.language import cased, plain, words
from memory.message import Message, pasted_spans

QUOTE_LIMIT = 400
# A gap between the typed parts around a paste: no quote may bridge it.
_GAP = "\n\u2029\n"
_PIECES = re.compile(r"\s*(?:\.\.\.|…|\[\.\.\.\]|\[…\])\s*")


@dataclass(frozen=True)
class Quote:
    """The user's words an edit stands on, as the model quoted them."""

    message: int  # the message's number in the transcript (1 = the first)
    text: str

    def to_json(self) -> dict[str, Any]:
        return {"message": self.message, "quote": self.text}


@dataclass(frozen=True)
class Found:
    """A quote found where the user typed it: which message, and when it was said."""

    message: int
    text: str
    time: str
    clause: str = ""  # the clauses of the message the quote is in (its negation is theirs)
    sentence: str = ""  # the sentences it is in (who it speaks of, which day it means)

    def to_json(self) -> dict[str, Any]:
        return {"message": self.message, "quote": self.text, "time": self.time}


@dataclass(frozen=True)
class Spoken:
    """One message as the checks read it: who, when, and what was typed."""

    number: int
    role: str
    time: str
    typed: str  # `plain`, pasted parts cut out (a gap stands in their place)
    pasted: str  # `plain`, the pasted parts only
    cased: str = ""  # `typed` with its case (memory.consolidation.language.cased)

    @property
    def day(self) -> date | None:
        try:
            return datetime.fromisoformat(self.time).date()
        except ValueError:
            return None


def message_number(index: int) -> int:
    """The number a transcript gives the message at `index` of a session's messages."""
    return index + 1


# Text that looks pasted though nothing marked it (an import, an older journal): an e-mail
# header, a quoted reply, a fenced block, or a long run of lines.
_HEADER = re.compile(
    r"^(?:from|to|subject|date|cc|de|para|assunto|von|an|betreff|objet):\s", re.I | re.M
)
_FENCE = re.compile(r"```.*?(?:```|\Z)", re.S)
_QUOTED = re.compile(r"(?:^>.*(?:\n|$))+", re.M)
LONG_BLOCK = 8  # lines


def looks_pasted(content: str) -> list[list[int]]:
    """The spans of `content` that look pasted rather than typed."""
    spans = [[m.start(), m.end()] for m in _FENCE.finditer(content)]
    spans += [[m.start(), m.end()] for m in _QUOTED.finditer(content)]
    header = _HEADER.search(content)
    if header:
        spans.append([header.start(), len(content)])
    blocks = re.split(r"\n\s*\n", content)
    at = 0
    for block in blocks:
        start = content.find(block, at)
        at = start + len(block)
        if block.count("\n") + 1 >= LONG_BLOCK:
            spans.append([start, at])
    return pasted_spans(spans, len(content))


def _typed_and_pasted(message: Message) -> tuple[str, str]:
    content = str(message.get("content") or "")
    if message.get("role") != "user":
        return "", content
    spans = pasted_spans(list(message.get("pasted") or []) + looks_pasted(content), len(content))
    typed, pasted, at = [], [], 0
    for start, end in spans:
        typed.append(content[at:start])
        pasted.append(content[start:end])
        at = end
    typed.append(content[at:])
    return _GAP.join(typed), _GAP.join(pasted)


@dataclass(frozen=True)
class Said:
    """A session's messages as evidence: what each typed, and what the user turned down."""

    messages: tuple[Spoken, ...]
    turned_down: frozenset[str]
    typed_words: frozenset[str]  # every word the user typed, folded

    @classmethod
    def of(cls, messages: Sequence[Message]) -> Said:
        spoken: list[Spoken] = []
        down: set[str] = set()
        typed_words: set[str] = set()
        for index, message in enumerate(messages):
            typed, pasted = _typed_and_pasted(message)
            role = str(message.get("role") or "")
            spoken.append(
                Spoken(
                    message_number(index),
                    role,
                    str(message.get("time") or ""),
                    plain(typed),
                    plain(pasted),
                    cased(typed),
                )
            )
            if role == "user":
                down |= meaning.turned_down(typed)
                typed_words.update(words(typed))
        return cls(tuple(spoken), frozenset(down), frozenset(typed_words))

    def message(self, number: int) -> Spoken | None:
        if 1 <= number <= len(self.messages):
            return self.messages[number - 1]
        return None


def _pieces(quote: str) -> list[str]:
    return [p for p in (s.strip(" \"'.,;:!?。、！？") for s in _PIECES.split(plain(quote))) if p]


def _within(pieces: list[str], text: str) -> tuple[int, int] | None:
    """Where the pieces are in `text`, in order: from the first's start to the last's end."""
    at, start = 0, -1
    for piece in pieces:
        found = text.find(piece, at)
        if found < 0:
            return None
        start = found if start < 0 else start
        at = found + len(piece)
    return start, at


_SENTENCE_END = re.compile(r"[.!?。！？\n\u2029]+")
_CLAUSE_END = re.compile(
    r"[.!?。！？\n\u2029,;:、]+|\s(?:but|mas|aber|pero|mais|ma|however|though|although|"
    r"while|whereas|sondern|doch|porém|contudo)\s|けど|けれど|が、|でも"
)


def _around(text: str, span: tuple[int, int], ends: re.Pattern[str]) -> str:
    """`text` from the boundary before `span` to the one after it (a "?" ending it kept)."""
    start = max((m.end() for m in ends.finditer(text, 0, span[0])), default=0)
    after = ends.search(text, span[1])
    end = len(text) if after is None else after.start() + ("?" in after.group()[:1])
    return text[start:end].strip()


def find_quote(quote: Quote, said: Said) -> Found | str:
    """Where the user typed `quote` (its named message first, then any other), or why it
    cannot count."""
    pieces = _pieces(quote.text)
    if not pieces:
        return "a quote is empty"
    if len(quote.text) > QUOTE_LIMIT:
        return f"a quote is {len(quote.text):,} characters, over the {QUOTE_LIMIT} of a quote"
    named = said.message(quote.message)
    users = [m for m in said.messages if m.role == "user"]
    ordered = ([named] if named is not None and named.role == "user" else []) + users
    for spoken in ordered:
        span = _within(pieces, spoken.typed)
        if span is not None:
            # The clause and sentence with their case, where lower case kept the length.
            text = spoken.cased if len(spoken.cased) == len(spoken.typed) else spoken.typed
            clause = _around(text, span, _CLAUSE_END)
            sentence = _around(text, span, _SENTENCE_END)
            return Found(spoken.number, quote.text, spoken.time, clause, sentence)
    short = _short(quote.text)
    if any(_within(pieces, m.pasted) is not None for m in said.messages if m.role == "user"):
        return f"'{short}' is pasted text, not the user's own words"
    for spoken in said.messages:
        if spoken.role != "user" and _within(pieces, spoken.pasted) is not None:
            whose = "a tool's output" if spoken.role == "tool" else f"the {spoken.role}'s words"
            return f"'{short}' is {whose}, not the user's"
    return f"the user never wrote '{short}'"


def _short(text: str, limit: int = 50) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"
