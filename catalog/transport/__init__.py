"""The transport layer: call a model through litellm and survive provider failures.

The walk asks each model of the chain in turn, each through its own gateway. A transient
error (rate limit, 5xx, 524, 529, connection) is retried with backoff only where there is
nowhere else to go: while a healthy model follows, the head gets one short retry and the
others none, and a Retry-After becomes the model's cooldown rather than a sleep; the last
model of the walk gets the full backoff. Model-level failures (a stream that died, a
failed tool call, a missed deadline, a stalled stream) go straight to the next model. An
auth failure writes its gateway off for the rest of the walk. Every try becomes an
`Attempt`.

Given a `HealthBook` (catalog.health), the walk also learns across walks and processes:
cooling models go last, a refused key is not sent again, and a deadline follows the
model's observed latency (a stream's first token likewise).

A caller may pass `accept`, which inspects a reply and raises `ReplyRejected` when the
answer does not do the job; the walk then goes on from the model that answered, sharing
one visited set with the transport's own failures.

One job per module: `records` (what a walk hands back), `policy` (retries, backoff,
deadlines), `errors` (a provider's exception classified), `stream` (an answer put
together), `liveness` (a silent local server still listening?), `request` (one request to
one model), `walk` (the chain walk, `complete`). Which request comes first at a local
server is catalog.slots'.
Redaction of provider text is catalog.sanitize's. Names load on first use, so that
catalog.health can use the records without loading the walk.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

_WHERE = {
    "Accept": "records",
    "Attempt": "records",
    "DeltaHook": "records",
    "EventHook": "records",
    "Kind": "records",
    "Outcome": "records",
    "Reply": "records",
    "ReplyRejected": "records",
    "Result": "records",
    "TRANSIENT": "records",
    "ToolCall": "records",
    "UNREACHABLE": "records",
    "RetryPolicy": "policy",
    "for_model": "policy",
    "AttemptFailure": "errors",
    "classify": "errors",
    "provider_message": "errors",
    "redact": "catalog.sanitize",
    "complete": "walk",
}
__all__ = [
    "TRANSIENT",
    "UNREACHABLE",
    "Accept",
    "Attempt",
    "AttemptFailure",
    "DeltaHook",
    "EventHook",
    "Kind",
    "Outcome",
    "Reply",
    "ReplyRejected",
    "Result",
    "RetryPolicy",
    "ToolCall",
    "classify",
    "complete",
    "for_model",
    "provider_message",
    "redact",
]

if TYPE_CHECKING:
    from catalog.sanitize import redact
    from catalog.transport.errors import AttemptFailure, classify, provider_message
    from catalog.transport.policy import RetryPolicy, for_model
    from catalog.transport.records import (
        TRANSIENT,
        UNREACHABLE,
        Accept,
        Attempt,
        DeltaHook,
        EventHook,
        Kind,
        Outcome,
        Reply,
        ReplyRejected,
        Result,
        ToolCall,
    )
    from catalog.transport.walk import complete


def __getattr__(name: str) -> Any:
    try:
        module = _WHERE[name]
    except KeyError:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}") from None
    where = module if "." in module else f"{__name__}.{module}"
    value = getattr(importlib.import_module(where), name)
    globals()[name] = value
    return value
