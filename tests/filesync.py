"""A file-sync tool between two folders, for the tests: it copies what changed on one side to
the other, deletes what was deleted, and when the same file changed on both it keeps one
under the name and the other as a conflict copy named the way Syncthing names them. It skips
what the data folder's .stignore would (memory.data.layout.PER_MACHINE)."""

from __future__ import annotations

import fnmatch
import random
from pathlib import Path

from memory.data.layout import PER_MACHINE


def ignored(relative: str) -> bool:
    """Whether Syncthing, given Kept's .stignore, would leave this path alone."""
    if relative in (".stignore", ".gitignore") or relative.startswith(".git/"):
        return True
    for pattern in PER_MACHINE:
        if pattern.startswith("/"):
            anchored = pattern[1:]
            if anchored.endswith("/"):
                if relative.startswith(anchored):
                    return True
            elif fnmatch.fnmatchcase(relative, anchored) and relative.count("/") == anchored.count(
                "/"
            ):
                return True
        elif fnmatch.fnmatchcase(relative.rsplit("/", 1)[-1], pattern):
            return True
    return False


def _files(root: Path) -> dict[str, bytes]:
    """What Syncthing carries from `root`: everything, but what its .stignore names (Kept
    writes one; without it nothing is left out)."""
    told = (root / ".stignore").exists()
    found = {}
    for path in root.rglob("*"):
        relative = path.relative_to(root).as_posix()
        carried = not relative.startswith(".git/") and not (told and ignored(relative))
        if carried and path.is_file():
            found[relative] = path.read_bytes()
    return found


def _put(root: Path, relative: str, data: bytes | None) -> None:
    path = root / relative
    if data is None:
        path.unlink(missing_ok=True)
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    temp = path.with_name(f".{path.name}.syncthing.tmp")
    temp.write_bytes(data)
    temp.replace(path)


class FileSync:
    """Keeps folders `a` and `b` alike, one `sync()` at a time."""

    def __init__(self, a: Path, b: Path, rng: random.Random) -> None:
        self.sides = (a, b)
        self.rng = rng
        self.agreed: dict[str, bytes] = {}  # each path's content at the last sync
        self.conflicts = 0

    def sync(self) -> None:
        a, b = (_files(side) for side in self.sides)
        for relative in sorted(a.keys() | b.keys()):
            mine, theirs, before = a.get(relative), b.get(relative), self.agreed.get(relative)
            if mine == theirs:
                final = mine
            elif mine == before:
                final = theirs
            elif theirs == before:
                final = mine
            else:
                final = self._conflict(relative, mine, theirs)
            for side in self.sides:
                _put(side, relative, final)
            if final is None:
                self.agreed.pop(relative, None)
            else:
                self.agreed[relative] = final

    def _conflict(self, relative: str, mine: bytes | None, theirs: bytes | None) -> bytes | None:
        """Both changed: a change beats a deletion; between two changes one wins at random,
        the other is kept beside it as `NAME.sync-conflict-DATE-TIME-DEVICE.EXT`."""
        if mine is None or theirs is None:
            return mine if theirs is None else theirs
        winner, loser = (mine, theirs) if self.rng.random() < 0.5 else (theirs, mine)
        self.conflicts += 1
        stem, dot, ext = relative.rpartition(".")
        assert dot
        number = self.conflicts
        copy = f"{stem}.sync-conflict-20261201-1200{number:02d}-ABCDEF{number % 10}.{ext}"
        for side in self.sides:
            _put(side, copy, loser)
        self.agreed[copy] = loser
        return winner
