"""Secrets never leave for a model: credentials in a transcript, in a search answer or in a
line to remember become `[redacted secret]` before they are sent. The chat and its journal
keep what was said.

Each pattern matches a credential's own shape (a provider's prefix, a fixed length, a
key-block frame), so look-alikes such as commit hashes, UUIDs and base64 data survive.

Redaction runs over whatever was pasted (megabytes at times), so it is linear: every
attempt at a position either costs a bounded number of steps or consumes what it scanned
(a scheme is at most 32 characters; a run that fails is bounded by a separator), and a key
block's end is looked for once, not once per begin line.
"""

from __future__ import annotations

import re
from urllib.parse import unquote

REDACTED = "[redacted secret]"

# Invisible characters that split a key without showing (a zero-width space pasted in).
_INVISIBLE = dict.fromkeys(map(ord, "\u200b\u200c\u200d\u2060\ufeff\u00ad"))

# A key wrapped at the terminal's width goes on, alone, on the next lines.
_CONTINUED = r"(?:\r?\n[A-Za-z0-9_\-]{8,}(?=[ \t]*(?:\r?\n|$)))*"

# The lookahead lets the scan skip, at one test, every position no token can start at.
_TOKENS = re.compile(
    r"\b(?=[sgxhAenyrw])(?:"
    + "|".join(
        (
            # Anthropic (sk-ant-api03-…), OpenAI (sk-…, sk-proj-…, sk-svcacct-…), DeepSeek (sk-…)
            r"sk-[A-Za-z0-9][A-Za-z0-9_\-]{19,}",
            r"(?:sk|rk)_(?:live|test)_[A-Za-z0-9]{16,}",  # Stripe secret and restricted keys
            r"whsec_[A-Za-z0-9]{24,}",  # Stripe webhook secrets
            r"gsk_[A-Za-z0-9]{20,}",  # Groq
            r"gh[pousr]_[A-Za-z0-9]{30,}",  # GitHub classic and app tokens
            r"github_pat_[A-Za-z0-9_]{30,}",  # GitHub fine-grained tokens
            r"glpat-[A-Za-z0-9_\-]{20,}",  # GitLab personal access tokens
            r"hf_[A-Za-z0-9]{30,}",  # Hugging Face
            r"npm_[A-Za-z0-9]{36,}",  # npm
            r"ya29\.[A-Za-z0-9_\-]{20,}",  # Google OAuth access tokens
            r"xox[abposre]-[A-Za-z0-9-]{10,}",  # Slack tokens
            r"xapp-\d-[A-Za-z0-9-]{10,}",  # Slack app-level tokens
            r"https://hooks\.slack\.com/services/[A-Za-z0-9/_-]+",  # Slack webhooks
            r"(?:AKIA|ASIA|ABIA|ACCA)[0-9A-Z]{16}\b",  # AWS access key ids
            r"AIza[0-9A-Za-z_\-]{35}",  # Google API keys
            # JWTs: a base64url JSON header and payload ("{"… encodes as "eyJ"), then a
            # signature. The header is short: capped, so a long run without dots is cheap.
            r"eyJ[A-Za-z0-9_-]{8,512}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}",
        )
    )
    + ")"
    + _CONTINUED
)
# A private key block's frame. Its end is found by a separate search, done once.
_KEY_BEGIN = re.compile(r"-----BEGIN [A-Z0-9 ]{0,40}PRIVATE KEY(?: BLOCK)?-----")
_KEY_END = re.compile(r"-----END [A-Z0-9 ]{0,40}PRIVATE KEY(?: BLOCK)?-----")
# Pasted without its end line: the rest of its line and the base64 lines after it.
_KEY_LINES = re.compile(r"[^\n]*(?:\n[A-Za-z0-9+/=]{8,})*")
# `password=…`, `"api_key": "…"`, `SECRET_TOKEN: …`: the name stays, the value goes. (The
# name's own prefix, as in DB_PASSWORD, stays before the match.)
_ASSIGNED = re.compile(
    r"""(?ix)
    (?=[pasrbct])(?P<name>(?:password|passwd|passphrase|pwd|secret|api[_-]?key|access[_-]?key
        |auth[_-]?token|access[_-]?token|refresh[_-]?token|bearer[_-]?token|private[_-]?key
        |client[_-]?secret|token)\b["']?)
    (?P<sep>\s*(?:=|:)\s*)
    (?P<value>"[^"\n]{3,}"|'[^'\n]{3,}'|[^\s"',;]{4,})
    """
)
# A plain word or words ("token: limit", "secret: recipe"), or a path ("pwd: /home/ana"):
# what a setting or a sentence says, not a credential.
_NOT_A_SECRET = re.compile(r"[A-Za-z][a-z]*(?: [a-z]+)*|[~/][^\s]*")
# A query parameter that carries a credential: `?key=…`, `&access_token=…`.
_QUERY = re.compile(
    r"(?i)([?&](?:key|api[_-]?key|apikey|token|access[_-]?token|auth|secret|password|pass"
    r"|pwd|sig|signature|client[_-]?secret)=)[^&#\s]+"
)
_BEARER = re.compile(r"\b((?i:bearer|basic))\s+([A-Za-z0-9._~+/\-]{16,}=*)")
# user:password@ in a URL (a password may hold an "@": the last one before the host counts)
_URL_PASSWORD = re.compile(r"(?i)\b([a-z][a-z0-9+.-]{0,31}://[^\s:/@]+:)[^\s/]{3,}(@)")
_PERCENT = re.compile(r"%[0-9A-Fa-f]{2}")
_SPACES = re.compile(r"(\s+)")


