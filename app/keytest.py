"""Trying a key before it is kept: one tiny request to the gateway's cheapest model."""

from __future__ import annotations

import asyncio
import copy
from typing import TYPE_CHECKING

from catalog import Gateway, KeyStore, complete
from catalog.keys import KeyLookup

if TYPE_CHECKING:
    from app.main import KeptApp


class _TrialKeys(KeyStore):
    """The app's keys, with one gateway's key replaced by the one being tried."""

    def __init__(self, keys: KeyStore, gateway: str, value: str) -> None:
        super().__init__(environ={})
        self._keys, self._gateway, self._value = keys, gateway, value
        self.keyring_problem = keys.keyring_problem

    def lookup(self, gateway: Gateway) -> KeyLookup:
        if gateway.name == self._gateway:
            return KeyLookup(gateway.name, self._value, "trial")
        return self._keys.lookup(gateway)


async def try_key(app: KeptApp, gateway: Gateway, value: str | None = None) -> str:
    """ "" when the gateway answers with `value` (or its current key), else a sentence
    saying why not. The cheapest model is asked, for five tokens: a test costs nothing."""
    from catalog.llm import litellm

    await asyncio.to_thread(litellm)
    catalog = app.catalog
    if value is not None:
        catalog = copy.copy(catalog)
        catalog.keys = _TrialKeys(app.catalog.keys, gateway.name, value)
    models = [e for e in catalog.entries if e.gateway == gateway.name]
    if not models:
        return f"No model uses the {gateway.label} gateway."

    def price(entry) -> float:
        pricing = catalog.pricing(entry)
        return pricing.input_per_token + pricing.output_per_token if pricing else float("inf")

    cheapest = min(models, key=price)
    result = await complete(
        catalog,
        cheapest.id,
        [{"role": "user", "content": "Reply: ok"}],
        walk_chain=False,
        max_tokens=5,
        policy=app.policy,
    )
    if result.ok:
        return ""
    reason = result.attempts[-1].reason if result.attempts else "no answer"
    # The transport's advice to open /keys is no help to someone who is in it.
    reason = reason.replace(": check it with /keys", "")
    return f"{gateway.label} did not answer {cheapest.label}: {reason}."
