"""The walk: ask each model of the chain in turn until one answers and the answer is taken.

`complete()` is a short loop over `_Walk`'s steps, one decision each: whether a model can
be asked at all (`skipped`), how many tries it gets (`tries`, `retry`), one try within its
deadline (`try_once`, `attempt`), what a failure means for its gateway (`write_off`), whether the
answer does the job (`judge`), and when the next model is asked beside a late one
(`hedge_after`). Every try becomes an `Attempt`, recorded and taught to the health book.

A background walk (a consolidation) gives way to the chat at a local server that answers
one request at a time (catalog.slots): its request is cancelled when a chat request to the
same server starts and is sent again once the chat is done, within the same try.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Coroutine, Sequence
from dataclasses import dataclass, replace
from functools import partial
from typing import Any, TypedDict, Unpack

from catalog import health as health_module
from catalog import slots
from catalog.catalog import Catalog, Chain, Route
from catalog.health import HealthBook
from catalog.hedge import LOST, race
from catalog.llm import litellm
from catalog.models import ModelEntry
from catalog.sanitize import Secrets, scrub
from catalog.structured import DoesNotFit
from catalog.transport.errors import AttemptFailure, classify, one_line
from catalog.transport.policy import RetryPolicy, budget, fitted, pause
from catalog.transport.records import (
    Accept,
    Ask,
    Attempt,
    DeltaHook,
    EventHook,
    Kind,
    Outcome,
    Reply,
    ReplyRejected,
    Result,
)
from catalog.transport.request import request


@dataclass(frozen=True)
class Tries:
    """One model's share of the walk."""

    count: int
    short: bool  # its retry is the head's short one
    onward: bool  # another model can be asked after it


class Options(TypedDict, total=False):
    """How `complete()` asks: every option it takes, each optional."""

    tools: list[dict[str, Any]] | None
    tool_choice: Any
    stream: bool
    policy: RetryPolicy | None
    accept: Accept | None
    on_delta: DeltaHook | None
    on_attempt: EventHook | None
    walk_chain: bool  # False: the model alone, e.g. to test a gateway's key
    max_tokens: int | None
    chain: Chain | None
    schema: dict[str, Any] | None
    health: HealthBook | None
    hedge: bool
    background: bool


async def complete(
    catalog: Catalog, model: str, messages: list[dict[str, Any]], **options: Unpack[Options]
) -> Result:
    """Ask `model` (then its chain, or the `chain` given) until one answers and `accept`
    takes the answer. With `schema`, models that support structured output are asked for
    JSON matching it instead of calling `tools`. With `health`, the walk is ordered, paced
    and timed by what every Kept process learned about each model, and teaches it back. With
    `hedge` too (not for streams), a model late past its p95 has the next model asked
    beside it (catalog.hedge). With `background` (a consolidation), a request to a local
    server that answers one at a time gives way to any chat request to it and is sent again
    after (catalog.slots); without it (the chat), a request is foreground and comes first.

    Never raises for provider trouble: the result says what happened. Raises
    UnknownModelError for a model id the catalog lacks, and CancelledError when cancelled.
    """
    chain = options.get("chain") or catalog.chain(model)
    if not options.get("walk_chain", True):  # one model only, e.g. to test a gateway's key
        chain = replace(chain, models=chain.models[:1], end="no fallback was asked for")
    stream = options.get("stream", False)
    health = options.get("health")
    # The book's lock and file are never touched on this loop: ordering may claim a probe
    # (a write), and what the walk learns is written by the book's own thread as it goes.
    order = await asyncio.to_thread(health.order, chain.models) if health else None
    ask = Ask(
        messages,
        options.get("tools"),
        options.get("tool_choice"),
        stream,
        options.get("on_delta"),
        options.get("max_tokens"),
        options.get("schema"),
        options.get("background", False),
    )
    walk = _Walk(catalog, model, chain, ask, options, order)
    hedge = options.get("hedge", False) and not stream
    position = 0
    verdict: Result | None = None
    while verdict is None and position < len(walk.models):
        result, asked = await walk.step(position, hedge)
        if result is not None:
            verdict = replace(result, attempts=tuple(walk.attempts))
        position += asked
    if health is not None:  # in the file when the walk returns, for every other process
        await asyncio.to_thread(health.flush)
    return verdict if verdict is not None else walk.failed()


