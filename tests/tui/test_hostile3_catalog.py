"""Hostile inputs, round three, in the catalog: the health book shared by Kept processes
(a thousand failed walks, wrong-typed values written by hand or by another program),
config.toml's bounds, and a user model posing as a built-in."""

from __future__ import annotations

import json
import logging
import time
from typing import Any

import pytest

from app.cli.main import main
from catalog import Attempt, Kind, ModelEntry, Outcome
from catalog.config import CatalogConfig
from catalog.health import MAX_COOLDOWN, HealthBook, State
from memory import MemoryStore
from tests.fakes.provider import FakeProvider, http_error, text
from tests.support import configure_fake

MODEL = "gpt-4.1-mini"


@pytest.fixture
def configured(fake: FakeProvider, monkeypatch: pytest.MonkeyPatch) -> FakeProvider:
    configure_fake(fake, monkeypatch, f'[app]\nmodel = "{MODEL}"\n')
    MemoryStore().ensure()
    return fake


def no_traceback(err: str) -> None:
    assert "Traceback" not in err and "Error:" not in err, err


# --- health.json ---------------------------------------------------------------------------


def test_a_thousand_failed_walks_of_one_model_cap_its_cooldown_and_ask_still_answers(
    configured: FakeProvider, capsys: pytest.CaptureFixture[str]
) -> None:
    """3,000 imported sessions with the server down fail one model's walk 1,024 times:
    2**1024 is past any float, and every later failure used to crash `kept ask`."""
    book = HealthBook(MemoryStore().health_path)
    for _ in range(1_030):
        book.observe(Attempt(MODEL, "openai", Outcome.FAILED, Kind.CONNECTION))
    health = book.get(MODEL)
    assert health.state is State.COOLING and health.failures == 1_030
    assert health.until <= time.time() + MAX_COOLDOWN
    configured.default = http_error(500)
    assert main(["ask", "-m", MODEL, "--no-save", "Anyone there?"]) == 1
    out, err = capsys.readouterr()
    no_traceback(err)
    assert err.startswith("kept ask: no model could answer (")
    assert main(["log"]) == 0
    out, err = capsys.readouterr()
    assert f"{MODEL}: cooling down until" in out and " × 500" in out, out
    assert HealthBook(MemoryStore().health_path).get(MODEL).failures > 1_030


def test_a_cooldown_count_written_past_any_float_is_not_trusted(
    configured: FakeProvider, capsys: pytest.CaptureFixture[str]
) -> None:
    path = MemoryStore().health_path
    path.write_text(json.dumps({"version": 1, "models": {MODEL: {"cooldowns": 5000}}}))
    configured.default = http_error(500)
    assert main(["ask", "-m", MODEL, "--no-save", "Anyone there?"]) == 1
    no_traceback(capsys.readouterr().err)
    # The walk gave up: it cools down for the first, shortest pause, not for ever.
    health = HealthBook(path).get(MODEL)
    assert health.state is State.COOLING and health.until <= time.time() + MAX_COOLDOWN


WRONG = {
    "latencies-a-number": {"latencies": 5},
    "latencies-nan": {"latencies": [float("nan")] * 5},
    "latencies-negative": {"latencies": [-1.0] * 5},
    "latencies-strings": {"latencies": ["1", "2", "3"]},
    "cool-until-1e300": {"cool_until": 1e300, "failures": 2, "last": "500"},
    "cool-until-infinity": {"cool_until": float("inf")},
    "cool-until-text": {"cool_until": "soon"},
    "cool-until-negative": {"cool_until": -5},
    "probe-until-nan": {"probe_until": float("nan")},
    "failures-text": {"failures": "many"},
    "failures-null": {"failures": None},
    "failures-negative": {"failures": -3, "last": "500", "cool_until": 1.0},
    "failures-float": {"failures": 2.5},
    "last-a-list": {"last": ["500"], "failures": 1, "cool_until": 1.0},
    "last-escape": {"last": "\x1b]52;c;aGk=\x07", "failures": 1, "cool_until": 1.0},
    "refused-at-text": {"refused": "abc", "refused_at": "now"},
    "refused-at-future": {"refused": "abc", "refused_at": 1e300},
    "seen-text": {"seen": "yesterday"},
    "cooldowns-null": {"cooldowns": None, "cool_until": 1.0},
}


