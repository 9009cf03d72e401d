"""The conflict copies file-sync tools leave beside the files every device writes.

When two machines change MEMORY.md before they hear from each other, a sync tool keeps one
version under the name and renames the other; Kept finds those copies, merges them like any
other side, and removes them once the merge is saved. The names, as each tool documents them:

- Syncthing: `<filename>.sync-conflict-<date>-<time>-<modifiedBy>.<ext>`, modifiedBy the
  short (7-character) id of the device that made the losing version (docs.syncthing.net,
  FAQ "What if there is a conflict?"; older versions left out `-<modifiedBy>`). A copy of a
  copy repeats the suffix.
- Dropbox: the name, then "conflicted copy", who made it and the date: `MEMORY (Alice's
  conflicted copy 2026-12-01).md` (help.dropbox.com, "What's a conflicted copy?"); a second
  one the same day gets a ` (1)`.
- Nextcloud: `mydata (conflicted copy 2018-04-10 093612).txt` (docs.nextcloud.com, desktop
  client "Conflicts"), with the user's name before the date when the copy is uploaded
  (nextcloud/desktop's tests); ownCloud names them the same since client 2.5 (owncloud/client
  #6365, #6417), so those are reported as Nextcloud.
- ownCloud before 2.5: `<stem>_conflict-<yyyymmdd>-<hhmmss><ext>`, later with the user's name
  after "_conflict-" (owncloud/client #6325, #6417).
- iCloud Drive: the name, a space and a number, "File 2" (Finder's way; the Mental Faculty
  blog's experiments on iCloud Drive conflicts). A name that loose is a copy only for the
  files below, never for anything else.

Only copies of the files every device writes count: MEMORY.md, INSTRUCTIONS.md, HISTORY.md
(as memory.data.layout names them) and history/YYYY-MM.md.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

# The shared files at the top of the data folder, and the folder of HISTORY.md's months.
ORIGINALS = frozenset({"MEMORY.md", "INSTRUCTIONS.md", "HISTORY.md"})
ARCHIVE_DIR = "history"
_ARCHIVE = re.compile(r"\d{4}-\d{2}\.md\Z")

# Each tool's name for a copy of "<stem>.md"; group "stem" is the original's stem.
_NAMES: tuple[tuple[str, re.Pattern[str]], ...] = (
    (
        "Syncthing",
        re.compile(r"(?P<stem>.+?)(?:\.sync-conflict-\d{8}-\d{6}(?:-[A-Z0-9]{7})?)+\.md\Z"),
    ),
    (
        "Dropbox",
        re.compile(
            r"(?P<stem>.+?) \((?:[^()]+?['’]s )?conflicted copy \d{4}-\d{2}-\d{2}"
            r"(?: \(\d+\))?\)(?: \(\d+\))?\.md\Z"
        ),
    ),
    (
        "Nextcloud",
        re.compile(r"(?P<stem>.+?) \(conflicted copy (?:[^()]+ )?\d{4}-\d{2}-\d{2} \d{6}\)\.md\Z"),
    ),
    ("ownCloud", re.compile(r"(?P<stem>.+?)_conflict-(?:.+-)?\d{8}-\d{6}\.md\Z")),
    ("iCloud", re.compile(r"(?P<stem>.+) (?:[2-9]|[1-9]\d)\.md\Z")),
)

# Shell patterns for the copies of the first four tools, for an ignore file that keeps a
# copy where it lands (a git remote, say). iCloud's names are too plain for a pattern.
COPY_GLOBS: tuple[str, ...] = (
    "*.sync-conflict-*",
    "* (*conflicted copy *)*",
    "*_conflict-*",
)


@dataclass(frozen=True)
class ConflictCopy:
    """A sync tool's copy of a shared file, and the file it is a version of."""

    path: Path
    original: Path
    tool: str  # "Syncthing", "Dropbox", "Nextcloud", "ownCloud" or "iCloud"


def find_copies(root: Path) -> list[ConflictCopy]:
    """The conflict copies in a data folder, oldest first (by mtime, then name)."""
    found: list[tuple[int, str, ConflictCopy]] = []
    places: tuple[tuple[Path, Callable[[str], bool]], ...] = (
        (root, ORIGINALS.__contains__),
        (root / ARCHIVE_DIR, _archive),
    )
    for folder, shared in places:
        for name, mtime in _files(folder):
            copy = _copy_of(folder / name, shared)
            if copy is not None:
                found.append((mtime, name, copy))
    found.sort(key=lambda item: (item[0], item[1]))
    return [copy for _, _, copy in found]


def _copy_of(path: Path, shared: Callable[[str], bool]) -> ConflictCopy | None:
    """What `path` is a conflict copy of, if a sync tool named it as one of a shared file."""
    for tool, pattern in _NAMES:
        match = pattern.match(path.name)
        if match and shared(match["stem"] + ".md"):
            return ConflictCopy(path, path.with_name(match["stem"] + ".md"), tool)
    return None


def _archive(name: str) -> bool:
    return bool(_ARCHIVE.match(name))


def _files(folder: Path) -> list[tuple[str, int]]:
    """The regular files of a folder and their mtimes; none if the folder is missing."""
    try:
        entries = list(os.scandir(folder))
    except (FileNotFoundError, NotADirectoryError):
        return []
    files: list[tuple[str, int]] = []
    for entry in entries:
        try:
            if entry.is_file(follow_symlinks=False):
                files.append((entry.name, entry.stat(follow_symlinks=False).st_mtime_ns))
        except FileNotFoundError:
            continue  # removed while we looked (the sync tool tidying up): not a copy now
    return files
