"""What the model and memory see of an attachment: the model its text or image, as
content parts; memory only a mention."""

from __future__ import annotations

import base64
from collections.abc import Iterable, Mapping
from typing import Any

from memory.chat.attachments.kinds import HEX64, AttachmentError, human_size
from memory.chat.attachments.storage import stored_path, stored_text
from memory.data.store import MemoryStore
from memory.message import Message


def display_name(record: dict[str, Any]) -> str:
    """A record's file name on one line, without quotes: a journal may be edited by hand,
    and the name goes into prompts."""
    return " ".join(str(record.get("name") or "file").replace('"', "'").split())[:200]


def mention(record: dict[str, Any]) -> str:
    """`[attached: report.pdf, 12 pages, 31 KB]`: what memory sees instead of the file."""
    parts = [display_name(record)]
    pages = record.get("pages")
    if isinstance(pages, int):
        parts.append(f"{pages} page{'s' if pages != 1 else ''}")
    size = record.get("size")
    if isinstance(size, int):
        parts.append(human_size(size))
    return f"[attached: {', '.join(parts)}]"


def records_of(message: Message | Mapping[str, Any]) -> list[dict[str, Any]]:
    """A journal message's attachment records (none for a damaged or hand-edited list)."""
    found = message.get("attachments")
    if not isinstance(found, list):
        return []
    # The digest names a file in the data folder: nothing else may (a hand edit, "../x").
    return [r for r in found if isinstance(r, dict) and HEX64.fullmatch(str(r.get("sha256")))]


def kinds_of(messages: Iterable[Message | Mapping[str, Any]]) -> set[str]:
    return {str(r.get("kind")) for m in messages for r in records_of(m)}


def expand(
    store: MemoryStore,
    message: Message | Mapping[str, Any],
    sent: dict[str, Any],
    *,
    images: bool = True,
) -> dict[str, Any]:
    """`sent` (the context's form of journal `message`) with its attachments as content
    parts: each text or PDF a text block naming the file, each image an image_url part
    with a data URL (litellm turns both into each provider's own form). Without `images`,
    an image is a mention: the model asked cannot see it."""
    records = records_of(message)
    if not records:
        return sent
    parts: list[dict[str, Any]] = []
    if sent.get("content"):
        parts.append({"type": "text", "text": str(sent["content"])})
    for record in records:
        name = display_name(record)
        try:
            if record.get("kind") == "image":
                if not images:
                    parts.append({"type": "text", "text": f"{mention(record)} (not shown)"})
                    continue
                data = stored_path(store, record).read_bytes()
                url = f"data:{record.get('media_type')};base64,{base64.b64encode(data).decode()}"
                parts.append({"type": "image_url", "image_url": {"url": url}})
                continue
            body = stored_text(store, record)
        except (OSError, AttachmentError):
            parts.append(
                {"type": "text", "text": f"{mention(record)} (the file is no longer in Kept)"}
            )
            continue
        parts.append({"type": "text", "text": f'<file name="{name}">\n{body}\n</file>'})
    return {**sent, "content": parts}
