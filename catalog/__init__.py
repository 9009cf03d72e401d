"""Kept's model catalog and transport layer. Imports neither Textual nor litellm."""

from catalog.catalog import Catalog, Chain, Route, UnknownModelError, load_catalog
from catalog.config import config_dir, config_path
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

__all__ = [
    "CONSOLIDATION_HEAD", "DEFAULT_CHAT_MODEL", "GATEWAYS", "MODEL_CATALOG", "Attempt",
    "Catalog", "Chain", "Gateway", "KeyLookup", "KeyStore", "KeyStoreError", "Kind",
    "ModelEntry", "Outcome", "Protocol", "Reply", "ReplyRejected", "Result", "RetryPolicy",
    "Route", "ToolCall", "UnknownModelError", "complete", "config_dir", "config_path",
    "load_catalog",
]
