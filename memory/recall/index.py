"""The search index: a derived, per-machine cache that tells a search which files cannot
hold a literal, so that only the others are read.

It is SQLite's FTS5 with the trigram tokenizer, one document per searched file (HISTORY.md,
an archive, a journal; never a private session's), without positions, beside a compressed
copy of what was indexed so that a file changed or deleted is forgotten word for word.
A literal is in a file only if each of its trigrams is (after SQLite's case folding, which
the query's trigrams get too), so a file the index rules out is skipped and every other
file is searched exactly as before: the results are the scan's, line for line. An entry is
trusted only while the file's size, mtime, ctime and inode are the ones it was indexed
with; a file changed behind Kept's back, or not indexed yet, is scanned.

The files stay the source of truth. `index.search.sqlite` may be deleted at any time; a
missing, damaged or foreign one only means a scan, and it is rebuilt by a background
process (`build_in_background`) once enough of the files are missing from it. Readers and
the one builder share it through SQLite's WAL; each batch the builder writes is a
transaction, so a crash leaves an index that is usable as it stands.
"""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
import time
import zlib
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from memory.recall.index_file import INDEX as INDEX  # re-exported: callers know them here
from memory.recall.index_file import (
    check,
    create_tables,
    key,
    open_index,
    read_settled,
    relative_to,
)
from memory.recall.index_file import remove as remove

if TYPE_CHECKING:  # imported where used: a search of a folder with no index needs none
    import sqlite3

LOCK = "index.search.lock"  # held by the one process that builds
AGAIN = "index.search.again"  # left for the builder at work: a file went, look once more
_MOST_PASSES = 5  # a builder looks again at most this many times in a row
BUILD_AFTER = 4 * 2**20  # bytes of searched files missing from the index before a build
SETTLE_SECONDS = 2.0  # a file changed more recently is left to the scan: its mtime may not tick
_BATCH_BYTES = 8 * 2**20  # written per transaction
_MOST_TRIGRAMS = 16  # asked of the index per literal: any subset of them is still exact
# A trigram is never taken across these: history entries are matched line by line.
_BREAKS = frozenset("\x85\u2028\u2029\ufeff")
_builders: list[subprocess.Popen[bytes]] = []


def trigrams(text: str, *, unicode_case: bool = False) -> list[str]:
    """Trigrams that any text holding `text` holds too, after SQLite's case folding.

    With `unicode_case` the text is matched by Python's re.IGNORECASE, under which 'ı' and
    'İ' match 'i' although SQLite folds neither to it: only ASCII other than 'i' is used
    then. Control characters and line breaks are never part of one."""
    grams: dict[str, None] = {}
    run: list[str] = []
    for char in [*text, "\x00"]:
        if char < " " or char in _BREAKS or (unicode_case and (not char.isascii() or char in "iI")):
            grams.update(dict.fromkeys("".join(run[i : i + 3]) for i in range(len(run) - 2)))
            run = []
        else:
            run.append(char)
    chosen = list(grams)
    if len(chosen) > _MOST_TRIGRAMS:  # spread along the literal
        step = len(chosen) / _MOST_TRIGRAMS
        chosen = [chosen[int(i * step)] for i in range(_MOST_TRIGRAMS)]
    return chosen


@dataclass(frozen=True)
class Lookup:
    """What the index says of the files a search is about to read."""

    skip: frozenset[Path]  # indexed, unchanged since, and cannot hold the literal
    unindexed: int  # bytes of the files it could not speak for (new, changed, or no index)
    gone: int = 0  # files it holds that were not asked about (deleted, if all were)

    @property
    def ready(self) -> bool:
        return self.unindexed <= BUILD_AFTER


class Judge:
    """The index's word on each file of a search, one file at a time, as the search reaches
    it (a search's first matches wait for no look at thousands of files). One snapshot of
    the index, read when the judge is made."""

    def __init__(self, root: Path, needles: dict[str, list[str]]) -> None:
        self.root = root
        self.known, self.hits = _read(root, needles) if os.path.lexists(root / INDEX) else ({}, {})
        self.prefix = str(root) + os.sep
        self.unindexed = 0  # bytes of the files judged that it could not speak for
        self.asked = 0  # files judged that it holds
        self.skipped = 0
        self.building = False

    @property
    def ready(self) -> bool:
        return self.unindexed <= BUILD_AFTER

    def rules_out(self, path: Path) -> bool:
        """Whether `path` is indexed, unchanged since, and cannot hold the literal. Once
        too many files judged are missing from the index, a build is started."""
        text = str(path)  # thousands of journals: plain strings, no pathlib on the way
        try:
            st = os.stat(text)
        except OSError:
            return False  # the search says what became of it
        prefix = self.prefix
        relative = text[len(prefix) :] if text.startswith(prefix) else text
        entry = self.known.get(relative)
        self.asked += entry is not None
        if entry != "{} {} {} {}".format(*key(st)):
            self.unindexed += st.st_size
            if not self.ready and not self.building:
                self.building = True
                build_in_background(self.root)
            return False
        found = self.hits.get(".jsonl" if text.endswith(".jsonl") else ".md")
        if found is None or relative in found:
            return False
        self.skipped += 1
        return True


