"""`kept eval memory --edits`: Kept's edit checks on both sides, per category, with no model
(what CI runs), and with a judge's second opinion."""

from __future__ import annotations

import importlib
import json
from pathlib import Path

import pytest

from app.cli.main import main
from memory.consolidation.decisions import Fate
from memory.consolidation.evidence import Verdict
from memory.consolidation.judge import pairs
from memory.consolidation.quotes import Quote, Said, find_quote
from memory.eval.edits import Case, decide, load_cases, run_edits
from tests.fakes.provider import FakeProvider
from tests.support import configure_fake

GOOD = {
    "plain", "paraphrase", "resolved_date", "abbreviation", "german", "japanese",
    "cross_language", "fix_user_line", "change", "forget_requested", "preference",
    "negation_kept",
}  # fmt: skip
BAD = {
    "hallucinated", "misattributed", "flipped", "injected_paste", "injected_tool", "stale",
    "unrequested_forget", "junk", "credential", "directive_unasked", "duplicate",
}  # fmt: skip


@pytest.fixture(scope="module")
def cases() -> list[Case]:
    return load_cases()


def test_the_shipped_data_is_broad_and_its_good_quotes_are_the_users(cases: list[Case]) -> None:
    categories = {(e.good, e.category) for c in cases for e in c.edits}
    assert {c for g, c in categories if g} == GOOD and {c for g, c in categories if not g} == BAD
    assert len(cases) >= 100 and {c.split for c in cases} == {"dev", "test"}
    assert len({c.language for c in cases}) >= 7
    for case in cases:
        said = Said.of(case.messages)
        for labelled in case.edits:
            if not labelled.good:
                continue
            for quote in labelled.item.get("evidence", []):
                found = find_quote(Quote(quote["message"], quote["quote"]), said)
                assert not isinstance(found, str), (case.id, found)


def test_kept_alone_keeps_the_bad_out_and_refuses_few_good_ones(cases: list[Case]) -> None:
    """The floor Kept's own checks hold on both halves; the figures are printed by `make
    bench` and the README beside the word-overlap checks they replace."""
    report = run_edits(cases)
    kept_out, bad = report.side(False)
    assert kept_out / bad >= 0.93
    for (good, category), counted in report.tallies.items():
        if not good and category in ("injected_paste", "injected_tool", "credential"):
            assert counted.share == 1.0, counted.misses  # never, whatever else
        if good:  # a good edit Kept cannot tell waits for the user; it is rarely lost
            refused = counted.fates[Fate.REFUSED]
            assert refused <= max(3, 0.3 * counted.total), (category, counted.misses)
    assert report.whole_refusals <= 2


def test_a_judge_that_vouches_applies_what_kept_held_and_nothing_it_refused(
    cases: list[Case],
) -> None:
    case = next(c for c in cases if any(d.fate is Fate.HELD for d in decide(c)))
    alone = decide(case)
    held = [i for i, d in enumerate(alone) if d.fate is Fate.HELD]
    vouched = decide(case, dict.fromkeys(held, Verdict.CHECKED))
    assert all(vouched[i].fate in (Fate.APPLIED, Fate.UNCHANGED) for i in held)
    assert [d.fate for d in vouched if d.fate is Fate.REFUSED] == [
        d.fate for d in alone if d.fate is Fate.REFUSED
    ]


def test_the_cli_prints_each_category_and_writes_the_report(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "edits.json"
    assert main(["eval", "memory", "--edits", "--split", "test", "--json", str(out)]) == 0
    printed = capsys.readouterr()
    assert "conversations (test); no model is asked" in printed.err
    for category in GOOD | BAD:
        assert f" {category} " in printed.out
    assert (
        "Good edits applied: " in printed.out and "Bad edits kept out of MEMORY.md: " in printed.out
    )
    report = json.loads(out.read_text())
    assert report["cases"] == len([c for c in load_cases() if c.split == "test"])
    assert set(report["categories"]) == GOOD | BAD


def test_the_cli_asks_a_judge_through_the_chain_code(
    fake: FakeProvider, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """The fake's judge agrees with every pair: nothing is held any more, and what Kept
    refused stays refused (a judge can only vouch for what Kept could not tell)."""
    configure_fake(fake, monkeypatch)
    # Imported before the clock starts: a busy machine's first import is not under test.
    importlib.import_module("litellm")
    dev = [c for c in load_cases() if c.split == "dev"]
    alone = run_edits(dev)
    assert main(["eval", "memory", "--edits", "--split", "dev", "--judge", "gpt-4.1-mini"]) == 0
    printed = capsys.readouterr()
    assert "gpt-4.1-mini gives a second opinion" in printed.err
    assert fake.count(judging=True) == sum(1 for c in dev if pairs(decide(c)))
    refused = sum(t.fates[Fate.REFUSED] for t in alone.tallies.values())
    assert f"Replies refused whole: {alone.whole_refusals} of {len(dev)}." in printed.out
    rows = [line.split() for line in printed.out.splitlines() if line.startswith(("good", "bad"))]
    assert all(row[4] == "0" for row in rows)  # held: none
    assert sum(int(row[5]) for row in rows) == refused


@pytest.mark.parametrize(
    ("content", "why"),
    [("{", "cannot be read as JSON"), ('{"cases": [{"id": 1}]}', "case 1")],
)
def test_a_data_file_kept_cannot_use_is_one_sentence(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], content: str, why: str
) -> None:
    bad = tmp_path / "edits.json"
    bad.write_text(content)
    assert main(["eval", "memory", "--edits", "--data", str(bad)]) == 2
    err = capsys.readouterr().err
    assert why in err and "Traceback" not in err and len(err.strip().splitlines()) == 1
