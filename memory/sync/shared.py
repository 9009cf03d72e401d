"""Another device's side of a file every device writes, merged into this data folder.

MEMORY.md and INSTRUCTIONS.md merge as lines against the last text both devices had (the
base). Where both changed the same lines differently, the file keeps both sides' lines (this
device's in place, the other's after them) and the choice between them is put to the user
(memory.sync.proposals): neither side wins silently, on either machine. HISTORY.md and its
monthly archives merge as a union of entries. Every write goes through the store, under its
lock and against the text it read: a consolidation or an edit made meanwhile is never
overwritten (the merge is made again against it). MEMORY.md's merge is a version of its own
("merged from DEVICE"), so it can be undone like any other.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from memory.data.files import atomic_write, digest, read_text
from memory.data.history import join_entries, parse_entries
from memory.data.layout import Layout
from memory.data.memory_file import MemoryText
from memory.data.store import MemoryStore
from memory.data.versions import VersionKind
from memory.sync.merge import Conflict, merge_history, merge_lines

MEMORY, INSTRUCTIONS, HISTORY = "MEMORY.md", "INSTRUCTIONS.md", "HISTORY.md"
ARCHIVES = "history/"


def is_shared(relative: str) -> bool:
    """Whether every device writes the file at `relative` (a path from the data folder)."""
    return relative in (MEMORY, INSTRUCTIONS, HISTORY) or (
        relative.startswith(ARCHIVES) and relative.count("/") == 1 and relative.endswith(".md")
    )


@dataclass
class Merged:
    """What merging one file did: whether the file changed, and the conflicts kept back."""

    relative: str
    changed: bool = False
    conflicts: list[Conflict] = field(default_factory=list)

    @property
    def ours_only(self) -> list[str]:
        """This device's side of the lines both changed (what taking theirs removes)."""
        return [line for c in self.conflicts for line in c.ours if line not in c.theirs]

    @property
    def theirs_only(self) -> list[str]:
        """The other side's (what keeping this device's removes)."""
        return [line for c in self.conflicts for line in c.theirs if line not in c.ours]


def with_both(merged: str, theirs: list[str]) -> str:
    """The merged text (our lines where both changed) with their lines after it, those it
    does not hold already."""
    have = set(merged.splitlines())
    extra = [line for line in dict.fromkeys(theirs) if line not in have]
    if not extra:
        return merged
    body = merged if not merged or merged.endswith("\n") else merged + "\n"
    return body + "".join(f"{line}\n" for line in extra)


def _text(raw: bytes | None) -> str:
    return raw.decode("utf-8", errors="replace") if raw else ""


def merge_shared(
    store: MemoryStore, relative: str, theirs: bytes | None, base: bytes | None, device: str
) -> Merged:
    """Merge `theirs` (None: the other side has no such file) into the file at `relative`,
    against `base`; `device` names the other side in the version it makes."""
    if relative == MEMORY:
        return _merge_memory(store, _text(theirs), _text(base), device)
    if relative == INSTRUCTIONS:
        return _merge_instructions(store, _text(theirs), _text(base))
    return _merge_history_file(store, relative, _text(theirs), _text(base))


def _merge_memory(store: MemoryStore, theirs: str, base: str, device: str) -> Merged:
    def save(text: str, digest: str) -> object:
        return store.save_edit(text, digest, source=VersionKind.SYNCED, via=device)

    return _merge_text(MEMORY, store.read_memory, save, theirs, base)


def _merge_instructions(store: MemoryStore, theirs: str, base: str) -> Merged:
    return _merge_text(INSTRUCTIONS, store.read_instructions, store.save_instructions, theirs, base)


def _merge_text(
    relative: str,
    read: Callable[[], MemoryText],
    save: Callable[[str, str], object],
    theirs: str,
    base: str,
) -> Merged:
    """Merge into the file `read` reads; `save(text, digest)` writes it if it is still the
    text of `digest` (None), else writes nothing. Written meanwhile: merged again."""
    result = Merged(relative)
    for _ in range(5):
        ours = read()
        merge = merge_lines(base, ours.text, theirs)
        result.conflicts = list(merge.conflicts)
        text = with_both(merge.text, result.theirs_only)
        if text == ours.text:
            return result
        if save(text, ours.digest) is None:
            result.changed = True
            return result
    raise OSError(f"{relative} kept changing while another device's side was merged into it")


def _merge_history_file(store: MemoryStore, relative: str, theirs: str, base: str) -> Merged:
    """A union of entries; an entry already in a month's archive is not kept in HISTORY.md
    too (each device moves its oldest entries there on its own)."""
    path = store.root / relative
    with store.lock():
        ours = read_text(path)[0]
        merged = merge_history(base, ours, theirs)
        if relative == HISTORY:
            archived = {e.key for e in store.all_history_entries() if e.file != path}
            entries = parse_entries(merged, path)
            if any(e.key in archived for e in entries):
                merged = join_entries([e.text for e in entries if e.key not in archived])
        if merged == ours or (not merged.strip() and not ours.strip()):
            return Merged(relative)
        path.parent.mkdir(parents=True, exist_ok=True)
        atomic_write(path, merged)
    return Merged(relative, changed=True)


def common_base(store: MemoryStore, relative: str) -> str:
    """The newest text of MEMORY.md (or INSTRUCTIONS.md) this device had that another device
    had too, from the versions each keeps: the base of a merge where nothing better is known
    (a sync tool's conflict copy). "" when they never shared one: then every line of both
    sides is kept."""
    own, others = _version_folders(store, relative)
    theirs: set[str] = set()
    for folder in others:
        for path in folder.glob("*.md"):
            try:
                theirs.add(digest(path.read_bytes()))
            except OSError:
                continue
    for path in sorted(own.glob("*.md"), reverse=True) if own.is_dir() else []:
        try:
            raw = path.read_bytes()
        except OSError:
            continue
        if digest(raw) in theirs:
            return _text(raw)
    return ""


def _version_folders(store: MemoryStore, relative: str) -> tuple[Path, list[Path]]:
    def folder(layout: Layout) -> Path:
        if relative == INSTRUCTIONS:
            return layout.instruction_versions_dir
        return layout.versions_dir

    others = [Layout(store.root, d) for d in store.layout.devices() if d != store.device]
    return folder(store.layout), [folder(layout) for layout in others]
