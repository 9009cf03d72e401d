"""The shell shows why too: `kept memory review` lists each proposed line with the user's
words it stands on and when they were said, the held lines' reason and the edits not kept;
`kept log` lists each session's dropped edits under its chain."""

from __future__ import annotations

from datetime import datetime
from typing import Any

import pytest

from app.cli.main import main
from memory import MemorySettings, MemoryStore
from memory.settings import Review
from tests.factories import held_proposal

OLD = "# Me\n- likes tea\n"
NEW = "# Me\n- Drinks coffee\n- Previously: likes tea (until 2026-12)\n- Lives in Lyon\n"
SAID = "2026-12-04T10:12:00+00:00"
RECORDS: tuple[dict[str, Any], ...] = (
    {
        "op": "add",
        "fate": "applied",
        "line": "Lives in Lyon",
        "evidence": [{"message": 1, "quote": "I moved to Lyon last month", "time": SAID}],
    },
    {
        "op": "replace",
        "fate": "held",
        "line": "Drinks coffee",
        "old": "likes tea",
        "why": "it is not clear the user said this of themselves",
        "evidence": [{"message": 3, "quote": "coffee [bold]now[/bold], not tea", "time": SAID}],
    },
    {
        "op": "add",
        "fate": "refused",
        "line": "Works in Vienna",
        "why": "'vienna' was never said by the user",
        "evidence": [],
    },
    {"op": "add", "fate": "unchanged", "line": "Likes tea", "why": "MEMORY.md says that already"},
)


def stamp(iso: str) -> str:
    return datetime.fromisoformat(iso).astimezone().strftime("%Y-%m-%d %H:%M")


def held_for_review(records: tuple[dict[str, Any], ...]) -> MemoryStore:
    return held_proposal(MemorySettings(review=Review.BEFORE), OLD, NEW, records)


def test_review_lists_each_line_with_the_words_it_stands_on(
    capsys: pytest.CaptureFixture[str],
) -> None:
    held_for_review(RECORDS)
    assert main(["memory", "review"]) == 0
    out = capsys.readouterr().out
    assert (
        "Your words behind these lines:\n"
        "+ Lives in Lyon\n"
        f"  “I moved to Lyon last month” — you, {stamp(SAID)}\n"
        "+ Drinks coffee (in place of 'likes tea')\n"
        f"  “coffee [bold]now[/bold], not tea” — you, {stamp(SAID)}\n"
        "  Kept could not check this by itself: it is not clear the user said this of "
        "themselves; it waits for your review.\n"
        "Not kept:\n"
        "  add 'Works in Vienna': 'vienna' was never said by the user\n"
    ) in out
    assert "Likes tea" not in out  # nothing to do: not a line of the change
    assert "\x1b" not in out  # plain text, no colour or markup
    assert out.index("+++ proposed") < out.index("Your words") < out.index("--accept")


def test_review_of_a_proposal_without_records_shows_the_diff_only(
    capsys: pytest.CaptureFixture[str],
) -> None:
    held_for_review(())
    assert main(["memory", "review"]) == 0
    out = capsys.readouterr().out
    assert "+- Lives in Lyon" in out
    assert "Your words" not in out and "Not kept" not in out and "— you" not in out


def test_log_lists_the_edits_dropped_under_the_sessions_chain(
    capsys: pytest.CaptureFixture[str],
) -> None:
    store = MemoryStore().ensure()
    for record in (
        {"model": "qwen3-32b", "outcome": "rejected", "reason": "did not call save_memory"},
        {"model": "gpt-4.1-mini", "outcome": "ok", "latency": 4.1, "cost": 0.0008},
        {
            "model": "gpt-4.1-mini",
            "outcome": "dropped",
            "kind": "dropped_edit",
            "reason": "add 'Works in Vienna': 'vienna' was never said by the user",
        },
        {
            "model": "gpt-4.1-mini",
            "outcome": "dropped",
            "kind": "dropped_edit",
            "reason": "forget 'Name: Ana': the user did not ask to forget it",
        },
        {"model": "claude-haiku-4-5", "outcome": "ok", "purpose": "second_opinion"},
    ):
        store.log({"session": "s1", "segment": "0-2", **record})
    store.log({"session": "s2", "segment": "0-4", "model": "gpt-4.1-mini", "outcome": "ok"})
    assert main(["log"]) == 0
    out = capsys.readouterr().out
    assert (
        "s1 [0-2] saved: qwen3-32b → did not call save_memory → gpt-4.1-mini ✓ 4.1 s $0.0008 "
        "→ second opinion by claude-haiku-4-5 ✓\n"
        "  dropped: add 'Works in Vienna': 'vienna' was never said by the user\n"
        "  dropped: forget 'Name: Ana': the user did not ask to forget it\n"
        "s2 [0-4] saved: "
    ) in out
    assert out.count("dropped:") == 2
