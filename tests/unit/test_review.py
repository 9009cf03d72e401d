"""Review: a change held as a proposal until accepted, edited or rejected (nothing lost across
a restart); `kept memory review`; `kept memory tidy` through the real chain."""

from __future__ import annotations

import json

import pytest

from app.cli.main import main
from memory import Consolidation, MemorySettings, MemoryStore, consolidate_pending
from memory.consolidation.review import StaleProposal, accept, line_change, proposals, reject
from memory.consolidation.tidy import apply_tidy, tidy
from memory.sessions.journal import Journal
from memory.settings import Review, parse_memory_settings
from tests.fakes.provider import FakeProvider, text, tool_call
from tests.support import (
    FAST_POLICY,
    configure_fake,
    fake_catalog,
    pending_session,
    rewrite_args,
)

BEFORE = MemorySettings(attempt_deadline=5.0, review=Review.BEFORE)
OLD = "# Me\n- likes tea\n"
NEW = "# Me\n- likes tea\n- Name: Ana\n"
ADD_ANA = {
    "history_entry": "The user introduced themselves.",
    "edits": [
        {
            "op": "add",
            "line": "Name: Ana",
            "evidence": [{"message": 1, "quote": "Je m'appelle Ana"}],
        }
    ],
}


async def run_pending(store: MemoryStore, fake: FakeProvider) -> list[Consolidation]:
    return await consolidate_pending(store, fake_catalog(fake), policy=FAST_POLICY)


@pytest.fixture
async def proposed(fake: FakeProvider) -> tuple[MemoryStore, Journal]:
    """A session consolidated with review = "before": its change waits as a proposal."""
    store = MemoryStore(settings=BEFORE).ensure()
    store.write_memory(OLD)
    journal = pending_session(store)
    fake.default = tool_call("save_memory", ADD_ANA)
    (result,) = await run_pending(store, fake)
    assert result.proposed and not result.saved
    return store, journal


async def test_a_proposal_waits_and_survives_a_restart(
    proposed: tuple[MemoryStore, Journal], fake: FakeProvider
) -> None:
    store, journal = proposed
    assert store.memory_path.read_text() == OLD and store.history_entries() == []
    assert store.find_session(journal.id).state == "pending"
    requests = len(fake.requests)
    assert await run_pending(store, fake) == []  # waiting for the user, not for a model
    assert len(fake.requests) == requests
    (waiting,) = proposals(MemoryStore(settings=BEFORE))  # as a new process sees it
    assert waiting.session == journal.id and waiting.memory_update == NEW
    assert waiting.change == line_change(OLD, NEW) and str(waiting.change) == "+1 −0 lines"


def test_accepting_commits_it_as_a_consolidation(proposed: tuple[MemoryStore, Journal]) -> None:
    store, journal = proposed
    (waiting,) = proposals(store)
    accept(store, waiting)
    assert store.memory_path.read_text() == NEW
    assert store.history_entries()[0].body.endswith("The user introduced themselves.")
    assert store.versions()[-1].source == "consolidation"
    assert store.versions()[-1].session == journal.id
    assert store.find_session(journal.id).state == "consolidated"
    assert proposals(store) == []


def test_a_crash_after_accepting_leaves_no_proposal_behind(
    proposed: tuple[MemoryStore, Journal],
) -> None:
    store, _ = proposed
    (waiting,) = proposals(store)
    kept = waiting.path.read_bytes()
    accept(store, waiting)
    waiting.path.write_bytes(kept)  # as if Kept died before deleting it
    assert proposals(store) == [] and not waiting.path.exists()
    assert store.memory_path.read_text() == NEW and len(store.history_entries()) == 1


def test_accepting_an_edit_saves_the_edit(proposed: tuple[MemoryStore, Journal]) -> None:
    store, _ = proposed
    (waiting,) = proposals(store)
    accept(store, waiting, "# Me\n- likes tea\n- Name: Ana María\n")
    assert store.memory_path.read_text() == "# Me\n- likes tea\n- Name: Ana María\n"
    assert store.versions()[-1].source == "consolidation, edited by you"


