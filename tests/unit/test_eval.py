"""`kept eval memory` through the real consolidation and chat code, against the loopback fake
provider answering as an oracle: a perfect model scores everything, a model that only ever
adds loses exactly the facts that changed, and bad data files are one sentence."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from app.cli.main import main
from memory.eval import (
    SHIPPED,
    Category,
    Dataset,
    DatasetError,
    Question,
    Report,
    load_dataset,
    strictly_right,
    verdict,
)
from tests.fakes.oracle import FIXTURE, MODEL, Oracle, evaluate
from tests.fakes.provider import FakeProvider
from tests.support import configure_fake

JUDGE = "claude-haiku-4-5"  # Anthropic wire format


def scores(report: Report) -> dict[str, float]:
    return {c.category: c.strict for c in report.categories()}


def assert_perfect(report: Report, dataset: Dataset) -> None:
    wrong = [(a.persona, a.question, a.text) for a in report.answers if not a.strict]
    assert wrong == []
    assert all(s.saved for s in report.sessions), [s.reason for s in report.sessions]
    assert len(report.sessions) == sum(len(p.sessions) for p in dataset.personas)
    kept, users = report.user_lines
    grounded, added = report.grounded
    assert kept == users > 0
    assert grounded == added > 0, [p.ungrounded for p in report.personas]


@pytest.fixture(scope="module")
def fixture() -> Dataset:
    return load_dataset(FIXTURE)


def test_the_fixture_asks_every_category(fixture: Dataset) -> None:
    asked = {q.category for p in fixture.personas for q in p.questions}
    assert asked == set(Category) and len(fixture.personas) == 2


async def test_an_oracle_scores_everything(fake: FakeProvider, fixture: Dataset) -> None:
    oracle = Oracle(fixture)
    report = await evaluate(fake, fixture, oracle)
    assert_perfect(report, fixture)
    assert set(scores(report).values()) == {1.0}
    assert {"consolidation", "chat"} <= set(oracle.kinds)
    # Questions go through the chat: dates were looked up with search_history.
    assert all(a.searches for a in report.answers if a.category is Category.DATE)
    assert all(a.model == MODEL and a.tokens > 0 for a in report.answers)
    # Each question is the only message of a session of its own.
    chats = [r for r in fake.requests if "search_history" in json.dumps(r.body.get("tools"))]
    assert len(chats) >= len(report.answers)
    assert all(sum(m["role"] == "user" for m in r.body["messages"]) == 1 for r in chats)


async def test_a_lossy_model_loses_only_what_changed(fake: FakeProvider, fixture: Dataset) -> None:
    perfect = scores(await evaluate(fake, fixture, Oracle(fixture)))
    lossy_report = await evaluate(fake, fixture, Oracle(fixture, lossy=True))
    lossy = scores(lossy_report)
    assert lossy[Category.CHANGED] < perfect[Category.CHANGED]
    assert {k: v for k, v in lossy.items() if k not in (Category.CHANGED, "all")} == {
        k: v for k, v in perfect.items() if k not in (Category.CHANGED, "all")
    }
    assert all(s.saved for s in lossy_report.sessions)


@pytest.mark.skipif(not SHIPPED.exists(), reason=f"{SHIPPED} is not there yet")
async def test_an_oracle_scores_everything_on_the_shipped_personas(fake: FakeProvider) -> None:
    dataset = load_dataset()
    asked = {q.category for p in dataset.personas for q in p.questions}
    assert asked == set(Category)
    assert_perfect(await evaluate(fake, dataset, Oracle(dataset)), dataset)


@pytest.mark.skipif(not SHIPPED.exists(), reason=f"{SHIPPED} is not there yet")
async def test_a_lossy_model_loses_only_what_changed_on_the_shipped_personas(
    fake: FakeProvider,
) -> None:
    # A question of another category whose answer only a replace or a forget brings would
    # break what the README promises: dropping every change costs on "changed" alone.
    dataset = load_dataset()
    lossy = scores(await evaluate(fake, dataset, Oracle(dataset, lossy=True)))
    assert lossy[Category.CHANGED] < 1.0
    assert {k: v for k, v in lossy.items() if k not in (Category.CHANGED, "all")} == {
        c.value: 1.0 for c in Category if c is not Category.CHANGED
    }


async def test_the_judge_is_asked_through_the_catalog(fake: FakeProvider, fixture: Dataset) -> None:
    one = fixture.only(["ben"])
    report = await evaluate(fake, one, Oracle(one), judge=JUDGE)
    assert all(a.judged is True for a in report.answers)
    assert fake.count(JUDGE, gateway="anthropic") == len(one.personas[0].questions)
    assert {c.judge for c in report.categories()} == {1.0}


BAD_FILES = {
    "not JSON": ("{", "is not valid JSON (line 1)"),
    "neither format": ("[1, 2]", "is neither a Kept eval dataset"),
    "version": ('{"version": 2, "personas": []}', "Kept reads version 1"),
    "no personas": ('{"version": 1, "personas": []}', "'personas' is empty"),
    "category": (
        {"category": "trivia"},
        "persona 1 ('ana'), question 1: 'category' is 'trivia', not one of current",
    ),
    "keywords": ({"keywords": []}, "question 1 has no 'keywords'"),
    "quote": (
        {"old": "Lives in Faro."},
        "persona 'ana', session 3, edit 1: 'old' quotes 'Lives in Faro.', which MEMORY.md",
    ),
    "time": ({"time": "yesterday"}, "session 1: 'time' 'yesterday' is not an ISO 8601 date"),
    "role": ({"role": "system"}, "session 1, message 1: 'role' is 'system'"),
    "locomo date": (
        [{"conversation": {"session_1": [{"speaker": "A", "text": "hi"}]}, "qa": []}],
        "sample 1 ('sample-1'): 'session_1_date_time' is None, not a date like",
    ),
}


def _broken(change: Any) -> str:
    """The fixture with one mistake in it (or a whole file, when given as text or a list)."""
    if isinstance(change, str):
        return change
    if isinstance(change, list):
        return json.dumps(change)
    data = json.loads(FIXTURE.read_text())
    ana = data["personas"][0]
    for key, value in change.items():
        if key in ("category", "keywords"):
            ana["questions"][0][key] = value
        elif key == "old":
            ana["sessions"][2]["edits"][0]["old"] = value
        elif key == "time":
            ana["sessions"][0]["time"] = value
        elif key == "role":
            ana["sessions"][0]["messages"][0]["role"] = value
    return json.dumps(data)


@pytest.mark.parametrize("case", BAD_FILES)
def test_a_bad_data_file_is_one_sentence(
    tmp_path: Path, case: str, capsys: pytest.CaptureFixture[str]
) -> None:
    change, expected = BAD_FILES[case]
    path = tmp_path / "data.json"
    path.write_text(_broken(change))
    with pytest.raises(DatasetError) as caught:
        load_dataset(path)
    message = str(caught.value)
    assert message.startswith(str(path)) and expected in message, message
    assert message.endswith(".") and "\n" not in message
    assert main(["eval", "memory", "--data", str(path)]) == 2
    err = capsys.readouterr().err
    assert err == f"kept eval memory: {message}\n"


def test_a_missing_data_file_or_persona_is_one_sentence(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    missing = tmp_path / "nowhere.json"
    assert main(["eval", "memory", "--data", str(missing)]) == 2
    assert capsys.readouterr().err == f"kept eval memory: {missing} does not exist.\n"
    assert main(["eval", "memory", "--data", str(FIXTURE), "--persona", "zoe"]) == 2
    err = capsys.readouterr().err
    assert err == f"kept eval memory: {FIXTURE} has no persona 'zoe'; it has 'ana', 'ben'.\n"


def test_a_model_that_cannot_be_asked_is_one_sentence(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["eval", "memory", "--data", str(FIXTURE), "--model", "gpt-9"]) == 2
    assert "kept eval memory: Unknown model 'gpt-9'." in capsys.readouterr().err
    assert main(["eval", "memory", "--data", str(FIXTURE), "--model", MODEL]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"kept eval memory: {MODEL} cannot be asked: ") and err.count("\n") == 1


def test_the_cli_prints_the_table_and_writes_the_report(
    fake: FakeProvider,
    fixture: Dataset,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    configure_fake(fake, monkeypatch, f'[app]\nmodel = "{MODEL}"\n')
    fake.responder = oracle = Oracle(fixture)
    out = tmp_path / "report.json"
    args = ["eval", "memory", "--data", str(FIXTURE), "--judge", JUDGE, "--json", str(out)]
    assert main(args) == 0
    assert oracle.errors == []
    printed = capsys.readouterr().out
    for category in [*Category, "all"]:
        assert re.search(rf"^{category} +\d+ +100% +100% ", printed, re.M), printed
    assert "Your own lines kept in MEMORY.md: 7/7 (100%)" in printed
    assert "Sessions: 5 saved, 0 pending." in printed
    report = json.loads(out.read_text())
    assert report["model"] == MODEL and report["judge"] == JUDGE
    assert {c["category"] for c in report["categories"]} == {*Category, "all"}
    assert report["memory"]["sessions_saved"] == 5
    ana = report["personas"][0]
    assert "- Lives in Porto." in ana["memory"]
    assert len(ana["answers"]) == len(fixture.personas[0].questions)
    assert {"question", "text", "strict", "judged", "tokens", "cost", "seconds"} <= set(
        ana["answers"][0]
    )


def test_the_model_not_answering_at_all_is_one_sentence(
    fake: FakeProvider,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    from tests.fakes.provider import http_error

    configure_fake(fake, monkeypatch)
    fake.default = http_error(401)
    out = tmp_path / "report.json"
    args = ["eval", "memory", "--data", str(FIXTURE), "--model", MODEL, "--json", str(out)]
    assert main(args) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err.splitlines()[-1].startswith(
        f"kept eval memory: {MODEL} saved no session and answered no question: "
    )
    # The first persona told: the second was not replayed for nothing.
    assert [p["name"] for p in json.loads(out.read_text())["personas"]] == ["ana"]


LOCOMO = [
    {
        "sample_id": "conv-1",
        "conversation": {
            "speaker_a": "Rosa",
            "speaker_b": "Tom",
            "session_2_date_time": "3:05 pm on 9 June, 2023",
            "session_2": [{"speaker": "Tom", "dia_id": "D2:1", "text": "I got a kayak."}],
            "session_1_date_time": "1:56 pm on 8 May, 2023",
            "session_1": [
                {"speaker": "Rosa", "dia_id": "D1:1", "text": "I went to a pottery class."},
                {
                    "speaker": "Tom",
                    "dia_id": "D1:2",
                    "text": "Look!",
                    "img_url": ["x"],
                    "blip_caption": "a photo of a dog",
                },
            ],
        },
        "qa": [
            {"question": "What did Rosa go to?", "answer": "a pottery class", "category": 4},
            {"question": "When did Tom get a kayak?", "answer": "9 June, 2023", "category": 2},
            {"question": "What did Tom get?", "answer": "kayak, dog", "category": 1},
            {"question": "Would Rosa enjoy art?", "answer": "Yes; she likes crafts", "category": 3},
            {"question": "What did Rosa adopt?", "adversarial_answer": "a cat", "category": 5},
        ],
    }
]


def test_a_locomo_file_reads_as_a_dataset(tmp_path: Path) -> None:
    path = tmp_path / "locomo10.json"
    path.write_text(json.dumps(LOCOMO))
    dataset = load_dataset(path)
    assert dataset.kind == "locomo"
    (persona,) = dataset.personas
    assert persona.name == "conv-1" and persona.memory_seed == persona.remember == ()
    first, second = persona.sessions  # in time order, whatever the keys' order
    assert first.time.isoformat() == "2023-05-08T13:56:00+00:00"
    assert second.messages[0].content == "Tom: I got a kayak."
    assert [m.content for m in first.messages] == [
        "Rosa: I went to a pottery class.",
        "Tom: Look! [shares a photo of a dog]",
    ]
    assert {m.role for s in persona.sessions for m in s.messages} == {"user"}
    categories = [q.category for q in persona.questions]
    assert categories == [
        Category.CURRENT,
        Category.DATE,
        Category.CURRENT,
        Category.PREFERENCE,
        Category.NEVER_SAID,
    ]
    single, date, multi, open_domain, adversarial = persona.questions
    assert single.keywords == (("pottery",), ("class",))
    assert strictly_right("She went to a pottery class.", single)
    assert strictly_right("On 9 June 2023.", date)
    assert multi.keywords == (("kayak",), ("dog",))
    assert open_domain.answer == "Yes"
    assert strictly_right("That is not mentioned in our conversations.", adversarial)


def test_strict_scoring_folds_case_accents_and_apostrophes() -> None:
    moved = Question(
        "Where?", Category.CHANGED, "Zürich", (("zurich",), ("2026", "now")), ("bern",)
    )
    assert strictly_right("She lives in ZÜRICH now.", moved)
    assert not strictly_right("Zürich, not Bern, now.", moved)  # the stale value is wrong
    assert not strictly_right("Zürich.", moved)  # every group must match
    unknown = Question("Sister?", Category.NEVER_SAID, "", (("don't know",),))
    assert strictly_right("I don\u2019t know.", unknown)


def test_the_judges_verdict() -> None:
    assert verdict("Yes.") is True and verdict("**No** - it says Lisbon") is False
    assert verdict("The answer is right") is None and verdict("yesterday") is None
