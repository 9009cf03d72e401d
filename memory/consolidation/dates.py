"""The days a user's words mean: a relative day ("tomorrow", "next Tuesday", "in two
weeks", "last month", "desde o ano passado") resolved against the time it was said, in the
languages Kept's users write, so a line may say the date a model worked out."""

from __future__ import annotations

import functools
import re
from datetime import date, timedelta

from memory.consolidation.language import cjk, fold

_MONTH_NAMES = [
    "january february march april may june july august september october november december",
    "janeiro fevereiro março abril maio junho julho agosto setembro outubro novembro dezembro",
    "enero febrero marzo abril mayo junio julio agosto septiembre octubre noviembre diciembre",
    "janvier février mars avril mai juin juillet août septembre octobre novembre décembre",
    "januar februar märz april mai juni juli august september oktober november dezember",
    "gennaio febbraio marzo aprile maggio giugno luglio agosto settembre ottobre novembre dicembre",
]
_DAY_NAMES = [
    "monday tuesday wednesday thursday friday saturday sunday",
    "segunda terça quarta quinta sexta sábado domingo",
    "lunes martes miércoles jueves viernes sábado domingo",
    "lundi mardi mercredi jeudi vendredi samedi dimanche",
    "montag dienstag mittwoch donnerstag freitag samstag sonntag",
    "lunedì martedì mercoledì giovedì venerdì sabato domenica",
]
MONTHS: dict[str, int] = {}
for _names in _MONTH_NAMES:
    for _i, _name in enumerate(_names.split()):
        MONTHS[fold(_name)] = _i + 1
        MONTHS.setdefault(fold(_name)[:3], _i + 1)
DAYS: dict[str, int] = {}
for _names in _DAY_NAMES:
    for _i, _name in enumerate(_names.split()):
        DAYS[fold(_name)] = _i
        DAYS.setdefault(fold(_name)[:3], _i)
for _i, _name in enumerate("月火水木金土日"):
    DAYS[_name + "曜"] = _i
DAYS.pop("mar", None)  # "mar" is March as often as Tuesday ("martes", "mardi")
_WEEK_UNITS = {"day": 1, "days": 1, "week": 7, "weeks": 7, "dia": 1, "dias": 1, "semana": 7,
               "semanas": 7, "tag": 1, "tage": 1, "tagen": 1, "woche": 7, "wochen": 7,
               "jour": 1, "jours": 1, "semaine": 7, "semaines": 7, "giorno": 1, "giorni": 1,
               "settimana": 7, "settimane": 7, "día": 1, "días": 1}  # fmt: skip
# A month's and a year's words, in months: "two years ago", "seit zwei Jahren".
_MONTH_UNITS = dict.fromkeys(
    fold("month months mes meses mês monat monate monaten mois mese mesi").split(), 1
) | dict.fromkeys(
    fold("year years ano anos año años jahr jahre jahren an ans anno anni").split(), 12
)
NUMBER_WORDS: dict[str, int] = {}
for _names in (
    "zero one two three four five six seven eight nine ten eleven twelve",
    "zero um dois três quatro cinco seis sete oito nove dez onze doze",
    "cero uno dos tres cuatro cinco seis siete ocho nueve diez once doce",
    "zéro un deux trois quatre cinq six sept huit neuf dix onze douze",
    "null eins zwei drei vier fünf sechs sieben acht neun zehn elf zwölf",
    "zero uno due tre quattro cinque sei sette otto nove dieci undici dodici",
):
    for _i, _name in enumerate(_names.split()):
        NUMBER_WORDS.setdefault(fold(_name), _i)
for _extra, _value in (("uma", 1), ("duas", 2), ("una", 1), ("une", 1), ("ein", 1), ("eine", 1),
                       ("einen", 1), ("a couple", 2), ("fifteen", 15), ("twenty", 20),
                       ("thirty", 30), ("forty", 40), ("fifty", 50), ("hundred", 100),
                       ("twice", 2), ("once", 1), ("half", 6)):  # fmt: skip
    NUMBER_WORDS.setdefault(_extra, _value)
