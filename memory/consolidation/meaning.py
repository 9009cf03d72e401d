"""What Kept can tell of a line's meaning by itself, in the languages its users write: a
negation, a request to the assistant, a request to forget, a third person, a correction
("Lyon, not Lille"), a credential, a date said relative to the day, a usual abbreviation.

None of these decides alone that a line is true: each is one test of a line against the
quotes that are its evidence (memory.consolidation.evidence), where the quotes are the
user's own typed words.
"""

from __future__ import annotations

import re
import unicodedata
from datetime import date, timedelta

from memory.consolidation.redact import REDACTED, redact

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
            out.extend(a + b for a, b in zip(chars, chars[1:], strict=False))
            out.extend(c for c in chars if not re.match(r"[\u3040-\u309f]", c))
        else:
            out.append(word)
    return out


# --- negation ------------------------------------------------------------------------------

_NEGATION_WORDS = """
not no never nor neither none nobody nothing without cannot cant dont doesnt didnt isnt
arent wasnt werent wont wouldnt havent hasnt hadnt shouldnt couldnt stopped quit dislike
dislikes disliked hate hates hated avoid avoids avoided
não nao nunca nem jamais sem odeio odeia detesto detesta
nunca jamás ni sin odio odia detesto
ne pas jamais sans déteste deteste
nicht kein keine keinen keinem keiner keines nie niemals ohne hasse hasst
non senza
"""
NEGATIONS = frozenset(fold(_NEGATION_WORDS).split())
# Whole phrases that negate: "gave up", "deixei de", "aufgehört".
_NEGATION_PHRASES = re.compile(
    r"\b(?:gave up|give up|giving up|no longer|not any ?more|any ?more|no more|used to|"
    r"deixei de|parei de|deixou de|parou de|costumava|já não|"
    r"dejé de|dejó de|ya no|solía|j'ai arrêté|arrêté de|j'ai quitté|aufgehört|früher|"
    r"nicht mehr|ho smesso|smesso di|non più|last day|leaving|resigned|quitting|"
    r"moved away|moved out|left (?:my |the |a |an )?(?:job|company|team|work|role))\b"
    r"|n't\b|\bn'",
    re.IGNORECASE,
)
# Japanese: the negative endings and "dislike", "quit".
_NEGATION_JA = re.compile(r"ない|なく|ません|なかった|ず[にの]|嫌い|やめ|辞め|止め|じゃな")
# "〜しか〜ない" is "only": its ない does not negate.
_ONLY_JA = re.compile(r"しか[^。、]*ない")
# Portuguese "no" is "in the"; where the text is Portuguese, "no" does not negate.
_PORTUGUESE = frozenset(
    fold(
        "não eu meu minha meus minhas você vocês em com uma um também mês moro mora mudei "
        "mudou tenho tem sou gosto gosta ninguém ainda pelo pela são estou ele ela"
    ).split()
)


def negated(text: str, beside: str = "") -> bool:
    """Whether `text` says something is not so (in any of the languages above); `beside`
    is text in the same language (a quote beside its line), which tells Portuguese "no"."""
    if _NEGATION_JA.search(_ONLY_JA.sub("", text)) or _NEGATION_PHRASES.search(text):
        return True
    said = set(re.findall(r"[^\W\d_]+", fold(text).replace("'", "")))
    found = said & NEGATIONS
    if found == {"no"} and (said | set(re.findall(r"[^\W\d_]+", fold(beside)))) & _PORTUGUESE:
        return False
    return bool(found)


_GERMAN = frozenset(
    fold(
        "und der die das ist ein eine einen nicht mit auf für dem den des von sie ich wir hat "
        "wohnt arbeitet seit bei zum zur im am mag mein meine sein seine ihr ihre als"
    ).split()
)


def nouns_capitalised(line: str) -> bool:
    """Whether `line` is German, where every noun is capitalised: such a word is not
    known to be a name."""
    return len(set(re.findall(r"[^\W\d_]+", fold(line))) & _GERMAN) >= 2


# --- corrections ---------------------------------------------------------------------------

