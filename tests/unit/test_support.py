"""The test helpers' own promises: a wait ends when its condition holds, or fails with its
message once the deadline has passed (never hangs until the suite's timeout)."""

from __future__ import annotations

import asyncio
import threading

import pytest

from tests.support import until, until_blocking


async def test_until_returns_once_the_condition_holds() -> None:
    done = asyncio.Event()
    asyncio.get_running_loop().call_later(0.01, done.set)
    await until(done.is_set, message="the event")
    assert done.is_set()


async def test_until_fails_with_its_message_after_the_deadline() -> None:
    with pytest.raises(AssertionError, match=r"timed out after 0\.1 s waiting for the reply"):
        await until(lambda: False, deadline=0.1, message="the reply")


def test_until_blocking_waits_for_another_thread_and_fails_with_its_message() -> None:
    done = threading.Event()
    threading.Timer(0.01, done.set).start()
    until_blocking(done.is_set, message="the thread")
    with pytest.raises(AssertionError, match=r"timed out after 0\.1 s waiting for the file"):
        until_blocking(lambda: False, deadline=0.1, message="the file")
