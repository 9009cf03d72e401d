"""The catalog says why no model can save memory as a kind; the app words the next step,
in the chat's words (its slash commands) or the shell's (commands to type)."""

from __future__ import annotations

import pytest

from app.cli.main import main
from app.words.models import app_model_problem, chain_fix
from catalog import Catalog
from catalog.chains import Blocked, consolidation_plan
from catalog.config import CatalogConfig
from catalog.keys import KeyStore
from catalog.models import MODEL_CATALOG
from memory import MemoryStore

CHAT_NO_MODEL = (
    "No model can save memory: add a key with /keys (or `export GROQ_API_KEY=…`), "
    "or point Kept at a local server from the welcome screen."
)


def test_the_catalog_says_why_as_a_kind_and_the_chat_words_it_as_before() -> None:
    plan = consolidation_plan(Catalog(MODEL_CATALOG, CatalogConfig(), KeyStore(environ={})))
    assert plan.blocked is Blocked.NO_MODEL
    assert chain_fix(plan.blocked) == CHAT_NO_MODEL  # the TUI's text, unchanged
    for kind in (Blocked.NO_MODEL, Blocked.UNREACHABLE):
        assert "/keys" in chain_fix(kind) and "/keys" not in chain_fix(kind, shell=True)
    assert chain_fix(Blocked.NOT) == chain_fix(Blocked.NOT, shell=True) == ""


def test_doctor_tells_a_shell_user_what_to_type_not_a_chat_command(
    capsys: pytest.CaptureFixture[str],
) -> None:
    from app.settings import config_path

    MemoryStore().ensure()
    config_path().parent.mkdir(parents=True, exist_ok=True)
    config_path().write_text('[app]\nmodel = "gpt-9-ultra"\n')
    assert main(["doctor"]) == 1
    out = capsys.readouterr().out
    assert "  problem: No model can save memory: add a key with `keyring set kept <gateway>`" in out
    assert "[app] model 'gpt-9-ultra' is not a model Kept knows" in out
    assert "Pick one from `kept models`." in out
    assert "/keys" not in out and "/model" not in out and "welcome screen" not in out


def test_the_app_says_an_unknown_model_with_its_own_command() -> None:
    assert app_model_problem("gpt-9").endswith("using the default. Pick one with /model.")


def test_a_missing_key_is_a_fact_the_app_words_for_the_chat_or_the_shell() -> None:
    from app.words.models import missing_key
    from catalog.gateways import GATEWAYS

    openai = GATEWAYS["openai"]
    found = KeyStore(environ={}).lookup(openai)
    assert found.missing and not found.usable
    assert found.problem == (  # the fact, in no surface's words
        "No key for OpenAI: none in the OS keyring or the OPENAI_API_KEY environment variable."
    )
    assert missing_key(openai) == (
        "No key for OpenAI: add one with /keys or the OPENAI_API_KEY environment variable."
    )
    assert missing_key(openai, shell=True) == (
        "No key for OpenAI: store one with `keyring set kept openai` or set OPENAI_API_KEY."
    )
    assert not KeyStore(environ={"OPENAI_API_KEY": " x "}).lookup(openai).missing  # a bad key
