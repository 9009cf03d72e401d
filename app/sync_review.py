"""Lines two devices changed differently, put to the user: keep this device's lines, or
take the other's (Ctrl+R shows them before any other memory change)."""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from app.review import MemoryReview
    from app.screens.change import Decision
    from memory.sync.proposals import SyncProposal


def review_sync(review: MemoryReview, proposal: SyncProposal, text: str, more: int) -> None:
    """`text` is the file as it is now, holding both sides' lines."""
    from app.screens.change import ChangeDialog
    from memory.consolidation.review import line_change, unified

    ours, theirs = proposal.choices(text)
    note = (
        f"This device and {proposal.device} changed the same lines of {proposal.file}. "
        "Until you choose, it holds both sides' lines; nothing of either is lost."
    )
    if more:
        note += f"\n({more} more waiting after this one)"

    async def chosen(decision: Decision | None) -> None:
        from memory.sync.proposals import accept_sync, reject_sync

        if decision is None or decision.choice == "later":
            return
        try:  # writes under the store's lock: off the event loop
            if decision.choice == "theirs":
                await asyncio.to_thread(accept_sync, review.app.store, proposal)
                review.say(f"{proposal.file} now has {proposal.device}'s lines.")
            else:
                await asyncio.to_thread(reject_sync, review.app.store, proposal)
                review.say(f"{proposal.file} keeps this device's lines.")
        except OSError as exc:
            review.say(str(exc), "warning")

    review.app.push_screen(
        ChangeDialog(
            f"Two devices changed {proposal.file}: {line_change(ours, theirs)}",
            unified(ours, theirs, "this device's", f"{proposal.device}'s"),
            theirs,
            [
                ("theirs", f"Take {proposal.device}'s"),
                ("ours", "Keep this device's"),
                ("later", "Decide later"),
            ],
            note=note,
        ),
        chosen,
    )