def lookup(root: Path, files: Iterable[Path], needles: dict[str, list[str]]) -> Lookup:
    """The files the index rules out for a literal whose trigrams, per file suffix, are
    `needles` (".md" and ".jsonl": a journal holds the literal JSON-escaped); a suffix with
    no trigrams rules nothing out. A missing or unreadable index rules nothing out. Starts
    no build."""
    judge = Judge(root, needles)
    judge.building = True  # the caller decides
    skip = frozenset(path for path in files if judge.rules_out(path))
    return Lookup(skip, judge.unindexed, len(judge.known) - judge.asked)


def _read(root: Path, needles: dict[str, list[str]]) -> tuple[dict[str, str], dict[str, set[str]]]:
    """Each indexed file's key ("size mtime ctime inode"), and per suffix the files that
    may hold its trigrams, from one snapshot; nothing when there is no index to trust (every
    file is then read)."""
    import sqlite3

    hits: dict[str, set[str]] = {}
    try:
        with contextlib.closing(open_index(root, create=False)) as db:
            db.execute("BEGIN")  # one snapshot: the files and their words agree
            check(db)
            known = dict(
                db.execute("SELECT path, size||' '||mtime||' '||ctime||' '||inode FROM files")
            )
            queries: dict[tuple[str, ...], set[str]] = {}
            for suffix, grams in needles.items():
                if not grams:
                    continue
                if tuple(grams) not in queries:
                    query = " AND ".join('"' + g.replace('"', '""') + '"' for g in grams)
                    rows = db.execute(
                        "SELECT path FROM files WHERE id IN "
                        "(SELECT rowid FROM words WHERE words MATCH ?)",
                        (query,),
                    )
                    queries[tuple(grams)] = {row[0] for row in rows}
                hits[suffix] = queries[tuple(grams)]
            db.execute("COMMIT")
    except (sqlite3.Error, OSError):
        return {}, {}
    return known, hits


def refresh(root: Path, *, cancelled: Callable[[], bool] | None = None) -> int:
    """Bring the index up to date with the files: add new and changed ones, forget those
    gone. Only one process builds at a time: while another does, return at once. The
    number of files indexed."""
    import sqlite3

    from memory.data.files import locked

    if not root.is_dir():
        return 0
    with locked(root / LOCK, blocking=False) as mine:
        if not mine:
            return 0
        indexed = 0
        for _ in range(_MOST_PASSES):  # again while a transcript was deleted meanwhile
            (root / AGAIN).unlink(missing_ok=True)
            try:
                indexed += _refresh(root, cancelled)
            except sqlite3.OperationalError:  # busy, or the folder refused: not damage
                raise
            except sqlite3.DatabaseError:  # damaged, or not this index: it is only derived
                remove(root)
                indexed += _refresh(root, cancelled)
            if not (root / AGAIN).exists():
                break
        return indexed


def _refresh(root: Path, cancelled: Callable[[], bool] | None) -> int:
    """One pass: files gone or changed forgotten, new and changed ones indexed."""
    with contextlib.closing(open_index(root, create=True)) as db:
        if not db.execute("SELECT count(*) FROM sqlite_master").fetchone()[0]:
            create_tables(db)
        check(db)
        todo, forget = _changes(db, root)
        if forget:
            _forget(db, forget)
        return _index(db, todo, cancelled)


def _changes(db: sqlite3.Connection, root: Path) -> tuple[list[tuple[Path, str]], list[int]]:
    """The files to index (new or changed, and settled), and the entries to forget (of
    files changed or gone)."""
    from memory.recall.places import Places, searched_files

    known = {
        r[1]: (r[0], tuple(r[2:]))
        for r in db.execute("SELECT id, path, size, mtime, ctime, inode FROM files")
    }
    todo: list[tuple[Path, str]] = []
    forget: list[int] = []
    present: set[str] = set()
    settled = time.time() - SETTLE_SECONDS
    for path in searched_files(Places(root)):
        relative = relative_to(root, path)
        present.add(relative)
        try:
            st = os.stat(path)
        except OSError:
            continue
        entry = known.get(relative)
        if entry is not None and entry[1] == key(st):
            continue
        if entry is not None:
            forget.append(entry[0])
        if max(st.st_mtime, st.st_ctime) < settled:
            todo.append((path, relative))
    forget += [i for p, (i, _) in known.items() if p not in present]
    return todo, forget


