"""The search index's file: where it is, its schema, opened (never through a link),
checked to be this index, created, removed; and what an entry is trusted by (a file's key).
"""

from __future__ import annotations

import contextlib
import os
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import sqlite3

INDEX = "index.search.sqlite"
USER_VERSION = 0x6B657031  # "kep1": a file that says otherwise is not this index
SCHEMA = {
    "files": (
        "CREATE TABLE files(id INTEGER PRIMARY KEY, path TEXT UNIQUE NOT NULL, "
        "size INTEGER NOT NULL, mtime INTEGER NOT NULL, ctime INTEGER NOT NULL, "
        "inode INTEGER NOT NULL)"
    ),
    # The text as indexed, compressed (a table of its own: `files` is read whole by every
    # search): a contentless table forgets a document only when told its words again, and
    # what a deleted transcript said must not linger.
    "texts": "CREATE TABLE texts(id INTEGER PRIMARY KEY, indexed BLOB NOT NULL)",
    "words": (
        "CREATE VIRTUAL TABLE words USING fts5(body, tokenize='trigram', detail='none', "
        "content='', columnsize=0)"
    ),
}


def key(st: os.stat_result) -> tuple[int, int, int, int]:
    """What a file's entry is trusted by: any write, even one that puts the size and mtime
    back, moves the ctime; an atomic replace is a new inode."""
    return st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino


def relative_to(root: Path, path: Path) -> str:
    text, prefix = str(path), str(root) + os.sep
    return text[len(prefix) :] if text.startswith(prefix) else text


def open_index(root: Path, *, create: bool) -> sqlite3.Connection:
    """A connection to the index; without `create`, only to one that exists."""
    import sqlite3

    path = root / INDEX
    if path.is_symlink():  # never written through, never trusted
        if not create:
            raise sqlite3.DatabaseError("the index is a symbolic link")
        path.unlink()
    if create:
        with contextlib.suppress(FileExistsError):  # made 0600 before SQLite sees it
            os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600))
    # A search waits little for the builder (it would rather read the files); the builder
    # waits for searches to let go of what it must rewrite.
    db = sqlite3.connect(
        path.absolute().as_uri() + "?mode=rw",
        uri=True,
        timeout=30 if create else 2,
        isolation_level=None,
    )
    try:
        db.execute("PRAGMA journal_mode=WAL")
        db.execute("PRAGMA synchronous=NORMAL")  # derived: the last batch may be redone
        db.execute("PRAGMA secure_delete=ON")  # a forgotten file's pages are zeroed
    except sqlite3.Error:
        db.close()
        raise
    return db


def check(db: sqlite3.Connection) -> None:
    """Raise DatabaseError unless the file is this index, as this version writes it."""
    import sqlite3

    tables = dict(
        db.execute("SELECT name, sql FROM sqlite_master WHERE name IN (?, ?, ?)", (*SCHEMA,))
    )
    version = db.execute("PRAGMA user_version").fetchone()[0]
    if tables != SCHEMA or version != USER_VERSION:
        raise sqlite3.DatabaseError("not Kept's search index")


def remove(root: Path) -> None:
    """Delete the index (it is only derived): the next build starts afresh."""
    for suffix in ("", "-wal", "-shm"):
        with contextlib.suppress(FileNotFoundError):
            os.unlink(root / (INDEX + suffix))


def read_settled(path: Path) -> tuple[bytes, tuple[int, int, int, int]] | None:
    """A file's bytes and the key they belong to; None if it changed while being read."""
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return None
    try:
        before = os.fstat(fd)
        chunks = []
        while chunk := os.read(fd, 1 << 20):
            chunks.append(chunk)
        after = os.fstat(fd)
    except OSError:
        return None
    finally:
        os.close(fd)
    data = b"".join(chunks)
    if key(before) != key(after) or len(data) != before.st_size:
        return None
    return data, key(after)


def create_tables(db: sqlite3.Connection) -> None:
    """The index's tables, in an empty file."""
    db.execute("BEGIN IMMEDIATE")
    for sql in SCHEMA.values():
        db.execute(sql)
    db.execute(f"PRAGMA user_version={USER_VERSION}")
    db.execute("COMMIT")
