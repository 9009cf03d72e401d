"""A stream whose chunks are already in the socket is parsed in a burst: the loop is given a
turn now and then, so that a key typed meanwhile is not kept waiting for the whole burst."""

from __future__ import annotations

import asyncio
from types import SimpleNamespace

import pytest

from catalog.transport import request
from catalog.transport.policy import RetryPolicy


class Burst:
    """A response whose chunks are all there: its __anext__ never waits for anything."""

    def __init__(self, count: int, ticks: list[int]) -> None:
        self.left, self.ticks = count, ticks
        self.seen: list[int] = []

    def __aiter__(self) -> Burst:
        return self

    async def __anext__(self) -> SimpleNamespace:
        self.seen.append(self.ticks[0])
        if not self.left:
            raise StopAsyncIteration
        self.left -= 1
        delta = SimpleNamespace(content="word ", tool_calls=None)
        return SimpleNamespace(choices=[SimpleNamespace(delta=delta, finish_reason=None)])


async def test_a_burst_of_chunks_gives_the_loop_turns(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(request, "YIELD_EVERY", 0.0)  # every chunk is past due: a turn each

    ticks = [0]

    async def other_work() -> None:  # what the app does meanwhile: keys, frames
        while True:
            ticks[0] += 1
            await asyncio.sleep(0)

    ticker = asyncio.create_task(other_work())
    await asyncio.sleep(0)
    burst = Burst(50, ticks)
    shown: list[str] = []
    assembly = await request.read_stream(burst, RetryPolicy(), shown.append)
    ticker.cancel()
    assert assembly.chunks == 50 and "".join(shown) == "word " * 50
    # Before, the whole burst was read between two turns of the loop: one tick in all.
    assert burst.seen[-1] - burst.seen[0] >= 45, burst.seen
