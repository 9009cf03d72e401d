"""Chat first: a chat turn pre-empts memory work at a local server that answers one request
at a time; the save is sent again after it, and nothing counts it as a failure."""

from __future__ import annotations

import asyncio
import json
from typing import Any

from catalog import Catalog, Outcome
from catalog.health import State
from catalog.llm import litellm
from memory import LiveSession, MemorySettings, MemoryStore, consolidate_pending
from memory.chat.turn import Turn, answer
from memory.consolidation.log import read_records
from memory.settings import Review
from tests.fakes.provider import FakeProvider, Step, hold, text, tool_call
from tests.support import FAST_POLICY, fake_catalog, local_catalog, pending_session, save_args

CHAT_REPLY = "Hello from the chat."


def consolidation(body: dict[str, Any]) -> bool:
    """A request that saves memory (a schema or the save_memory tool), not a chat turn."""
    tools = [t.get("function", {}).get("name") for t in body.get("tools") or ()]
    return "response_format" in body or "save_memory" in tools


def answers(saving: Step) -> Any:
    """The fake's answer by what was asked: `saving` to a consolidation, words to a chat."""
    return lambda body: saving if consolidation(body) else text(CHAT_REPLY)


async def chat_while_saving(
    fake: FakeProvider, store: MemoryStore, catalog: Catalog, model: str
) -> tuple[Turn, list[bool], asyncio.Task[Any]]:
    """Start consolidating the pending session; once its request is at the server, take a
    chat turn there. The turn, which held requests the fake saw given up by then (each a
    consolidation or not), and the consolidation, still running or done."""
    await asyncio.to_thread(litellm)  # its first import takes seconds: not in a deadline
    saving = asyncio.create_task(consolidate_pending(store, catalog, policy=FAST_POLICY))
    assert await asyncio.to_thread(fake.wait_for_requests, 1)
    assert consolidation(fake.requests[0].body)
    session = LiveSession.start(store, model)
    session.append({"role": "user", "content": "Hi, how are you?"})
    # Far above the work: a chat turn that waited behind the held save would never end.
    async with asyncio.timeout(120):
        turn = await answer(session, catalog, model, policy=FAST_POLICY)
    return turn, [consolidation(r.body) for r in fake.dropped], saving


async def test_a_chat_turn_preempts_a_consolidation_at_a_one_request_local_server(
    fake: FakeProvider,
) -> None:
    store = MemoryStore(settings=MemorySettings(review_by_model={"smollm2": Review.AFTER}))
    journal = pending_session(store)
    fake.one_slot = True  # like llama-cpp-python: the next request waits for this one
    fake.script("smollm2", hold())  # the save is held until its client gives up
    fake.responder = answers(text(json.dumps(save_args())))
    catalog = local_catalog(fake)

    turn, dropped, saving = await chat_while_saving(fake, store, catalog, "smollm2")
    (result,) = await saving
    # The server served the chat only once the held save had let go of it.
    assert turn.ok and turn.text == CHAT_REPLY
    assert dropped == [True]
    # The save was sent again after the chat turn and saved, with no failure anywhere.
    assert result.saved and result.model == "smollm2"
    assert [a.outcome for a in result.attempts] == [Outcome.OK]
    assert [consolidation(r.body) for r in fake.requests] == [True, False, True]
    # Streamed, so that a real server stops generating a save nobody waits for any more.
    assert fake.requests[0].stream and fake.requests[2].stream
    assert [r.outcome for r in read_records(store)] == [Outcome.OK]
    assert store.find_session(journal.id).failures == {}
    health = store.health().get("smollm2")
    assert health.state is State.HEALTHY and health.failures == 0


async def test_a_hosted_gateway_is_never_preempted(fake: FakeProvider) -> None:
    store = MemoryStore(settings=MemorySettings(consolidation_model="gpt-4.1-mini"))
    pending_session(store)
    fake.responder = answers(hold(then=tool_call("save_memory", save_args())))
    catalog = fake_catalog(fake)

    turn, dropped, saving = await chat_while_saving(fake, store, catalog, "gpt-4.1-mini")
    held = not saving.done()
    fake.release()  # the save answers now, on its first and only request
    (result,) = await saving
    assert turn.ok and turn.text == CHAT_REPLY
    assert dropped == [] and held
    assert result.saved and [a.outcome for a in result.attempts] == [Outcome.OK]
    # The save, the chat turn, then a second opinion on the saved line from another model
    # of the hosted chain (memory.consolidation.judge).
    assert [consolidation(r.body) for r in fake.requests if not r.judging] == [True, False]
    assert [r.judging for r in fake.requests] == [False, False, True]


async def test_a_llama_server_with_several_slots_serves_both_at_once(fake: FakeProvider) -> None:
    store = MemoryStore(settings=MemorySettings(review_by_model={"smollm2": Review.AFTER}))
    pending_session(store)
    fake.total_slots = 2  # GET /props says so, as llama-server started with --parallel 2
    fake.responder = answers(hold(then=text(json.dumps(save_args()))))
    catalog = local_catalog(fake)

    turn, dropped, saving = await chat_while_saving(fake, store, catalog, "smollm2")
    held = not saving.done()
    fake.release()
    (result,) = await saving
    assert turn.ok and turn.text == CHAT_REPLY
    assert dropped == [] and held
    assert result.saved and [a.outcome for a in result.attempts] == [Outcome.OK]
    assert [consolidation(r.body) for r in fake.requests] == [True, False]
    assert not fake.requests[0].stream  # asked as its caller asked: nothing to pre-empt
