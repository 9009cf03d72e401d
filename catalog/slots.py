"""Chat first: a local server that answers one request at a time serves the chat before
background work.

llama-cpp-python's server takes one request at a time: while a consolidation is being
saved, a chat request waits behind it, and a stream is cut short when another request
queues. So within one process, requests to a keyless (local) server are scheduled. A
background request (a consolidation) registers itself while it runs; a foreground request
(the chat: the default) to the same server cancels it with PREEMPTED before it is sent, and
holds the server while it runs. The background request then waits until the server has
been free for QUIET seconds and is sent again: the same try, never a failure of the model.

A background request to such a server is streamed, whatever its caller asked: a server
stops generating when its client goes away from a stream, but finishes a plain request
for nobody. llama.cpp's `llama-server` says how many requests it serves at once (GET
/props, `total_slots`): with more than one, nothing is pre-empted. A server without /props
(llama-cpp-python, Ollama) is taken to serve one. Hosted gateways never are scheduled.
Another process (`kept ask`) is not seen.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import time
import urllib.error
import urllib.request
from collections.abc import AsyncIterator, Coroutine
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TypeVar

if TYPE_CHECKING:
    from catalog.catalog import Route

T = TypeVar("T")
PREEMPTED = "pre-empted by a chat request to the same server"
# Seconds a server stays free after a chat request before background work is sent again:
# the next round of the same turn (after a history search) finds it free.
QUIET = 1.0
STOPPING = 10.0  # the longest a chat request waits for a pre-empted one to let go
PROPS_TIMEOUT = 2.0


class Preempted(Exception):
    """A background request gave way to a chat request to the same server."""


@dataclass
class _Server:
    """One server's schedule in this process."""

    chats: int = 0  # foreground requests in flight
    free_since: float = float("-inf")  # time.monotonic() when the last one ended
    background: set[asyncio.Task[Any]] = field(default_factory=set)
    preempted: set[asyncio.Task[Any]] = field(default_factory=set)
    waiters: set[asyncio.Future[None]] = field(default_factory=set)


_SERVERS: dict[str, _Server] = {}
_TOTAL_SLOTS: dict[str, int] = {}  # what each server's /props said (1 when it has none)


def server(route: Route) -> str | None:
    """The server a request goes to, when it is one Kept schedules: a keyless gateway's
    address. None for a hosted gateway."""
    return route.api_base if not route.gateway.needs_key and route.api_base else None


async def one_slot(key: str) -> bool:
    """Whether this server answers one request at a time (asked once per process)."""
    if key not in _TOTAL_SLOTS:
        total = await asyncio.to_thread(_total_slots, key)
        if total is None:
            return True  # it did not answer now: one at a time, and ask again next time
        _TOTAL_SLOTS[key] = total
    return _TOTAL_SLOTS[key] <= 1


def _total_slots(key: str) -> int | None:
    """llama-server's `total_slots`; 1 for a server that answers without one; None when
    nothing answered."""
    root = key.rstrip("/")
    root = root.removesuffix("/v1")
    request = urllib.request.Request(f"{root}/props", headers={"Accept": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=PROPS_TIMEOUT) as response:
            props = json.loads(response.read(1_000_000) or b"null")
    except (urllib.error.HTTPError, ValueError):
        return 1  # no /props: not llama-server
    except OSError:
        return None
    total = props.get("total_slots") if isinstance(props, dict) else None
    return total if isinstance(total, int) and total > 0 else 1


async def wait_turn(key: str) -> None:
    """Wait until no chat request to this server has run for QUIET seconds."""
    state = _SERVERS.get(key)
    while state is not None:
        if state.chats:
            waiter: asyncio.Future[None] = asyncio.get_running_loop().create_future()
            state.waiters.add(waiter)
            try:
                await waiter
            finally:
                state.waiters.discard(waiter)
            continue
        quiet = QUIET - (time.monotonic() - state.free_since)
        if quiet <= 0:
            return
        await asyncio.sleep(quiet)


async def background(key: str, work: Coroutine[Any, Any, T]) -> T:
    """Run `work` (one request to the server `key`) where a chat request can pre-empt it:
    raises Preempted when one did. A cancel of the caller is a cancel, as always."""
    state = _SERVERS.setdefault(key, _Server())
    task = asyncio.ensure_future(work)
    state.background.add(task)
    try:
        return await task
    except asyncio.CancelledError:
        caller = asyncio.current_task()
        if task in state.preempted and (caller is None or not caller.cancelling()):
            raise Preempted(PREEMPTED) from None
        raise
    finally:
        state.background.discard(task)
        state.preempted.discard(task)


@contextlib.asynccontextmanager
async def foreground(key: str | None) -> AsyncIterator[None]:
    """Hold the server `key` for one chat request: background requests to it are cancelled
    first (and waited for, so the server is free when the chat request arrives), and none
    starts until it is done. `None` holds nothing."""
    if key is None:
        yield
        return
    state = _SERVERS.setdefault(key, _Server())
    state.chats += 1
    loop = asyncio.get_running_loop()
    try:
        victims = [t for t in list(state.background) if t.get_loop() is loop and not t.done()]
        for task in victims:
            task.cancel(PREEMPTED)
            state.preempted.add(task)
        if victims:
            await asyncio.wait(victims, timeout=STOPPING)
        yield
    finally:
        state.chats -= 1
        state.free_since = time.monotonic()
        if not state.chats:
            for waiter in list(state.waiters):
                if not waiter.done() and waiter.get_loop() is loop:
                    waiter.set_result(None)
