"""Whether a line a model proposes for memory is supported by what the user said.

A model's output is a proposal, never the truth: a small model under a JSON grammar writes
valid arguments with invented content ("The pet's name is 'Mentor'", "Your name is Kept").
A line is grounded when its names and numbers were said in the session and enough of its
telling words come from the user's own messages. Matching is by word, folded (case and
accents) and loosely stemmed, so "hiking" meets "hike" and "Zürich" meets "zurich"; it cannot
see a fact the user stated in another language than the line's, and says no then.

The same words say where a line most likely came from (memory.recall.provenance).
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

_WORD = re.compile(r"\w+")
# Words too common to say where a line came from, or that any summary uses.
_COMMON_WORDS = """
the and for with that this from are was were has have had not but you your they them
their his her she him its our out about into over under than then there here what when
where which who why how all any can will would should could also just like user users
name names kept memory some very more most much many such been being does did doing done
get got make made want wants wanted said says say told tell asked ask asks talked talk
talks discussed discuss mentioned mention shared share session conversation chat today
now new one two use uses used using prefers prefer likes like well good who whom whose
these those other others each every only own same both after before during while again
once able way ways thing things something anything nothing previously until since per
via let lets please thanks thank yes okay que para com uma por dos das não nao mais como
mas foi ser ter está esta isso und der die das ist ein eine nicht mit sich auf für dem
den des von sie ich wir
"""
COMMON = frozenset(_COMMON_WORDS.split())
_SUFFIXES = ("ing", "ed", "es", "s", "ly", "e", "en", "er")
# Markup and template fragments a model copies from its prompt or its chat template.
_JUNK = re.compile(
    r"\{\{|\}\}|\{%|%\}|<\|[^>]*\|?>|"
    r"</?(?:history_entry|memory_update|current_memory|memory|transcript|instructions|"
    r"tool_calls?|function(?:_call)?|edits?|s|im_start|im_end)\b[^>]*>|"
    r"^\W*(?:none|null|nil|n/?a|undefined|true|false|todo|tbd|\.\.\.|…)\W*$",
    re.IGNORECASE,
)
# The assistant's own name given as the user's.
_KEPT_AS_NAME = re.compile(
    r"\b(?:name\s*(?:is|:)|called|named|you\s+are|i\s+am)\s*['\"“]?kept\b", re.IGNORECASE
)
# A line that reports the conversation instead of stating a fact: "The user said: ...".
_REPORTED = re.compile(
    r"^\W*(?:the )?(?:user|assistant|you|i) (?:said|asked|wrote|mentioned|wanted to know)\b",
    re.IGNORECASE,
)
# At most this share of a line's telling words may be absent from the user's messages.
MIN_SHARED = 1 / 3
LONGEST_LINE = 500


def fold(text: str) -> str:
    """Lower case without accents: "Zürich" and "zurich" are one word."""
    decomposed = unicodedata.normalize("NFKD", text.casefold())
    return "".join(c for c in decomposed if not unicodedata.combining(c))


def _key(word: str) -> str:
    for suffix in _SUFFIXES:
        if len(word) - len(suffix) >= 3 and word.endswith(suffix):
            return word[: -len(suffix)]
    return word


def telling(text: str) -> set[str]:
    """The telling words of `text`, folded and loosely stemmed (no numbers)."""
    return {
        _key(w)
        for w in _WORD.findall(fold(text))
        if len(w) >= 3 and w not in COMMON and not w.isdigit()
    }


def _meets(word: str, said: set[str]) -> bool:
    """`word` was said: the same key, or one a prefix of the other (at least 4 letters)."""
    if word in said:
        return True
    if len(word) < 4:
        return False
    return any(len(s) >= 4 and (s.startswith(word) or word.startswith(s)) for s in said)


def _names_and_numbers(line: str) -> tuple[set[str], set[str]]:
    """The capitalised words that are not a sentence's first, and the numbers, of `line`."""
    names: set[str] = set()
    numbers = set(re.findall(r"\d+", line))
    for sentence in re.split(r"(?<=[.!?:;])\s+|\n", line):
        words = _WORD.findall(sentence)
        for word in words[1:]:
            if word[:1].isupper() and not word.isupper() and not word.isdigit():
                names.add(_key(fold(word)))
    return names, numbers


_CALENDAR = """
january february march april may june july august september october november december
monday tuesday wednesday thursday friday saturday sunday
"""
_MONTHS = _CALENDAR.split()[:12]
_DAYS = _CALENDAR.split()[12:]