def test_rejecting_leaves_memory_and_history_and_keeps_the_journal(
    proposed: tuple[MemoryStore, Journal],
) -> None:
    store, journal = proposed
    (waiting,) = proposals(store)
    reject(store, waiting)
    assert store.memory_path.read_text() == OLD and store.history_entries() == []
    reloaded = store.find_session(journal.id)
    assert reloaded.state == "consolidated" and reloaded.path.parent == store.done_dir
    assert len(reloaded.messages) == 5
    assert '"rejected":true' in reloaded.path.read_text()
    assert proposals(store) == []


async def test_a_proposal_made_before_an_edit_is_never_applied(
    proposed: tuple[MemoryStore, Journal], fake: FakeProvider
) -> None:
    store, journal = proposed
    (waiting,) = proposals(store)
    store.memory_path.write_text("# Me\n- likes COFFEE\n")
    with pytest.raises(StaleProposal, match="consolidated again"):
        accept(store, waiting)
    assert store.memory_path.read_text() == "# Me\n- likes COFFEE\n"
    assert store.find_session(journal.id).state == "pending"
    (again,) = await run_pending(store, fake)  # proposed anew, against the edited text
    assert again.proposed
    asked = [r for r in fake.requests if not r.judging]  # not the second opinions
    assert "likes COFFEE" in json.dumps(asked[-1].body["messages"])
    assert proposals(store)[0].base_text == "# Me\n- likes COFFEE\n"


def test_review_setting_is_validated() -> None:
    settings, problems = parse_memory_settings({"memory": {"review": "before"}}, "c.toml")
    assert settings.review is Review.BEFORE and problems == []
    settings, problems = parse_memory_settings({"memory": {"review": "sometimes"}}, "c.toml")
    assert settings.review is Review.AUTO
    assert problems == [
        'c.toml: [memory] review must be "after" or "before" or "auto", not \'sometimes\'.'
    ]
    # The default: a local model's or a refused model's change waits (memory.consolidation.trust).
    assert MemorySettings().review is Review.AUTO


@pytest.fixture
def configured(fake: FakeProvider, monkeypatch: pytest.MonkeyPatch) -> FakeProvider:
    configure_fake(fake, monkeypatch, '[memory]\nreview = "before"\n')
    return fake


def test_review_commands_list_accept_and_reject(
    configured: FakeProvider, capsys: pytest.CaptureFixture[str]
) -> None:
    store = MemoryStore().ensure()
    store.write_memory(OLD)
    first, second = pending_session(store), pending_session(store)
    configured.default = tool_call("save_memory", ADD_ANA)
    assert main(["consolidate", first.id]) == 0
    assert "a memory change is proposed and waits for your review" in capsys.readouterr().out
    assert main(["log"]) == 0
    assert f"{first.id} [0-5] 5 messages, awaiting your review" in capsys.readouterr().out
    assert main(["memory", "review"]) == 0
    out = capsys.readouterr().out
    assert f"Session {first.id} [0-5] by llama-3.3-70b-versatile: +1 −0 lines" in out
    assert "+- Name: Ana" in out
    assert main(["memory", "review", "--reject", first.id]) == 0
    assert store.memory_path.read_text() == OLD
    assert main(["consolidate", second.id]) == 0
    assert main(["memory", "review", "--accept", second.id]) == 0
    assert store.memory_path.read_text() == NEW
    capsys.readouterr()
    assert main(["memory", "review", "--accept", second.id]) == 2
    assert "no change of session" in capsys.readouterr().err
    assert main(["memory", "review"]) == 0
    assert capsys.readouterr().out == "No memory change waits for review.\n"


# --- tidy ----------------------------------------------------------------------------------

