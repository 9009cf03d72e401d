"""What the chat says when no model could answer: what failed, why, and the next step, in
the chat's words (/keys, /model)."""

from __future__ import annotations

from dataclasses import dataclass, field

from catalog import Attempt, Catalog, Kind
from catalog.models import short_label
from memory.chat.attachments import NO_IMAGES


def shorten(text: str, limit: int) -> str:
    """`text` within `limit` characters, cut at a word with an ellipsis."""
    if len(text) <= limit:
        return text
    return text[: limit - 1].rsplit(" ", 1)[0].rstrip(" ,;:") + "…"


@dataclass
class _Why:
    """Each model's last attempt, grouped by what went wrong; each item named once."""

    no_key: list[str] = field(default_factory=list)  # gateways
    refused: list[str] = field(default_factory=list)  # gateways
    unreachable: list[str] = field(default_factory=list)  # addresses
    other: list[str] = field(default_factory=list)  # "model reason"

    @staticmethod
    def add(group: list[str], item: str) -> None:
        if item not in group:
            group.append(item)

    def take(self, catalog: Catalog, record: Attempt) -> None:
        gateway = catalog.gateways.get(record.gateway)
        label = gateway.label if gateway else record.gateway
        known = record.model in catalog
        if record.kind is Kind.NO_KEY:
            self.add(self.no_key, label)
        elif record.kind in (Kind.AUTH, Kind.GATEWAY_DOWN):
            self.add(self.refused, label)
        elif record.kind is Kind.CONNECTION:
            url = catalog.route(catalog.get(record.model)).api_base if known else None
            self.add(self.unreachable, url or label)
        else:
            model = catalog.get(record.model).label if known else short_label(record.model)
            self.add(self.other, f"{shorten(model, 40)} {shorten(_reason(catalog, record), 160)}")

    def sentence(self) -> str:
        why = [f"no key for {', '.join(self.no_key)}"] if self.no_key else []
        if self.refused:
            why.append(f"the key was refused by {', '.join(self.refused)}")
        if self.unreachable:
            why.append(f"nothing answers at {', '.join(self.unreachable)}")
        why += self.other[:2] + (["…"] if len(self.other) > 2 else [])
        return "; ".join(why) or "no model in its chain could be tried"


def _reason(catalog: Catalog, record: Attempt) -> str:
    """An attempt's reason; for a model not asked because it cannot see the message's
    image, which model to pick instead."""
    if record.reason != NO_IMAGES:
        return record.reason.rstrip(".")
    from app.words.attachments import vision_model_sentence

    label = catalog.get(record.model).label if record.model in catalog else record.model
    return vision_model_sentence(catalog, record.model).removeprefix(f"{label} ").rstrip(".")


def failure_notice(catalog: Catalog, requested: str, attempts: list[Attempt]) -> str:
    """A failed turn in three short lines: what failed, why (reasons grouped, each gateway
    named once), and the one next step. Each attempt's own words stay in the records."""
    last: dict[str, Attempt] = {}
    for record in attempts:
        last[record.model] = record
    why = _Why()
    for record in last.values():
        why.take(catalog, record)
    label = catalog.get(requested).label if requested in catalog else requested
    return (
        f"No model could answer for {label}; your message is saved.\n"
        f"Why: {why.sentence()}.\n"
        f"Next: {_step(catalog, requested, last.get(requested), why)}"
    )


def _step(catalog: Catalog, requested: str, first: Attempt | None, why: _Why) -> str:
    """The one next step: start a keyless server, fix a key, or try again or elsewhere."""
    keyless = first is not None and first.kind is Kind.CONNECTION
    if keyless and requested in catalog:
        keyless = not catalog.route(catalog.get(requested)).gateway.needs_key
    if keyless:
        return (
            f"Start the server at {why.unreachable[0]} (or fix its address in config.toml), "
            "or pick another model with /model."
        )
    if why.no_key or why.refused:
        return "Add or fix a key with /keys, or pick another model with /model."
    return "Send it again in a moment, or pick another model with /model."
