"""The effective consolidation chain: composed from the models that can answer."""

from __future__ import annotations

import pytest

from app.words.models import chain_fix
from catalog import Catalog, KeyStore, UnknownModelError
from catalog.chains import Blocked, ChainPlan, consolidation_plan
from catalog.config import parse_catalog_config

LOCAL = """
[gateways.local]
base_url = "http://127.0.0.1:9/v1"

[[models]]
id = "llama3.2"

[[models]]
id = "qwen2.5"
"""


def catalog(config: str = "", **env: str) -> Catalog:
    import tomllib

    parsed = parse_catalog_config(tomllib.loads(config))
    assert parsed.problems == ()
    return Catalog(config=parsed, keys=KeyStore(environ=env))


def ids(plan: ChainPlan) -> list[str]:
    return list(plan.chain.ids)


def test_with_a_groq_key_the_hidden_groq_models_lead() -> None:
    plan = consolidation_plan(catalog(GROQ_API_KEY="gsk_test_0123456789"))
    assert ids(plan) == ["llama-3.3-70b-versatile", "qwen3-32b", "llama-4-scout-17b-16e-instruct"]
    skipped = {m.entry.id: m.why for m in plan.members if not m.included}
    assert skipped == {
        "gpt-4.1-mini": "no key for OpenAI",
        "claude-haiku-4-5": "no key for Anthropic",
    }
    assert plan.blocked is Blocked.NOT


def test_without_a_groq_key_the_chain_starts_at_the_first_model_with_a_key() -> None:
    plan = consolidation_plan(catalog(OPENAI_API_KEY="sk-test-0123456789"))
    assert ids(plan) == ["gpt-4.1-mini"]


def test_local_models_join_the_end_of_a_hosted_chain() -> None:
    plan = consolidation_plan(catalog(LOCAL, ANTHROPIC_API_KEY="sk-ant-test-0123456789"))
    assert ids(plan) == ["claude-haiku-4-5", "llama3.2", "qwen2.5"]
    why = {m.entry.id: m.why for m in plan.members}
    assert why["llama3.2"] == "your local model; no key needed (http://127.0.0.1:9/v1)"


def test_with_no_hosted_key_the_local_chat_model_heads_the_chain() -> None:
    assert ids(consolidation_plan(catalog(LOCAL), chat_model="qwen2.5")) == ["qwen2.5", "llama3.2"]
    # No local chat model: the first local model configured.
    assert ids(consolidation_plan(catalog(LOCAL), chat_model="claude-sonnet-4-5")) == [
        "llama3.2",
        "qwen2.5",
    ]


def test_a_chosen_consolidation_model_still_wins() -> None:
    plan = consolidation_plan(
        catalog(LOCAL, OPENAI_API_KEY="sk-test-0123456789"),
        chosen="gpt-4.1-mini",
        chat_model="llama3.2",
    )
    assert ids(plan)[0] == "gpt-4.1-mini"
    assert ids(plan)[-2:] == ["llama3.2", "qwen2.5"]
    assert plan.members[0].why.startswith("[memory] consolidation_model")
    with pytest.raises(UnknownModelError):
        consolidation_plan(catalog(), chosen="nope")


def test_a_key_the_builtin_chain_does_not_use_still_saves_memory() -> None:
    plan = consolidation_plan(catalog(GEMINI_API_KEY="AIza-test-0123456789"))
    assert ids(plan) == ["gemini-2.5-flash-lite"]


def test_no_key_and_no_local_model_is_a_chain_that_cannot_answer() -> None:
    plan = consolidation_plan(catalog())
    assert not plan.usable and plan.chain.models == ()
    assert plan.blocked is Blocked.NO_MODEL and chain_fix(plan.blocked).startswith("No model")
    assert all(not m.included and m.why.startswith("no key for") for m in plan.members)
