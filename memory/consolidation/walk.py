"""One consolidation walked through: the transcript cut into parts, the chain asked part by
part (a reply counts only as a valid save_memory call), and the result proposed for review
or committed; again against a MEMORY.md edited meanwhile, and again with smaller parts after
a model ran out of context. memory/consolidation/run.py prepares the `Job` under the
session's claim."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from typing import TypedDict

from catalog import Attempt, Catalog, Chain, Reply, Result, RetryPolicy, complete
from catalog.health import HealthBook
from catalog.transport import Kind, Outcome
from memory.consolidation.chain import review_rule_for
from memory.consolidation.chunks import (
    chunk_transcript,
    context_window,
    reply_budget,
    transcript_budget,
)
from memory.consolidation.commit import commit
from memory.consolidation.decisions import Decision, Fate
from memory.consolidation.edits import Context, MemoryFull
from memory.consolidation.estimate import Measure, known_estimate, parts_estimate, remember_estimate
from memory.consolidation.evidence import Verdict
from memory.consolidation.judge import second_opinion
from memory.consolidation.log import DROPPED, LogRecord
from memory.consolidation.outcome import Cause, Consolidation
from memory.consolidation.prompt import (
    SAVE_MEMORY_CHOICE,
    SAVE_MEMORY_SCHEMA,
    SAVE_MEMORY_TOOL,
    consolidation_messages,
    transcript_lines,
)
from memory.consolidation.redact import redact
from memory.consolidation.reply import SavedMemory, parse_save_memory
from memory.data.history import format_entry
from memory.data.store import MemoryStore, MemoryText
from memory.message import Message
from memory.recall.provenance import authorship
from memory.sessions.journal import Journal, Segment
from memory.settings import MemorySettings

# The consolidation log's word for a second opinion's request (memory.consolidation.judge).
OPINION = "second_opinion"
# How many times MEMORY.md may change under a running consolidation before it gives up.
EDIT_ROUNDS = 3
# How many times a session is cut into smaller parts after a model ran out of context.
MAX_SHRINK = 2


class Asking(TypedDict, total=False):
    """How the chain is asked for a consolidation, as callers pass it (all optional)."""

    policy: RetryPolicy | None
    on_attempt: Callable[[Attempt], None] | None
    stream: bool
    chat_model: str | None
    # A session needing more requests than this is left pending with an estimate.
    max_parts: int | None


@dataclass(frozen=True)
class Job:
    """One consolidation of one segment, and what its steps share."""

    store: MemoryStore
    catalog: Catalog
    journal: Journal
    segment: Segment
    chain: Chain
    policy: RetryPolicy
    health: HealthBook
    said: list[Message]
    when: datetime  # the session's time, which dates its history entry
    began: datetime  # the session's start: lines newer than it are guarded
    asking: Asking
    started: float
    attempts: list[Attempt] = field(default_factory=list)
    causes: set[Cause] = field(default_factory=set)  # refusals the user can act on

    @property
    def settings(self) -> MemorySettings:
        return self.store.settings

    @property
    def head(self) -> str:
        return self.chain.models[0].id

    @property
    def max_parts(self) -> int | None:
        return self.asking.get("max_parts")

    def record(self, attempt: Attempt) -> None:
        self.attempts.append(attempt)
        self.store.log(LogRecord.line(self.journal.id, str(self.segment), attempt))
        on_attempt = self.asking.get("on_attempt")
        if on_attempt is not None:
            on_attempt(attempt)

    def record_opinion(self, attempt: Attempt) -> None:
        """A second opinion's request, in the log beside the others (its cost counts), but
        not one of the consolidation's attempts: it never moves the walk or the trust."""
        self.store.log(
            {**LogRecord.line(self.journal.id, str(self.segment), attempt), "purpose": OPINION}
        )

    def elapsed(self) -> float:
        return time.monotonic() - self.started


@dataclass(frozen=True)
class _Walked:
    """The chain walked over every part: the memory saved, or why not."""

    saved: SavedMemory | None
    model: str | None = None
    reason: str = ""
    cut_off: bool = False  # a model ran out of context: smaller parts may do


