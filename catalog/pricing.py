"""Prices and context sizes: litellm's price map where it knows the model, ours where not.

The map is read straight from litellm's bundled JSON so that listing models never pays
for importing litellm itself.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from functools import cache
from typing import Any

from catalog.models import ModelEntry


@dataclass(frozen=True)
class Pricing:
    """Dollars per token in and out, the context window, and where the figures came from."""

    input_per_token: float
    output_per_token: float
    context_window: int
    source: str  # "litellm" or "catalog"

    def cost(self, prompt_tokens: int, completion_tokens: int) -> float:
        return prompt_tokens * self.input_per_token + completion_tokens * self.output_per_token


@cache
def _litellm_price_map() -> dict[str, dict[str, Any]]:
    import importlib.util  # not needed before the first frame

    spec = importlib.util.find_spec("litellm")
    if spec is None or not spec.submodule_search_locations:
        return {}
    path = os.path.join(
        spec.submodule_search_locations[0], "model_prices_and_context_window_backup.json"
    )
    try:
        with open(path, encoding="utf-8") as f:
            prices = json.load(f)
    except (OSError, ValueError):
        return {}
    if not isinstance(prices, dict):
        return {}
    return {str(k): v for k, v in prices.items() if isinstance(v, dict)}


def lookup_keys(entry: ModelEntry, protocol: str, gateway: str) -> tuple[str, ...]:
    name = entry.provider_model
    return (f"{gateway}/{name}", f"{protocol}/{name}", name)


def pricing_for(entry: ModelEntry, protocol: str, gateway: str) -> Pricing | None:
    """The entry's pricing, or None when neither litellm nor the entry has figures."""
    price_map = _litellm_price_map()
    for key in lookup_keys(entry, protocol, gateway):
        info = price_map.get(key)
        if info and "input_cost_per_token" in info and "output_cost_per_token" in info:
            window = info.get("max_input_tokens") or info.get("max_tokens")
            return Pricing(
                input_per_token=float(info["input_cost_per_token"]),
                output_per_token=float(info["output_cost_per_token"]),
                context_window=int(entry.context_window or window or 0),
                source="litellm",
            )
    if (
        entry.input_per_mtok is not None
        and entry.output_per_mtok is not None
        and entry.context_window
    ):
        return Pricing(
            input_per_token=entry.input_per_mtok / 1e6,
            output_per_token=entry.output_per_mtok / 1e6,
            context_window=entry.context_window,
            source="catalog",
        )
    return None
