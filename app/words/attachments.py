"""What the chat and `kept ask` say when a message's attachments cannot go to a model: each
in its own words for the next step (/model in the chat, -m in a shell)."""

from __future__ import annotations

from collections.abc import Sequence

from catalog.catalog import Catalog
from memory.chat.attachments import Attachment, seeing, too_big
from memory.chat.attachments.kinds import round_tokens


def does_not_fit(
    attachments: Sequence[Attachment], text: str, window: int, *, shell: bool = False
) -> str | None:
    """One sentence, with what to do, when the message and its attachments are estimated to
    need more than the model's window; None when they fit."""
    past = too_big(attachments, text, window)
    if past is None:
        return None
    largest = past.largest
    what = "" if largest is None else f" ({largest.name} is ~{round_tokens(largest.tokens):,})"
    pick = "-m MODEL" if shell else "/model"
    return (
        f"This message is about {round_tokens(past.need):,} tokens{what}, more than the model "
        f"can read ({window:,}-token window); detach a file or attach a part of it, or pick "
        f"a model with a larger window with {pick}."
    )


def vision_model_sentence(
    catalog: Catalog, model_id: str | None = None, *, shell: bool = False
) -> str:
    """`GPT-OSS 120B cannot see images; /model claude-sonnet-4-5 can.` A model with a key
    is named first."""
    facts = seeing(catalog, model_id)
    pick = "-m " if shell else "/model "
    if facts.ready is not None:
        return f"{facts.who} cannot see images; {pick}{facts.ready} can."
    if facts.later is not None:
        if not shell:
            return (
                f"{facts.who} cannot see images; /model {facts.later} can, once /keys has its key."
            )
        store = f" (`keyring set kept {facts.gateway.name}`)" if facts.gateway else ""
        return (
            f"{facts.who} cannot see images; -m {facts.later} can, once its key is stored{store}."
        )
    return f"{facts.who} cannot see images, and no model Kept knows can; detach the image."