def _forget(db: sqlite3.Connection, forget: list[int]) -> None:
    """Each entry's words told to the index again, to be forgotten, and the entry gone."""
    import sqlite3

    db.execute("BEGIN IMMEDIATE")
    for id_ in forget:
        (indexed,) = db.execute("SELECT indexed FROM texts WHERE id = ?", (id_,)).fetchone()
        try:
            body = zlib.decompress(indexed).decode()
        except (zlib.error, UnicodeDecodeError, TypeError) as exc:
            raise sqlite3.DatabaseError("the index is damaged") from exc
        db.execute("INSERT INTO words(words, rowid, body) VALUES ('delete', ?, ?)", (id_, body))
        db.execute("DELETE FROM files WHERE id = ?", (id_,))
        db.execute("DELETE FROM texts WHERE id = ?", (id_,))
    db.execute("COMMIT")
    db.execute("PRAGMA wal_checkpoint(TRUNCATE)")  # no old page left in the WAL


def _index(
    db: sqlite3.Connection, todo: list[tuple[Path, str]], cancelled: Callable[[], bool] | None
) -> int:
    """The files indexed, in batches of a transaction each; how many."""
    done = written = 0
    db.execute("BEGIN IMMEDIATE")
    for path, relative in todo:
        if cancelled is not None and cancelled():
            break
        read = read_settled(path)
        if read is None:
            continue
        data, st_key = read
        if relative.endswith(".jsonl") and b'"private":true' in data[: data.find(b"\n")]:
            continue  # off the record: not a word of it is kept anywhere else
        body = data.decode("utf-8", errors="replace").replace("\x00", "\ufffd")
        row = db.execute(
            "INSERT INTO files(path, size, mtime, ctime, inode) VALUES (?, ?, ?, ?, ?)",
            (relative, *st_key),
        )
        indexed = zlib.compress(body.encode(), 1)
        db.execute("INSERT INTO texts VALUES (?, ?)", (row.lastrowid, indexed))
        db.execute("INSERT INTO words(rowid, body) VALUES (?, ?)", (row.lastrowid, body))
        done, written = done + 1, written + len(data)
        if written >= _BATCH_BYTES:
            db.execute("COMMIT")
            db.execute("BEGIN IMMEDIATE")
            written = 0
    db.execute("COMMIT")
    if done >= 256:  # a big build: one segment makes every later query quicker
        db.execute("INSERT INTO words(words) VALUES ('optimize')")
    return done


# The builder: a process of its own, so that no search and no screen waits for it.
_CHILD = (
    "import json, sys; sys.path[:] = json.loads(sys.argv[2]); "
    "from memory.recall.index import _child_main; _child_main(sys.argv[1])"
)


def build_in_background(root: Path) -> bool:
    """Start a process that brings the index up to date, unless one is at it already or
    the folder cannot be written; whether one was started."""
    from memory.data.files import locked

    global _builders
    _builders = [b for b in _builders if b.poll() is None]
    if _builders or not os.access(root, os.W_OK | os.X_OK):
        return False
    try:
        with locked(root / LOCK, blocking=False) as free:
            if not free:
                return False
        _builders.append(
            subprocess.Popen(
                [sys.executable, "-c", _CHILD, str(root), json.dumps(sys.path)],
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                start_new_session=True,  # a Ctrl+C meant for the search is not meant for it
            )
        )
    except OSError:
        return False
    return True


def forget_deleted(root: Path) -> bool:
    """After a transcript is deleted: its words leave the index now, not at the next search
    (a build in the background, if there is an index to hold them)."""
    if not (root / INDEX).exists():
        return False
    if build_in_background(root):
        return True
    # A builder is at work, and may have listed the files before this one went: it is
    # told to look again (and the next build_if_needed sees the note too).
    with contextlib.suppress(OSError):
        (root / AGAIN).touch()
    return False


def build_if_needed(root: Path) -> bool:
    """Start a background build when more than BUILD_AFTER bytes of the searched files are
    not in the index, or when it holds a file since deleted (whose words must go); whether
    one was started. For when the app starts, a session is saved or deleted, /grep opens:
    it only stats the files, which is quick, but not for the event loop."""
    import sqlite3

    from memory.recall.places import Places, searched_files

    try:
        found = lookup(root, searched_files(Places(root)), {})
        if found.ready and not found.gone and not (root / AGAIN).exists():
            return False
        return build_in_background(root)
    except (OSError, sqlite3.Error):  # searches read the files meanwhile: nothing is wrong
        return False


def _child_main(root: str) -> None:
    """The builder's side: low priority; a folder that cannot hold an index leaves none."""
    import sqlite3

    with contextlib.suppress(OSError, AttributeError):
        os.nice(10)
    with contextlib.suppress(OSError, sqlite3.Error):
        refresh(Path(root))
