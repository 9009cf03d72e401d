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

import difflib
import re
import unicodedata
from dataclasses import dataclass
from datetime import date, datetime
from enum import StrEnum

from memory.consolidation import dates, language, meaning
from memory.consolidation.grounding import COMMON
from memory.consolidation.language import fold, words
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


# --- names and numbers ---------------------------------------------------------------------

_THOUSANDS = re.compile(r"(?<=\d)[,.' \u00a0\u202f](?=\d{3}(?!\d))")
_ADDRESS = re.compile(
    r"[\w.+-]+@[\w-]+(?:\.[\w-]+)+|https?://\S+|www\.\S+|\b[\w-]+\.(?:com|org|net|io|dev|example|co)\b\S*",
    re.I,
)


def numbers(text: str) -> set[int]:
    """The whole numbers of `text` ("30k" is 30000, "1,500" is 1500, "2026-03-10" three)."""
    text = _THOUSANDS.sub("", unicodedata.normalize("NFKC", text))
    out: set[int] = set()
    for match in re.finditer(r"(\d+)(?:[.,](\d+))?\s*([km])?(?![\w])|(\d+)", text, re.I):
        whole = match.group(1) or match.group(4)
        scale = {"k": 1000, "m": 1_000_000}.get((match.group(3) or "").lower(), 1)
        if match.group(2) and scale > 1:
            out.add(int(float(f"{whole}.{match.group(2)}") * scale))
        else:
            out |= {int(whole), int(whole) * scale}  # "401k" may be 401 as well
            if match.group(2):
                out.add(int(match.group(2)))
    return out


def _number_words(text: str) -> set[int]:
    folded = fold(text)
    found = {
        n
        for w, n in dates.NUMBER_WORDS.items()
        if " " not in w and len(w) > 1 and re.search(rf"(?<!\w){re.escape(w)}(?!\w)", folded)
    }
    found |= {n for w, n in dates.NUMBER_WORDS.items() if len(w) == 1 and w in folded}
    if "a couple" in folded:
        found.add(2)
    return found


def names(line: str) -> set[str]:
    """The words of `line` that name something: capitalised words that do not start a
    sentence, acronyms, e-mail addresses and links (folded)."""
    out = {fold(m.group()) for m in _ADDRESS.finditer(line)}
    rest = _ADDRESS.sub(" ", line)
    for sentence in re.split(r"(?<=[.!?:;])\s+|\n|\s[-–—]\s", rest):
        found = re.findall(r"[^\W\d_][^\W\d_'’]*(?:-[^\W\d_]+)*", sentence)
        for position, word in enumerate(found):
            if language.cjk(word):
                continue
            upper = word.isupper() and len(word) >= 2
            if (position > 0 and word[:1].isupper()) or upper:
                out.add(fold(word).strip("'’-"))
    return {n for n in out if len(n) >= 2}


_SUFFIXES = ("ning", "ing", "ied", "ies", "ed", "es", "s", "ly", "e", "en", "er", "n")


def _stem(word: str) -> str:
    for suffix in _SUFFIXES:
        if len(word) - len(suffix) >= 3 and word.endswith(suffix):
            return word[: -len(suffix)]
    return word


def _common_start(a: str, b: str) -> int:
    return next(
        (i for i, (x, y) in enumerate(zip(a, b, strict=False)) if x != y), min(len(a), len(b))
    )


def close(a: str, b: str) -> bool:
    """Two folded words are one word or name: the same, an inflection or stem of the other,
    a German compound's part, or a near spelling (Lisboa and Lisbon, München and Munchen)."""
    if a == b:
        return True
    short = min(len(a), len(b))
    if short >= 6 and (a in b or b in a):  # a German compound's part
        return True
    if not a or not b or a[0] != b[0]:
        return False  # every test below keeps the first letter; this one is cheap
    if short >= 3 and _stem(a) == _stem(b):
        return True
    if short >= 4 and (a.startswith(b) or b.startswith(a)):
        return True
    if short >= 4 and _common_start(a, b) >= max(3, max(len(a), len(b)) - 2):
        return True  # an inflection: "moro" and "mora", "gosto" and "gosta"
    if short >= 5 and abs(len(a) - len(b)) <= 3:
        return difflib.SequenceMatcher(None, a, b).ratio() >= 0.8
    return False


def name_known(name: str, known: set[str]) -> bool:
    """Whether `name` (folded, maybe several words) is among the `known` words."""
    parts = [p for p in re.split(r"[\s'’-]+", name) if p]
    if "@" in name or ("." in name and "/" in name) or name.startswith(("http", "www")):
        return name in known
    return all(
        any(close(part, word) for word in known) or bool(language.same_names(part) & known)
        for part in parts
    )


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
    said_numbers = numbers(read.quotes) | _number_words(read.quotes) | numbers(old)
    in_dates = numbers(" ".join(dates.date_phrases(line)))
    unseen = sorted(
        (numbers(dates.without_dates(line)) - said_numbers)
        | (in_dates - said_numbers - _calendar_numbers(read))
    )
    if unseen:
        return f"{unseen[0]} is not in its evidence and does not follow from it"
    for address in (fold(m.group()) for m in _ADDRESS.finditer(line)):
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
    """The line asserts what its quotes' clauses deny, or the reverse, about one thing."""
    quoted = meaning.without_corrections(clauses)
    ours = line if language.cjk(line) else meaning.without_corrections(line)
    if meaning.negated(ours, quoted) == meaning.negated(quoted, ours):
        return False
    return _related(ours, quoted)


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
