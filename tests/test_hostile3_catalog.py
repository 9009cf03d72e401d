"""Hostile inputs, round three, in the catalog: the health book shared by Kept processes
(a thousand failed walks, wrong-typed values written by hand or by another program),
config.toml's bounds, and a user model posing as a built-in."""

from __future__ import annotations

import json
import logging
import time

import pytest

from app.cli import main
from catalog import Attempt, Kind, Outcome
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
    configured, capsys
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


def test_a_cooldown_count_written_past_any_float_is_not_trusted(configured, capsys) -> None:
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
    configured, capsys, caplog, record
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