@dataclass(frozen=True)
class _Acceptance:
    """A reply counts only as a valid save_memory call against the memory it was sent."""

    job: Job
    current: str
    context: Context

    def __call__(self, reply: Reply) -> SavedMemory:
        job = self.job
        window = context_window(job.catalog, reply.model)
        try:
            return parse_save_memory(
                reply, self.current, job.settings, window, context=self.context
            )
        except MemoryFull:
            job.causes.add(Cause.MEMORY_FULL)
            raise


async def consolidate_job(job: Job) -> Consolidation:
    """Take a prepared job to its outcome (the caller holds the session's claim)."""
    if job.max_parts is not None:  # a session already found too long is not measured again
        measure = Measure(
            job.store, job.catalog, job.chain, job.journal, job.segment, job.max_parts
        )
        known = await asyncio.to_thread(known_estimate, measure, job.said)
        if known:
            return Consolidation.too_long(job.journal.id, job.segment, known)
    # Credentials said in the chat never leave for a model (the journal keeps them).
    blocks = await asyncio.to_thread(_blocks, job.said)
    return await _rounds(job, blocks)


def _blocks(said: list[Message]) -> list[str]:
    return [redact(block) for block in transcript_lines(said)]


async def _rounds(job: Job, blocks: list[str]) -> Consolidation:
    """Walk the chain until the result is kept; again against a MEMORY.md edited meanwhile,
    and again with smaller parts after a model ran out of context."""
    reason, shrink, edits = "", 0, 0
    while edits < EDIT_ROUNDS and shrink <= MAX_SHRINK:
        base, context, chunks = await _round(job, blocks, shrink)
        first = edits == 0 and shrink == 0
        if first and job.max_parts is not None and len(chunks) > job.max_parts:
            return _too_long(job, chunks, base.text)
        walked = await _walk(job, chunks, base.text, context)
        if walked.saved is None:
            reason = walked.reason
            if not walked.cut_off:
                break
            shrink += 1  # a model ran out of room: the same walk with smaller parts
            continue
        kept = await _keep(job, base, walked.saved, walked.model)
        if kept is not None:
            return kept
        reason = "MEMORY.md changed while this session was being saved"
        edits += 1
    return _give_up(job, base, reason)


async def _round(job: Job, blocks: list[str], shrink: int) -> tuple[MemoryText, Context, list[str]]:
    """MEMORY.md as it is now, who wrote each of its lines, and the transcript's parts."""
    base = job.store.read_memory()
    # Who wrote each line, and when: the user's lines and newer facts are guarded.
    theirs, newer = await asyncio.to_thread(authorship, job.store, job.began)
    context = Context(job.said, job.when, job.settings.memory_max_chars, theirs, newer)
    chunks = await asyncio.to_thread(_cut, job, blocks, base.text, shrink)
    return base, context, chunks


def _cut(job: Job, blocks: list[str], memory_text: str, shrink: int) -> list[str]:
    # Counting tokens takes seconds on a long session: never on the loop.
    budget = transcript_budget(job.catalog, job.chain, job.settings, memory_text, shrink)
    return chunk_transcript(blocks, budget)


def _too_long(job: Job, chunks: list[str], memory_text: str) -> Consolidation:
    chars = sum(len(chunk) for chunk in chunks)
    estimate = parts_estimate(job.catalog, job.head, len(chunks), chars, memory_text)
    remember_estimate(job.journal, job.segment, job.head, estimate)
    return Consolidation.too_long(job.journal.id, job.segment, estimate)


async def _walk(job: Job, chunks: list[str], memory_text: str, context: Context) -> _Walked:
    """Each part in turn, each answer's memory and draft entry carried into the next."""
    entry, model = "", None
    decisions: list[Decision] = []
    for part, chunk in enumerate(chunks, start=1):
        messages = consolidation_messages(
            memory_text,
            chunk,
            session_id=job.journal.id,
            budget=job.settings.memory_max_chars,
            part=part,
            parts=len(chunks),
            draft_entry=entry,
        )
        result = await _ask(job, messages, _Acceptance(job, memory_text, context))
        if not result.ok:
            cut_off = any(a.kind is Kind.CONTEXT_WINDOW for a in result.attempts)
            return _Walked(None, reason=result.reason, cut_off=cut_off)
        saved = await _judged(job, result.value, result.model, context)
        _log_dropped(job, saved.decisions, result.model)
        decisions += saved.decisions
        entry, memory_text, model = saved.history_entry, saved.memory_update, result.model
    return _Walked(SavedMemory(entry, memory_text, decisions=tuple(decisions)), model)


