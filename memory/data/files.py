"""Durable files: the data folder, atomic writes, fsynced appends, a cross-process lock.

Locks are per open file, not per process or thread: two holders in one process exclude
each other just as two processes do, and the OS frees a lock when its holder dies (POSIX
`flock`, Windows `msvcrt.locking`), so a crash never leaves a stale lock behind.
"""

from __future__ import annotations

import contextlib
import errno
import os
import re
import stat
import sys
from collections.abc import Iterator
from pathlib import Path

FILE_MODE = 0o600
DIR_MODE = 0o700
# Flags Windows lacks: there, a link is not followed by a plain open of a regular file.
NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_BINARY = getattr(os, "O_BINARY", 0)

if sys.platform == "win32":  # pragma: no cover - exercised on Windows only
    import msvcrt

    def _try_lock(fd: int, blocking: bool) -> bool:
        """Lock the file's first byte; False when another holder has it and not `blocking`."""
        mode = msvcrt.LK_LOCK if blocking else msvcrt.LK_NBLCK
        while True:
            try:
                msvcrt.locking(fd, mode, 1)
                return True
            except OSError:
                if not blocking:
                    return False
                # LK_LOCK gives up after ten tries a second apart; a blocking lock waits on.

    def _unlock(fd: int) -> None:
        os.lseek(fd, 0, os.SEEK_SET)
        msvcrt.locking(fd, msvcrt.LK_UNLCK, 1)

else:
    import fcntl

    def _try_lock(fd: int, blocking: bool) -> bool:
        """Lock the whole file; False when another holder has it and not `blocking`."""
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | (0 if blocking else fcntl.LOCK_NB))
        except BlockingIOError:
            return False
        return True

    def _unlock(fd: int) -> None:
        fcntl.flock(fd, fcntl.LOCK_UN)


def digest(raw: bytes) -> str:
    """The identity of a file's exact bytes: a change to MEMORY.md is noticed by it."""
    import hashlib  # not needed before the first frame

    return hashlib.sha256(raw).hexdigest()


def data_dir() -> Path:
    """Kept's data folder: KEPT_DATA_DIR, else the platform's user data dir."""
    override = os.environ.get("KEPT_DATA_DIR")
    if override:
        return Path(override).expanduser()
    import platformdirs

    return Path(platformdirs.user_data_dir("kept", appauthor=False))


def ensure_dir(path: Path) -> Path:
    """The folder, created 0700 if missing. An existing one that others may read is
    tightened to 0700; one the user made read-only is respected: Kept refuses to write
    there, and says so, rather than undo the user's choice."""
    path.mkdir(mode=DIR_MODE, parents=True, exist_ok=True)
    mode = stat.S_IMODE(path.stat().st_mode)
    if not mode & stat.S_IWUSR:
        raise OSError(
            errno.EACCES,
            f"{path} is read-only (mode {mode:o}); Kept respects "
            "that and writes nothing there: `chmod 700` it to let Kept save",
            str(path),
        )
    with contextlib.suppress(OSError):
        os.chmod(path, DIR_MODE)
    return path


_LEFTOVER = re.compile(r"^\..+\.(\d+)\.tmp$")


def remove_leftovers(folder: Path) -> int:
    """Delete the temporary copies (`.NAME.PID.tmp`) that processes killed mid-write left
    in `folder`: each can be a whole copy of memory on a disk that may be full. A copy
    whose process still runs is a write under way and stays. Returns how many went."""
    removed = 0
    try:
        names = os.listdir(folder)
    except OSError:
        return 0
    for name in names:
        match = _LEFTOVER.match(name)
        if match is None or _alive(int(match.group(1))):
            continue
        with contextlib.suppress(OSError):
            (folder / name).unlink()
            removed += 1
    return removed


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OverflowError, ValueError):
        return True  # another user's process, or not a pid we can ask about: keep it
    return True


def fsync_dir(path: Path) -> None:
    """Make a rename or a new file in `path` survive a power cut (POSIX only: Windows
    cannot open a folder, and its renames are journaled by NTFS)."""
    if sys.platform == "win32":  # pragma: no cover - exercised on Windows only
        return
    fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def write_all(fd: int, data: bytes) -> None:
    """os.write until every byte is written (a write may be short)."""
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


LINK_REFUSED = "is a symbolic link, which Kept does not follow for files it writes"


def _naming(exc: OSError, path: Path, tmp: Path | None = None) -> OSError:
    """The same error, naming the file the user knows (a failed write names none)."""
    if exc.errno == errno.ELOOP:  # O_NOFOLLOW met a link
        return OSError(errno.ELOOP, LINK_REFUSED, str(path))
    if exc.filename is not None and (tmp is None or exc.filename != str(tmp)):
        return exc
    return OSError(exc.errno, exc.strerror, str(path))


