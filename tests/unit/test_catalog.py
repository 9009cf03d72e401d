"""The catalog: entries, chains, routes, config.toml and keys."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from app.cli.main import main
from app.settings import load_settings
from catalog import (
    CONSOLIDATION_HEAD,
    MODEL_CATALOG,
    Catalog,
    KeyStore,
    KeyStoreError,
    ModelEntry,
    Protocol,
    UnknownModelError,
    load_catalog,
)
from catalog.gateways import GATEWAYS
from tests.fakes.keyring_backend import MemoryKeyring


def test_ids_are_unique_and_only_the_consolidation_models_are_hidden() -> None:
    catalog = Catalog()
    assert len({e.id for e in MODEL_CATALOG}) == len(MODEL_CATALOG)
    assert catalog.visible() == tuple(e for e in MODEL_CATALOG if not e.hidden)
    hidden = [e.id for e in MODEL_CATALOG if e.hidden]
    assert hidden == ["llama-3.3-70b-versatile", "qwen3-32b", "llama-4-scout-17b-16e-instruct"]


def test_catalog_spans_four_api_formats() -> None:
    catalog = Catalog()
    protocols = {catalog.gateway_of(e).protocol for e in MODEL_CATALOG}
    assert protocols == set(Protocol)


@pytest.mark.parametrize("entry", MODEL_CATALOG, ids=lambda e: e.id)
def test_every_entry_has_price_and_context(entry: ModelEntry) -> None:
    pricing = Catalog().pricing(entry)
    assert pricing is not None
    assert pricing.input_per_token > 0 and pricing.output_per_token > 0
    assert pricing.context_window >= 100_000


def test_some_prices_come_from_litellm_and_missing_groq_ones_from_the_catalog() -> None:
    catalog = Catalog()
    prices = {e.id: catalog.pricing(catalog.get(e.id)) for e in MODEL_CATALOG}
    sources = {model: p.source if p else None for model, p in prices.items()}
    assert sources["claude-haiku-4-5"] == "litellm"
    assert sources["llama-3.3-70b-versatile"] == "catalog"


def test_every_fallback_is_a_known_model() -> None:
    ids = {e.id for e in MODEL_CATALOG}
    for entry in MODEL_CATALOG:
        assert entry.fallback is None or entry.fallback in ids, entry.id


def test_consolidation_chain_runs_hidden_groq_models_first() -> None:
    chain = Catalog().chain(CONSOLIDATION_HEAD)
    assert chain.ids == (
        "llama-3.3-70b-versatile",
        "qwen3-32b",
        "llama-4-scout-17b-16e-instruct",
        "gpt-4.1-mini",
        "claude-haiku-4-5",
    )
    assert "already in the chain" in chain.end


def test_every_chain_visits_each_model_once() -> None:
    catalog = Catalog()
    for entry in MODEL_CATALOG:
        ids = catalog.chain(entry.id).ids
        assert len(ids) == len(set(ids))
        assert ids[0] == entry.id


def _entries(*pairs: tuple[str, str | None]) -> tuple[ModelEntry, ...]:
    return tuple(ModelEntry(i, i, "fast", "", "openai", fallback=f) for i, f in pairs)


def test_a_cycle_ends_the_chain_cleanly() -> None:
    catalog = Catalog(_entries(("a", "b"), ("b", "c"), ("c", "a")))
    chain = catalog.chain("a")
    assert chain.ids == ("a", "b", "c")
    assert chain.end == "c falls back to a, already in the chain"


def test_an_unknown_fallback_ends_the_chain_with_a_reason() -> None:
    catalog = Catalog(_entries(("a", "b"), ("b", "ghost")))
    chain = catalog.chain("a")
    assert chain.ids == ("a", "b")
    assert "unknown model 'ghost'" in chain.end


def test_unknown_model_says_what_to_do() -> None:
    with pytest.raises(UnknownModelError) as err:
        Catalog().chain("gpt-4.1-mni")
    assert "Unknown model 'gpt-4.1-mni'" in str(err.value)
    assert "gpt-4.1-mini" in str(err.value)


def test_each_model_in_a_chain_is_routed_through_its_own_gateway() -> None:
    catalog = Catalog()
    routes = [catalog.route(e) for e in catalog.chain(CONSOLIDATION_HEAD).models]
    assert [r.litellm_model for r in routes] == [
        "groq/llama-3.3-70b-versatile",
        "groq/qwen/qwen3-32b",
        "groq/meta-llama/llama-4-scout-17b-16e-instruct",
        "openai/gpt-4.1-mini",
        "anthropic/claude-haiku-4-5",
    ]
    assert [r.api_base for r in routes] == [
        GATEWAYS["groq"].base_url,
        GATEWAYS["groq"].base_url,
        GATEWAYS["groq"].base_url,
        "https://api.openai.com/v1",
        "https://api.anthropic.com",
    ]


# --- config.toml --------------------------------------------------------------------------


def _write_config(text: str) -> Path:
    from app.settings import config_path

    path = config_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def test_config_overrides_a_gateway_url_and_adds_a_local_model() -> None:
    _write_config(
        '[gateways.groq]\nbase_url = "http://127.0.0.1:9999/groq/v1/"\n\n'
        '[[models]]\nid = "llama3.2"\nlabel = "Llama 3.2 (Ollama)"\nfallback = "gpt-4.1-mini"\n'
    )
    catalog = load_catalog(load_settings().catalog)
    assert catalog.problems == ()
    assert catalog.route(catalog.get("qwen3-32b")).api_base == "http://127.0.0.1:9999/groq/v1"
    local = catalog.get("llama3.2")
    assert local in catalog.visible()
    route = catalog.route(local)
    assert route.litellm_model == "openai/llama3.2"
    assert route.key.usable and route.key.source == "not needed"
    assert catalog.chain("llama3.2").ids == ("llama3.2", "gpt-4.1-mini", "claude-haiku-4-5")
    pricing = catalog.pricing(local)
    assert pricing is not None and pricing.cost(1000, 1000) == 0.0


def test_malformed_config_is_one_sentence_and_defaults_stand() -> None:
    path = _write_config('[gateways.groq\nbase_url = "x"\n')
    catalog = load_catalog(load_settings().catalog)
    assert len(catalog.problems) == 1
    assert str(path) in catalog.problems[0] and "not valid TOML" in catalog.problems[0]
    assert "line 1" in catalog.problems[0]
    assert catalog.route(catalog.get("qwen3-32b")).api_base == GATEWAYS["groq"].base_url


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('[gateways.groq]\nbase_url = "ftp://x"\n', "base_url must be an http:// or https:// URL"),
        ('[gateways.groq]\nurl = "http://x"\n', "unknown key 'url'"),
        ('[gateways.nope]\nbase_url = "http://x"\n', "[gateways.nope] is not a gateway"),
        ('[[models]]\nlabel = "no id"\n', "needs an id"),
        ('[[models]]\nid = "m"\ngateway = "anthropic"\n', "OpenAI-compatible gateway"),
        ('[[models]]\nid = "gpt-5"\n', "model 'gpt-5' is already in the catalog"),
        ('[[models]]\nid = "m"\ncontext_window = "big"\n', "context_window must be"),
        ("[transport]\nretries = -1\n", "retries must be a whole number from 0 to 10"),
        ("[transport]\nspeed = 1\n", "unknown key 'speed'"),
    ],
)
def test_bad_config_values_name_the_thing_to_fix(text: str, expected: str) -> None:
    _write_config(text)
    catalog = load_catalog(load_settings().catalog)
    assert any(expected in p for p in catalog.problems), catalog.problems
    assert len(catalog.entries) >= 19


def test_non_utf8_config_is_reported() -> None:
    from app.settings import config_path

    path = config_path()
    path.parent.mkdir(parents=True)
    path.write_bytes(b'[gateways.groq]\nbase_url = "\xff"\n')
    assert "not UTF-8" in load_catalog(load_settings().catalog).problems[0]


# --- keys ---------------------------------------------------------------------------------


def test_keyring_comes_before_the_environment(memory_keyring: MemoryKeyring) -> None:
    memory_keyring.set_password("kept", "groq", "gsk-from-keyring")
    keys = KeyStore(environ={"GROQ_API_KEY": "gsk-from-env", "OPENAI_API_KEY": "sk-env"})
    assert keys.lookup(GATEWAYS["groq"]).value == "gsk-from-keyring"
    assert keys.lookup(GATEWAYS["groq"]).source == "keyring"
    assert keys.lookup(GATEWAYS["openai"]).source == "env"


def test_without_a_keyring_backend_env_vars_still_work_and_it_is_said_once() -> None:
    keys = KeyStore(environ={"GROQ_API_KEY": "gsk-env"})
    assert keys.lookup(GATEWAYS["groq"]).value == "gsk-env"
    assert keys.lookup(GATEWAYS["openai"]).problem == (
        "No key for OpenAI: none in the OS keyring or the OPENAI_API_KEY environment variable."
    )
    assert keys.keyring_problem is not None
    assert "No OS keyring is available" in keys.keyring_problem


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("", "is empty"),
        ("   ", "is empty"),
        ("gsk-abc\n", "spaces or a line break"),
        ("gsk abc", "contains whitespace"),
    ],
)
def test_bad_env_keys_are_named(value: str, expected: str) -> None:
    found = KeyStore(environ={"GROQ_API_KEY": value}).lookup(GATEWAYS["groq"])
    assert not found.usable and found.problem is not None
    assert found.problem.startswith("The GROQ_API_KEY environment variable")
    assert expected in found.problem


def test_a_bad_keyring_key_falls_back_to_a_good_env_key(memory_keyring: MemoryKeyring) -> None:
    memory_keyring.set_password("kept", "groq", " ")
    keys = KeyStore(environ={"GROQ_API_KEY": "gsk-env"})
    assert keys.lookup(GATEWAYS["groq"]).value == "gsk-env"
    keys2 = KeyStore(environ={})
    problem = keys2.lookup(GATEWAYS["groq"]).problem
    assert problem is not None and "The groq key in the OS keyring is empty" in problem


def test_set_and_delete_keys(memory_keyring: MemoryKeyring) -> None:
    keys = KeyStore(environ={})
    keys.set(GATEWAYS["anthropic"], "sk-ant-123")
    assert memory_keyring.secrets == {("kept", "anthropic"): "sk-ant-123"}
    assert keys.lookup(GATEWAYS["anthropic"]).value == "sk-ant-123"
    with pytest.raises(KeyStoreError, match="contains whitespace"):
        keys.set(GATEWAYS["anthropic"], "sk ant")
    assert keys.delete(GATEWAYS["anthropic"]) is True
    assert keys.delete(GATEWAYS["anthropic"]) is False
    assert not keys.lookup(GATEWAYS["anthropic"]).usable


def test_setting_a_key_without_a_keyring_says_what_to_do() -> None:
    with pytest.raises(KeyStoreError, match="set ANTHROPIC_API_KEY"):
        KeyStore(environ={}).set(GATEWAYS["anthropic"], "sk-ant-123")


# --- import hygiene and CLI ---------------------------------------------------------------


def test_importing_catalog_loads_neither_textual_nor_litellm() -> None:
    code = (
        "import sys, catalog, catalog.transport; "
        "print(sorted(m for m in ('textual', 'litellm') if m in sys.modules))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        check=True,
        cwd=Path(__file__).parents[2],
    )
    assert out.stdout.strip() == "[]"


def test_kept_models_lists_visible_models_only(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GROQ_API_KEY", "gsk-test")
    assert main(["models"]) == 0
    out = capsys.readouterr().out
    lines = out.strip().splitlines()
    assert [line.split()[0] for line in lines[1:]] == [e.id for e in Catalog().visible()]
    assert "llama-3.3-70b-versatile" not in out
    assert "gpt-oss-120b" in out
    groq_line = next(line for line in lines if line.startswith("gpt-oss-120b"))
    assert "yes (env)" in groq_line
    assert "no" in next(line for line in lines if line.startswith("gpt-5 "))


def test_kept_models_all_adds_hidden_models_and_chains(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["models", "--all"]) == 0
    out = capsys.readouterr().out
    assert "llama-3.3-70b-versatile (hidden)" in out
    assert (
        "llama-3.3-70b-versatile → qwen3-32b → llama-4-scout-17b-16e-instruct → "
        "gpt-4.1-mini → claude-haiku-4-5"
    ) in out


def test_kept_models_warns_about_a_broken_config(capsys: pytest.CaptureFixture[str]) -> None:
    _write_config("[transport]\nretries = 'many'\n")
    assert main(["models"]) == 0
    assert "warning:" in capsys.readouterr().err