@pytest.mark.parametrize("record", WRONG.values(), ids=WRONG.keys())
def test_a_wrong_typed_health_record_is_read_as_healthy_with_a_warning(
    configured: FakeProvider,
    capsys: pytest.CaptureFixture[str],
    caplog: pytest.LogCaptureFixture,
    record: dict[str, object],
) -> None:
    path = MemoryStore().health_path
    path.write_text(json.dumps({"version": 1, "models": {MODEL: record}}))
    with caplog.at_level(logging.WARNING, logger="catalog.health"):
        assert main(["log"]) == 0
    out, err = capsys.readouterr()
    no_traceback(err)
    assert MODEL not in out, out  # an empty record: a healthy model, nothing to show
    warnings = [r.getMessage() for r in caplog.records if r.name == "catalog.health"]
    assert len(warnings) == 1 and "is read as healthy" in warnings[0], warnings
    configured.script(MODEL, text("Still here."))
    assert main(["ask", "-m", MODEL, "--no-save", "Hello?"]) == 0
    out, err = capsys.readouterr()
    no_traceback(err)
    assert out == "Still here.\n"
    # The answer replaced the untrusted record with one the book wrote.
    saved = json.loads(path.read_text())["models"][MODEL]
    assert saved["failures"] == 0 and isinstance(saved["latencies"], list)


# --- config.toml ---------------------------------------------------------------------------


def parsed(toml: str) -> CatalogConfig:
    import tomllib

    from catalog.config import parse_catalog_config

    return parse_catalog_config(tomllib.loads(toml))


def test_a_context_window_past_any_model_is_refused_in_one_sentence() -> None:
    """2**63 - 1 tokens used to be taken, and sent as max_tokens 9.2e18."""
    config = parsed('[[models]]\nid = "big"\ncontext_window = 9223372036854775807\n')
    assert config.user_models == ()
    assert config.problems == (
        "config.toml: [[models]] #1 (big) context_window must be a whole number from 256 "
        "to 10000000, not 9223372036854775807.",
    )
    (entry,) = parsed('[[models]]\nid = "big"\ncontext_window = 10000000\n').user_models
    assert entry.context_window == 10_000_000


INVISIBLE = {
    "zero-width-space": "gpt-5\u200b",
    "zero-width-joiner": "gpt\u200d-5",
    "bidi-isolate": "\u2066gpt-5\u2069",
    "right-to-left-mark": "gpt-5\u200f",
    "byte-order-mark": "\ufeffgpt-5",
    "soft-hyphen": "gpt\u00ad-5",
    "no-break-space": "gpt-5\u00a0",
    "trailing-space": "gpt-5 ",
    "hangul-filler": "gpt-5\u3164",
    "line-separator": "gpt-5\u2028",
}


@pytest.mark.parametrize("model_id", INVISIBLE.values(), ids=INVISIBLE.keys())
def test_a_model_id_with_invisible_characters_cannot_pose_as_a_built_in(model_id: str) -> None:
    from catalog import load_catalog
    from catalog.keys import KeyStore

    escaped = "".join(
        c if c.isascii() and c.isprintable() else f"\\u{ord(c):04x}" for c in model_id
    )
    config = parsed(f'[[models]]\nid = "{escaped}"\n')
    assert config.user_models == ()
    (problem,) = config.problems
    assert problem.startswith("config.toml: [[models]] #1 id must be an id such as")
    assert "invisible or format characters" in problem and problem.count(". ") == 0
    assert problem.isprintable()  # the id is shown escaped, never as a look-alike
    catalog = load_catalog(config, KeyStore(environ={}))
    assert [e.id for e in catalog.entries if "gpt" in e.id.lower() and "5" in e.id] == [
        "gpt-5",
        "gpt-5-mini",
    ]


