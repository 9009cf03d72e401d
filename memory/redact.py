"""Secrets never leave for a model: credentials in a transcript become `[redacted secret]`
before it is sent for consolidation. The chat and its journal keep what was said.

Each pattern matches a credential's own shape (a provider's prefix, a fixed length, a
key-block frame), so look-alikes such as commit hashes, UUIDs and base64 data survive.
"""

from __future__ import annotations

import re

REDACTED = "[redacted secret]"

# The lookahead lets the scan skip, at one test, every position no token can start at.
_TOKENS = re.compile(
    r"\b(?=[sgxhAe])(?:"
    + "|".join(
        (
            # Anthropic (sk-ant-api03-…), OpenAI (sk-…, sk-proj-…, sk-svcacct-…), DeepSeek (sk-…)
            r"\bsk-[A-Za-z0-9][A-Za-z0-9_\-]{19,}",
            r"\bgsk_[A-Za-z0-9]{20,}",  # Groq
            r"\bgh[pousr]_[A-Za-z0-9]{30,}",  # GitHub classic and app tokens
            r"\bgithub_pat_[A-Za-z0-9_]{30,}",  # GitHub fine-grained tokens
            r"\bxox[abposre]-[A-Za-z0-9-]{10,}",  # Slack tokens
            r"\bxapp-\d-[A-Za-z0-9-]{10,}",  # Slack app-level tokens
            r"https://hooks\.slack\.com/services/[A-Za-z0-9/_-]+",  # Slack webhooks
            r"\b(?:AKIA|ASIA|ABIA|ACCA)[0-9A-Z]{16}\b",  # AWS access key ids
            r"\bAIza[0-9A-Za-z_\-]{35}",  # Google API keys
            # JWTs: a base64url JSON header and payload ("{"… encodes as "eyJ"), then a signature.
            r"\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}",
        )
    )
    + ")"
)
# A private key block, whole; or, pasted without its end line, its base64 lines.
_KEY_BLOCK = re.compile(
    r"-----BEGIN [A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----"
    r"(?:.*?-----END [A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----|[^\n]*(?:\n[A-Za-z0-9+/=]{8,})*)",
    re.DOTALL,
)
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
_BEARER = re.compile(r"(?i)\b(Bearer|Basic)\s+[A-Za-z0-9._~+/\-]{16,}=*")
# user:password@ in a URL
_URL_PASSWORD = re.compile(r"(?i)\b([a-z][a-z0-9+.-]*://[^\s:/@]+:)[^\s/@]{3,}(@)")


def redact(text: str) -> str:
    """`text` with every string that looks like a credential replaced by [redacted secret]."""
    if not text:
        return text
    text = _KEY_BLOCK.sub(REDACTED, text)
    text = _TOKENS.sub(REDACTED, text)
    lowered = text.lower()
    if "bearer" in lowered or "basic" in lowered:
        text = _BEARER.sub(lambda m: f"{m.group(1)} {REDACTED}", text)
    if "://" in text:
        text = _URL_PASSWORD.sub(lambda m: f"{m.group(1)}{REDACTED}{m.group(2)}", text)
    return _ASSIGNED.sub(_assigned, text)


def _assigned(match: re.Match[str]) -> str:
    value = match.group("value")
    if REDACTED in value or value.strip("\"'") == "[redacted":
        return match.group(0)  # already replaced by a stricter pattern
    quote = value[0] if value[0] in "\"'" else ""
    return f"{match.group('name')}{match.group('sep')}{quote}{REDACTED}{quote}"
