"""Open marks: the sessions that may be active, found without reading every journal.

A folder of journals has a folder of marks beside it (`open_marks`): one empty file per
journal that may be active, made before the journal (or its "reopened" mark) is written and
removed after its closing mark, so that an active journal always has one. Light on purpose
(the files layer only): every `kept` verb looks here for orphaned private sessions first.
"""

from __future__ import annotations

import errno
import json
import logging
import os
from pathlib import Path

from memory.data.files import LINK_REFUSED, NOFOLLOW, ensure_dir, fsync_dir

log = logging.getLogger(__name__)

HEADER_KIND = "session"  # a journal's first line: {"kept": "session", ...}

SCANNED = ".scanned"  # in a folder's open marks: every journal made before them is marked


def open_marks(folder: Path) -> Path:
    """Where the open marks of a folder of journals are: one empty file per journal that
    may be active, made before the journal (or its "reopened" mark) is written and removed
    after its closing mark, so that an active journal always has one. A stale mark (a
    crash after the closing mark) only costs a look at that journal."""
    return folder.parent / f".{folder.name}.open"


def mark_open(path: Path, *, sync: bool = True) -> None:
    marks = ensure_dir(open_marks(path.parent))
    fd = os.open(marks / path.stem, os.O_WRONLY | os.O_CREAT | NOFOLLOW, 0o600)
    os.close(fd)
    if sync:
        fsync_dir(marks)


def unmark_open(path: Path) -> None:
    try:
        (open_marks(path.parent) / path.stem).unlink(missing_ok=True)
    except OSError as exc:  # a stale mark is harmless: the next look at it reads the journal
        log.warning("The open mark of %s could not be removed (%s).", path, exc.strerror)


def marked_open(folder: Path) -> list[Path]:
    """The journals of `folder` that may be active (see `open_marks`); each still has to be
    read to know. A folder whose journals were written before open marks existed is
    looked through once, each journal read from its end only as far as its last mark."""
    marks = open_marks(folder)
    if not folder.is_dir():
        return []
    if not (marks / SCANNED).exists():
        _mark_every_open(folder)
    try:
        names = os.listdir(marks)
    except FileNotFoundError:
        return []
    return [folder / f"{name}.jsonl" for name in sorted(names) if not name.startswith(".")]


def _mark_every_open(folder: Path) -> None:
    for path in sorted(folder.glob("*.jsonl")):
        try:
            closed = is_closed(path)
        except FileNotFoundError:
            continue
        except OSError:  # unreadable here: reading it in full says why
            closed = False
        if not closed:
            mark_open(path, sync=False)
    marks = ensure_dir(open_marks(folder))
    fd = os.open(marks / SCANNED, os.O_WRONLY | os.O_CREAT | NOFOLLOW, 0o600)
    os.close(fd)
    fsync_dir(marks)


def is_closed(path: Path, chunk: int = 16384) -> bool:
    """Whether `load` would find the journal closed, read from its end back only as far as
    its last "reopened" mark or closing "pending" mark (the whole file when it has none)."""
    fd = open_journal(path)
    with open(fd, "rb") as f:
        end = f.seek(0, os.SEEK_END)
        carry = b""
        while True:
            start = max(0, end - chunk)
            f.seek(start)
            lines = (f.read(end - start) + carry).split(b"\n")
            end = start
            carry = lines.pop(0) if start > 0 else b""  # maybe the end of an earlier line
            for index in range(len(lines) - 1, -1, -1):
                closed = _closes(lines[index], first=start == 0 and index == 0)
                if closed is not None:
                    return closed
            if start == 0:
                return False


def _closes(raw: bytes, *, first: bool) -> bool | None:
    """What one journal line says of the journal being closed, as `load` reads it: True for
    a closing mark, False for "reopened", None for anything else."""
    if not raw.strip():
        return None
    try:
        record = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError):
        return None
    if not isinstance(record, dict) or (first and record.get("kept") == HEADER_KIND):
        return None
    if "mark" not in record:
        return None
    if record.get("mark") == "reopened":
        return False
    if record.get("mark") == "pending" and record.get("closed"):
        return True
    return None


def open_journal(path: Path) -> int:
    """A journal opened for reading; a symbolic link is refused with its sentence."""
    try:
        return os.open(path, os.O_RDONLY | NOFOLLOW)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise OSError(errno.ELOOP, LINK_REFUSED, str(path)) from None
        raise
