"""Where attachments are kept: in the data folder by content hash (a private session's
apart), deleted once no journal names them; and a PDF's text, remembered in this process."""

from __future__ import annotations

import os
import re
import time
from collections import OrderedDict
from pathlib import Path
from typing import Any

from memory.chat.attachments.kinds import FOLDER, HEX64, PRIVATE, Attachment
from memory.chat.attachments.reading import decode_text, pdf_text
from memory.data.files import atomic_write, ensure_dir, fsync_dir
from memory.data.store import MemoryStore
from memory.sessions.marks import marked_open
from memory.settings import AttachmentLimits

# A file stored a moment ago may not be in its journal yet: `collect` leaves it this long.
COLLECT_GRACE = 600.0
_DIGEST = re.compile(rb'"sha256":\s*"([0-9a-f]{64})"')


def stored_path(store: MemoryStore | Path, record: dict[str, Any]) -> Path:
    """Where a record's file is kept in the data folder (a store, or its root)."""
    folder = (store if isinstance(store, Path) else store.root) / FOLDER
    if record.get("private") is True:
        folder = folder / PRIVATE
    return folder / str(record.get("sha256", ""))


def keep(store: MemoryStore, attachment: Attachment, *, private: bool = False) -> dict[str, Any]:
    """Copy the attachment into the data folder by content hash (atomically; a file kept
    before is not written again) and return the record its journal message stores. A
    private session's attachments are kept apart and deleted with it (`collect`)."""
    record = attachment.record(private=private)
    path = stored_path(store, record)
    ensure_dir(path.parent)
    remember_text(attachment.digest, attachment.text)
    try:
        if path.stat().st_size == attachment.size:
            os.utime(path)  # `collect` spares it: its message is about to name it
            return record
    except FileNotFoundError:
        pass
    atomic_write(path, attachment.data)
    return record


def _holds_files(folder: Path) -> bool:
    try:
        return any(HEX64.fullmatch(entry.name) for entry in os.scandir(folder))
    except OSError:
        return False


def forget_private(store: MemoryStore) -> int:
    """Delete the kept files of private sessions that ended: nothing of them is kept."""
    return collect(store, grace=0, private_only=True)


def _naming(store: MemoryStore, private_only: bool) -> list[Path]:
    """The journals that may name a kept file. A private session's are named only by its
    journal, which keeps its open mark until it is deleted: those few, not every journal."""
    if private_only:
        try:
            return marked_open(store.sessions_dir)
        except OSError:
            pass  # marks that cannot be made here: every journal is read instead
    # Every device's: a file another machine stored is named by that machine's journal.
    return [
        path
        for pair in store.layout.session_folders()
        for folder in pair
        for path in folder.glob("*.jsonl")
    ]


def collect(store: MemoryStore, *, grace: float | None = None, private_only: bool = False) -> int:
    """Delete every kept attachment no session journal names any more (a deleted session's,
    an ended private session's); one stored in the last `grace` seconds is spared, since its
    message may not be journaled yet. With `private_only`, only private sessions' files are
    looked at. Returns how many were deleted."""
    grace = COLLECT_GRACE if grace is None else grace
    folder = store.root / FOLDER
    subs = (folder / PRIVATE,) if private_only else (folder, folder / PRIVATE)
    if not any(_holds_files(s) for s in subs):
        return 0  # nothing kept: no journal need be read (the common case)
    named: set[str] = set()
    # A private session's files are named only by its journal, which stays open (marked)
    # until it is deleted: those few are read, not every journal.
    for journal in _naming(store, private_only):
        try:
            named.update(m.decode() for m in _DIGEST.findall(journal.read_bytes()))
        except FileNotFoundError:
            continue  # deleted since it was listed: it names nothing now
        except OSError:
            return 0  # a journal that cannot be read may name any of them: delete nothing
    deleted = 0
    now = time.time()
    for sub in subs:
        if not sub.is_dir():
            continue
        for path in sub.iterdir():
            if path.name in named or not HEX64.fullmatch(path.name):
                continue
            try:
                found = path.stat()
                # ctime, too: a sync tool keeps a file's mtime, so one that has just come
                # from another machine may look old while its journal is still on the way.
                if now - max(found.st_mtime, found.st_ctime) < grace:
                    continue
                path.unlink()
                deleted += 1
            except OSError:
                continue
        if deleted:
            fsync_dir(sub)
    return deleted


_TEXT_CACHE_CHARS = 20_000_000
_text_cache: OrderedDict[str, str] = OrderedDict()


def remember_text(digest: str, text: str | None) -> None:
    """Keep a PDF's extracted text in this process: each turn sends it again, and pypdf
    takes a while on a long document."""
    if text is None:
        return
    _text_cache[digest] = text
    _text_cache.move_to_end(digest)
    while sum(len(t) for t in _text_cache.values()) > _TEXT_CACHE_CHARS and len(_text_cache) > 1:
        _text_cache.popitem(last=False)


def stored_text(store: MemoryStore, record: dict[str, Any]) -> str:
    digest = str(record.get("sha256", ""))
    if digest in _text_cache:
        return _text_cache[digest]
    data = stored_path(store, record).read_bytes()
    name = str(record.get("name", "file"))
    if record.get("kind") == "pdf":
        text, _, _ = pdf_text(data, name, name, AttachmentLimits(10**10, 10**10, 10**6, 10**10))
    else:
        text = decode_text(data) or ""
    remember_text(digest, text)
    return text
