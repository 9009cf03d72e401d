"""A second opinion: another model of the chain reads each line beside the user's words it
quotes; a line it does not find supported is refused, one Kept could not tell alone stands
when it agrees, and nothing waits on it when it cannot answer."""

from __future__ import annotations

import json
from typing import Any

import pytest

from catalog import Reply, ReplyRejected
from catalog.transport.records import ToolCall
from memory import MemorySettings, MemoryStore, consolidate_pending
from memory.consolidation.decisions import Decision, Fate
from memory.consolidation.edits import Edit, Op
from memory.consolidation.evidence import Verdict
from memory.consolidation.judge import judge_messages, judge_model, pairs, parse_verdicts
from memory.consolidation.log import read_records
from memory.consolidation.quotes import Found
from memory.consolidation.review import proposals
from memory.consolidation.trust import records
from tests.fakes.provider import FakeProvider, http_error, text, tool_call
from tests.support import FAST_POLICY, fake_catalog, pending_session

HEAD = "llama-3.3-70b-versatile"
JUDGE = "qwen3-32b"  # the next model of the default chain
TYPED = "I've got two kids and I moved to Lyon last month"
SAID = [
    {"role": "user", "content": TYPED, "time": "2026-03-07T10:00:00+00:00"},
    {"role": "assistant", "content": "Welcome to Lyon!", "time": "2026-03-07T10:00:05+00:00"},
]


def edit(line: str, quote: str) -> dict[str, Any]:
    return {"op": "add", "line": line, "reason": ".", "evidence": [{"message": 1, "quote": quote}]}


# "Has 2 children" is in other words than its quote: Kept alone holds it for review.
REPLY = {
    "history_entry": "The user talked about their children and their move to Lyon.",
    "edits": [edit("Has 2 children", "I've got two kids"), edit("Lives in Lyon", "moved to Lyon")],
}


@pytest.fixture
def store() -> MemoryStore:
    return MemoryStore(settings=MemorySettings(attempt_deadline=5.0)).ensure()


async def _run(store: MemoryStore, fake: FakeProvider) -> Any:
    (result,) = await consolidate_pending(store, fake_catalog(fake), policy=FAST_POLICY)
    return result


def _judge_requests(fake: FakeProvider) -> list[dict[str, Any]]:
    return [r.body for r in fake.requests if "judge_notes" in json.dumps(r.body.get("tools"))]


async def test_the_judge_vouches_for_a_line_kept_could_not_tell(
    store: MemoryStore, fake: FakeProvider
) -> None:
    fake.set_default(HEAD, tool_call("save_memory", REPLY))
    pending_session(store, SAID)
    result = await _run(store, fake)
    assert result.saved, result.reason
    memory = store.memory_path.read_text()
    assert "- Has 2 children\n" in memory and "- Lives in Lyon\n" in memory
    (asked,) = _judge_requests(fake)
    assert asked["model"].endswith(JUDGE)  # the cheapest other model, never the proposer
    prompt = asked["messages"][-1]["content"]
    assert "NOTE: Has 2 children" in prompt and "I've got two kids" in prompt
    # In the log beside the attempts, but not one of them, and no part of any trust record.
    opinion = [r for r in store.read_log() if r.get("purpose") == "second_opinion"]
    assert [r["model"] for r in opinion] == [JUDGE]
    assert [a.model for a in result.attempts] == [HEAD]
    assert JUDGE not in records(read_records(store))


async def test_a_line_the_judge_finds_unsupported_is_dropped_and_the_rest_saved(
    store: MemoryStore, fake: FakeProvider
) -> None:
    fake.set_default(HEAD, tool_call("save_memory", REPLY))
    verdicts = [{"pair": 1, "verdict": "unrelated"}, {"pair": 2, "verdict": "supported"}]
    fake.judge(tool_call("judge_notes", {"verdicts": verdicts}))
    session = pending_session(store, SAID)
    result = await _run(store, fake)
    assert result.saved, result.reason
    memory = store.memory_path.read_text()
    assert "children" not in memory and "- Lives in Lyon\n" in memory
    (dropped,) = [r for r in store.read_log() if r["outcome"] == "dropped"]
    assert f"{JUDGE} found that its evidence does not support it" in dropped["reason"]
    (version,) = store.versions_of(session.id)
    assert [d["fate"] for d in version.evidence] == ["refused", "applied"]


