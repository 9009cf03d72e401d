"""Before a message with attachments is sent: whether it fits the model's window, and which
models can see its images. These are facts; the app words them (app/words/attachments.py)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from catalog.capabilities import sees_images
from catalog.catalog import Catalog
from catalog.gateways import Gateway
from memory.chat.attachments.kinds import Attachment, text_tokens

NO_IMAGES = "cannot see images"  # why a model was not asked: the message has an image


@dataclass(frozen=True)
class TooBig:
    """A message and its attachments estimated past a model's window."""

    need: int  # tokens, estimated
    window: int
    largest: Attachment | None


def too_big(attachments: Sequence[Attachment], text: str, window: int) -> TooBig | None:
    """How far the message and its attachments are past the model's window (a tenth of it
    stays for the prompt and the reply); None when they fit."""
    need = sum(a.tokens for a in attachments) + text_tokens(text)
    if need <= window - window // 10:
        return None
    return TooBig(need, window, max(attachments, key=lambda a: a.tokens, default=None))


def can_take(model_id: str, kinds: set[str], catalog: Catalog) -> bool:
    """Whether `model_id` can be sent a message with attachments of these kinds: text and
    PDFs go to every model (as text); images only to one that sees them."""
    if "image" not in kinds:
        return True
    if model_id not in catalog:
        return False
    return sees_images(catalog, catalog.get(model_id))


@dataclass(frozen=True)
class Seeing:
    """For a model that cannot see images (`who`, its label): a model that can and can be
    asked now (`ready`), else one that can once `gateway` has a key (`later`); neither when
    no model Kept knows can."""

    who: str
    ready: str | None = None
    later: str | None = None
    gateway: Gateway | None = None


def seeing(catalog: Catalog, model_id: str | None = None) -> Seeing:
    """Which model to pick instead of `model_id` for an image: one with a key first."""
    who = (
        catalog.get(model_id).label
        if model_id is not None and model_id in catalog
        else model_id or "This model"
    )
    seeing = [e for e in catalog.visible() if sees_images(catalog, e, ask_server=False)]
    ready = [e for e in seeing if catalog.route(e).problem is None]
    if ready:
        return Seeing(who, ready=ready[0].id)
    if seeing:
        return Seeing(who, later=seeing[0].id, gateway=catalog.route(seeing[0]).gateway)
    return Seeing(who)
