"""What the model is sent in a turn: the session's context with each message's attachments,
and the chain of models that can take them."""

from __future__ import annotations

from typing import Any

from catalog import Attempt, Catalog, Kind, Outcome
from catalog.catalog import Chain
from memory.chat.attachments import NO_IMAGES, can_take, expand, kinds_of
from memory.sessions.live import LiveSession


def with_attachments(
    session: LiveSession, catalog: Catalog, model: str
) -> tuple[list[dict[str, Any]], Chain | None, Attempt | None]:
    """The context with each message's attachments as content parts, and the chain that can
    take them: with an image in the window, fallbacks that cannot see are left out. A model
    that cannot see the image of the message it answers is not asked (an Attempt says why,
    once, rather than each model of the chain failing on it); older images it is shown as
    mentions."""
    context = session.context()
    journaled = [m for m in session.live_messages() if m.get("role") != "system"]
    if len(journaled) != len(context) or not kinds_of(journaled):
        return context, None, None
    chain = None
    sees = True
    if "image" in kinds_of(journaled):
        sees = can_take(model, {"image"}, catalog)
        last: dict[str, Any] = next((m for m in reversed(journaled) if m.get("role") == "user"), {})
        if not sees and "image" in kinds_of([last]):  # the app says which model can
            gateway = catalog.get(model).gateway if model in catalog else ""
            return (
                context,
                None,
                Attempt(model, gateway, Outcome.SKIPPED, Kind.BAD_REQUEST, reason=NO_IMAGES),
            )
        if sees:
            whole = catalog.chain(model)
            chain = Chain(
                tuple(m for m in whole.models if can_take(m.id, {"image"}, catalog)),
                f"{whole.end}; models that cannot see images are left out",
            )
    expanded = [
        expand(session.store, source, sent, images=sees)
        for source, sent in zip(journaled, context, strict=True)
    ]
    return expanded, chain, None
