"""Where sync stands, in the words /log, `kept log` and `kept sync status` share; the next
step each names is the shell's (`kept sync …`), which the chat's users have too."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from memory.sync.status import SyncStatus


def _when(iso: str) -> str:
    """ "2026-12-01T10:04:00+00:00" as "2026-12-01 10:04 UTC"-like: the date and minute."""
    return iso[:16].replace("T", " ")


def sync_lines(status: SyncStatus) -> list[str]:
    """Nothing for a folder that never synced and has nothing waiting."""
    lines = []
    if status.remote:
        lines.append(f"This device is {status.device}; it syncs with {status.remote}.")
    last = status.last
    if last is not None:
        failed = "" if last.get("ok") else f", and failed: {last.get('error', '')}"
        lines.append(f"Last sync here: {_when(str(last['time']))}{failed}")
    for device, when in status.devices.items():
        mark = " (this device)" if device == status.device else ""
        lines.append(f"  {device}{mark}: last change synced {_when(when)}")
    if status.copies:
        lines.append(f"Conflict copies not merged yet: {status.copies} (`kept sync` merges them)")
    if status.proposals:
        lines.append(
            f"Lines two devices changed differently: {status.proposals} (`kept sync review`)"
        )
    return lines
