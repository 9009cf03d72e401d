"""Model health: learned from attempts, shared through one file, used to order the walk."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

import catalog.health as health_module
from catalog import Attempt, Kind, ModelEntry, Outcome, Result, complete
from catalog.health import HealthBook, State
from tests.factories import MESSAGES, PAIR, Clock
from tests.fakes.provider import FakeProvider, hang, http_error, text
from tests.support import FAST_POLICY, fake_catalog, fake_keys

ROOT = Path(__file__).parents[2]


async def walk(
    fake: FakeProvider, book: HealthBook, entries: tuple[ModelEntry, ...] = PAIR, **kwargs: Any
) -> Result:
    kwargs.setdefault("policy", FAST_POLICY)
    return await complete(
        fake_catalog(fake, entries=entries, env=kwargs.pop("env", None)),
        "primary",
        MESSAGES,
        health=book,
        **kwargs,
    )


async def test_a_failing_model_costs_one_walk_then_goes_last(
    fake: FakeProvider, tmp_path: Path
) -> None:
    book = HealthBook(tmp_path / "health.json")
    fake.set_default("primary", http_error(500))
    first = await walk(fake, book)
    assert first.model == "backup" and fake.count(model="primary") == 2
    state = book.get("primary")
    assert state.state is State.COOLING and state.failures == 2
    assert "cooling down until" in state.describe() and "after 2 × 500" in state.describe()
    second = await walk(fake, book)
    assert second.model == "backup"
    assert fake.count(model="primary") == 2  # not asked again while it cools down
    assert [a.model for a in second.attempts] == ["backup"]


async def test_a_cooling_model_is_tried_last_not_dropped(
    fake: FakeProvider, tmp_path: Path
) -> None:
    book = HealthBook(tmp_path / "health.json")
    fake.set_default("primary", http_error(500))
    await walk(fake, book)
    fake.reset()
    fake.set_default("backup", http_error(500))
    fake.set_default("primary", text("still here"))
    result = await walk(fake, book)
    assert result.ok and result.model == "primary"
    assert result.reply is not None and result.reply.text == "still here"
    assert result.attempts[0].model == "backup"
    assert book.get("primary").state is State.HEALTHY  # an answer lets it back in


async def test_a_retry_after_with_a_fallback_becomes_a_cooldown_not_a_sleep(
    fake: FakeProvider, tmp_path: Path
) -> None:
    clock = Clock()
    book = HealthBook(tmp_path / "health.json", clock=clock)
    fake.set_default("primary", http_error(429, retry_after=900))
    policy = replace(FAST_POLICY, retry_after_cap=30.0)
    result = await walk(fake, book, policy=policy)
    assert result.model == "backup"
    assert fake.count(model="primary") == 1  # no retry, no sleep
    assert book.get("primary").until >= clock.now + 900


async def test_one_probe_after_the_cooldown_lets_a_model_back_in(
    fake: FakeProvider, tmp_path: Path
) -> None:
    clock = Clock()
    book = HealthBook(tmp_path / "health.json", clock=clock)
    fake.set_default("primary", http_error(500))
    await walk(fake, book)
    first_until = book.get("primary").until
    clock.now = first_until + 1
    assert book.get("primary").state is State.PROBE
    # Another process sees the probe claimed and keeps the model at the end meanwhile.
    other = HealthBook(tmp_path / "health.json", clock=clock)
    ordered, probes = book.order(PAIR)
    assert probes == {"primary"} and [e.id for e in ordered] == ["primary", "backup"]
    assert other.order(PAIR) == ([PAIR[1], PAIR[0]], set())
    book.observe(Attempt("primary", "openai", Outcome.CANCELLED, Kind.CANCELLED))
    # The probe fails: one request, and a cooldown twice as long.
    fake.reset()
    fake.set_default("primary", http_error(500))
    result = await walk(fake, book)
    assert result.model == "backup" and fake.count(model="primary") == 1
    assert book.get("primary").until - clock.now == 2 * health_module.COOLDOWN
    # The next probe answers: healthy again, at its place in the chain.
    clock.now = book.get("primary").until + 1
    fake.reset()
    fake.set_default("primary", text("back"))
    result = await walk(fake, book)
    assert result.model == "primary" and book.get("primary").state is State.HEALTHY


async def test_a_refused_key_is_written_off_until_the_key_changes(
    fake: FakeProvider, tmp_path: Path
) -> None:
    book = HealthBook(tmp_path / "health.json")
    fake.set_default("primary", http_error(401))
    assert (await walk(fake, book)).model == "backup"
    assert fake.count(model="primary") == 1
    assert book.get("primary").state is State.REFUSED
    again = await walk(fake, book)
    assert again.model == "backup" and fake.count(model="primary") == 1
    assert again.attempts[0].outcome is Outcome.SKIPPED
    assert "refused earlier" in again.attempts[0].reason
    keys = fake_keys()
    keys["OPENAI_API_KEY"] = "sk-test-a-new-key-0123456789"
    fake.set_default("primary", text("new key works"))
    result = await walk(fake, book, env=keys)
    assert result.model == "primary" and book.get("primary").state is State.HEALTHY
    assert "sk-test" not in (tmp_path / "health.json").read_text()  # never the key itself


async def test_the_deadline_follows_the_models_latency(
    fake: FakeProvider, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    book = HealthBook(tmp_path / "health.json")
    assert book.deadline("primary", 30.0) == 30.0  # nothing known yet
    for _ in range(3):
        book.observe(Attempt("primary", "openai", Outcome.OK, latency=0.01))
    assert book.deadline("primary", 30.0) == health_module.MIN_DEADLINE
    assert book.deadline("primary", 5.0) == 5.0  # capped by the configured deadline
    monkeypatch.setattr(health_module, "MIN_DEADLINE", 0.3)
    fake.set_default("primary", hang())
    result = await walk(fake, book)  # FAST_POLICY's deadline is 30 s
    assert result.model == "backup"
    failed = result.attempts[0]
    assert failed.kind is Kind.DEADLINE and "within 0.3 s" in failed.reason
    assert failed.latency < 20.0  # well under the 30 s policy deadline, on any machine


async def test_a_stream_gets_a_first_token_deadline(
    fake: FakeProvider, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    book = HealthBook(tmp_path / "health.json")
    for _ in range(3):
        book.observe(Attempt("primary", "openai", Outcome.OK, latency=0.01))
    monkeypatch.setattr(health_module, "MIN_DEADLINE", 0.3)
    fake.set_default("primary", hang())
    result = await walk(fake, book, stream=True)
    assert result.model == "backup"
    failed = result.attempts[0]
    assert failed.kind is Kind.DEADLINE and "no first token within 0.3 s" in failed.reason


def test_the_book_stays_small_and_survives_damage(tmp_path: Path) -> None:
    path = tmp_path / "health.json"
    path.write_text("{not json")
    book = HealthBook(path)
    assert book.all() == []
    for i in range(health_module.MAX_MODELS + 20):
        book.observe(Attempt(f"m{i}", "openai", Outcome.OK, latency=0.1))
    for _ in range(50):
        book.observe(Attempt("m0", "openai", Outcome.OK, latency=0.1))
    models = json.loads(path.read_text())["models"]
    assert len(models) == health_module.MAX_MODELS
    assert len(models["m0"]["latencies"]) == health_module.LATENCIES


def test_two_processes_never_lose_each_others_updates(tmp_path: Path) -> None:
    path = tmp_path / "health.json"
    code = (
        "import sys\nfrom pathlib import Path\nfrom catalog import Attempt, Outcome\n"
        "from catalog.health import HealthBook\n"
        "book = HealthBook(Path(sys.argv[1]))\n"
        "for i in range(40): book.observe(Attempt(f'{sys.argv[2]}{i}', 'openai', "
        "Outcome.OK, latency=0.1))\n"
    )
    children = [
        subprocess.Popen([sys.executable, "-c", code, str(path), name], cwd=ROOT)
        for name in ("a", "b")
    ]
    assert [child.wait(timeout=120) for child in children] == [0, 0]
    models = json.loads(path.read_text())["models"]
    assert {f"a{i}" for i in range(40)} | {f"b{i}" for i in range(40)} == set(models)


def _learned(book: HealthBook, model: str = "primary", latency: float = 0.05) -> None:
    for _ in range(3):
        book.observe(Attempt(model, "openai", Outcome.OK, latency=latency))


async def test_a_hedge_asks_the_next_model_when_the_first_is_late(
    fake: FakeProvider, tmp_path: Path
) -> None:
    book = HealthBook(tmp_path / "health.json")
    _learned(book)
    fake.set_default("primary", hang())
    fake.set_default("backup", text("from the backup"))
    result = await walk(fake, book, hedge=True)  # FAST_POLICY's deadline is 30 s
    assert result.ok and result.model == "backup"
    assert fake.count(model="primary") == 1 and fake.count(model="backup") == 1
    outcomes = sorted((a.model, a.outcome) for a in result.attempts)
    assert outcomes == [("backup", Outcome.OK), ("primary", Outcome.CANCELLED)]
    lost = next(a for a in result.attempts if a.model == "primary")
    assert "the other model of the hedge answered first" in lost.reason
    assert lost.prompt_tokens > 0 and lost.cost > 0  # the provider read the prompt
    assert lost.kind is Kind.LATE
    assert lost.latency < 20.0  # well under the 30 s policy deadline, on any machine
    assert result.cost == pytest.approx(sum(a.cost for a in result.attempts))
    assert book.get("primary").state is State.HEALTHY  # late once is no verdict
    await walk(fake, book, hedge=True)
    assert fake.count(model="primary") == 2
    late = book.get("primary")
    assert late.state is State.COOLING and late.describe().endswith("after 2 × late")
    assert (await walk(fake, book, hedge=True)).model == "backup"
    assert fake.count(model="primary") == 2  # late twice in a row: cooling down


async def test_a_model_that_answers_in_its_usual_time_is_not_hedged(
    fake: FakeProvider, tmp_path: Path
) -> None:
    book = HealthBook(tmp_path / "health.json")
    _learned(book, latency=5.0)
    fake.set_default("primary", text("in time"))
    result = await walk(fake, book, hedge=True)
    assert result.model == "primary" and fake.count(model="backup") == 0


async def test_a_model_not_known_yet_is_hedged_after_the_shortest_deadline(
    fake: FakeProvider, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    book = HealthBook(tmp_path / "health.json")
    monkeypatch.setattr(health_module, "MIN_DEADLINE", 0.3)
    fake.set_default("primary", hang())
    result = await walk(fake, book, hedge=True)  # FAST_POLICY's deadline is 30 s
    assert result.model == "backup"
    assert sorted((a.model, a.outcome) for a in result.attempts) == [
        ("backup", Outcome.OK),
        ("primary", Outcome.CANCELLED),
    ]
    primary = next(a for a in result.attempts if a.model == "primary")
    assert primary.latency < 20.0  # well under the 30 s policy deadline, on any machine
    # It waited the whole shortest deadline without a word: that is a verdict.
    assert book.get("primary").state is State.COOLING


async def test_a_model_with_its_own_deadline_is_not_hedged_before_its_p95_is_known(
    fake: FakeProvider, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    book = HealthBook(tmp_path / "health.json")
    monkeypatch.setattr(health_module, "MIN_DEADLINE", 0.1)
    slow = (replace(PAIR[0], deadline=0.5), PAIR[1])
    fake.set_default("primary", hang())
    result = await walk(fake, book, entries=slow, hedge=True)
    assert result.model == "backup"
    assert [(a.model, a.kind) for a in result.attempts] == [
        ("primary", Kind.DEADLINE),
        ("backup", None),
    ]


async def test_cancelling_a_hedged_walk_cancels_both_models(
    fake: FakeProvider, tmp_path: Path
) -> None:
    book = HealthBook(tmp_path / "health.json")
    _learned(book)
    fake.set_default("primary", hang())
    fake.set_default("backup", hang())
    attempts: list[Attempt] = []

    task = asyncio.create_task(
        complete(
            fake_catalog(fake, entries=PAIR),
            "primary",
            MESSAGES,
            policy=FAST_POLICY,
            health=book,
            hedge=True,
            on_attempt=attempts.append,
        )
    )
    assert await asyncio.to_thread(fake.wait_for_requests, 2)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert sorted((a.model, a.outcome, a.reason) for a in attempts) == [
        ("backup", Outcome.CANCELLED, "cancelled"),
        ("primary", Outcome.CANCELLED, "cancelled"),
    ]


def test_hedging_is_a_memory_setting() -> None:
    from memory.settings import MemorySettings, parse_memory_settings

    assert MemorySettings().hedge is True
    off, problems = parse_memory_settings({"memory": {"hedge": False}}, "c.toml")
    assert off.hedge is False and problems == []
    bad, problems = parse_memory_settings({"memory": {"hedge": "no"}}, "c.toml")
    assert bad.hedge is True
    assert problems == ["c.toml: [memory] hedge must be true or false, not 'no'."]


def test_a_request_that_lost_a_hedge_counts_in_the_figures() -> None:
    from memory import MemoryStore
    from memory.consolidation.log import figures

    store = MemoryStore().ensure()
    store.log(
        {
            "session": "s",
            "segment": "0-2",
            "model": "a",
            "outcome": "cancelled",
            "kind": "late",
            "latency": 0.5,
            "cost": 0.002,
        }
    )
    store.log(
        {
            "session": "s",
            "segment": "0-2",
            "model": "a",
            "outcome": "cancelled",
            "kind": "cancelled",
            "latency": 0.5,
            "cost": 0.0,
        }
    )
    (row,) = figures(store)
    assert (row.model, row.attempts, row.cost) == ("a", 1, 0.002)
