"""`kept ask`'s input and output: the question (words, or stdin with `-`), the files
attached with -a, and the reply streamed to stdout (Markdown rendered live on a terminal)."""

from __future__ import annotations

import sys
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from catalog import Catalog
    from memory.chat.attachments import Attachment
    from memory.settings import AttachmentLimits


@dataclass(frozen=True)
class Question:
    """The question asked, and the [start, end) spans of it that arrived on stdin: piped
    text (a diff, an e-mail) is pasted, not typed, and memory learns only from what the
    user typed (memory.message)."""

    text: str
    pasted: list[list[int]] = field(default_factory=list)


def read_question(parts: list[str]) -> Question:
    """The words given, with `-` standing for what arrives on stdin; each part cleaned
    (memory.sanitize) on its own, so that the spans stay true in the journal."""
    from memory.sanitize import clean_text

    pieces: list[tuple[str, bool]] = []
    for part in parts:
        piped = part == "-"
        text = clean_text(_piped_text() if piped else part).strip()
        if text:
            pieces.append((text, piped))
    return _joined(pieces)


def _piped_text() -> str:
    """What `-` stands for: stdin, which must be a pipe (a terminal would wait for ever)."""
    if sys.stdin is None or sys.stdin.isatty():
        raise ValueError(
            "`-` reads the question from stdin, but nothing is piped in: `echo text | kept ask -`"
        )
    return _stdin_text()


def _joined(pieces: list[tuple[str, bool]], between: str = "\n\n") -> Question:
    """The pieces as one question, a blank line apart, with the spans of those piped in."""
    text = ""
    pasted: list[list[int]] = []
    for piece, piped in pieces:
        text += between if text else ""
        if piped:
            pasted.append([len(text), len(text) + len(piece)])
        text += piece
    return Question(text, pasted)


def read_attachments(paths: list[str], limits: AttachmentLimits) -> list[Attachment]:
    """Each `-a PATH` read and measured (`-` is stdin); raises AttachmentError."""
    from pathlib import Path

    from memory.chat.attachments import AttachmentError, read_attachment, read_stdin_bytes

    found = []
    for path in paths:
        if path != "-":
            found.append(read_attachment(Path(path).expanduser(), limits))
            continue
        stream = getattr(sys.stdin, "buffer", None)
        if stream is None or sys.stdin.isatty():
            raise AttachmentError(
                "`-a -` attaches what is piped in, but nothing is: `cat file | kept ask -a - …`."
            )
        # One byte past the largest limit is enough to refuse it: a pipe may never end.
        found.append(read_stdin_bytes(bytes(stream.read(limits.largest + 1)), "stdin", limits))
    return found


def cannot_send(
    catalog: Catalog, model: str, attachments: list[Attachment], question: str
) -> str | None:
    """Why the attachments cannot go to `model`: past its window, or an image it cannot see."""
    from app.words.attachments import does_not_fit, vision_model_sentence
    from memory.chat.attachments import can_take

    if not attachments:
        return None
    pricing = catalog.pricing(catalog.get(model))
    if pricing is not None and pricing.context_window:
        too_big = does_not_fit(attachments, question, pricing.context_window, shell=True)
        if too_big is not None:
            return too_big
    if not can_take(model, {a.kind for a in attachments}, catalog):
        return vision_model_sentence(catalog, model, shell=True)
    return None


def _stdin_text() -> str:
    """What is piped in, as bytes decoded from UTF-8: a byte that is not (a Latin-1 file in
    a `git diff`) becomes U+FFFD rather than a traceback."""
    stream = getattr(sys.stdin, "buffer", None)
    if stream is None:  # a text stream with no bytes beneath it
        return sys.stdin.read()
    data = bytes(stream.read())
    text = data.decode("utf-8", errors="replace")
    if "\ufffd" in text and "\ufffd".encode() not in data:
        print(
            "kept ask: stdin is not all UTF-8; the bytes that are not were replaced by �.",
            file=sys.stderr,
        )
    return text


class Output:
    """Streamed text: as it comes when piped; on a terminal, Markdown rendered live."""

    def __init__(self) -> None:
        self.tty = sys.stdout.isatty()
        self.text = ""
        self.first: float | None = None  # when the first piece arrived (time.monotonic)
        self._live = None
        if self.tty:
            from rich.console import Console
            from rich.live import Live

            self._live = Live(
                console=Console(),
                auto_refresh=True,
                refresh_per_second=12,
                vertical_overflow="visible",
            )
            self._live.start()

    def feed(self, piece: str) -> None:
        if self.first is None:
            self.first = time.monotonic()
        self.text += piece
        if self._live is not None:
            from rich.markdown import Markdown

            from memory.sanitize import clean_text

            self._live.update(Markdown(clean_text(self.text)))
        else:
            sys.stdout.write(piece)
            sys.stdout.flush()

    def restart(self, why: str) -> None:
        """A model failed after some of its reply was written: the next one starts again."""
        if self.text and self._live is None:
            sys.stdout.write("\n")
            print(f"kept ask: {why}; the reply starts again below.", file=sys.stderr)
        self.text = ""

    def close(self, final: str | None) -> None:
        if self._live is not None:
            if final is not None:
                from rich.markdown import Markdown

                self._live.update(Markdown(final))
            self._live.stop()
        elif self.text:
            sys.stdout.write("\n" if not self.text.endswith("\n") else "")
            sys.stdout.flush()