# "X, not Y", "not Y but X", "Y? no, X", "X instead of Y", in several languages: Y is the
# value the user turned down. Y is one to three words ending at punctuation or the end.
_VALUE = r"(?P<no>[^\W\d_][\w'-]*(?:\s+[^\W\d_][\w'-]*){0,2}|\d[\w:./-]*)"
_CORRECTIONS = [
    re.compile(p, re.IGNORECASE)
    for p in (
        rf"[,;]\s*(?:and\s+)?(?:not|não|nao|no|nicht|pas|non)\s+(?:in\s+|em\s+|en\s+|a\s+)?{_VALUE}\s*(?=[.,;!?)…]|$)",
        rf"\b(?:not|não|nicht|pas|non)\s+{_VALUE}\s*,\s*(?:but|mas|sondern|mais|sino|ma)\b",
        rf"\b(?:instead of|rather than|em vez de|en lugar de|au lieu de|statt|anstatt|invece di)\s+{_VALUE}",
        rf"\b(?:wanted|suggested|proposed|thought about|considered)\b[^.!?]{{0,40}}?\b{_VALUE}\s*,?\s*but\s+(?:we|i)\s+(?:went with|chose|picked|settled on|named|called)",
    )
]
# "XではなくY": Y rather than X (where a clause's end follows, it is a plain negation).
_CORRECTION_JA = re.compile(
    r"(?P<no>[^\s、。ではじゃ]{1,12})(?:ではなく|じゃなくて|じゃなく)(?![、。]|$)"
)


def turned_down(text: str) -> set[str]:
    """The values the user turned down in `text` ("Katja, not Katya" gives "katya"): a
    capitalised word or a number, or one plain word ("pecans, not walnuts"), so "not
    really, tea" turns nothing down."""
    found: set[str] = set()
    for index, pattern in enumerate(_CORRECTIONS):
        for match in pattern.finditer(text):
            value = _a_name(match.group("no"))
            plain_words = re.findall(r"[^\W\d_]+", match.group("no"))
            if not value and index < 2 and len(plain_words) == 1:
                word = fold(plain_words[0])
                value = word if len(word) >= 4 and word not in _NOT_VALUES else ""
            if value:
                found.add(value)
    for match in _CORRECTION_JA.finditer(text):
        found.add(fold(match.group("no")))
    return found


_NOT_VALUES = frozenset(
    fold(
        "really sure quite much always only just that this there here even exactly anymore "
        "today anything everything something nothing everyone anyone yours mine ours theirs "
        "sempre nada tudo muito mais ainda immer nichts alles sehr toujours rien tout"
    ).split()
)


def _a_name(value: str) -> str:
    picked = [w for w in re.findall(r"[\w'-]+", value) if w[:1].isupper() or w[:1].isdigit()]
    return fold(picked[-1]) if picked else ""


def without_corrections(text: str) -> str:
    """`text` without the parts that turn a value down: "Lyon, not Lille" is not a
    negation of living in Lyon."""
    for pattern in _CORRECTIONS[:3]:
        text = pattern.sub(" ", text)
    return _CORRECTION_JA.sub(" ", text)


# --- requests to the assistant -----------------------------------------------------------

# A line that directs the assistant rather than telling a fact about the user.
_DIRECTIVE = re.compile(
    r"^\W*(?:always|never|don't|do not|remember to|make sure|be sure|recommend|suggest|send|"
    r"forward|e-?mail|reply|answer|respond|write|speak|use|call|tell|remind|ask|avoid|"
    r"include|sempre|nunca|responda|responde|envie|envia|immer|antworte|schicke|"
    r"toujours|jamais|réponds|reponds|envoie|siempre|responde|envía|sempre|rispondi|"
    r"recomenda|recomende|sugere|sugira|recomienda|sugiere|recommande|propose|suggère|"
    r"suggerisci|raccomanda|consiglia|schlage|schlag|empfiehl|empfehle|nenne|sag|sprich|"
    r"verwende|benutze)\b"
    r"|\b(?:the assistant|kept|you) (?:should|must|will|shall)\b"
    r"|\bshould (?:always|never)\b"
    r"|\b(?:wants?|asks?|expects?|would like|prefers?) (?:the assistant|kept|you|answers|replies|"
    r"responses|the answers|replies|code|explanations)\b"
    r"|\b(?:answers?|replies|responses) (?:in|with|without)\b",
    re.IGNORECASE,
)
# The user asking the assistant for something, in their own words.
_REQUEST = re.compile(
    r"\b(?:please|pls|always|never|from now on|going forward|in future|in the future|"
    r"i want you|i'd like you|i would like you|i need you|can you|could you|would you|"
    r"don't|do not|stop|remember to|make sure|answer|reply|respond|call me|keep|use|give me|"
    r"bitte|immer|nie|niemals|ab jetzt|von nun an|antworte|por favor|sempre|nunca|"
    r"a partir de agora|daqui para frente|responda|responde|siempre|desde ahora|"
    r"s'il te plaît|s'il vous plaît|toujours|jamais|désormais|à partir de maintenant|"
    r"per favore|d'ora in poi|rispondi)\b|ください|下さい|してほしい|欲しい|いつも|今後|常に",
    re.IGNORECASE,
)


