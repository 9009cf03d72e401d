"""How Kept compares the user's words with a line: one normal form for quotes (NFKC,
quote marks, case, accents), words in scripts with and without spaces, and the usual other
spellings of a name ("JS" and "JavaScript", "Lisboa" and "Lisbon")."""

from __future__ import annotations

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
