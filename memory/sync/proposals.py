"""Lines two devices changed differently: the choice between them, held for the user.

A merge that meets such lines keeps both sides in the file (memory.sync.shared) and writes
down here which lines are whose. The user keeps either side: the other side's lines are
taken out of the file as it is then (whatever was saved since stays), as a version of its
own. Until then nothing of either side is lost, on either machine, though the file that
held the other side (a sync tool's conflict copy) may be gone. Kept in this device's
proposals folder, under proposals/sync/, one JSON file each, written atomically.
"""

from __future__ import annotations

import json
import re
import secrets
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from memory.data.files import atomic_write, ensure_dir
from memory.data.memory_file import MemoryText
from memory.data.store import MemoryStore
from memory.data.versions import VersionKind
from memory.sync.shared import INSTRUCTIONS, MEMORY, Merged

_NAME = re.compile(r"\d{8}-\d{6}-\d+\.json\Z")


@dataclass(frozen=True)
class SyncProposal:
    """Which lines of `file` are this device's and which the other's, where both changed."""

    file: str  # "MEMORY.md" or "INSTRUCTIONS.md"
    device: str  # the other side: a device id, or the sync tool whose copy it was
    made: str
    ours: tuple[str, ...]  # this device's lines (taking theirs removes them)
    theirs: tuple[str, ...]  # the other's (keeping ours removes them)
    path: Path

    def choices(self, text: str) -> tuple[str, str]:
        """The file as it would be with this device's lines, and with the other's."""
        return without(text, self.theirs), without(text, self.ours)


def without(text: str, lines: tuple[str, ...]) -> str:
    """`text` without the first line equal to each of `lines` (one gone already is skipped)."""
    kept = text.splitlines(keepends=True)
    for line in lines:
        at = next((i for i, have in enumerate(kept) if have.rstrip("\n") == line), None)
        if at is not None:
            del kept[at]
    return "".join(kept)


class BadSyncProposal(ValueError):
    """A file in proposals/sync/ that is not one Kept wrote: left there, never applied."""


def _folder(store: MemoryStore) -> Path:
    return store.layout.proposals_dir / "sync"


def propose_sync(store: MemoryStore, merged: Merged, device: str) -> Path:
    """Hold the choice a merge met in `merged.relative`."""
    folder = ensure_dir(_folder(store))
    now = datetime.now(UTC)
    path = folder / f"{now:%Y%m%d-%H%M%S}-{secrets.randbelow(10**6)}.json"
    record = {
        "file": merged.relative,
        "device": device,
        "made": now.isoformat(timespec="seconds"),
        "ours": merged.ours_only,
        "theirs": merged.theirs_only,
    }
    atomic_write(path, json.dumps(record, ensure_ascii=False))
    return path


def _lines(value: object) -> tuple[str, ...] | None:
    if isinstance(value, list) and all(isinstance(line, str) for line in value):
        return tuple(value)
    return None


def _load(path: Path) -> SyncProposal:
    try:
        record = json.loads(path.read_text(encoding="utf-8", errors="replace"))
    except (ValueError, RecursionError):
        record = None
    if not isinstance(record, dict):
        raise BadSyncProposal(f"{path} is not a choice Kept wrote (not JSON); it is left there.")
    file, device, made = (record.get(k) for k in ("file", "device", "made"))
    ours, theirs = _lines(record.get("ours")), _lines(record.get("theirs"))
    if file not in (MEMORY, INSTRUCTIONS) or not isinstance(device, str):
        raise BadSyncProposal(f"{path} does not name a file Kept merges; it is left there.")
    if not isinstance(made, str) or ours is None or theirs is None:
        raise BadSyncProposal(f"{path} is missing which lines are whose; it is left there.")
    return SyncProposal(file, device, made, ours, theirs, path)


def sync_proposals(store: MemoryStore, problems: list[str] | None = None) -> list[SyncProposal]:
    """The waiting ones, oldest first; one that cannot be read is said in `problems`."""
    folder = _folder(store)
    if not folder.is_dir():
        return []
    found = []
    for path in sorted(folder.glob("*.json")):
        if not _NAME.match(path.name):
            continue
        try:
            found.append(_load(path))
        except FileNotFoundError:
            continue  # decided in another window meanwhile
        except (BadSyncProposal, OSError) as exc:
            if problems is not None:
                problems.append(str(exc) if isinstance(exc, BadSyncProposal) else f"{exc}")
    return found


def _decide(store: MemoryStore, proposal: SyncProposal, remove: tuple[str, ...]) -> None:
    read = store.read_memory if proposal.file == MEMORY else store.read_instructions
    for _ in range(5):  # saved meanwhile: decided again on what is there now
        current: MemoryText = read()
        text = without(current.text, remove)
        if text == current.text:
            break
        if proposal.file == MEMORY:
            via = proposal.device if remove == proposal.ours else None
            kind = VersionKind.SYNCED if via else VersionKind.EDIT
            stale = store.save_edit(text, current.digest, source=kind, via=via)
        else:
            stale = store.save_instructions(text, current.digest)
        if stale is None:
            break
    proposal.path.unlink(missing_ok=True)


def accept_sync(store: MemoryStore, proposal: SyncProposal) -> None:
    """Take the other side's lines: this device's are taken out of the file."""
    _decide(store, proposal, proposal.ours)


def reject_sync(store: MemoryStore, proposal: SyncProposal) -> None:
    """Keep this device's lines: the other side's are taken out of the file."""
    _decide(store, proposal, proposal.theirs)
