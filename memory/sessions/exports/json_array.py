"""Reading a large JSON array one element at a time: exports run to hundreds of megabytes,
and are read from a buffered file (`json.JSONDecoder.raw_decode` over the top-level array),
never whole."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any, TextIO

from memory.sessions.exports.records import ExportError

READ_SIZE = 1 << 20  # characters read at a time from a JSON export
TOO_DEEP = object()  # what json_array yields for an element nested too deeply to decode

# A string (whole), a bracket, or the start of a string not yet read to its end.
_TOKENS = re.compile(r'"(?:[^"\\]+|\\.)*"|[\[\]{}]|"', re.S)


def _value_end(buffer: str, start: int) -> int | None:
    """Where the array or object at `start` ends, found without recursion (it is nested
    past what the decoder can); None when `buffer` does not hold its end yet."""
    depth = 0
    for token in _TOKENS.finditer(buffer, start):
        found = token.group()
        if found == '"':
            return None
        if found[0] == '"':
            continue
        depth += 1 if found in "[{" else -1
        if depth <= 0:
            return token.end()
    return None


def json_array(stream: TextIO, name: str) -> Iterator[tuple[int, Any]]:
    """The elements of the JSON array `stream` holds, one at a time: (index, value).

    Only one element (and one read) is in memory at a time. Raises ExportError naming the
    element that is not valid JSON; the elements before it have been yielded. An element
    nested too deeply to decode is skipped and yielded as TOO_DEEP.
    """
    reader = _Reader(stream)
    if reader.skip("\ufeff") != "[":
        raise ExportError(
            f"{name} is not a JSON array of conversations (it should begin with '[')."
        )
    reader.position += 1
    index = 0
    while True:
        found = reader.skip("," if index else "")
        if found == "]":
            return
        if found == "":
            raise ExportError(_cut_short(name, index))
        yield index, reader.value(name, index)
        index += 1


def _cut_short(name: str, index: int) -> str:
    return f"{name} ends in the middle of conversation {index + 1} (the file is cut short)."


class _Reader:
    """The part of the stream read and not yet decoded, read on as an element needs."""

    def __init__(self, stream: TextIO) -> None:
        self.stream = stream
        self.decoder = json.JSONDecoder()
        self.buffer, self.position, self.eof = "", 0, False
        self.want = READ_SIZE

    def fill(self) -> bool:
        chunk = self.stream.read(self.want)
        if not chunk:
            self.eof = True
            return False
        self.buffer = self.buffer[self.position :] + chunk
        self.position = 0
        return True

    def skip(self, separators: str) -> str:
        """The next significant character (not consumed), past whitespace and separators."""
        while True:
            buffer = self.buffer
            while self.position < len(buffer) and (
                buffer[self.position].isspace() or buffer[self.position] in separators
            ):
                self.position += 1
            if self.position < len(buffer):
                return buffer[self.position]
            if not self.fill():
                return ""

    def value(self, name: str, index: int) -> Any:
        """The element at the position, read on until it is whole (or proved invalid)."""
        last: tuple[int, str] | None = None
        while True:
            try:
                value, end = self.decoder.raw_decode(self.buffer, self.position)
                break
            except RecursionError:
                skipped = _value_end(self.buffer, self.position)
                if skipped is not None:
                    value, end = TOO_DEEP, skipped
                    break
                if self.eof:
                    raise ExportError(_cut_short(name, index)) from None
            except json.JSONDecodeError as exc:
                # Invalid, or only cut off by the end of what was read? Read more: an error
                # that stays where it was is real (a long string is only unterminated yet).
                seen = (exc.pos - self.position, exc.msg)
                real = seen == last and not exc.msg.startswith("Unterminated string")
                if self.eof or real:
                    raise ExportError(
                        f"{name}: conversation {index + 1} is not valid JSON ({exc.msg})."
                    ) from None
                last = seen
            self.want = min(self.want * 2, 1 << 28)
            self.fill()
        self.want = READ_SIZE
        self.position = end
        return value
