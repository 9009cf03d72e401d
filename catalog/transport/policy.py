"""How hard to try: retries, backoff and deadlines, for the walk and for one model in it."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from catalog.config import TRANSPORT_DEFAULTS as _D
from catalog.transport.records import TRANSIENT, Kind

if TYPE_CHECKING:
    from catalog.health import HealthBook
    from catalog.models import ModelEntry


@dataclass(frozen=True)
class RetryPolicy:
    """How hard to try. Tests shrink every figure; users may set them in config.toml."""

    # Defaults and bounds of the seven figures config.toml may set: catalog.config.
    retries: int = _D.retries  # extra tries of the walk's last model on transient errors
    backoff: float = _D.backoff  # first delay; doubles each retry (1 s, 2 s, 4 s)
    short_backoff: float = _D.short_backoff  # the head's one retry before a healthy model
    max_backoff: float = _D.max_backoff
    retry_after_cap: float = _D.retry_after_cap  # a Retry-After longer than this is cut
    attempt_deadline: float = _D.attempt_deadline  # one request, stream included
    stall_timeout: float = _D.stall_timeout  # longest silence between stream chunks
    first_token: float | None = None  # a stream's first chunk (None: stall_timeout)
    # Seconds of a local server's silence between checks that it still listens
    # (catalog.transport.liveness); 0 checks nothing.
    liveness: float = 3.0
    retry_on: frozenset[Kind] = TRANSIENT

    def delay(self, retry: int, retry_after: float | None) -> float:
        """Seconds to wait before retry number `retry` (0-based)."""
        delay = min(self.backoff * (2**retry), self.max_backoff)
        if retry_after is not None:
            delay = max(delay, min(retry_after, self.retry_after_cap))
        return float(delay)

    @classmethod
    def from_config(cls, values: dict[str, float | int], **overrides: Any) -> RetryPolicy:
        return replace(cls(), **{**values, **overrides})


def for_model(policy: RetryPolicy, deadline: float | None) -> RetryPolicy:
    """The policy for one model: its own `deadline` ([[models]]) replaces every other cap,
    so a slow CPU model may stay silent while it reads a long prompt."""
    if deadline is None:
        return policy
    return replace(
        policy, attempt_deadline=deadline, stall_timeout=max(policy.stall_timeout, deadline)
    )


def fitted(
    policy: RetryPolicy, health: HealthBook | None, entry: ModelEntry, stream: bool
) -> RetryPolicy:
    """The policy with a deadline that follows the model's observed latency: the whole
    answer's, or a stream's first token. A model with its own `deadline` keeps it."""
    policy = for_model(policy, entry.deadline)
    if health is None or entry.deadline is not None:
        return policy
    if stream and health.p95(entry.id) is None:
        return policy  # headers within the attempt's deadline, chunks within stall_timeout
    if stream:
        return replace(policy, first_token=health.deadline(entry.id, policy.stall_timeout))
    return replace(policy, attempt_deadline=health.deadline(entry.id, policy.attempt_deadline))


def budget(
    position: int, probe: bool, later: Sequence[tuple[bool, bool]], policy: RetryPolicy
) -> tuple[int, bool]:
    """Tries for one model, and whether its retry is the short one. `later` says, for each
    model after it, whether it can be called and whether it is cooling down.

    The last model that can be called gets the full backoff: nowhere else to go. While a
    healthy model follows, the head gets one short retry (a blip passes) and the others,
    like a probe of a model whose cooldown just ended, one try."""
    if not any(can for can, _ in later):
        return policy.retries + 1, False
    if position == 0 and not probe and any(can and not cooling for can, cooling in later):
        return min(2, policy.retries + 1), True
    return 1, False


def pause(policy: RetryPolicy, try_index: int, short: bool, retry_after: float | None) -> float:
    """Seconds before the next try: the short blip retry, or the backoff (at least as long
    as a Retry-After, within its cap)."""
    if short:
        return min(policy.delay(try_index, None), policy.short_backoff)
    return policy.delay(try_index, retry_after)