def redact(text: str) -> str:
    """`text` with every string that looks like a credential replaced by [redacted secret]."""
    if not text:
        return text
    text = text.translate(_INVISIBLE)
    if _PERCENT.search(text):  # a key in a URL, percent-encoded: looked for decoded
        text = "".join(_decoded_word(word) for word in _SPACES.split(text))
    return _redact(text)


def _decoded_word(word: str) -> str:
    """A word holding a percent-encoded credential, decoded and redacted; else as it was."""
    if "%" not in word:
        return word
    decoded = unquote(word)
    redacted = _redact(decoded)
    return redacted if redacted != decoded else word


def _redact(text: str) -> str:
    text = _key_blocks(text)
    text = _TOKENS.sub(REDACTED, text)
    lowered = text.lower()
    if "bearer" in lowered or "basic" in lowered:
        text = _BEARER.sub(_bearer, text)
    if "://" in text:
        text = _URL_PASSWORD.sub(lambda m: f"{m.group(1)}{REDACTED}{m.group(2)}", text)
    if "=" in text:
        text = _QUERY.sub(lambda m: f"{m.group(1)}{REDACTED}", text)
    return _ASSIGNED.sub(_assigned, text)


def _key_blocks(text: str) -> str:
    """Every private key block, whole (or, with no end line after it, its base64 lines)."""
    if "PRIVATE KEY" not in text:
        return text
    parts: list[str] = []
    position = 0
    end: re.Match[str] | None = None
    no_end = False  # no end line after the last place looked: none is looked for again
    while (begin := _KEY_BEGIN.search(text, position)) is not None:
        if not no_end and (end is None or end.start() < begin.end()):
            end = _KEY_END.search(text, begin.end())
            no_end = end is None
        if end is not None and not no_end:
            stop = end.end()
        else:
            lines = _KEY_LINES.match(text, begin.end())
            stop = lines.end() if lines is not None else begin.end()
        parts += (text[position : begin.start()], REDACTED)
        position = stop
    parts.append(text[position:])
    return "".join(parts)


def _bearer(match: re.Match[str]) -> str:
    token = match.group(2)
    # A credential is random: a digit, a symbol or a capital inside it; "basic
    # internationalization" is a phrase.
    if token.isalpha() and token[1:].islower():
        return match.group(0)
    return f"{match.group(1)} {REDACTED}"


def _assigned(match: re.Match[str]) -> str:
    value = match.group("value")
    inner = value.strip("\"'")
    if REDACTED in value or inner == "[redacted":
        return match.group(0)  # already replaced by a stricter pattern
    if _NOT_A_SECRET.fullmatch(inner):
        return match.group(0)
    quote = value[0] if value[0] in "\"'" else ""
    return f"{match.group('name')}{match.group('sep')}{quote}{REDACTED}{quote}"
