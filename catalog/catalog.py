"""The catalog as Kept uses it: built-in models plus the user's, chains and routes."""

from __future__ import annotations

import difflib
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from catalog.config import CatalogConfig, remote_host
from catalog.gateways import GATEWAYS, Gateway
from catalog.keys import KeyLookup, KeyStore
from catalog.models import MODEL_CATALOG, ModelEntry

if TYPE_CHECKING:
    from catalog.pricing import Pricing


class UnknownModelError(LookupError):
    """A model id the catalog does not have; the message suggests the nearest ones."""


@dataclass(frozen=True)
class Chain:
    """A model and its fallbacks, each once, and why the chain ended where it did."""

    models: tuple[ModelEntry, ...]
    end: str  # a sentence: "no further fallback", "cycle back to X", "unknown fallback Y"

    @property
    def ids(self) -> tuple[str, ...]:
        return tuple(m.id for m in self.models)


@dataclass(frozen=True)
class Route:
    """Everything litellm needs to call one model, or the reason it cannot be called."""

    entry: ModelEntry
    gateway: Gateway
    litellm_model: str
    api_base: str | None
    key: KeyLookup

    @property
    def problem(self) -> str | None:
        return self.key.problem


class Catalog:
    """Models by id, their chains and routes; built-ins overlaid with config.toml."""

    def __init__(
        self,
        entries: tuple[ModelEntry, ...] = MODEL_CATALOG,
        config: CatalogConfig | None = None,
        keys: KeyStore | None = None,
    ) -> None:
        self.config = config or CatalogConfig()
        self.keys = keys or KeyStore()
        problems = list(self.config.problems)
        self._entries: dict[str, ModelEntry] = {}
        for entry in entries:
            self._entries[entry.id] = entry
        for entry in self.config.user_models:
            if entry.id in self._entries:
                problems.append(
                    f"config.toml: model '{entry.id}' is already in the catalog; "
                    "give your model another id."
                )
                continue
            self._entries[entry.id] = entry
        self.gateways: dict[str, Gateway] = {
            name: replace(gw, base_url=self.config.gateway_urls.get(name, gw.base_url))
            for name, gw in GATEWAYS.items()
        }
        for entry in self.config.user_models:
            host = self.elsewhere(entry)
            if host and self._entries.get(entry.id) is entry:  # said where it is described
                default = f"Your own model on the {entry.gateway} gateway"
                away = "not on this machine: transcripts are sent there"
                self._entries[entry.id] = replace(
                    entry,
                    description=f"Your own model at {host} — {away}"
                    if entry.description == default
                    else f"{entry.description} (at {host}, {away})",
                )
        self.problems: tuple[str, ...] = tuple(problems)
        # Every key is read here, once (a blocking keyring read, before the app's loop runs
        # or in a worker), so that a route is a pure look-up, fit for a screen's compose.
        self.keys.load(self.gateways.values())

    @property
    def entries(self) -> tuple[ModelEntry, ...]:
        return tuple(self._entries.values())

    def visible(self) -> tuple[ModelEntry, ...]:
        return tuple(e for e in self._entries.values() if not e.hidden)

    def __contains__(self, model_id: object) -> bool:
        return model_id in self._entries

    def get(self, model_id: str) -> ModelEntry:
        try:
            return self._entries[model_id]
        except KeyError:
            near = difflib.get_close_matches(model_id, list(self._entries), n=3, cutoff=0.5)
            hint = f" Did you mean {', '.join(near)}?" if near else ""
            raise UnknownModelError(
                f"Unknown model '{model_id}'.{hint} `kept models` lists the models Kept knows."
            ) from None

    def chain(self, model_id: str) -> Chain:
        """The model, then its fallbacks, each exactly once."""
        models = [self.get(model_id)]
        seen = {model_id}
        while True:
            nxt = models[-1].fallback
            if nxt is None:
                return Chain(tuple(models), "no further fallback")
            if nxt in seen:
                return Chain(
                    tuple(models), f"{models[-1].id} falls back to {nxt}, already in the chain"
                )
            if nxt not in self._entries:
                return Chain(
                    tuple(models),
                    f"{models[-1].id} falls back to unknown model '{nxt}'; fix its fallback",
                )
            seen.add(nxt)
            models.append(self._entries[nxt])

    def gateway_of(self, entry: ModelEntry) -> Gateway:
        return self.gateways[entry.gateway]

    def elsewhere(self, entry: ModelEntry) -> str | None:
        """The host of a keyless gateway's model that is not on this machine: its
        transcripts leave the machine, unlike a local model's (None for the others)."""
        gateway = self.gateway_of(entry)
        return None if gateway.needs_key else remote_host(gateway.base_url)

    def pricing(self, entry: ModelEntry) -> Pricing | None:
        """Its prices and context window; the window its server said it has wins over
        config.toml's and litellm's figures."""
        from catalog.pricing import pricing_for  # with the first price asked, not at start-up
        from catalog.structured import learned_window

        gateway = self.gateway_of(entry)
        found = pricing_for(entry, gateway.protocol.value, gateway.name)
        said = learned_window(_litellm_model(gateway, entry))
        return replace(found, context_window=said) if found and said else found

    def route(self, entry: ModelEntry) -> Route:
        """How to call this model, from the keys already read: never blocks."""
        gateway = self.gateway_of(entry)
        broken = self.config.broken_gateways.get(gateway.name)
        return Route(
            entry=entry,
            gateway=gateway,
            litellm_model=_litellm_model(gateway, entry),
            api_base=gateway.base_url,
            # A gateway whose table is wrong is unusable, like one without a key.
            key=KeyLookup(gateway.name, None, None, broken) if broken else self.keys.known(gateway),
        )


def _litellm_model(gateway: Gateway, entry: ModelEntry) -> str:
    """The name litellm calls the model by, and names it by in its exceptions."""
    return f"{gateway.protocol.value}/{entry.provider_model}"


def load_catalog(config: CatalogConfig | None = None, keys: KeyStore | None = None) -> Catalog:
    """The catalog with the user's tables of config.toml applied (problems are in
    `.problems`); the app reads the file (app.settings.load_settings)."""
    return Catalog(MODEL_CATALOG, config, keys)