def directs(line: str) -> bool:
    """Whether `line` tells the assistant what to do ("Always answer in French")."""
    return bool(_DIRECTIVE.search(line))


def requests(text: str) -> bool:
    """Whether `text` asks the assistant for something."""
    return bool(_REQUEST.search(text))


# --- forgetting ----------------------------------------------------------------------------

# The user asking to forget, in their own words: "forget", or "delete/remove" of what is
# remembered. "Don't forget" is a reminder; "I forgot" is not a request.
_FORGET = re.compile(
    r"(?<!don't )(?<!do not )(?<!never )\b(?:forget|vergiss|vergessen|oublie|oubliez|oublier|"
    r"olvida|olvidar|olvídate|dimentica|dimenticare|esquece|esqueça|esquecer|vergeet|glöm|"
    r"zapomnij)\b|忘れて|忘れる|забудь",
    re.IGNORECASE,
)
_ERASE = re.compile(
    r"\b(?:delete|remove|erase|drop|wipe|clear|apaga|apague|remova|lösche|entferne|"
    r"supprime|efface|borra|elimina|cancella)\b[^.!?]{0,40}\b(?:memory|memories|remember|"
    r"you know|notes?|mem[oó]ria|gedächtnis|erinnerung|mémoire|memoria|saved|stored|"
    r"from your|that fact|that line|about me)\b|から削除|を削除して|覚えないで",
    re.IGNORECASE,
)
_EVERYTHING = re.compile(
    r"\b(?:everything|all of it|all you know|all that|all about me|tudo|alles|tout|"
    r"todo lo que)\b|全部|すべて",
    re.IGNORECASE,
)
# Words of a forget request that do not name a fact.
_REQUEST_WORDS = frozenset(
    fold(
        "forget forgets please can could would you kept that this the about everything all "
        "everything know knows said told me my mine i a an of from your memory memories line "
        "lines fact facts thing things what which delete remove erase drop wipe clear it them "
        "also and or too now just again anymore esquece esqueça tudo sobre o a os as de do da "
        "vergiss alles über uber das die der oublie tout sur le la les olvida todo sobre lo "
        "dimentica tutto su remember remembered stored saved notes note"
    ).split()
)


def asks_to_forget(text: str) -> bool:
    """Whether `text` asks the assistant to forget something."""
    return bool(_FORGET.search(text) or _ERASE.search(text))


def forgets_everything(text: str) -> bool:
    """Whether a forget request names nothing but "everything" ("forget all you know")."""
    return bool(_EVERYTHING.search(text)) and not naming_words(text)


def naming_words(text: str) -> set[str]:
    """The words of a request that name what it is about ("Marco" in "forget Marco")."""
    return {w for w in words(text) if w not in _REQUEST_WORDS and len(w) >= 2}


# --- someone else --------------------------------------------------------------------------