for _i, _name in enumerate("〇一二三四五六七八九十"):
    NUMBER_WORDS[_name] = _i

_RELATIVE = {
    0: "today tonight this morning this evening hoje hoy aujourd'hui heute oggi 今日 今夜 今晩",
    1: "tomorrow amanhã mañana demain morgen domani 明日 あした",
    2: "day after tomorrow depois de amanhã pasado mañana après-demain übermorgen dopodomani "
    "明後日",
    -1: "yesterday ontem ayer hier gestern ieri 昨日 きのう",
    -2: "day before yesterday anteontem anteayer avant-hier vorgestern l'altro ieri 一昨日",
}
_NEXT = (
    r"next|coming|this|próxima|próximo|proxima|proximo|que vem|nächste[nrs]?|prochaine?|"
    r"prossim[oa]|来週|今週"
)
_LAST = (
    r"last|past|previous|passada|passado|pasada|pasado|letzte[mnrs]?|dernière|dernier|"
    r"scors[oa]|先週|先月|去年|昨年"
)


def _numbers_of(day: date) -> set[int]:
    return {day.year, day.month, day.day}


def _week(day: date) -> list[date]:
    monday = day - timedelta(days=day.weekday())
    return [monday + timedelta(days=i) for i in range(7)]


def _shift_months(day: date, months: int) -> date:
    month = day.month - 1 + months
    return date(day.year + month // 12, month % 12 + 1, 1)


def _split_phrases(phrases: str) -> list[str]:
    multi = re.findall(
        r"(?:day (?:after|before) \w+|this \w+|depois de \w+|pasado \w+|l'altro \w+)", phrases
    )
    rest = phrases
    for phrase in multi:
        rest = rest.replace(phrase, " ")
    return multi + rest.split()


def _pattern(phrases: list[str]) -> re.Pattern[str]:
    """One search for any of `phrases` (folded), as whole words; CJK ones anywhere."""
    ordered = sorted(phrases, key=len, reverse=True)
    spaced = [rf"(?<!\w){re.escape(p)}(?!\w)" for p in ordered if not cjk(p)]
    return re.compile("|".join([*spaced, *(re.escape(p) for p in ordered if cjk(p))]))


_RELATIVE_FOUND = {
    offset: _pattern([fold(p) for p in _split_phrases(phrases)])
    for offset, phrases in _RELATIVE.items()
}
_DAY_FOUND = _pattern(list(DAYS))


@functools.lru_cache(maxsize=4096)
def dates_meant(text: str, said_on: date) -> frozenset[date]:
    """The days `text`, said on `said_on`, may mean by a relative day ("tomorrow", "next
    Tuesday", "in two weeks", "last month"): each a candidate a model may resolve to."""
    folded = fold(text)
    out: set[date] = {said_on}
    for offset, found in _RELATIVE_FOUND.items():
        if found.search(folded):
            out.add(said_on + timedelta(days=offset))
    for name in {m.group() for m in _DAY_FOUND.finditer(folded)}:
        ahead = (DAYS[name] - said_on.weekday()) % 7 or 7
        out.update(said_on + timedelta(days=ahead + k) for k in (-7, 0, 7))
    for match in re.finditer(r"(\d+|[^\W\d_]+)\s+([^\W\d_]+)", folded):
        count = _count(match.group(1))
        unit = _WEEK_UNITS.get(match.group(2))
        if count is not None and unit is not None:
            out.update(said_on + timedelta(days=s * count * unit) for s in (1, -1))
        months = _MONTH_UNITS.get(match.group(2))
        if count is not None and months is not None:
            out.update(_shift_months(said_on, s * count * months) for s in (1, -1))
    week = re.search(
        rf"(?:{_NEXT}|{_LAST})\s*(?:week|semana|woche|semaine|settimana)|来週|先週", folded
    )
    if week or re.search(
        r"(?:week|semana|woche|semaine|settimana)\s*(?:que vem|passada|pasada)", folded
    ):
        out.update(_week(said_on + timedelta(days=7)) + _week(said_on - timedelta(days=7)))
    return frozenset(out)


def months_meant(text: str, said_on: date) -> set[tuple[int, int]]:
    """The (year, month) pairs `text` may mean: its month, "last month", "next month"."""
    folded = fold(text)
    out = {(said_on.year, said_on.month)}
    if re.search(rf"(?:{_NEXT}|{_LAST})\s*(?:month|mês|mes|monat|mois|mese)|来月|先月", folded) or (
        re.search(r"(?:mês|mes)\s*(?:que vem|passado|pasado)", folded)
    ):
        for step in (1, -1):
            shifted = _shift_months(said_on, step)
            out.add((shifted.year, shifted.month))
    for word in re.findall(r"[^\W\d_]+", folded):
        if word in MONTHS and len(word) > 3:
            for year in (said_on.year - 1, said_on.year, said_on.year + 1):
                out.add((year, MONTHS[word]))
    return out


def years_meant(text: str, said_on: date) -> set[int]:
    folded = fold(text)
    out = {said_on.year}
    if re.search(
        rf"(?:{_NEXT}|{_LAST})\s*(?:year|ano|jahr|annee|an|anno)|来年|去年|昨年|"
        r"(?:ano|anno|annee)\s*(?:passado|pasado|que vem|scorso|prossimo|derniere|prochaine)",
        folded,
    ):
        out |= {said_on.year - 1, said_on.year + 1}
    return out


def _count(word: str) -> int | None:
    if word.isdigit():
        return int(word)
    return NUMBER_WORDS.get(word)


def calendar_numbers(text: str, said_on: date) -> set[int]:
    """Every number a date that `text`, said on `said_on`, means may be written with."""
    numbers: set[int] = set()
    for day in dates_meant(text, said_on):
        numbers |= _numbers_of(day)
    for year, month in months_meant(text, said_on):
        numbers |= {year, month}
    return numbers | years_meant(text, said_on)


def calendar_words(text: str, said_on: date) -> set[str]:
    """The month and weekday names (any language, folded) those dates may be written with."""
    days = dates_meant(text, said_on)
    months = {m for _, m in months_meant(text, said_on)} | {d.month for d in days}
    weekdays = {d.weekday() for d in days}
    out = {name for name, m in MONTHS.items() if m in months}
    return out | {name for name, w in DAYS.items() if w in weekdays}


_MONTH_WORDS = "|".join(sorted((re.escape(m) for m in MONTHS if len(m) > 2), key=len, reverse=True))
_DATE = re.compile(
    r"\b\d{4}-\d{1,2}(?:-\d{1,2})?\b|\b\d{1,2}[./]\d{1,2}(?:[./]\d{2,4})?\b"
    r"|\d{4}年(?:\d{1,2}月)?(?:\d{1,2}日)?|\d{1,2}月(?:\d{1,2}日)?"
    rf"|(?:\b\d{{1,2}}(?:st|nd|rd|th|\.)?\s+(?:de\s+|of\s+)?)?\b(?:{_MONTH_WORDS})\b"
    r"(?:\s+\d{1,2}(?:st|nd|rd|th)?\b)?(?:,?\s+(?:de\s+)?\d{4}\b)?"
    r"|\b(?:19|20)\d{2}\b",
    re.IGNORECASE,
)


def date_phrases(line: str) -> list[str]:
    """The dates `line` writes ("2026-03-10", "9. Mai", "March 2026", "2026年3月"), whose
    numbers may come from a day the user meant rather than from their words."""
    return [m.group() for m in _DATE.finditer(fold(line))]


def without_dates(line: str) -> str:
    """`line` with its dates taken out: what is left holds the numbers the user said."""
    return _DATE.sub(" ", fold(line))


def spelled_numbers(text: str) -> set[int]:
    """The numbers `text` spells out ("two kids", "zwei Jahre", "二匹")."""
    folded = fold(text)
    found = {
        n
        for w, n in NUMBER_WORDS.items()
        if " " not in w and len(w) > 1 and re.search(rf"(?<!\w){re.escape(w)}(?!\w)", folded)
    }
    found |= {n for w, n in NUMBER_WORDS.items() if len(w) == 1 and w in folded}
    if "a couple" in folded:
        found.add(2)
    return found