async def _judged(
    job: Job, saved: SavedMemory, proposer: str | None, context: Context
) -> SavedMemory:
    """The reply's edits decided again with a second opinion, where one can be had. A judge
    whose own changes would wait for review may refuse a line, never vouch for one."""
    if not job.settings.second_opinion or not saved.decisions:
        return saved
    opinion = await second_opinion(
        job.catalog,
        job.chain,
        proposer,
        saved.decisions,
        policy=job.policy,
        health=None,  # advice for the walk; a judge is asked once, whatever its health
        on_attempt=job.record_opinion,
        failed={a.model for a in job.attempts if a.outcome is not Outcome.OK},
    )
    if not opinion.judge:
        return saved
    verdicts = opinion.verdicts
    vouches = any(
        v is Verdict.CHECKED and saved.decisions[i].fate is Fate.HELD for i, v in verdicts.items()
    )
    if (
        vouches
        and (await asyncio.to_thread(review_rule_for, job.store, job.catalog, opinion.judge)).before
    ):
        verdicts = {i: v for i, v in verdicts.items() if v is Verdict.REFUSED}
    return saved.judged(context, verdicts, opinion.judge)


def _log_dropped(job: Job, decisions: tuple[Decision, ...], model: str | None) -> None:
    """Each refused edit in the consolidation log, with its reason (/log shows it)."""
    for decision in decisions:
        if decision.fate is Fate.REFUSED:
            job.store.log(
                {
                    "session": job.journal.id,
                    "segment": str(job.segment),
                    "model": model or job.head,
                    "outcome": DROPPED,
                    "kind": "dropped_edit",
                    "reason": f"{decision.edit}: {decision.reason}",
                }
            )


async def _ask(job: Job, messages: list[dict[str, str]], accept: _Acceptance) -> Result:
    return await complete(
        job.catalog,
        job.head,
        messages,
        tools=[SAVE_MEMORY_TOOL],
        tool_choice=SAVE_MEMORY_CHOICE,
        policy=job.policy,
        on_attempt=job.record,
        stream=job.asking.get("stream", False),
        chain=job.chain,
        schema=SAVE_MEMORY_SCHEMA,
        max_tokens=reply_budget(job.settings),
        health=job.health,
        hedge=job.settings.hedge,
        accept=accept,
        # The chat comes first: at a local server that answers one request at a time,
        # this request gives way to a chat turn and is sent again.
        background=True,
    )


async def _keep(
    job: Job, base: MemoryText, saved: SavedMemory, answered: str | None
) -> Consolidation | None:
    """Propose the result for review or commit it; None when MEMORY.md changed meanwhile.
    `answered` is the model whose answer it is (None when there was nothing to ask)."""
    from memory.consolidation.review import propose

    model = answered or job.head
    entry = format_entry(job.when, saved.history_entry)
    store, journal, segment = job.store, job.journal, job.segment
    rule = await asyncio.to_thread(review_rule_for, store, job.catalog, model)
    if rule.before or saved.held:
        await asyncio.to_thread(propose, store, journal.id, segment, saved, base, model, job.when)
        return Consolidation.for_review(
            journal.id, segment, answered, tuple(job.attempts), job.elapsed(), entry
        )
    if await asyncio.to_thread(commit, store, journal, segment, saved, base, model, job.when):
        return Consolidation.committed(
            journal.id, segment, answered, tuple(job.attempts), job.elapsed(), entry
        )
    return None


def _give_up(job: Job, base: MemoryText, reason: str) -> Consolidation:
    """No model's result was kept: the session stays pending, the reason recorded."""
    asked = [a for a in job.attempts if a.outcome is not Outcome.SKIPPED]
    rejected = bool(asked) and all(a.outcome is Outcome.REJECTED for a in asked)
    if rejected and base.problem:  # the same refusals, and a file Kept cannot read well
        reason += f". MEMORY.md may be the cause: {base.problem}"
    causes = set(job.causes)
    if any(a.kind is Kind.AUTH for a in job.attempts):
        causes.add(Cause.KEY_REFUSED)
    cause = min(causes, default=None)
    job.journal.mark_failed(job.segment, reason, rejected=rejected, cause=cause or "")
    return Consolidation.failed(
        job.journal.id, job.segment, reason, tuple(job.attempts), job.elapsed(), cause
    )
