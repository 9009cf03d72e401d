"""Whether an edit a model proposes stands on the user's own words, quoted.

Every add, replace and forget carries `evidence`: short verbatim quotes, each naming the
message it is from. A quote counts only where the user typed it: not in the assistant's
words, a tool's output, an attachment or pasted text (the journal marks what was pasted;
memory.message). The line is then read against its quotes, not against the whole session:
- its numbers must be in the quotes, or follow from them and the message's time (a date a
  model resolved from "next Tuesday", a month from "last month");
- its names (capitalised words, e-mail addresses, links) must be in the quotes, another
  thing the user typed, or the usual other spelling ("JS" for "JavaScript");
- it must not assert what its quotes deny, or deny what they assert;
- a line that directs the assistant needs a quote in which the user asked for it;
- a credential is never a memory line, and a value the user turned down ("Lyon, not
  Lille") is refused anywhere in the reply.

Each check ends in one of three verdicts: the edit is refused (with the reason), checked,
or uncertain: Kept cannot tell by itself (a paraphrase in other words, another language,
a quote about someone else) and a second opinion or the user decides
(memory.consolidation.judge, memory.consolidation.review).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import date, datetime
from enum import StrEnum

from memory.consolidation import dates, language, meaning
from memory.consolidation.grounding import COMMON
from memory.consolidation.language import (
    ADDRESSES,
    close,
    fold,
    name_known,
    names,
    numbers,
    words,
)
from memory.consolidation.quotes import Found, Quote, Said, find_quote


class Verdict(StrEnum):
    CHECKED = "checked"  # every test Kept can make holds
    UNCERTAIN = "uncertain"  # Kept cannot tell: a second opinion or the user decides
    REFUSED = "refused"


@dataclass(frozen=True)
class Check:
    verdict: Verdict
    reason: str = ""
    found: tuple[Found, ...] = ()

    @classmethod
    def refused(cls, reason: str, found: tuple[Found, ...] = ()) -> Check:
        return cls(Verdict.REFUSED, reason, found)


# --- the check -----------------------------------------------------------------------------


@dataclass(frozen=True)
class Claim:
    """What an edit says: its new line (empty for a forget), the line it changes, and its
    quotes."""

    line: str
    old: str
    quotes: tuple[Quote, ...]
    forget: bool = False
    users_line: bool = False  # `old` is a line the user wrote


@dataclass(frozen=True)
class _Read:
    """The evidence of one edit as the checks read it: the quotes, the clauses they are
    in, the sentences they are in."""

    found: tuple[Found, ...]

    @property
    def quotes(self) -> str:
        return " … ".join(f.text for f in self.found)

    @property
    def clauses(self) -> str:
        return " … ".join(f.clause or f.text for f in self.found)

    @property
    def sentences(self) -> str:
        return " … ".join(f.sentence or f.text for f in self.found)


def check(claim: Claim, said: Said) -> Check:
    """The verdict on one edit: refused, uncertain or checked (the module's docstring)."""
    if not claim.quotes:
        return Check.refused("it quotes none of the user's words as its evidence")
    found: list[Found] = []
    for quote in claim.quotes:
        where = find_quote(quote, said)
        if isinstance(where, str):
            return Check.refused(where)
        found.append(where)
    read = _Read(tuple(found))
    if claim.forget:
        return _check_forget(claim, read)
    problem = _refusal(claim.line, read, said, claim.old)
    if claim.users_line and _asks_only(read):
        problem = problem or "the user wrote that line, and only asked a question"
    if problem:
        return Check.refused(problem, read.found)
    doubt = _doubt_users_line(claim, read) if claim.users_line else ""
    doubt = doubt or _doubt(claim.line, read, said, claim.old)
    if doubt:
        return Check(Verdict.UNCERTAIN, doubt, read.found)
    return Check(Verdict.CHECKED, "", read.found)


def _refusal(line: str, read: _Read, said: Said, old: str) -> str:
    """Why the line cannot stand on its evidence whatever a second opinion says, or ""."""
    if meaning.credential(line):
        return "memory never keeps a credential (a key, a PIN, a password, a card number)"
    said_numbers = numbers(read.quotes) | dates.spelled_numbers(read.quotes) | numbers(old)
    in_dates = numbers(" ".join(dates.date_phrases(line)))
    unseen = sorted(
        (numbers(dates.without_dates(line)) - said_numbers)
        | (in_dates - said_numbers - _calendar_numbers(read))
    )
    if unseen:
        return f"{unseen[0]} is not in its evidence and does not follow from it"
    for address in (fold(m.group()) for m in ADDRESSES.finditer(line)):
        if address not in fold(read.quotes):
            return f"'{address}' is not in its evidence"
    unknown = _unknown_name(line, read, said, old)
    if unknown and _surely_a_name(unknown, line, read):
        return f"'{unknown}' was never said by the user"
    down = _turned_down_in(line, said)
    if down:
        return f"the user said it is not '{down}'"
    if _flipped(line, read.clauses):
        return "it says the opposite of what the user said"
    if meaning.directs(line) and not meaning.requests(read.sentences):
        return "it directs the assistant, and the user did not ask for that"
    return ""


def _surely_a_name(name: str, line: str, read: _Read) -> bool:
    """A capitalised word nobody typed is an invented name, except where it may be a
    German noun, an acronym, or a name written in another script than the user's."""
    if meaning.nouns_capitalised(line) or language.cjk(read.quotes):
        return False
    return not any(w.isupper() and fold(w) == name for w in re.findall(r"\w+", line))


def _calendar_numbers(read: _Read) -> set[int]:
    """The numbers the days the quotes' sentences mean are written with ("next Tuesday"
    said on 7 March 2026: 2026, 3, 10): a line's date may hold them, nothing else may."""
    out: set[int] = set()
    for found in read.found:
        day = _day(found.time)
        if day is not None:
            out |= dates.calendar_numbers(found.sentence or found.text, day)
    return out


def _day(stamp: str) -> date | None:
    try:
        return datetime.fromisoformat(stamp).date()
    except ValueError:
        return None


def _turned_down_in(line: str, said: Said) -> str:
    folded = fold(meaning.without_corrections(line))
    if meaning.negated(line):
        return ""
    for value in sorted(said.turned_down):
        if language.cjk(value):
            if value in folded:
                return value
        elif re.search(rf"(?<!\w){re.escape(value)}(?!\w)", folded):
            return value
    return ""


_ARTICLES = frozenset(
    fold(
        "the and for with that this from has have had was were is are user users their them "
        "they his her she he its our who whom also very really"
    ).split()
)
# Words that tell nothing of which fact a line states: those any line uses, the negations
# (their match is the polarity test's), and the time words (the dates' test).
_FILLER = (
    _ARTICLES
    | COMMON
    | meaning.NEGATIONS
    | frozenset(dates.NUMBER_WORDS)
    | frozenset(
        fold(
            "lives works likes uses wants prefers loves enjoys is has been since about around "
            "before after currently usually often also still now soon week weeks month months "
            "year years day days morning evening night time"
        ).split()
    )
)


def _content(text: str, *, verbs: bool = False) -> set[str]:
    return {
        w
        for w in words(text)
        if (len(w) >= 3 or language.cjk(w)) and w not in (_ARTICLES if verbs else _FILLER)
    }


def _near(word: str, known: set[str]) -> bool:
    return any(close(word, k) for k in known) or bool(language.same_names(word) & known)


def _related(line: str, text: str, *, verbs: bool = False) -> bool:
    """Whether the line and its quotes speak of one thing: a word of one near a word of
    the other (or one's other spelling); `verbs`: "lives" and "works" count too."""
    theirs = _content(text, verbs=True)
    return any(_near(w, theirs) for w in _content(line, verbs=verbs))


def _flipped(line: str, clauses: str) -> bool:
    """The line asserts what its quotes' clauses deny, or the reverse, about one thing:
    every clause that speaks of what the line does says the opposite ("the name Mochi never
    stuck, so we renamed him Biscuit" does not deny "Has a cat called Biscuit")."""
    ours = line if language.cjk(line) else meaning.without_corrections(line)
    pieces = [p for p in _CLAUSES.split(meaning.without_corrections(clauses)) if p.strip()]
    related = [p for p in pieces if _related(ours, p)]
    return bool(related) and all(
        meaning.negated(ours, p) != meaning.negated(p, ours) for p in related
    )


_CLAUSES = re.compile(r"[,;:…]|\s(?:but|so|and then|mas|aber|pero|então|donc)\s")


def _known_words(read: _Read, said: Said, old: str) -> set[str]:
    known = set(words(read.quotes)) | set(said.typed_words) | set(words(old))
    for found in read.found:
        day = _day(found.time)
        if day is not None:
            known |= dates.calendar_words(found.sentence or found.text, day)
    return known


def _unknown_name(line: str, read: _Read, said: Said, old: str) -> str:
    known = _known_words(read, said, old)
    unknown = sorted(
        n for n in names(line) if not name_known(n, known) and not _expanded(n, line, read)
    )
    return unknown[0] if unknown else ""


_calendar = frozenset(dates.MONTHS) | frozenset(dates.DAYS)


def _expanded(word: str, line: str, read: _Read) -> bool:
    """Whether `word` is part of what an acronym of the quotes stands for: "Google
    Kubernetes Engine" for "GKE", "New York City" for "NYC", "MacBook Pro" for "MBP"."""
    acronyms = {a for a in re.findall(r"\b[A-Z][A-Z0-9]{1,5}\b", read.sentences)}
    for run in re.finditer(r"(?:[A-Z][\w-]*\s?)+", line):
        capitals = "".join(c for c in run.group() if c.isupper())
        if capitals in acronyms and word in {fold(w) for w in run.group().split()}:
            return True
    return False


# At most this share of a line's telling words may be missing from its quotes before Kept
# cannot tell by itself that the quotes say it.
UNCOVERED = 1 / 3


def _doubt(line: str, read: _Read, said: Said, old: str) -> str:
    """Why Kept cannot tell by itself that the quotes say the line, or ""."""
    unknown = _unknown_name(line, read, said, old)
    if unknown:
        return f"'{unknown}' is not in its evidence"
    if _asks_only(read):
        return "its evidence is a question, not a statement"
    if meaning.about_someone_else(read.clauses) and not meaning.speaks_of(line, read.sentences):
        return "its evidence speaks of someone else"
    ours = _content(line)
    theirs = _content(read.sentences, verbs=True) | _content(old, verbs=True)
    theirs |= _known_words(read, said, old) & _calendar
    missing = [w for w in ours if not _near(w, theirs) and not _expanded(w, line, read)]
    if not ours or len(missing) > (len(ours) - 1) * UNCOVERED:
        return "its evidence is in other words than the line"
    return ""


def _asks_only(read: _Read) -> bool:
    """Whether every sentence the quotes are in is a question that says nothing of the
    user ("What food do cats like?"; "Can you help me plan a trip to Lisbon?" does)."""
    return all(
        (f.sentence or f.text).rstrip().endswith(("?", "？"))
        and not meaning.first_person(f.sentence or f.text)
        for f in read.found
    )


def _doubt_users_line(claim: Claim, read: _Read) -> str:
    """A line the user wrote is changed only where they say that fact changed, naming it:
    a statement about themselves that names the old line or its new value."""
    corrected = {w for v in meaning.turned_down(read.clauses) for w in words(v)}
    if corrected & set(words(claim.old)):
        return ""  # "it's spelled Katja, not Katya": the user corrected that very line
    if not meaning.first_person(read.clauses):
        return "the user wrote that line, and its evidence is not about them"
    if _related(claim.old, read.quotes) or (
        _related(claim.old, claim.line, verbs=True) and _related(claim.line, read.quotes)
    ):
        return ""
    return "the user wrote that line, and its evidence does not name it"


def _check_forget(claim: Claim, read: _Read) -> Check:
    if not meaning.asks_to_forget(read.sentences):
        return Check.refused("the user did not ask to forget it", read.found)
    if meaning.forgets_everything(read.sentences):
        return Check(Verdict.CHECKED, "", read.found)
    named = meaning.naming_words(read.sentences)
    if not any(_near(w, named) for w in _content(claim.old)):
        return Check.refused("the user asked to forget something else", read.found)
    return Check(Verdict.CHECKED, "", read.found)