class _Walk:
    """One walk's state: the order of its models, its attempts, the gateways it wrote off
    and the keys it must keep out of every reason."""

    def __init__(
        self,
        catalog: Catalog,
        requested: str,
        chain: Chain,
        ask: Ask,
        options: Options,
        order: tuple[list[ModelEntry], set[str]] | None = None,
    ) -> None:
        self.catalog, self.requested, self.chain, self.ask = catalog, requested, chain, ask
        self.policy = options.get("policy") or RetryPolicy.from_config(catalog.config.transport)
        self.accept, self.on_attempt = options.get("accept"), options.get("on_attempt")
        self.health = options.get("health")
        self.models, self.probes = order if order is not None else (list(chain.models), set())
        self.attempts: list[Attempt] = []
        self.dead_gateways: dict[str, str] = {}
        self.secrets = Secrets(catalog.keys.secrets(catalog.gateways.values()))

    # --- the loop's steps ----------------------------------------------------------------

    async def step(self, position: int, hedge: bool) -> tuple[Result | None, int]:
        """Ask the model at `position` (and the next one beside it when it is late): the
        accepted result, if any, and how many models were asked."""
        entry = self.models[position]
        late = self.hedge_after(entry, self.models[position + 1 :]) if hedge else None
        if late is None:
            return await self.model(position, entry), 1
        result, both = await race(
            partial(self.model, position, entry),
            partial(self.model, position + 1, self.models[position + 1]),
            late,
        )
        return result, 1 + both

    async def model(self, position: int, entry: ModelEntry) -> Result | None:
        """Every try at one model: its accepted answer as the walk's result, or None."""
        route = self.catalog.route(entry)
        skipped = self.skipped(route)
        if skipped is not None:
            self.record(skipped)
            return None
        if route.key.value:
            self.secrets.append(route.key.value)
        tries = self.tries(position, entry)
        policy = fitted(self.policy, self.health, entry, self.ask.stream)
        for try_index in range(tries.count):
            answer, started, latency = await self.try_once(route, policy)
            if isinstance(answer, Reply):
                return self.judge(route, answer, latency, started)
            self.write_off(route, answer)
            again = self.retry(answer, try_index, tries)
            self.record(
                Attempt(
                    entry.id,
                    route.gateway.name,
                    Outcome.RETRIED if again else Outcome.FAILED,
                    answer.kind,
                    answer.status,
                    latency,
                    reason=answer.reason,
                    started=started,
                ),
                route.key.value,
                answer.retry_after,
            )
            if not again:
                return None
            await asyncio.sleep(pause(self.policy, try_index, tries.short, answer.retry_after))
        return None

    def failed(self) -> Result:
        """The verdict when no model answered: each one's last reason."""
        return Result(
            self.requested,
            None,
            None,
            tuple(self.attempts),
            _summary(self.chain.ids, self.attempts, self.chain.end),
        )

    # --- one decision each ---------------------------------------------------------------

    def callable(self, entry: ModelEntry) -> bool:
        """Whether the walk could send this model a request now."""
        route = self.catalog.route(entry)
        return (
            route.key.usable
            and route.gateway.name not in self.dead_gateways
            and not (self.health and self.health.refused(entry.id, route.key.value))
        )

    def skipped(self, route: Route) -> Attempt | None:
        """The skip, when no request may be sent: gateway written off, no key, key refused."""
        entry, gateway = route.entry, route.gateway.name
        if gateway in self.dead_gateways:
            reason, kind = self.dead_gateways[gateway], Kind.GATEWAY_DOWN
        elif not route.key.usable:
            reason, kind = route.problem or "no key", Kind.NO_KEY
        elif self.health is not None and self.health.refused(entry.id, route.key.value):
            reason = f"the {route.gateway.label} key was refused earlier"
            kind = Kind.AUTH
        else:
            return None
        return Attempt(entry.id, gateway, Outcome.SKIPPED, kind, reason=reason)

    def tries(self, position: int, entry: ModelEntry) -> Tries:
        """How many tries this model gets, whether its retry is the short one, and whether
        there is somewhere else to go after it."""
        later = [
            (self.callable(e), bool(self.health and self.health.cooling(e.id)))
            for e in self.models[position + 1 :]
        ]
        count, short = budget(position, entry.id in self.probes, later, self.policy)
        return Tries(count, short, onward=any(can for can, _ in later))

    async def try_once(
        self, route: Route, policy: RetryPolicy
    ) -> tuple[Reply | AttemptFailure, float, float]:
        """One try at a model: its answer, when it started and how long it took. A
        background request that a chat request pre-empted at a one-request local server
        never reached the model: it is sent again once the chat is done, as the same try."""
        key = slots.server(route)
        yielding = key if key and self.ask.background and await slots.one_slot(key) else None
        while True:
            if yielding is not None:
                await slots.wait_turn(yielding)
            started, t0 = time.time(), time.monotonic()
            try:
                answer = await self.attempt(route, policy, started, yielding)
            except slots.Preempted:
                continue
            return answer, started, time.monotonic() - t0

    async def attempt(
        self, route: Route, policy: RetryPolicy, started: float, yielding: str | None
    ) -> Reply | AttemptFailure:
        """One request within the model's deadline: the reply, or the failure classified.
        A cancel is recorded and goes on up."""
        t0 = time.monotonic()
        try:
            async with asyncio.timeout(policy.attempt_deadline) as deadline:
                return await self.send(route, policy, yielding)
        except asyncio.CancelledError as cancel:
            self.record(self.cancelled(route, cancel, time.monotonic() - t0, started))
            raise
        except Exception as exc:  # every failure becomes an Attempt
            if isinstance(exc, slots.Preempted):
                raise
            if isinstance(exc, TimeoutError) and deadline.expired():
                return AttemptFailure(
                    Kind.DEADLINE, f"no complete answer within {policy.attempt_deadline:g} s"
                )
            if isinstance(exc, AttemptFailure):
                return exc
            if isinstance(exc, DoesNotFit):
                return AttemptFailure(Kind.CONTEXT_WINDOW, str(exc))
            return classify(exc)

    async def send(self, route: Route, policy: RetryPolicy, yielding: str | None) -> Reply:
        """The request itself. One that yields to the chat (`yielding`: its server) is
        streamed, so that its server stops generating when it is pre-empted; any other
        request to a local server holds it while it runs, unless it is background work."""
        ask = self.ask

        def asked(stream: bool) -> Coroutine[Any, Any, Reply]:
            return request(route, self.catalog, replace(ask, stream=stream), policy)

        if yielding is not None:
            return await slots.background(yielding, asked(True))
        async with slots.foreground(None if ask.background else slots.server(route)):
            return await asked(ask.stream)

    def write_off(self, route: Route, failure: AttemptFailure) -> None:
        """A refused key writes its gateway off for the rest of the walk."""
        if failure.kind is Kind.AUTH:
            gateway = route.gateway.name
            self.dead_gateways[gateway] = f"the {gateway} key was refused earlier in this walk"
            failure.reason = f"the {route.gateway.label} key was refused"

    def retry(self, failure: AttemptFailure, try_index: int, tries: Tries) -> bool:
        """Whether to try the same model again. With somewhere else to go, a Retry-After
        is the model's cooldown, not a sleep."""
        return (
            failure.kind in self.policy.retry_on
            and try_index + 1 < tries.count
            and not (tries.onward and failure.retry_after is not None)
        )

    def judge(self, route: Route, reply: Reply, latency: float, started: float) -> Result | None:
        """Hand the reply to `accept`: the walk's result when it is taken, else None."""
        try:
            value = self.accept(reply) if self.accept is not None else reply
        except Exception as rejection:  # whatever breaks the check rejects this reply
            if isinstance(rejection, ReplyRejected):
                why, kind = str(rejection), rejection.kind
            else:
                why, kind = f"{type(rejection).__name__}: {rejection}", Kind.REJECTED
            self.record(self.answered(route, reply, Outcome.REJECTED, kind, latency, started, why))
            return None
        self.record(self.answered(route, reply, Outcome.OK, None, latency, started, ""))
        return Result(self.requested, reply, value, tuple(self.attempts), "")

    def hedge_after(self, entry: ModelEntry, rest: Sequence[ModelEntry]) -> float | None:
        """Seconds after which the next model is asked beside `entry`: its p95, or for a
        model that has not answered often enough yet the shortest fitted deadline. None
        when the next model cannot be asked or is cooling, and for a model with its own
        `deadline` (a slow local model is slow on purpose) until its p95 is known."""
        health = self.health
        if (
            health is None
            or not rest
            or not self.callable(entry)
            or not self.callable(rest[0])
            or health.cooling(rest[0].id)
        ):
            return None
        p95 = health.p95(entry.id)
        if p95 is None and entry.deadline is None:
            return health_module.MIN_DEADLINE
        return p95

    # --- records -------------------------------------------------------------------------

    def record(
        self, attempt: Attempt, key: str | None = None, retry_after: float | None = None
    ) -> None:
        """Keep the attempt, teach it to the health book and tell the caller. Every reason
        carries a provider's words: keys out, escape sequences out."""
        attempt = replace(attempt, reason=scrub(attempt.reason, self.secrets))
        self.attempts.append(attempt)
        if self.health is not None and attempt.outcome is not Outcome.SKIPPED:
            self.health.observe(attempt, key=key, retry_after=retry_after)
        if self.on_attempt is not None:
            self.on_attempt(attempt)

    @staticmethod
    def answered(
        route: Route,
        reply: Reply,
        outcome: Outcome,
        kind: Kind | None,
        latency: float,
        started: float,
        why: str,
    ) -> Attempt:
        return Attempt(
            route.entry.id,
            route.gateway.name,
            outcome,
            kind,
            None,
            latency,
            reply.prompt_tokens,
            reply.completion_tokens,
            reply.cost,
            one_line(why) if why else "",
            started,
        )

    def cancelled(
        self, route: Route, cancel: asyncio.CancelledError, latency: float, started: float
    ) -> Attempt:
        """The attempt a cancel ended. One cancelled because the other model of a hedge
        answered first is charged its prompt's estimated cost: the provider read it."""
        if LOST not in cancel.args:
            return Attempt(
                route.entry.id,
                route.gateway.name,
                Outcome.CANCELLED,
                Kind.CANCELLED,
                latency=latency,
                reason="cancelled",
                started=started,
            )
        prompt = int(litellm().token_counter(model="gpt-4o", messages=self.ask.messages))
        pricing = self.catalog.pricing(route.entry)
        return Attempt(
            route.entry.id,
            route.gateway.name,
            Outcome.CANCELLED,
            Kind.LATE,
            latency=latency,
            prompt_tokens=prompt,
            cost=pricing.cost(prompt, 0) if pricing else 0.0,
            reason="cancelled: the other model of the hedge answered first",
            started=started,
        )


def _summary(ids: Sequence[str], attempts: Sequence[Attempt], end: str) -> str:
    last: dict[str, Attempt] = {}
    for attempt in attempts:
        last[attempt.model] = attempt
    parts = [f"{m}: {last[m].reason}" for m in ids if m in last]
    if last and all(a.outcome is Outcome.REJECTED for a in last.values()):
        # They all answered: what failed was the answers, not the models.
        return f"Every model in the chain answered and none was accepted ({end}). " + "; ".join(
            parts
        )
    return f"No model in the chain answered ({end}). " + "; ".join(parts)
