"""A model that does `kept eval memory`'s job perfectly (or, lossy, only ever adds), for the
eval's tests and its benchmark, answering through the loopback fake provider."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from memory import MemorySettings
from memory.eval import Category, Dataset, Question, Report, fold, run_eval, strictly_right
from tests.fakes.provider import FakeProvider, Step, text, tool_call
from tests.support import FAST_POLICY, fake_catalog

FIXTURE = Path(__file__).parents[1] / "eval_fixture.json"
MODEL = "gpt-4.1-mini"  # OpenAI wire format

_WORD = re.compile(r"\w+")
_STAMP = re.compile(r"\[(\d{4})-(\d{2})-(\d{2}) \d{2}:\d{2}\]")
# Words of a question that say nothing about where its answer is (English, Portuguese).
_STOP_WORDS = """
what which who whom whose when where why how is are was were do does did the and of in on
at to for from by with as be been should would could can now still ever name names named my
your her his their our she they it its this that there about any some start started get got
quando quem qual quais que como onde porque para pelo pela com uma umas uns dos das nos nas
foi era ser ter tem começou chama chamava chamam
"""
_STOP = frozenset(_STOP_WORDS.split())
_MONTH_NAMES = (
    "January February March April May June July August September October November December"
)
_MONTHS = _MONTH_NAMES.split()
DONT_KNOW = "I don't know: you haven't told me that."
SEARCHES = 3  # the chat turn allows four rounds: three searches, then an answer


class Oracle:
    """A model that does the job perfectly, from what each request carries.

    Consolidation: the dataset's gold edits and history entry for the session whose
    messages the transcript holds (`lossy`: only the adds, as a model that never replaces
    or forgets). A question: answered from the MEMORY.md its system prompt carries, or,
    for a "when" question, from what search_history returns for the question's own words
    (a few searches, most telling word first), dated by the stamp of the line; "I don't
    know" when neither holds the answer. The question's keywords stand in for
    understanding: the oracle recognises the line that answers, and answers with the
    answer, as a good model would. It can only find what Kept put where a model looks: the
    prompt and the search tool. The judge always says yes.
    """

    def __init__(self, dataset: Dataset, *, lossy: bool = False) -> None:
        self.sessions = [s for p in dataset.personas for s in p.sessions]
        self.questions = {q.question: q for p in dataset.personas for q in p.questions}
        self.names = {fold(w) for p in dataset.personas for w in _WORD.findall(p.name)}
        self.lossy = lossy
        self.errors: list[str] = []
        self.kinds: list[str] = []

    def __call__(self, body: dict[str, Any]) -> Step | None:
        try:
            return self.respond(body)
        except Exception as exc:  # the fake would only drop the connection: say why
            self.errors.append(f"{type(exc).__name__}: {exc}")
            raise

    def respond(self, body: dict[str, Any]) -> Step:
        tools = {
            (t.get("function") or {}).get("name") or t.get("name") for t in body.get("tools") or []
        }
        if "save_memory" in tools or body.get("response_format"):
            self.kinds.append("consolidation")
            return self.consolidate(body)
        if "search_history" in tools:
            self.kinds.append("chat")
            return self.answer(body["messages"])
        self.kinds.append("judge")
        return text("yes")

    def consolidate(self, body: dict[str, Any]) -> Step:
        sent = json.dumps(body, ensure_ascii=False)

        def found(session: Any) -> int:
            # The transcript reaches the wire JSON-escaped, as each message is here.
            return sum(
                json.dumps(m.content, ensure_ascii=False)[1:-1] in sent for m in session.messages
            )

        session = max(self.sessions, key=found)
        assert found(session), "a consolidation of no session in the dataset"
        edits = [e.to_json() for e in session.edits if not self.lossy or e.op == "add"]
        arguments = {"history_entry": session.history_entry, "edits": edits}
        if body.get("response_format"):
            return text(json.dumps(arguments))
        return tool_call("save_memory", arguments)

    def answer(self, messages: list[dict[str, Any]]) -> Step:
        asked = next(str(m["content"]) for m in reversed(messages) if m["role"] == "user")
        question = self.questions[asked]
        if question.category is not Category.DATE:
            system = str(messages[0]["content"])
            memory = system.split("<memory>", 1)[-1].split("</memory>", 1)[0]
            lines = [line.strip().removeprefix("- ") for line in memory.splitlines()]
            lines.sort(key=lambda line: line.startswith("Previously:"))  # current facts first
            for line in lines:
                found = _answer_in(line, question)
                if found is not None and not line.startswith("#"):
                    return text(found)
            return text(DONT_KNOW)
        results = [str(m["content"]) for m in messages if m["role"] == "tool"]
        for line in results[-1].splitlines() if results else ():
            stamp = _STAMP.search(line)
            if stamp is not None and strictly_right(_dated(stamp), question):
                return text(f"{_dated(stamp)}: {line}")
        words = [w for w in _WORD.findall(asked) if fold(w) not in _STOP | self.names]
        patterns = sorted(words, key=len, reverse=True)[:SEARCHES]
        if len(results) < len(patterns):
            return tool_call("search_history", {"pattern": patterns[len(results)]})
        return text(DONT_KNOW)


def _answer_in(line: str, question: Question) -> str | None:
    """The answer `line` holds: a string of each keyword group, as the line says it."""
    said = fold(line)
    found = [next((k for k in group if fold(k) in said), None) for group in question.keywords]
    return None if None in found else ", ".join(str(k) for k in found).capitalize() + "."


def _dated(stamp: re.Match[str]) -> str:
    year, month, day = (int(g) for g in stamp.groups())
    return f"On {year}-{month:02d}-{day:02d} ({day} {_MONTHS[month - 1]} {year})"


async def evaluate(fake: FakeProvider, dataset: Dataset, oracle: Oracle, **kwargs: Any) -> Report:
    """`kept eval memory`'s run on `dataset`, the fake provider answering as `oracle`."""
    fake.responder = oracle
    report = await run_eval(
        dataset,
        fake_catalog(fake),
        MODEL,
        settings=MemorySettings(attempt_deadline=60.0),
        policy=FAST_POLICY,
        **kwargs,
    )
    assert oracle.errors == []
    return report
