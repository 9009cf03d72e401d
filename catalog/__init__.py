"""Kept's model catalog and transport layer. Imports neither Textual nor litellm."""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

# Names load on first use (PEP 562), so importing a part of this package never pays
# for the rest of it: the app's first screen needs only a few of them.
_WHERE = {
    "Attempt": "catalog.transport",
    "CONSOLIDATION_HEAD": "catalog.models",
    "Catalog": "catalog.catalog",
    "Chain": "catalog.catalog",
    "DEFAULT_CHAT_MODEL": "catalog.models",
    "GATEWAYS": "catalog.gateways",
    "Gateway": "catalog.gateways",
    "KeyLookup": "catalog.keys",
    "KeyStore": "catalog.keys",
    "KeyStoreError": "catalog.keys",
    "Kind": "catalog.transport",
    "MODEL_CATALOG": "catalog.models",
    "ModelEntry": "catalog.models",
    "Outcome": "catalog.transport",
    "Protocol": "catalog.gateways",
    "Reply": "catalog.transport",
    "ReplyRejected": "catalog.transport",
    "Result": "catalog.transport",
    "RetryPolicy": "catalog.transport",
    "Route": "catalog.catalog",
    "ToolCall": "catalog.transport",
    "UnknownModelError": "catalog.catalog",
    "complete": "catalog.transport",
    "load_catalog": "catalog.catalog",
}
__all__ = [
    "CONSOLIDATION_HEAD",
    "DEFAULT_CHAT_MODEL",
    "GATEWAYS",
    "MODEL_CATALOG",
    "Attempt",
    "Catalog",
    "Chain",
    "Gateway",
    "KeyLookup",
    "KeyStore",
    "KeyStoreError",
    "Kind",
    "ModelEntry",
    "Outcome",
    "Protocol",
    "Reply",
    "ReplyRejected",
    "Result",
    "RetryPolicy",
    "Route",
    "ToolCall",
    "UnknownModelError",
    "complete",
    "load_catalog",
]

if TYPE_CHECKING:
    from catalog.catalog import Catalog, Chain, Route, UnknownModelError, load_catalog
    from catalog.gateways import GATEWAYS, Gateway, Protocol
    from catalog.keys import KeyLookup, KeyStore, KeyStoreError
    from catalog.models import CONSOLIDATION_HEAD, DEFAULT_CHAT_MODEL, MODEL_CATALOG, ModelEntry
    from catalog.transport import (
        Attempt,
        Kind,
        Outcome,
        Reply,
        ReplyRejected,
        Result,
        RetryPolicy,
        ToolCall,
        complete,
    )


def __getattr__(name: str) -> Any:
    try:
        module = _WHERE[name]
    except KeyError:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}") from None
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value
