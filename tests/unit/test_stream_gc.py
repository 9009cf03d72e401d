"""A long stream grows the heap (litellm keeps every chunk): while it is read, the
collector's full collections wait, or each walked the whole heap again, a frozen screen at a
time; after it, the collector is as it was. And a turn the stream gives the loop is long
enough for a key to travel all its hops, not one hop per turn."""

from __future__ import annotations

import asyncio
import gc
from collections.abc import Callable
from types import SimpleNamespace
from typing import Any

import pytest

from catalog import llm
from catalog.llm import full_collections_held
from catalog.transport import request
from catalog.transport.policy import RetryPolicy
from tests.fakes.provider import FakeProvider, text
from tests.support import FAST_POLICY, fake_catalog


def _full_collections(work: Callable[[], object]) -> int:
    """How many full collections the collector started by itself during `work()`."""
    gc.collect()  # from a clean slate
    full = [0]

    def seen(phase: str, info: dict[str, int]) -> None:
        if phase == "start" and info["generation"] == 2:
            full[0] += 1

    gc.callbacks.append(seen)
    try:
        work()
    finally:
        gc.callbacks.remove(seen)
    return full[0]


def _grow_the_heap() -> list[list[int]]:
    # Objects that live on, as a stream's chunks do: twice as many as the heap holds, so a
    # full collection comes due (at a quarter more) whatever the tests before left.
    return [[n] for n in range(max(1_000_000, 2 * len(gc.get_objects())))]


def test_full_collections_wait_while_a_stream_is_read_and_come_back_after() -> None:
    before = gc.get_threshold()
    assert _full_collections(_grow_the_heap) > 0  # what a long stream met before

    def held() -> None:
        with full_collections_held(), full_collections_held():  # two streams at once
            _grow_the_heap()

    assert _full_collections(held) == 0
    assert gc.get_threshold() == before


async def test_a_streamed_request_holds_full_collections_until_it_is_done() -> None:
    thresholds: list[tuple[int, int, int]] = []
    with FakeProvider() as fake:
        fake.default = text("one two three four", chunks=4)
        result = await _complete(fake, lambda piece: thresholds.append(gc.get_threshold()))
    assert result.ok, result.reason
    assert thresholds and all(t[2] > 1_000_000 for t in thresholds)
    assert gc.get_threshold()[2] < 1_000_000


async def _complete(fake: FakeProvider, on_delta: Callable[[str], None]) -> Any:
    from catalog import complete

    return await complete(
        fake_catalog(fake),
        "gpt-4.1-mini",
        [{"role": "user", "content": "go"}],
        stream=True,
        policy=FAST_POLICY,
        on_delta=on_delta,
    )


class Burst:
    """A response whose chunks are all there: its __anext__ never waits for anything."""

    def __init__(self, count: int) -> None:
        self.left = count

    def __aiter__(self) -> Burst:
        return self

    async def __anext__(self) -> SimpleNamespace:
        if not self.left:
            raise StopAsyncIteration
        self.left -= 1
        delta = SimpleNamespace(content="word ", tool_calls=None)
        return SimpleNamespace(choices=[SimpleNamespace(delta=delta, finish_reason=None)])


async def test_a_key_travels_all_its_hops_in_one_turn(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(request, "YIELD_EVERY", 0.0)  # every chunk is past due: a turn each
    shown: list[str] = []

    async def key() -> int:
        # A key goes from the terminal's reader to the app to the focused widget:
        # each hop waits for a round of the loop.
        for _ in range(4):
            await asyncio.sleep(0)
        return len(shown)

    await asyncio.sleep(0)
    typed = asyncio.create_task(key())
    await asyncio.sleep(0)  # the key is on its way: its first hop is done
    started = len(shown)
    await request.read_stream(Burst(50), RetryPolicy(), shown.append)
    answered = await typed
    # Before, one round a turn: the key waited for a chunk per hop.
    assert answered - started <= 1, (started, answered)


def test_a_long_stream_lets_the_held_collection_run_now_and_then(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(request, "YIELD_EVERY", 0.0)  # every chunk is past due: a turn each

    def read(hold_at_most: float) -> int:
        monkeypatch.setattr(llm, "HOLD_AT_MOST", hold_at_most)

        def work() -> None:
            with full_collections_held():
                asyncio.run(request.read_stream(Burst(3), RetryPolicy(), None))

        return _full_collections(work)

    assert read(3600.0) == 0
    # Held this long already: the garbage of a long stream does not pile up until its end.
    assert read(0.0) > 0
