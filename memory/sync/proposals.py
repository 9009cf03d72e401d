"""Where two devices changed the same lines: the other side, held for the user to decide.

A merge keeps this device's lines where both changed them and writes down here what the
other device made of them: the text the file would be with their lines instead. The user
sees both sides (the review flow) and keeps either; until then nothing of the other side is
lost, though the file that held it (a sync tool's conflict copy) may be gone. Kept in this
device's proposals folder, under proposals/sync/, one JSON file each, written atomically.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from memory.data.files import atomic_write, digest, ensure_dir
from memory.data.store import MemoryStore
from memory.data.versions import VersionKind
from memory.sync.shared import INSTRUCTIONS, MEMORY

_NAME = re.compile(r"\d{8}-\d{6}-\d+\.json\Z")


class StaleSyncProposal(Exception):
    """The file changed after the proposal was made: it is dropped, never applied."""


@dataclass(frozen=True)
class SyncProposal:
    """The other side of lines both devices changed in `file`."""

    file: str  # "MEMORY.md" or "INSTRUCTIONS.md"
    device: str  # the other side: a device id, or the sync tool whose copy it was
    made: str
    base_digest: str  # the file as the merge wrote it (our lines where both changed)
    ours: str
    theirs: str  # the file with their lines there instead
    path: Path


def _folder(store: MemoryStore) -> Path:
    return store.layout.proposals_dir / "sync"


def propose_sync(store: MemoryStore, file: str, device: str, ours: str, theirs: str) -> Path:
    """Hold the other side; `ours` is the file as it now is."""
    folder = ensure_dir(_folder(store))
    now = datetime.now(UTC)
    taken = len(list(folder.glob("*.json")))
    path = folder / f"{now:%Y%m%d-%H%M%S}-{taken + 1}.json"
    record = {
        "file": file,
        "device": device,
        "made": now.isoformat(timespec="seconds"),
        "base_digest": digest(ours.encode("utf-8")),
        "ours": ours,
        "theirs": theirs,
    }
    atomic_write(path, json.dumps(record, ensure_ascii=False))
    return path


def _load(path: Path) -> SyncProposal | None:
    try:
        record = json.loads(path.read_text(encoding="utf-8", errors="replace"))
    except (OSError, ValueError, RecursionError):
        return None
    if not isinstance(record, dict):
        return None
    names = ("file", "device", "made", "base_digest", "ours", "theirs")
    fields = {k: record.get(k) for k in names}
    if not all(isinstance(v, str) for v in fields.values()) or fields["file"] not in (
        MEMORY,
        INSTRUCTIONS,
    ):
        return None
    return SyncProposal(**fields, path=path)  # type: ignore[arg-type]


def sync_proposals(store: MemoryStore) -> list[SyncProposal]:
    """The waiting ones, oldest first; a file that is not one is left where it is, unread."""
    folder = _folder(store)
    if not folder.is_dir():
        return []
    found = [_load(path) for path in sorted(folder.glob("*.json")) if _NAME.match(path.name)]
    return [p for p in found if p is not None]


def accept_sync(store: MemoryStore, proposal: SyncProposal) -> None:
    """Take the other side's lines; StaleSyncProposal (the proposal dropped) when the file
    changed since the proposal was made."""
    if proposal.file == MEMORY:
        stale = store.save_edit(
            proposal.theirs, proposal.base_digest, source=VersionKind.SYNCED, via=proposal.device
        )
    else:
        stale = store.save_instructions(proposal.theirs, proposal.base_digest)
    if stale is not None:  # kept as a version that never was the file: nothing is lost
        if proposal.file == MEMORY:
            store.discard_edit(proposal.theirs)
        else:
            store.keep_instruction_version(proposal.theirs.encode("utf-8"))
    proposal.path.unlink(missing_ok=True)
    if stale is not None:
        raise StaleSyncProposal(
            f"{proposal.file} changed after this choice was put to you, so the other side "
            "was not applied; what it said is kept in the file's versions."
        )


def reject_sync(proposal: SyncProposal) -> None:
    """Keep this device's lines: the file stays as it is."""
    proposal.path.unlink(missing_ok=True)