async def test_a_user_models_label_equal_to_a_built_ins_is_told_apart_in_the_picker(
    fake: FakeProvider,
) -> None:
    from textual.widgets import OptionList

    from app.screens.model_picker import ModelPicker
    from catalog.config import local_model
    from catalog.models import MODEL_CATALOG
    from tests.support import make_app

    mine = replace_entry(local_model("my-gpt5", "openai"), label="GPT-5", tier="frontier")
    entries = (*MODEL_CATALOG, mine)

    async def scenario() -> dict[str, str]:
        app = make_app(fake, entries=entries)
        async with app.run_test() as pilot:
            app.push_screen(ModelPicker(app.catalog, app.model))
            await pilot.pause()
            options = app.screen.query_one(OptionList)
            found = (options.get_option_at_index(i) for i in range(options.option_count))
            return {str(o.id): str(o.prompt) for o in found}

    rows = await scenario()
    built_in, yours = rows["gpt-5"].split("\n")[0], rows["my-gpt5"].split("\n")[0]
    assert built_in.split()[:2] == ["GPT-5", "frontier"]
    assert "GPT-5 (yours)" in yours
    assert "your config.toml model 'my-gpt5'" in rows["my-gpt5"]
    assert "(yours)" not in rows["gpt-4.1"]


def replace_entry(entry: ModelEntry, **changes: Any) -> ModelEntry:
    from dataclasses import replace

    return replace(entry, **changes)


def test_a_user_label_with_invisible_characters_shows_without_them() -> None:
    (entry,) = parsed('[[models]]\nid = "mine"\nlabel = "GPT\\u200b-5\\u2069"\n').user_models
    assert entry.label == "GPT-5"


# --- a keyless gateway that is not this machine --------------------------------------------

REMOTE = """
[gateways.local]
base_url = "http://192.168.1.20:11434/v1"

[[models]]
id = "llama3.2"
"""


def test_a_keyless_model_at_another_host_is_not_called_local(
    configured: FakeProvider, capsys: pytest.CaptureFixture[str]
) -> None:
    from catalog import load_catalog
    from catalog.chains import consolidation_plan
    from catalog.keys import KeyStore

    catalog = load_catalog(parsed(REMOTE), KeyStore(environ={}))
    entry = catalog.get("llama3.2")
    assert entry.description == (
        "Your own model at 192.168.1.20 — not on this machine: transcripts are sent there"
    )
    lines = consolidation_plan(catalog).lines()
    (line,) = [x for x in lines if "llama3.2" in x]
    assert "your local model" not in line
    assert "your own model at 192.168.1.20, not on this machine: transcripts are sent" in line
    described = parsed(REMOTE + 'description = "The box in the hall"\n')
    entry = load_catalog(described, KeyStore(environ={})).get("llama3.2")
    assert entry.description == (
        "The box in the hall (at 192.168.1.20, not on this machine: transcripts are sent there)"
    )
    # On this machine (loopback by name or address) it stays "local".
    for url in ("http://127.0.0.1:8080/v1", "http://localhost:8080/v1", "http://[::1]:8/v1"):
        here = load_catalog(parsed(REMOTE.replace("http://192.168.1.20:11434/v1", url)))
        assert here.get("llama3.2").description == "Your own model on the local gateway"
    # kept doctor's look at the gateways says it too.
    from app.settings import config_path

    config_path().write_text(REMOTE)
    main(["doctor"])
    out = capsys.readouterr().out
    assert (
        "gateway local: no key needed; at 192.168.1.20, not on this machine: transcripts "
        "are sent there" in out
    )


@pytest.mark.parametrize("said", [2**63 - 1, 12, True])
def test_a_window_a_server_says_past_any_model_is_not_taken(fake: FakeProvider, said: int) -> None:
    from catalog.probe import probe_server
    from catalog.structured import learn_window, learned_window

    fake.served, fake.n_ctx = ["smollm2"], said
    probe = probe_server(fake.base_url("local"))
    assert [(m.id, m.context_window) for m in probe.models] == [("smollm2", None)]
    learn_window("openai/hostile-window", 2**63 - 1)
    assert learned_window("openai/hostile-window") is None