def refuse_link(path: Path) -> None:
    """Raise when `path` is a symbolic link: Kept never writes through one (a link planted
    in its data folder must not redirect its writes to another file)."""
    if path.is_symlink():
        raise OSError(errno.ELOOP, LINK_REFUSED, str(path))


def atomic_write(path: Path, data: bytes | str, *, follow: bool = False) -> None:
    """Replace `path` whole: a crash leaves either the old file or the new, never a mix.
    A failed write (a full disk) leaves the old file and no temporary copy. A link is
    refused, unless `follow` (a file the user placed, like config.toml): then its target
    is replaced and the link stays."""
    if isinstance(data, str):
        data = data.encode("utf-8")
    if follow:
        path = Path(os.path.realpath(path))
    refuse_link(path)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | NOFOLLOW | _BINARY, FILE_MODE)
        try:
            write_all(fd, data)
            os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(tmp, path)
    except BaseException as exc:  # a full disk, or Ctrl+C: no temporary copy stays behind
        with contextlib.suppress(OSError):
            tmp.unlink()
        if isinstance(exc, OSError):
            raise _naming(exc, path, tmp) from exc
        raise
    fsync_dir(path.parent)


def append_line(path: Path, line: str, *, create: bool = True) -> None:
    """Append one line and fsync it: a crash loses at most the line being written, and a
    failed write (a full disk) is undone, so it never leaves a torn line behind. With
    `create` False the file must exist (FileNotFoundError if not): an update to a file
    another process just moved away never makes a new one in its place."""
    if "\n" in line:
        raise ValueError("a journal line cannot contain a newline")
    flags = os.O_WRONLY | os.O_APPEND | NOFOLLOW | _BINARY | (os.O_CREAT if create else 0)
    try:
        fd = os.open(path, flags, FILE_MODE)
    except OSError as exc:
        raise _naming(exc, path) from exc
    try:
        # A previous crash may have left a torn last line; start ours on a fresh one.
        size = os.fstat(fd).st_size
        prefix = b""
        if size:
            with open(path, "rb") as f:
                f.seek(size - 1)
                if f.read(1) != b"\n":
                    prefix = b"\n"
        try:
            write_all(fd, prefix + line.encode("utf-8") + b"\n")
            os.fsync(fd)
        except OSError as exc:
            with contextlib.suppress(OSError):
                os.ftruncate(fd, size)
                os.fsync(fd)
            raise _naming(exc, path) from exc
    finally:
        os.close(fd)


def read_text(path: Path) -> tuple[str, bytes]:
    """A file's text and raw bytes ("" and b"" when missing). Bad UTF-8 is replaced, not lost:
    the caller keeps the bytes."""
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        return "", b""
    return raw.decode("utf-8", errors="replace"), raw


class LockedOnLoop(RuntimeError):
    """A lock that waits was taken on a thread running an event loop while `forbid_on_loop`
    is on."""


_forbid_on_loop = False


def forbid_on_loop(on: bool = True) -> None:
    """Make `locked` raise LockedOnLoop on a thread that runs an event loop (tests switch it
    on): a lock waits for another process, and a loop that waits draws nothing. A lock tried
    without waiting (`blocking=False`) is allowed: it returns at once."""
    global _forbid_on_loop
    _forbid_on_loop = on


def _check_off_loop(path: Path, blocking: bool) -> None:
    if not blocking:
        return  # a lock tried without waiting returns at once, held or not
    if not _forbid_on_loop or "asyncio" not in sys.modules:
        return  # no loop can run where asyncio was never imported
    import asyncio

    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return
    raise LockedOnLoop(
        f"{path} was locked on a thread running an event loop; call the store through "
        "memory.data.aio.AsyncStore there"
    )


@contextlib.contextmanager
def locked(path: Path, *, blocking: bool = True) -> Iterator[bool]:
    """Hold an exclusive advisory lock on `path` (created if needed) for the block.

    Yields False when `blocking` is False and another process holds it. The OS frees the
    lock when its holder dies, so a crash never leaves a stale lock behind.
    """
    _check_off_loop(path, blocking)
    fd = os.open(path, os.O_RDWR | os.O_CREAT | NOFOLLOW | _BINARY, FILE_MODE)
    try:
        if not _try_lock(fd, blocking):
            yield False
            return
        try:
            yield True
        finally:
            _unlock(fd)
    finally:
        os.close(fd)


class HeldLock:
    """An exclusive lock held for as long as an object lives, not just for a block: the
    live session holds its journal's so that two Kept windows never share one."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._fd: int | None = None

    def acquire(self) -> bool:
        """Take the lock if no one holds it; False (and nothing held) if someone does."""
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT | NOFOLLOW | _BINARY, FILE_MODE)
        if not _try_lock(fd, blocking=False):
            os.close(fd)
            return False
        self._fd = fd
        return True

    def release(self) -> None:
        if self._fd is not None:
            _unlock(self._fd)
            os.close(self._fd)
            self._fd = None
