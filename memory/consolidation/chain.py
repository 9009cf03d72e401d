"""The models that write memory and how they are asked: the consolidation chain, its retry
policy, and whether a model's change waits for the user's review."""

from __future__ import annotations

from dataclasses import replace

from catalog import Catalog, Chain, RetryPolicy
from catalog.catalog import UnknownModelError
from catalog.chains import consolidation_plan
from catalog.transport import Kind
from memory.consolidation.log import read_records
from memory.consolidation.trust import ReviewRule, records, review_rule
from memory.data.store import MemoryStore
from memory.settings import MemorySettings


def consolidation_chain(
    catalog: Catalog, settings: MemorySettings, chat_model: str | None = None
) -> tuple[Chain | None, str]:
    """The chain that writes memory (see catalog.chains), or None and the reason none can."""
    try:
        plan = consolidation_plan(catalog, settings.consolidation_model or None, chat_model)
    except UnknownModelError:
        return None, (
            f"the consolidation model '{settings.consolidation_model}' is not in "
            "the catalog; fix [memory] consolidation_model in config.toml"
        )
    return (plan.chain, "") if plan.chain.models else (None, plan.fix)


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
