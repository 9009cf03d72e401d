"""Paths as the composer takes them: `/attach` arguments split as a shell would (quotes,
backslashes), `~` expanded, Tab completion, and a pasted path or `file://` URL."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import unquote, urlsplit

_SPECIAL = " \t'\"\\"
MOST_CHOICES = 200  # a folder of thousands is not listed whole on a Tab


@dataclass(frozen=True)
class Token:
    start: int  # where it begins in the argument, quotes included
    value: str  # with quotes and backslashes taken away
    open_quote: str  # the quote still open at the end of the argument, or ""


def tokens(argument: str) -> list[Token]:
    """The words of `argument` as a POSIX shell splits them; an unclosed quote runs to the
    end (the last word is being typed)."""
    found: list[Token] = []
    value: list[str] = []
    start: int | None = None
    quote = ""
    i = 0
    while i < len(argument):
        char = argument[i]
        if start is None and (quote or char not in " \t"):
            start = i
        if quote:
            if char == quote:
                quote = ""
            elif char == "\\" and quote == '"' and i + 1 < len(argument):
                i += 1
                value.append(argument[i])
            else:
                value.append(char)
        elif char in "'\"":
            quote = char
        elif char == "\\" and i + 1 < len(argument):
            i += 1
            value.append(argument[i])
        elif char in " \t":
            if start is not None:
                found.append(Token(start, "".join(value), ""))
                value, start = [], None
        else:
            value.append(char)
        i += 1
    if start is not None:
        found.append(Token(start, "".join(value), quote))
    return found


def split_paths(argument: str) -> list[str]:
    """`/attach`'s paths, `~` expanded; raises ValueError (one sentence) on an open quote."""
    words = tokens(argument)
    if words and words[-1].open_quote:
        raise ValueError(
            f"The quote {words[-1].open_quote} before {words[-1].value!r} is never closed."
        )
    return [os.path.expanduser(w.value) for w in words]


def escape(path: str) -> str:
    """A path written so that `tokens` reads it back whole."""
    return "".join("\\" + c if c in _SPECIAL else c for c in path)


def choices(fragment: str) -> list[str]:
    """Paths that begin with `fragment` (as typed, `~` kept); a folder ends with "/"."""
    folder, _, stem = fragment.rpartition("/")
    prefix = folder + _
    where = Path(os.path.expanduser(folder if prefix else ".") or "/")
    found: list[str] = []
    try:
        with os.scandir(where) as entries:
            for entry in entries:
                if not entry.name.startswith(stem) or (
                    entry.name.startswith(".") and not stem.startswith(".")
                ):
                    continue
                try:
                    is_dir = entry.is_dir()
                except OSError:
                    is_dir = False
                found.append(prefix + entry.name + ("/" if is_dir else ""))
                if len(found) >= MOST_CHOICES:
                    break
    except OSError:
        return []
    return sorted(found)


def complete(argument: str) -> tuple[str, list[str]]:
    """`argument` with its last path completed as far as every choice agrees (a file's
    whole name is followed by a space), and the choices when more than one is left."""
    words = tokens(argument)
    if not words or (argument[-1:] in (" ", "\t") and not words[-1].open_quote):
        last = Token(len(argument), "", "")
    else:
        last = words[-1]
    found = choices(last.value)
    if not found:
        return argument, []
    common = _shared_start(found)
    done = len(found) == 1 and not common.endswith("/")
    completed = argument[: last.start] + escape(common) + (" " if done else "")
    return completed, found if len(found) > 1 else []


def _shared_start(names: list[str]) -> str:
    """The longest start every name has (what the first and last in order share)."""
    first, last = min(names), max(names)
    for i, char in enumerate(first):
        if i >= len(last) or last[i] != char:
            return first[:i]
    return first


def pasted_path(text: str) -> Path | None:
    """The file a composer holding only a path, or a `file://` URL, names (None if it holds
    anything else, or the file is not there)."""
    text = text.strip()
    if not text or "\n" in text or len(text) > 4096:
        return None
    if text.startswith("file://"):
        url = urlsplit(text)
        if url.netloc not in ("", "localhost"):
            return None
        candidate = unquote(url.path)
    else:
        words = tokens(text)
        if len(words) != 1 or words[0].open_quote:
            return None
        candidate = os.path.expanduser(words[0].value)
        if not candidate.startswith("/") and not text.startswith(("./", "../", "'", '"')):
            return None  # a bare word is a word, even if a file of that name is here
    path = Path(candidate)
    try:
        return path if path.is_file() else None
    except (OSError, ValueError):
        return None