# A quote about another person: a line about the user cannot stand on it alone.
_OTHERS = re.compile(
    r"\b(?:my|our|his|her|their|the)\s+(?:\w+\s+)?(?:brother|sister|mother|mom|mum|"
    r"father|dad|parents?|son|daughter|kids?|child|children|wife|husband|partner|spouse|"
    r"fianc[eé]e?|boyfriend|girlfriend|friends?|colleagues?|coworkers?|co-workers?|team|"
    r"boss|manager|neighbou?rs?|cousin|uncle|aunt|niece|nephew|grand\w+|roommate|flatmate|"
    r"baby|toddler|twins|eldest|youngest|oldest|older one|younger one|little one|"
    r"mother-in-law|father-in-law|in-laws|dog|cat|pets?)\b"
    r"|\b(?:the (?:older|younger|elder|little|big) one)\b"
    r"|\b(?:everyone|everybody|nobody|people|colleagues|coworkers)\b"
    r"|^\W*(?:he|she|they)\b|\b(?:he|she|they)\s+(?:is|was|lives?|works?|has|likes?|loves?)\b"
    r"|\b(?:meu|minha|meus|minhas)\s+(?:irmão|irmã|mãe|pai|filho|filha|esposa|marido|"
    r"namorad[oa]|amig[oa]|colega|chefe)\b"
    r"|\b(?:mein|meine|meinem|meiner)\s+(?:bruder|schwester|mutter|vater|sohn|tochter|frau|"
    r"mann|freund|freundin|kollege|kollegin|chef)\b"
    r"|\b(?:mon|ma|mes)\s+(?:frère|sœur|soeur|mère|père|fils|fille|femme|mari|ami|amie|"
    r"collègue|chef)\b"
    r"|\b(?:mi|mis)\s+(?:hermano|hermana|madre|padre|hijo|hija|esposa|marido|novio|novia|"
    r"amigo|amiga|jefe)\b"
    r"|兄|弟|姉|妹|母|父|息子|娘|妻|夫|友達|同僚|上司",
    re.IGNORECASE,
)


# A sentence whose subject is a name: "Mia hat eine Erdnussallergie", "Chloe is vegan".
_NAMED_SUBJECT = re.compile(
    r"(?:^|[.!?…,;]\s+|\band\s+)(?P<name>[A-ZÀ-Þ][\w-]+)(?:'s\s+\w+|\s+(?:is|was|has|lives|works|likes|loves|"
    r"needs|wants|goes|hat|ist|wohnt|arbeitet|mag|tem|é|mora|trabalha|gosta|tiene|es|vive|"
    r"trabaja|a|est|habite|travaille|aime|ha|abita|lavora)\b)"
)
_NOT_SUBJECTS = frozenset({"i", "it", "this", "that", "there", "ich", "eu", "yo", "je", "io"})
_RELATION_WORDS = frozenset(
    fold("my our his her their the a an he she they is was has lives works").split()
)


def about_someone_else(text: str) -> bool:
    """Whether `text` speaks of another person (a brother, a friend, "she", "Mia has")."""
    if _OTHERS.search(text):
        return True
    return any(
        m.group("name").casefold() not in _NOT_SUBJECTS for m in _NAMED_SUBJECT.finditer(text)
    )


def _who(text: str) -> set[str]:
    """Who `text` speaks of, folded: each relation it names ("daughter"), the name after
    it ("my daughter Sophie"), and each name that is a sentence's subject ("Mia hat")."""
    found: set[str] = set()
    for match in _OTHERS.finditer(text):
        found |= set(re.findall(r"[^\W\d_]+", fold(match.group()))) - _RELATION_WORDS
        after = re.match(r"\s*,?\s*([A-ZÀ-Þ][\w-]+)", text[match.end() :])
        if after:
            found.add(fold(after.group(1)))
    found |= {fold(m.group("name")) for m in _NAMED_SUBJECT.finditer(text)}
    return found - _NOT_SUBJECTS


def speaks_of(line: str, text: str) -> bool:
    """Whether `line` names who `text` speaks of (memory.consolidation.meaning._who), so
    a line about them is not taken for one about the user."""
    ours = set(re.findall(r"[^\W\d_]+", fold(line)))
    return any(
        a == b or (min(len(a), len(b)) >= 4 and (a.startswith(b) or b.startswith(a)))
        for a in ours
        for b in _who(text)
    )


# --- credentials ---------------------------------------------------------------------------

_SECRET_WORDS = re.compile(
    r"\b(?:pin|pins|password|passwords|passcode|passphrase|passwort|kennwort|senha|"
    r"(?:key ?safe|safe|door|alarm|lock|gate|entry|access|garage|locker|pin) ?codes?|"
    r"combination|code de la porte|código|türcode|"
    r"contraseña|contrasena|mot de passe|cvv|cvc|security code|api key|token|secret key|"
    r"private key|seed phrase|recovery phrase)\b|暗証番号|パスワード",
    re.IGNORECASE,
)
_CARD = re.compile(r"\b(?:\d[ -]?){12,18}\d\b")
_IBAN = re.compile(r"\b[A-Z]{2}\d{2}(?: ?[A-Z0-9]{4}){2,7}(?: ?[A-Z0-9]{1,4})?\b")


