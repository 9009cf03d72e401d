"""The models that write memory and how they are asked: the consolidation chain, its retry
policy, and whether a model's change waits for the user's review."""

from __future__ import annotations

from dataclasses import replace
from typing import NamedTuple

from catalog import Catalog, Chain, RetryPolicy
from catalog.catalog import UnknownModelError
from catalog.chains import Blocked, consolidation_plan
from catalog.transport import Kind
from memory.consolidation.log import read_records
from memory.consolidation.outcome import Cause
from memory.consolidation.trust import ReviewRule, records, review_rule
from memory.data.store import MemoryStore
from memory.settings import MemorySettings


class Writers(NamedTuple):
    """The chain that writes memory, or None with the reason (a fact) and its cause."""

    chain: Chain | None
    reason: str = ""
    cause: Cause | None = None


_CAUSE = {Blocked.NO_MODEL: Cause.NO_MODEL, Blocked.UNREACHABLE: Cause.UNREACHABLE}
_WHY = {
    Blocked.NO_MODEL: "No model can save memory: no gateway has a key and no local server "
    "is set up",
    Blocked.UNREACHABLE: "No model can save memory now: every model left is on a server "
    "that did not answer",
}


def consolidation_chain(
    catalog: Catalog, settings: MemorySettings, chat_model: str | None = None
) -> Writers:
    """The chain that writes memory (see catalog.chains), or None and why none can."""
    try:
        plan = consolidation_plan(catalog, settings.consolidation_model or None, chat_model)
    except UnknownModelError:
        return Writers(
            None,
            f"the consolidation model '{settings.consolidation_model}' is not in "
            "the catalog; fix [memory] consolidation_model in config.toml",
        )
    if plan.chain.models:
        return Writers(plan.chain)
    return Writers(None, _WHY[plan.blocked], _CAUSE[plan.blocked])


def consolidation_policy(
    catalog: Catalog, settings: MemorySettings, policy: RetryPolicy | None
) -> RetryPolicy:
    """The caller's policy (or the config's), with the consolidation's own deadline."""
    base = policy or RetryPolicy.from_config(catalog.config.transport)
    # A consolidation that times out moves to the next model rather than waiting again.
    return replace(
        base,
        attempt_deadline=min(base.attempt_deadline, settings.attempt_deadline),
        retry_on=base.retry_on - {Kind.TIMEOUT},
    )


def review_rule_for(store: MemoryStore, catalog: Catalog, model: str) -> ReviewRule:
    """Whether `model`'s change waits for the user (memory.consolidation.trust), its record
    read from the consolidation log."""
    record = records(read_records(store)).get(model)
    return review_rule(model, store.settings, catalog, record)
