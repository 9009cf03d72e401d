"""A sync tool's conflict copies merged into the files they are versions of, then removed.

Each copy is one more side: MEMORY.md and INSTRUCTIONS.md merge against the newest text
this device and another both had (their versions say which), HISTORY.md and its months as
a union. The copy is removed only once the merge, and the proposal holding what could not
be merged, are saved: killed before, the next look merges it again, which changes nothing
the first merge wrote.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from memory.data.files import digest, fsync_dir, locked
from memory.data.layout import Layout
from memory.data.store import MemoryStore
from memory.sync.copies import find_copies
from memory.sync.proposals import propose_sync, sync_proposals
from memory.sync.shared import INSTRUCTIONS, MEMORY, Merged, common_base, merge_shared


@dataclass
class CopiesMerged:
    """What one look at the conflict copies did."""

    merged: list[Merged] = field(default_factory=list)
    sources: list[str] = field(default_factory=list)  # who made each merged copy
    proposals: int = 0
    unreadable: list[str] = field(default_factory=list)  # one sentence each


def who_wrote(store: MemoryStore, raw: bytes) -> str | None:
    """The device whose versions hold this text, if one does: another device first (what
    came in from elsewhere is kept as a version here too, once this device writes over it)."""
    wanted = digest(raw)
    here, *others = store.layout.devices()
    for device in [*others, here]:
        layout = Layout(store.root, device)
        for folder in (layout.versions_dir, layout.instruction_versions_dir):
            for path in folder.glob("*.md") if folder.is_dir() else []:
                try:
                    if digest(path.read_bytes()) == wanted:
                        return device
                except OSError:
                    continue
    return None


def _other_side(store: MemoryStore, original: Path, copy: bytes) -> str | None:
    """The device the merged-in side comes from: the copy's writer, or, when the copy is
    this device's own text (the sync tool kept the other's under the name), the writer
    of what the file now holds."""
    source = who_wrote(store, copy)
    if source != store.device:
        return source
    try:
        return who_wrote(store, original.read_bytes())
    except OSError:
        return None


def keep_proposal(store: MemoryStore, merged: Merged, source: str) -> bool:
    """Hold the choice between lines both changed, unless the same one waits already."""
    if not merged.conflicts:
        return False
    ours, theirs = tuple(merged.ours_only), tuple(merged.theirs_only)
    for waiting in sync_proposals(store):
        if (waiting.file, waiting.ours, waiting.theirs) == (merged.relative, ours, theirs):
            return False
    propose_sync(store, merged, source)
    return True


def merge_copies(store: MemoryStore) -> CopiesMerged:
    """Merge every conflict copy beside the shared files, oldest first, and remove each; one
    process at a time (the app's look each minute and a `kept sync` in a shell)."""
    copies = find_copies(store.root)
    if not copies:
        return CopiesMerged()  # the common case: one listing, no lock
    store.ensure()
    with locked(store.layout.local_dir / "copies.lock"):
        return _merge_each(store)


def _merge_each(store: MemoryStore) -> CopiesMerged:
    done = CopiesMerged()
    for copy in find_copies(store.root):
        relative = copy.original.relative_to(store.root).as_posix()
        try:
            raw = copy.path.read_bytes()
        except FileNotFoundError:
            continue  # merged by another Kept process meanwhile
        except OSError as exc:
            done.unreadable.append(
                f"{copy.path} could not be read ({exc.strerror or exc}); it stays for you "
                "to merge by hand."
            )
            continue
        source = _other_side(store, copy.original, raw) or f"another device (a {copy.tool} copy)"
        base = common_base(store, relative) if relative in (MEMORY, INSTRUCTIONS) else ""
        merged = merge_shared(store, relative, raw, base.encode("utf-8"), source)
        done.proposals += keep_proposal(store, merged, source)
        copy.path.unlink(missing_ok=True)
        fsync_dir(copy.path.parent)
        done.merged.append(merged)
        done.sources.append(source)
    return done