def _luhn(digits: str) -> bool:
    total = 0
    for i, c in enumerate(reversed(digits)):
        n = int(c) * (2 if i % 2 else 1)
        total += n - 9 if n > 9 else n
    return total % 10 == 0


def credential(line: str) -> bool:
    """Whether `line` holds a credential: a key, a PIN or password with its value, a card
    number or an IBAN. Memory never keeps one, whoever said it."""
    if redact(line) != line or REDACTED in line:
        return True
    if _SECRET_WORDS.search(line) and re.search(r"\S*\d\S*|\bis\s+\S+|[:=]\s*\S+|é\s+\S+", line):
        return True
    for match in _CARD.finditer(line):
        digits = re.sub(r"\D", "", match.group())
        if 13 <= len(digits) <= 19 and _luhn(digits):
            return True
    return bool(_IBAN.search(line.upper()))


# --- dates ---------------------------------------------------------------------------------

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
_MONTH_UNITS = {
    fold(k): v
    for k, v in {
        "month": 1,
        "months": 1,
        "mes": 1,
        "meses": 1,
        "mês": 1,
        "monat": 1,
        "monate": 1,
        "monaten": 1,
        "mois": 1,
        "mese": 1,
        "mesi": 1,
        "year": 12,
        "years": 12,
        "ano": 12,
        "anos": 12,
        "año": 12,
        "años": 12,
        "jahr": 12,
        "jahre": 12,
        "jahren": 12,
        "an": 12,
        "ans": 12,
        "anno": 12,
        "anni": 12,
    }.items()  # fmt: skip
}
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
    2: "day after tomorrow depois de amanhã pasado mañana après-demain übermorgen dopodomani 明後日",
    -1: "yesterday ontem ayer hier gestern ieri 昨日 きのう",
    -2: "day before yesterday anteontem anteayer avant-hier vorgestern l'altro ieri 一昨日",
}
_NEXT = r"next|coming|this|próxima|próximo|proxima|proximo|que vem|nächste[nrs]?|prochaine?|prossim[oa]|来週|今週"
_LAST = r"last|past|previous|passada|passado|pasada|pasado|letzte[nrs]?|dernière|dernier|scors[oa]|先週|先月|去年|昨年"


def _numbers_of(day: date) -> set[int]:
    return {day.year, day.month, day.day}


def _week(day: date) -> list[date]:
    monday = day - timedelta(days=day.weekday())
    return [monday + timedelta(days=i) for i in range(7)]


def _shift_months(day: date, months: int) -> date:
    month = day.month - 1 + months
    return date(day.year + month // 12, month % 12 + 1, 1)


def dates_meant(text: str, said_on: date) -> set[date]:
    """The days `text`, said on `said_on`, may mean by a relative day ("tomorrow", "next
    Tuesday", "in two weeks", "last month"): each a candidate a model may resolve to."""
    folded = fold(text)
    out: set[date] = {said_on}
    for offset, phrases in _RELATIVE.items():
        if any(_has(folded, fold(p)) for p in _split_phrases(phrases)):
            out.add(said_on + timedelta(days=offset))
    for name, weekday in DAYS.items():
        if _has(folded, name):
            ahead = (weekday - said_on.weekday()) % 7 or 7
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
    return out


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


def _split_phrases(phrases: str) -> list[str]:
    multi = re.findall(
        r"(?:day (?:after|before) \w+|this \w+|depois de \w+|pasado \w+|l'altro \w+)", phrases
    )
    rest = phrases
    for phrase in multi:
        rest = rest.replace(phrase, " ")
    return multi + rest.split()


def _has(folded: str, phrase: str) -> bool:
    if _CJK.search(phrase):
        return phrase in folded
    return re.search(rf"(?<!\w){re.escape(phrase)}(?!\w)", folded) is not None


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


# --- abbreviations -------------------------------------------------------------------------

# Names written either way, folded: a line may say "JavaScript" for the user's "JS".
_SAME_NAMES = """
js javascript | ts typescript | py python | k8s kubernetes | pg postgres postgresql psql |
nyc new york city | mbp macbook pro | sf san francisco | la los angeles | uk united kingdom britain | us usa
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
