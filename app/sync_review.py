"""Lines two devices changed differently, put to the user: keep this device's lines, or
take the other's (Ctrl+R shows them before any other memory change)."""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from app.review import MemoryReview
    from app.screens.change import Decision
    from memory.sync.proposals import SyncProposal


def review_sync(review: MemoryReview, proposal: SyncProposal, more: int) -> None:
    from app.screens.change import ChangeDialog
    from memory.consolidation.review import line_change, unified

    note = (
        f"This device and {proposal.device} changed the same lines of {proposal.file}. "
        "It keeps this device's lines for now; nothing of either side is lost."
    )
    if more:
        note += f"\n({more} more waiting after this one)"

    async def chosen(decision: Decision | None) -> None:
        from memory.sync.proposals import StaleSyncProposal, accept_sync, reject_sync

        if decision is None or decision.choice == "later":
            return
        try:  # writes under the store's lock: off the event loop
            if decision.choice == "theirs":
                await asyncio.to_thread(accept_sync, review.app.store, proposal)
                review.say(f"{proposal.file} now has {proposal.device}'s lines.")
            else:
                await asyncio.to_thread(reject_sync, proposal)
                review.say(f"{proposal.file} keeps this device's lines.")
        except (StaleSyncProposal, OSError) as exc:
            review.say(str(exc), "warning")

    review.app.push_screen(
        ChangeDialog(
            f"Two devices changed {proposal.file}: {line_change(proposal.ours, proposal.theirs)}",
            unified(proposal.ours, proposal.theirs, "this device", proposal.device),
            proposal.theirs,
            [
                ("theirs", f"Take {proposal.device}'s"),
                ("ours", "Keep this device's"),
                ("later", "Decide later"),
            ],
            note=note,
        ),
        chosen,
    )