def _calendar_words(stamp: str) -> set[str]:
    """The month and weekday of a message's time: a summary may say "in March"."""
    try:
        when = datetime.fromisoformat(stamp)
    except ValueError:
        return set()
    return {_key(_MONTHS[when.month - 1]), _key(_DAYS[when.weekday()])}


def _meant(content: str, stamp: str) -> set[str]:
    """The numbers of the dates a message's relative days mean ("next Tuesday")."""
    from memory.consolidation.dates import calendar_numbers

    try:
        day = datetime.fromisoformat(stamp).date()
    except ValueError:
        return set()
    meant = calendar_numbers(content[:4000], day)
    return {str(n) for n in meant} | {f"{n:02d}" for n in meant if n < 100}


@dataclass(frozen=True)
class Evidence:
    """What a session said: the user's words, every word said, every number seen."""

    user_words: set[str]
    all_words: set[str]
    numbers: set[str]

    @classmethod
    def of(cls, messages: Sequence[Mapping[str, Any]]) -> Evidence:
        user: set[str] = set()
        everything: set[str] = set()
        numbers: set[str] = set()
        for message in messages:
            role = message.get("role")
            content = str(message.get("content") or "")
            stamp = str(message.get("time") or "")
            numbers.update(re.findall(r"\d+", stamp))
            everything |= _calendar_words(stamp)
            numbers |= _meant(content, stamp)
            if role not in ("user", "assistant"):
                continue
            words = {_key(w) for w in _WORD.findall(fold(content))}
            everything |= words
            numbers.update(re.findall(r"\d+", content))
            if role == "user":
                user |= words
        return cls(user, everything, numbers)


def markup(text: str) -> bool:
    """Whether `text` holds template or markup fragments (Kept's tags, a chat template's)."""
    return bool(_JUNK.search(text))


def junk(line: str, *, entry: bool = False) -> str | None:
    """Why `line` is not a fact about the user at all (template junk, markup, a bare value,
    the assistant's name as the user's), or None. A history `entry` is a paragraph: its
    length and shape are checked elsewhere."""
    text = line.strip().lstrip("-*+ ").strip()
    if not text:
        return "it is empty"
    if not entry and "\n" in text:
        return "it holds more than one line"
    if not entry and len(text) > LONGEST_LINE:
        return f"it is {len(text):,} characters, over the {LONGEST_LINE} of one fact"
    if not entry and text.startswith("#"):
        return "it is a heading, not a fact"
    if markup(text):
        return "it is template or markup text, not a fact"
    if sum(c.isalpha() for c in text) < 3:
        return "it holds no words"
    if _KEPT_AS_NAME.search(text):
        return "it gives the assistant's name as the user's"
    if not entry and (text.rstrip().endswith(("?", "？")) or _REPORTED.match(text)):
        return "it reports what was said or asked, not a fact"
    return None


def ungrounded(line: str, evidence: Evidence, *, entry: bool = False) -> str | None:
    """Why `line` is not supported by the session, in a few words, or None when it is.

    A memory line needs its names and numbers said in the session and a third of its
    telling words in the user's own messages. A history entry (`entry`) summarises the
    whole conversation: its names and numbers must have been said by anyone, and a long
    one must share a third of its words with the conversation."""
    names, numbers = _names_and_numbers(line)
    unseen_numbers = sorted(numbers - evidence.numbers)
    if unseen_numbers:
        return f"{unseen_numbers[0]} was never said in the session"
    unseen_names = sorted(n for n in names if not _meets(n, evidence.all_words))
    if unseen_names:
        return f"'{unseen_names[0]}' was never said in the session"
    words = telling(line)
    said = evidence.all_words if entry else evidence.user_words
    if entry and len(words) < 4:
        return None  # too short to tell; its names and numbers were checked
    shared = sum(1 for w in words if _meets(w, said))
    if not words and not names and not numbers:
        return "nothing in it comes from the session"
    if words and shared < max(1, MIN_SHARED * len(words)):
        who = "the conversation" if entry else "what the user said"
        return f"only {shared} of its {len(words)} telling words come from {who}"
    return None


def grounded(line: str, messages: Sequence[Mapping[str, Any]]) -> bool:
    """Whether `line` is a fact supported by the user's messages in `messages`."""
    return junk(line) is None and ungrounded(line, Evidence.of(messages)) is None


def shares_words(a: str, b: Iterable[str]) -> bool:
    """Whether text `a` shares a telling word with any of the texts `b`."""
    wanted = telling(a)
    return any(any(_meets(w, telling(text)) for w in wanted) for text in b)
