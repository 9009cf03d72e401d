"""Text from outside (a model, a provider, a damaged file) is stripped of terminal escapes
and control characters where it enters Kept, before it can reach a file or a terminal."""

from __future__ import annotations

import re
from collections.abc import Sequence

_ESCAPES = re.compile(
    r"\x1b\[[0-?]*[ -/]*[@-~]"  # CSI: colours, cursor moves, screen clears
    r"|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)?"  # OSC: window titles, hyperlinks, clipboard
    r"|\x1b[PX^_][^\x1b]*(?:\x1b\\)?"  # DCS, SOS, PM, APC strings
    r"|\x1b[@-Z\\-_]"  # other two-character escapes
    r"|\x9b[0-?]*[ -/]*[@-~]"  # 8-bit CSI
)
# C0 controls except tab and newline, DEL, C1 controls, and bidirectional overrides that
# can make text display differently from what it says; and surrogates (half an emoji, from
# JSON's `\ud83d` escapes), which no file or terminal can encode.
_CONTROLS = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069\ud800-\udfff]")
_SURROGATES = re.compile(r"[\ud800-\udfff]")


def whole_characters(text: str) -> str:
    """`text` with a surrogate pair given as two code points joined into its character and
    a lone surrogate replaced by U+FFFD, so it can be written as UTF-8."""
    if not _SURROGATES.search(text):
        return text
    return text.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "replace")


def clean_text(text: str) -> str:
    """`text` without escape sequences or control characters, surrogates made whole (or
    U+FFFD); CRLF becomes LF."""
    if not _CONTROLS.search(text):  # the common case: nothing to strip, no copy made
        return text
    text = whole_characters(text).replace("\r\n", "\n")
    return _CONTROLS.sub("", _ESCAPES.sub("", text))


class Secrets(list[str]):
    """Every key Kept knows, for redaction; shown as hidden in any traceback."""

    def __repr__(self) -> str:
        return f"<{len(self)} keys hidden>"


def redact(text: str, secrets: Sequence[str]) -> str:
    """`text` with every key of `secrets` (four characters or more) replaced by ***."""
    for secret in secrets:
        if secret and len(secret) >= 4:
            text = text.replace(secret, "***")
    return text


def scrub(text: str, secrets: Sequence[str]) -> str:
    """A provider's words, fit to log and show: keys out, escape sequences out."""
    return clean_text(redact(text, secrets))