MESSY = (
    "# About Ana\n- Lives in Zürich\n- Drinks green tea\n- drinks green tea every day\n"
    "- Lives in Lisbon since November\n- Plays the cello\n- Works as a nurse\n"
    "- Prefers short answers\n- Has a cat called Miso\n- Likes hiking in the Alps\n"
)
TIDY = (
    "# About Ana\n- Lives in Lisbon (since November)\n- Drinks green tea every day\n"
    "- Plays the cello\n- Works as a nurse\n- Prefers short answers\n"
    "- Has a cat called Miso\n- Likes hiking in the Alps\n"
)


async def test_tidy_goes_through_the_chain_and_the_shrink_guard(fake: FakeProvider) -> None:
    store = MemoryStore(settings=MemorySettings(attempt_deadline=5.0)).ensure()
    store.write_memory(MESSY)
    fake.set_default(
        "llama-3.3-70b-versatile",
        tool_call("save_memory", rewrite_args(entry="Dropped everything.", memory="# Ana\n")),
    )  # would drop most of memory
    fake.set_default("qwen/qwen3-32b", text("Sure, here is a tidier memory."))
    fake.default = tool_call("save_memory", rewrite_args(entry="Merged duplicates.", memory=TIDY))
    result = await tidy(store, fake_catalog(fake), policy=FAST_POLICY)
    assert result.ok and result.text == TIDY and result.summary == "Merged duplicates."
    assert result.model == "llama-4-scout-17b-16e-instruct"
    assert "would drop most of MEMORY.md" in result.attempts[0].reason
    assert "Drinks green tea" in json.dumps(fake.requests[0].body["messages"])
    assert store.memory_path.read_text() == MESSY  # nothing written until accepted
    assert apply_tidy(store, result)
    assert store.memory_path.read_text() == TIDY
    assert store.versions()[-1].source == "tidy"
    assert store.versions()[-1].model == "llama-4-scout-17b-16e-instruct"
    assert store.versions()[-2].path.read_text() == MESSY


async def test_a_tidy_never_overwrites_an_edit_made_meanwhile(fake: FakeProvider) -> None:
    store = MemoryStore(settings=MemorySettings(attempt_deadline=5.0)).ensure()
    store.write_memory(MESSY)
    fake.default = tool_call("save_memory", rewrite_args(entry="Merged.", memory=TIDY))
    result = await tidy(store, fake_catalog(fake), policy=FAST_POLICY)
    assert result.ok  # a tidy to apply, were MEMORY.md not edited meanwhile
    store.memory_path.write_text(MESSY + "- Learning Portuguese\n")
    assert not apply_tidy(store, result)
    assert store.memory_path.read_text().endswith("- Learning Portuguese\n")


async def test_tidy_of_an_empty_memory_asks_nothing(fake: FakeProvider) -> None:
    store = MemoryStore().ensure()
    result = await tidy(store, fake_catalog(fake), policy=FAST_POLICY)
    assert not result.ok and "empty" in result.reason and fake.requests == []


def test_tidy_command_shows_the_diff_and_writes_only_when_accepted(
    configured: FakeProvider, capsys: pytest.CaptureFixture[str]
) -> None:
    store = MemoryStore().ensure()
    store.write_memory(MESSY)
    configured.default = tool_call("save_memory", rewrite_args(entry="Merged.", memory=TIDY))
    assert main(["memory", "tidy"]) == 1  # not a terminal, no --yes: shown, not written
    out = capsys.readouterr().out
    assert "-- Drinks green tea" in out and "+- Drinks green tea every day" in out
    assert "Not applied" in out and store.memory_path.read_text() == MESSY
    assert main(["memory", "tidy", "--yes"]) == 0
    assert store.memory_path.read_text() == TIDY
    configured.default = tool_call("save_memory", rewrite_args(entry="Nothing.", memory=TIDY))
    assert main(["memory", "tidy", "--yes"]) == 0
    assert "already tidy" in capsys.readouterr().out
