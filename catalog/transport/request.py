"""One request to one model through litellm: its parameters, the structured-output
dialect, and a stream read within its first-token and stall limits, a local server watched
while it is silent."""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Callable
from typing import Any

from catalog.catalog import Catalog, Route
from catalog.llm import full_collection_if_due, full_collections_held, litellm
from catalog.structured import fit_max_tokens, refused_dialect, response_format, structured_dialect
from catalog.transport.errors import AttemptFailure
from catalog.transport.liveness import Watch
from catalog.transport.policy import RetryPolicy
from catalog.transport.records import Ask, DeltaHook, Kind, Reply
from catalog.transport.stream import Assembly, to_reply

# A stream read in a burst gives the event loop a turn this often (seconds): keys typed
# meanwhile answer within it, at little cost to how fast the reply arrives.
YIELD_EVERY = 0.010
# A turn is this many rounds of the loop: a key travels through several hops (the
# terminal's reader, the app, the focused widget), each a round of its own; given one
# round, it waited a whole YIELD_EVERY per hop. A round with nothing ready is cheap.
TURN_ROUNDS = 8


async def request(route: Route, catalog: Catalog, ask: Ask, policy: RetryPolicy) -> Reply:
    """The model's reply; raises AttemptFailure for a missed first token, a stall or a
    local server that stopped listening, and litellm's own exception for anything the
    provider said."""
    local = route.api_base if not route.gateway.needs_key else None
    # Held until the stream (and litellm's copy of every chunk) is let go, not only read.
    held = full_collections_held() if ask.stream else contextlib.nullcontext()
    with held:
        async with Watch(local, policy.liveness) as watch:
            return await _ask(route, catalog, ask, policy, watch.heard)


def _arguments(
    route: Route, catalog: Catalog, ask: Ask, policy: RetryPolicy, dialect: str | None
) -> dict[str, Any]:
    """litellm's keyword arguments for one request."""
    kwargs: dict[str, Any] = {
        "model": route.litellm_model,
        "messages": ask.messages,
        "api_key": route.key.value,
        "max_retries": 0,
        # Parameters a provider does not take (tool_choice on o3, ...) are left out.
        "drop_params": True,
        # litellm's timeout is per phase; ours (deadline, stall) must fire first.
        "timeout": (policy.stall_timeout if ask.stream else policy.attempt_deadline) + 1.0,
    }
    if route.api_base:
        kwargs["api_base"] = route.api_base
    max_tokens = fit_max_tokens(catalog, route, ask.messages, ask.max_tokens)
    if max_tokens is not None:
        kwargs["max_tokens"] = max_tokens
    if dialect is not None and ask.schema is not None:
        kwargs["response_format"] = response_format(dialect, ask.schema)
        # With drop_params litellm answers a 422 by dropping the parameters the server named
        # and asking again: the reply would come back unconstrained, not in another dialect.
        kwargs["drop_params"] = False
    elif ask.tools:
        kwargs["tools"] = ask.tools
        if ask.tool_choice is not None and route.entry.supports_tool_choice:
            kwargs["tool_choice"] = ask.tool_choice
    if ask.stream:
        kwargs["stream"] = True
        kwargs["stream_options"] = {"include_usage": True}
    return kwargs


async def _ask(
    route: Route, catalog: Catalog, ask: Ask, policy: RetryPolicy, heard: Callable[[], None]
) -> Reply:
    llm = litellm()
    stream = ask.stream
    dialect = structured_dialect(route, ask.schema)
    kwargs = _arguments(route, catalog, ask, policy, dialect)
    first_token = policy.first_token or policy.stall_timeout
    try:
        # A stream's headers and first chunk must come within the first-token deadline.
        async with asyncio.timeout(policy.first_token if stream else None) as waiting:
            response = await llm.acompletion(**kwargs)
    except Exception as exc:
        if stream and waiting.expired():
            raise AttemptFailure(
                Kind.DEADLINE, f"no first token within {first_token:g} s"
            ) from None
        if dialect is None or not refused_dialect(route, dialect, exc):
            raise
        # This server speaks another dialect of structured output: ask again in it.
        return await _ask(route, catalog, ask, policy, heard)
    if not stream:
        return to_reply(response, route, catalog)
    assembly = await read_stream(response, policy, ask.on_delta, heard)
    return assembly.reply(route, catalog, ask.messages)


async def read_stream(
    response: Any,
    policy: RetryPolicy,
    on_delta: DeltaHook | None,
    heard: Callable[[], None] | None = None,
) -> Assembly:
    """Every chunk of a stream, each within its limit: the first within the first-token
    deadline, the others within `stall_timeout` of the one before. `heard` is told of
    each chunk."""
    first_token = policy.first_token or policy.stall_timeout
    assembly = Assembly()
    iterator = response.__aiter__()
    turn_due = time.monotonic() + YIELD_EVERY
    try:
        while True:
            wait = policy.stall_timeout if assembly.chunks else first_token
            try:
                async with asyncio.timeout(wait):
                    chunk = await iterator.__anext__()
            except StopAsyncIteration:
                break
            except TimeoutError:
                if not assembly.chunks and policy.first_token is not None:
                    raise AttemptFailure(
                        Kind.DEADLINE, f"no first token within {first_token:g} s"
                    ) from None
                raise AttemptFailure(
                    Kind.STALLED, f"the stream stalled for {policy.stall_timeout:g} s"
                ) from None
            if heard is not None:
                heard()
            piece = assembly.add(chunk)
            if piece and on_delta is not None:
                on_delta(piece)
            if time.monotonic() >= turn_due:
                # Chunks already in the socket are parsed without awaiting anything: give
                # the loop a turn now and then, or a key typed meanwhile waits for the burst.
                for _ in range(TURN_ROUNDS):
                    await asyncio.sleep(0)
                full_collection_if_due()
                turn_due = time.monotonic() + YIELD_EVERY
    finally:
        closer = getattr(getattr(response, "completion_stream", None), "aclose", None)
        if closer is not None:
            # Closing a stream that already broke may fail again; the failure is recorded.
            with contextlib.suppress(Exception):
                await closer()
    if not assembly.chunks:
        raise AttemptFailure(Kind.STREAM_DIED, "the stream ended before any answer")
    return assembly
