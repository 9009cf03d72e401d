"""What an attachment is: its kinds, its record in the journal, and its measures."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

FOLDER = "attachments"
PRIVATE = "private"  # attachments/private/: a private session's, gone with the session
IMAGE_TOKENS = 1_600  # about what one image costs at the providers' usual resizing
HEX64 = re.compile(r"[0-9a-f]{64}")  # a kept file's name: its content's sha256


class AttachmentError(ValueError):
    """A file that cannot be attached: str() is one sentence for the user, naming it."""


@dataclass(frozen=True)
class Attachment:
    """A file read and measured, ready to be shown to the model and kept."""

    name: str
    kind: str  # "text" | "pdf" | "image"
    media_type: str
    size: int
    digest: str  # sha256 of `data`, hex
    tokens: int  # an estimate
    pages: int | None = None
    notices: tuple[str, ...] = ()
    text: str | None = None  # what the model reads (text, pdf); None for an image
    data: bytes = field(default=b"", repr=False)

    def label(self) -> str:
        """`report.pdf · 12 pages · 31 KB · ~8,100 tokens`"""
        parts = [self.name]
        if self.pages is not None:
            parts.append(f"{self.pages} page{'s' if self.pages != 1 else ''}")
        parts += [human_size(self.size), f"~{round_tokens(self.tokens):,} tokens"]
        return " · ".join(parts)

    def record(self, *, private: bool = False) -> dict[str, Any]:
        """What a journal message stores in its "attachments" list."""
        record: dict[str, Any] = {
            "name": self.name,
            "kind": self.kind,
            "media_type": self.media_type,
            "size": self.size,
            "sha256": self.digest,
            "tokens": self.tokens,
        }
        if self.pages is not None:
            record["pages"] = self.pages
        if self.notices:
            record["notices"] = list(self.notices)
        if private:
            record["private"] = True
        return record


def human_size(size: int) -> str:
    if size < 1024:
        return f"{size} bytes" if size != 1 else "1 byte"
    if size < 1024 * 1024:
        return f"{round(size / 1024)} KB"
    return f"{size / (1024 * 1024):.1f} MB"


def round_tokens(tokens: int) -> int:
    return tokens if tokens < 1_000 else round(tokens, -2)


def text_tokens(text: str) -> int:
    """About how many tokens a text is, for any model: a quarter of its characters."""
    return len(text) // 4 + 1
