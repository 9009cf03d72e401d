"""Hedging: when a model is late, ask the next one too, and keep the first good answer.

A consolidation waits for one model at a time. When the current model has not answered
within its usual time (the p95 of its answers, from the health book), `race` starts the
next model beside it; the first attempt that ends with an accepted answer wins and the
other is cancelled. A hang then costs a moment instead of a deadline, and a slow tail a
second request (both are recorded, the cancelled one with its prompt's estimated cost).
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import TypeVar

T = TypeVar("T")
LOST = "hedge lost"  # the cancel message the loser of a race receives


async def race(
    first: Callable[[], Awaitable[T | None]],
    second: Callable[[], Awaitable[T | None]],
    delay: float,
) -> tuple[T | None, bool]:
    """Run `first`; if it has not finished after `delay` seconds, run `second` beside it.

    Returns the first non-None result (None when both gave none), and whether `second`
    was started: if not, the caller has not tried it yet."""
    one: asyncio.Future[T | None] = asyncio.ensure_future(first())
    done, _ = await asyncio.wait({one}, timeout=delay)
    if done:
        return one.result(), False
    two = asyncio.ensure_future(second())
    pending: set[asyncio.Future[T | None]] = {one, two}
    try:
        while pending:
            done, pending = await asyncio.wait(pending, return_when=asyncio.FIRST_COMPLETED)
            for task in done:
                result = task.result()
                if result is not None:
                    await _cancel(pending, LOST)
                    return result, True
        return None, True
    except BaseException:
        await _cancel({one, two}, None)
        raise


async def _cancel(tasks: set[asyncio.Future[T | None]], message: str | None) -> None:
    for task in tasks:
        task.cancel(message)
    await asyncio.gather(*tasks, return_exceptions=True)