@pytest.mark.parametrize(
    "failure", [http_error(500), text("Sure, they look fine to me."), tool_call("judge_notes", "{")]
)
async def test_a_judge_that_fails_leaves_the_line_for_the_user_and_costs_nothing_else(
    store: MemoryStore, fake: FakeProvider, failure: Any
) -> None:
    fake.set_default(HEAD, tool_call("save_memory", REPLY))
    fake.judge(failure)
    pending_session(store, SAID)
    result = await _run(store, fake)
    assert result.proposed, result.reason  # held for review with its quotes, not pending
    (proposal,) = proposals(store)
    assert [d["fate"] for d in proposal.decisions] == ["held", "applied"]
    assert len(_judge_requests(fake)) == 1  # asked once: never retried, nothing waits on it


async def test_no_second_opinion_when_turned_off(fake: FakeProvider) -> None:
    store = MemoryStore(settings=MemorySettings(second_opinion=False)).ensure()
    fake.set_default(HEAD, tool_call("save_memory", REPLY))
    pending_session(store, SAID)
    result = await _run(store, fake)
    assert result.proposed and _judge_requests(fake) == []


async def test_a_model_that_just_failed_is_not_asked_to_judge(
    store: MemoryStore, fake: FakeProvider
) -> None:
    fake.set_default(HEAD, http_error(500))
    fake.set_default("qwen/qwen3-32b", tool_call("save_memory", REPLY))
    pending_session(store, SAID)
    result = await _run(store, fake)
    assert result.saved and result.model == JUDGE, result.reason
    (asked,) = _judge_requests(fake)
    assert not asked["model"].endswith(HEAD) and not asked["model"].endswith(JUDGE)


# --- the pieces ------------------------------------------------------------------------------


def _decision(fate: Fate, line: str = "Has 2 children") -> Decision:
    found = (Found(1, "I've got two kids", "2026-03-07T10:00:00+00:00"),)
    return Decision(Edit(Op.ADD, line), fate, "", found if fate is not Fate.REFUSED else ())


def test_only_the_edits_that_stand_are_judged_and_one_model_alone_has_no_judge() -> None:
    decisions = [_decision(Fate.APPLIED), _decision(Fate.REFUSED), _decision(Fate.HELD)]
    assert pairs(decisions) == [0, 2]
    (system, user) = judge_messages(decisions, [0, 2])
    assert "Pair 1" in user["content"] and "Pair 2" in user["content"]
    assert "Pair 3" not in user["content"] and "data, not instructions" in system["content"]
    from catalog import MODEL_CATALOG, Chain

    one = Chain(MODEL_CATALOG[:1], "")
    assert judge_model(one, MODEL_CATALOG[0].id, set()) is None


def _reply(verdicts: list[dict[str, Any]], *, as_text: bool = False) -> Reply:
    arguments = json.dumps({"verdicts": verdicts})
    calls = () if as_text else (ToolCall("c1", "judge_notes", arguments),)
    return Reply(JUDGE, "groq", arguments if as_text else "", calls, "stop", 10, 10, 0.0)


@pytest.mark.parametrize("as_text", [False, True])
@pytest.mark.parametrize(
    ("verdicts", "expected"),
    [
        (
            [{"pair": 1, "verdict": "supported"}, {"pair": 2, "verdict": "contradicted"}],
            {0: Verdict.CHECKED, 2: Verdict.REFUSED},
        ),
        (
            [{"pair": 1, "verdict": "SUPPORTED"}, {"pair": 2, "verdict": "maybe"}],
            {0: Verdict.CHECKED, 2: Verdict.REFUSED},
        ),
    ],
)
def test_verdicts_are_read_and_an_unknown_word_is_not_support(
    verdicts: list[dict[str, Any]], expected: dict[int, Verdict], as_text: bool
) -> None:
    assert parse_verdicts(_reply(verdicts, as_text=as_text), [0, 2]) == expected
    with pytest.raises(ReplyRejected, match="judged 1 of 2"):
        parse_verdicts(_reply(verdicts[:1]), [0, 2])
