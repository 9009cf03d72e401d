"""A local server that stops listening mid-answer (uvicorn on SIGTERM keeps the
connections it holds open) is noticed as a connection failure, not waited out."""

from __future__ import annotations

import asyncio
from dataclasses import replace

import pytest

from app.words.chat import failure_notice
from catalog import Kind, complete
from catalog.llm import litellm
from tests.fakes.provider import FakeProvider, Step, hold, stall, text
from tests.support import FAST_POLICY, local_catalog

MESSAGES = [{"role": "user", "content": "Hello there"}]
REPLY = "Hello from the local model."


@pytest.mark.parametrize(
    "step", [hold(), stall(after_chunks=2)], ids=["before the first token", "between chunks"]
)
async def test_a_local_server_that_stops_listening_mid_answer_is_a_connection_failure(
    fake: FakeProvider, step: Step
) -> None:
    fake.script("smollm2", step)
    # Deadlines far above the work: only the server going away can end this answer early.
    catalog = local_catalog(fake, "deadline = 120")
    policy = replace(FAST_POLICY, liveness=0.05)

    await asyncio.to_thread(litellm)
    asking = asyncio.create_task(complete(catalog, "smollm2", MESSAGES, stream=True, policy=policy))
    assert await asyncio.to_thread(fake.wait_for_requests, 1)
    # As uvicorn on SIGTERM: no new connection, the one held open stays open.
    await asyncio.to_thread(fake.stop_listening)
    result = await asking
    assert not result.ok
    first = result.attempts[0]
    assert first.kind is Kind.CONNECTION and "stopped listening" in first.reason
    assert {a.kind for a in result.attempts} == {Kind.CONNECTION}  # retries are refused
    notice = failure_notice(catalog, "smollm2", list(result.attempts))
    assert f"nothing answers at {fake.base_url('local')}" in notice


async def test_a_server_that_keeps_listening_is_waited_for(fake: FakeProvider) -> None:
    fake.script("smollm2", hold(then=text(REPLY)))
    catalog = local_catalog(fake, "deadline = 120")
    policy = replace(FAST_POLICY, liveness=0.05)

    await asyncio.to_thread(litellm)
    asking = asyncio.create_task(complete(catalog, "smollm2", MESSAGES, stream=True, policy=policy))
    assert await asyncio.to_thread(fake.wait_for_requests, 1)
    # Three checks find it listening while it holds the answer; then it answers.
    assert await asyncio.to_thread(fake.wait_for_connections, fake.connections + 3)
    fake.release()
    result = await asking
    assert result.ok and result.reply is not None and result.reply.text == REPLY
