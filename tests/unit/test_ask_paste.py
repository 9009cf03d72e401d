"""`kept ask` journals what arrived on stdin as pasted, and the words given as arguments as
typed: memory learns only from what the user typed."""

from __future__ import annotations

import io
import json
from typing import Any

import pytest

from app.cli.ask_io import read_question
from app.cli.main import main
from memory import MemoryStore
from tests.fakes.provider import FakeProvider, text
from tests.support import configure_fake

PIPED = "From: Bob <bob@example.com>\nSubject: Lunch\n\nLet us meet at noon on Friday.\n"


@pytest.fixture
def configured(fake: FakeProvider, monkeypatch: pytest.MonkeyPatch) -> FakeProvider:
    configure_fake(fake, monkeypatch, '[app]\nmodel = "gpt-4.1-mini"\n')
    fake.script("gpt-4.1-mini", text("Noted."))
    return fake


def asked(store: MemoryStore) -> dict[str, Any]:
    """The user message of the one session, as its journal file has it."""
    (path,) = [*store.sessions_dir.glob("*.jsonl"), *store.done_dir.glob("*.jsonl")]
    records: list[dict[str, Any]] = [
        json.loads(line) for line in path.read_text().splitlines() if line.strip()
    ]
    (user,) = [r for r in records if r.get("role") == "user"]
    return user


def pasted_parts(record: dict[str, Any]) -> list[str]:
    return [record["content"][start:end] for start, end in record["pasted"]]


def test_stdin_is_journaled_as_pasted_and_the_words_as_typed(
    configured: FakeProvider, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("sys.stdin", io.StringIO(PIPED))
    assert main(["ask", "Summarise", "-", "in one line", "--no-save"]) == 0
    user = asked(MemoryStore())
    assert user["content"] == f"Summarise\n\n{PIPED.strip()}\n\nin one line"
    assert user["pasted"] == [[11, 11 + len(PIPED.strip())]]
    assert pasted_parts(user) == [PIPED.strip()]
    sent = configured.requests[0].body["messages"][-1]
    assert sent == {"role": "user", "content": user["content"]}  # the model sees no spans


def test_a_question_of_words_only_has_nothing_pasted(configured: FakeProvider) -> None:
    assert main(["ask", "I", "drink green tea", "--no-save"]) == 0
    user = asked(MemoryStore())
    assert user["content"] == "I\n\ndrink green tea" and "pasted" not in user


def test_colours_and_crlf_piped_in_are_cleaned_inside_the_span(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """`git diff --color` pipes escape sequences, a Windows file CRLF: cleaning them out of
    the piped part leaves its span covering exactly what is left of it."""
    monkeypatch.setattr("sys.stdin", io.StringIO("\x1b[31m-old\x1b[0m\r\n\x1b[32m+new\x1b[0m\r\n"))
    question = read_question(["-", "write \x1b[1mthe\x1b[0m commit message"])
    assert question.text == "-old\n+new\n\nwrite the commit message"
    assert [question.text[s:e] for s, e in question.pasted] == ["-old\n+new"]
