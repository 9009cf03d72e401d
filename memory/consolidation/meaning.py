"""What Kept can tell of a line's meaning by itself, in the languages its users write: a
negation, a request to the assistant, a request to forget, a third person, a correction
("Lyon, not Lille"), a credential.

None of these decides alone that a line is true: each is one test of a line against the
quotes that are its evidence (memory.consolidation.evidence), where the quotes are the
user's own typed words.
"""

from __future__ import annotations

import re

from memory.consolidation.language import cjk, fold, words
from memory.consolidation.redact import REDACTED, redact

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
        rf"[,;]\s*(?:and\s+)?(?:not|não|nao|no|nicht|pas|non)\s+(?:in\s+|em\s+|en\s+|a\s+)?"
        rf"{_VALUE}\s*(?=[.,;!?)…]|$)",
        rf"\b(?:not|não|nicht|pas|non)\s+{_VALUE}\s*,\s*(?:but|mas|sondern|mais|sino|ma)\b",
        rf"\b(?:instead of|rather than|em vez de|en lugar de|au lieu de|statt|anstatt|"
        rf"invece di)\s+{_VALUE}",
        rf"\b(?:wanted|suggested|proposed|thought about|considered)\b[^.!?]{{0,40}}?\b{_VALUE}"
        r"\s*,?\s*but\s+(?:we|i)\s+(?:went with|chose|picked|settled on|named|called)",
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


# Words before "forget" that make it a statement ("I always forget where I parked"),
# unless the assistant is asked ("can you forget", "please forget").
_STATED = frozenset(
    fold(
        "i we he she they people always often sometimes usually never might may will would "
        "i'll i'd we'll to tend easy don't do not eu ich je yo io nós wir nous"
    ).split()
)
_ASKED = re.compile(r"\b(?:can|could|would|will) you\s+(?:\w+\s+)?$|\bplease\s+$", re.I)


def asks_to_forget(text: str) -> bool:
    """Whether `text` asks the assistant to forget something ("forget Marco", "please
    forget that"), not says that someone forgets ("I always forget where I parked")."""
    if _ERASE.search(text):
        return True
    for match in _FORGET.finditer(text):
        before = text[max(0, match.start() - 40) : match.start()]
        if _ASKED.search(before):
            return True
        if not set(re.findall(r"[\w']+", fold(before))[-2:]) & _STATED:
            return True
    return False


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


_FIRST_PERSON = re.compile(
    r"\b(?:i|i'm|i've|i'd|i'll|me|my|mine|we|we're|we've|our|us|eu|meu|minha|meus|minhas|"
    r"nós|nosso|nossa|yo|mi|mis|me|nosotros|nuestro|nuestra|je|j|moi|mon|ma|mes|nous|notre|"
    r"ich|mich|mir|mein|meine|meinen|meinem|wir|uns|unser|unsere|io|mio|mia|miei|noi|nostro)"
    r"\b|^\W*(?:moro|mudei|tenho|sou|estou|trabalho|gosto|vivo|tengo|soy|estoy|trabajo|"
    r"habito|travaille|suis|wohne|arbeite|bin|habe|abito|lavoro|sono|ho)\b",
    re.IGNORECASE,
)


def first_person(text: str) -> bool:
    """Whether `text` speaks of the one who wrote it (Japanese leaves the subject out, so
    any Japanese text may)."""
    return bool(_FIRST_PERSON.search(text.replace("’", "'"))) or cjk(text)


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
