"""How Kept compares the user's words with a line: one normal form for quotes (NFKC,
quote marks, case, accents), words in scripts with and without spaces, and the usual other
spellings of a name ("JS" and "JavaScript", "Lisboa" and "Lisbon")."""

from __future__ import annotations

import difflib
import itertools
import re
import unicodedata

_QUOTES = str.maketrans({c: "'" for c in "‘’‚‛`´′"} | {c: '"' for c in "“”„‟«»″"})
_INVISIBLE = dict.fromkeys(map(ord, "\u200b\u200c\u200d\u2060\ufeff\u00ad"))


def cased(text: str) -> str:
    """`text` as quotes are read: NFKC (full-width letters and digits as usual), one kind
    of quote mark, invisible characters gone, whitespace collapsed; case kept."""
    text = unicodedata.normalize("NFKC", text).translate(_INVISIBLE).translate(_QUOTES)
    return " ".join(text.split())


def plain(text: str) -> str:
    """`cased` and lower case: `text` as quotes are compared. Mostly as long as `cased`, so
    a place in one is the same place in the other."""
    return cased(text).lower()


def fold(text: str) -> str:
    """`plain`, and without accents: "Zürich" and "zurich" are one word."""
    decomposed = unicodedata.normalize("NFKD", plain(text))
    return "".join(c for c in decomposed if not unicodedata.combining(c))


_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u9fff\uac00-\ud7af]")
_WORD = re.compile(r"[^\W_]+(?:['’][^\W\d_]+)?", re.UNICODE)


def cjk(text: str) -> bool:
    """Whether `text` is written mostly without spaces between words (Japanese, Chinese)."""
    letters = [c for c in text if c.isalpha()]
    return bool(letters) and sum(1 for c in letters if _CJK.match(c)) * 2 >= len(letters)


def words(text: str) -> list[str]:
    """The words of `text`, folded; a run of CJK characters gives its character pairs."""
    out: list[str] = []
    for word in _WORD.findall(fold(text)):
        if word.isdigit():
            continue
        if _CJK.search(word):
            chars = [c for c in word if _CJK.match(c)]
            out.extend(a + b for a, b in itertools.pairwise(chars))
            out.extend(c for c in chars if not re.match(r"[\u3040-\u309f]", c))
        else:
            out.append(word)
    return out


# --- abbreviations -------------------------------------------------------------------------

# Names written either way, folded: a line may say "JavaScript" for the user's "JS".
_SAME_NAMES = """
js javascript | ts typescript | py python | k8s kubernetes | pg postgres postgresql psql |
nyc new york city | mbp macbook pro | sf san francisco | la los angeles | uk united kingdom
britain | us usa
america united states | eu europe | ml machine learning | ai artificial intelligence |
vs vscode visual studio code | gh github | aws amazon web services | gcp google cloud |
db database | rn react native | tf terraform | ci continuous integration | pt portuguese
português | en english | de german deutsch | fr french français | es spanish español |
ja japanese 日本語 japonais japanisch giapponese japonês japonés | it italian italiano
italien italienisch | spanish español espagnol spanisch spagnolo espanhol | english inglés
anglais englisch inglese inglês | german deutsch allemand tedesco alemão alemán |
french français französisch francese francês francés | portuguese portugais portugiesisch
portoghese portugués | lisboa lisbon | münchen munich | köln cologne |
wien vienna | praha prague | roma rome | milano milan | napoli naples | firenze florence |
genève geneva | zürich zurich | sevilla seville | moskva moscow | 東京 tokyo | 大阪 osaka |
京都 kyoto | brasil brazil | alemanha germany | deutschland germany | espanha spain |
españa spain | frança france | inglaterra england | japão japan | 日本 japan | portugal
| mon monday | tue tues tuesday | wed wednesday | thu thur thurs thursday | fri friday |
sat saturday | sun sunday | jan january | feb february | mar march | apr april | jun june
| jul july | aug august | sep sept september | oct october | nov november | dec december
"""
SAME_NAMES: list[frozenset[str]] = [
    frozenset(fold(w) for w in group.split()) for group in _SAME_NAMES.split("|") if group.split()
]


def same_names(word: str) -> set[str]:
    """The other ways to write `word` (folded) that the table knows."""
    out: set[str] = set()
    for group in SAME_NAMES:
        if word in group:
            out |= group
    return out


# --- names and numbers --- ---------------------------------------------------------------------

_THOUSANDS = re.compile(r"(?<=\d)[,.' \u00a0\u202f](?=\d{3}(?!\d))")
ADDRESSES = re.compile(
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


def names(line: str) -> set[str]:
    """The words of `line` that name something: capitalised words that do not start a
    sentence, acronyms, e-mail addresses and links (folded)."""
    out = {fold(m.group()) for m in ADDRESSES.finditer(line)}
    rest = ADDRESSES.sub(" ", line)
    for sentence in re.split(r"(?<=[.!?:;])\s+|\n|\s[-–—]\s", rest):
        found = re.findall(r"[^\W\d_][^\W\d_'’]*(?:-[^\W\d_]+)*", sentence)
        for position, word in enumerate(found):
            if cjk(word):
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
        any(close(part, word) for word in known) or bool(same_names(part) & known) for part in parts
    )
