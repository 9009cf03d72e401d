"""The ignore files that keep what is per machine out of sync, written from the one list
(memory.data.layout.PER_MACHINE).

- `.gitignore`, for `kept sync` over git (committed: every clone ignores the same);
- `.stignore`, for Syncthing (read by each device from its own folder, never synced).

Dropbox, Nextcloud and iCloud Drive have no ignore file Kept can write in the folder; with
them the per-machine files are copied too, harmlessly: each machine's are under its own
device id (local/DEVICE/, sessions/DEVICE/), so no machine ever reads another's. A private
session's journal is the exception that matters, and why these tools are not for a folder
with private sessions (the README says so).

Kept writes its lines between two marker lines and leaves the rest of a file as it is, so a
user's own patterns survive every rewrite.
"""

from __future__ import annotations

from pathlib import Path

from memory.data.files import atomic_write, read_text
from memory.data.layout import PER_MACHINE, Layout
from memory.sync.copies import COPY_GLOBS

BEGIN = "# kept: per-machine files, never synced (written by Kept; edit outside these lines)"
END = "# kept: end"


def _block(syncthing: bool) -> list[str]:
    patterns = list(PER_MACHINE)
    if syncthing:
        patterns.append("/.git")  # a folder synced both ways: git's own files stay put
    else:
        patterns.extend(COPY_GLOBS)  # a sync tool's conflict copy is merged, never committed
    return [BEGIN, *patterns, END]


def _with_block(existing: str, block: list[str]) -> str:
    lines = existing.splitlines()
    if BEGIN in lines and END in lines[lines.index(BEGIN) :]:
        start = lines.index(BEGIN)
        end = lines.index(END, start)
        lines[start : end + 1] = block
    else:
        lines = [*lines, *([""] if lines else []), *block]
    return "\n".join(lines) + "\n"


def write_ignore_files(layout: Layout) -> list[Path]:
    """Bring both ignore files up to date; the ones written (none when all were)."""
    written = []
    for name, syncthing in ((".gitignore", False), (".stignore", True)):
        path = layout.root / name
        try:
            existing = read_text(path)[0]
        except FileNotFoundError:
            existing = ""
        wanted = _with_block(existing, _block(syncthing))
        if wanted != existing:
            atomic_write(path, wanted)
            written.append(path)
    return written
