"""The business layer: a session becomes memory only when a model really saved it.

"The request succeeded" is not "the task succeeded". A reply counts only if it carries a
`save_memory` call (or the same JSON object as text) whose arguments pass validation;
anything else moves the walk to the next model of the chain. When no model succeeds the
session stays pending, with the reason recorded, and is retried later.

The reply's validation lives in memory/consolidation/reply.py, the write-ahead commit that makes
the result durable in memory/consolidation/commit.py.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from datetime import UTC, datetime, timedelta
from typing import Any

from catalog import Attempt, Catalog, Chain, Reply, RetryPolicy, complete
from catalog.catalog import UnknownModelError
from catalog.chains import consolidation_plan
from catalog.transport import Kind, Outcome
from memory.consolidation.commit import commit, recover
from memory.consolidation.edits import Context
from memory.consolidation.log import LogRecord, read_records
from memory.consolidation.prompt import (
    SAVE_MEMORY_CHOICE,
    SAVE_MEMORY_SCHEMA,
    SAVE_MEMORY_TOOL,
    consolidation_messages,
    transcript_lines,
)
from memory.consolidation.redact import redact
from memory.consolidation.reply import SavedMemory, parse_save_memory
from memory.consolidation.trust import ReviewRule, records, review_rule
from memory.data.files import locked
from memory.data.history import format_entry
from memory.data.store import MemoryStore
from memory.recall.provenance import authorship
from memory.sanitize import clean_text
from memory.sessions.journal import Journal, Segment, session_started
from memory.settings import MemorySettings

# Delays before retrying a session that no model could consolidate, by failure count.
RETRY_DELAYS = (60.0, 300.0, 900.0, 3600.0)
# How many times MEMORY.md may change under a running consolidation before it gives up.
EDIT_ROUNDS = 3
# How many times a session is cut into smaller parts after a model ran out of context.
MAX_SHRINK = 2
AWAITING_REVIEW = "awaiting your review"
# After this many failures in a row where every model answered and was refused, asking
# again on a timer would only pay for the same answers: the user is asked instead.
HOLD_AFTER = 3
# A session needing more requests than this is not consolidated unasked: the user sees the
# estimate first (a single 10 MB message can take a dozen requests).
ASK_ABOVE_PARTS = 5
BUSY = "another Kept process is saving this session right now"


@dataclass(frozen=True)
class Consolidation:
    """What became of one segment of one session."""

    session: str
    segment: Segment | None
    saved: bool
    model: str | None
    attempts: tuple[Attempt, ...]
    reason: str
    elapsed: float
    history_entry: str = ""
    proposed: bool = False  # held for the user's review (review = "before")
    # Set instead of trying when the session needs more requests than the caller allows
    # unasked: what it would take, for the user to confirm. Not a failure.
    estimate: str = ""

    @property
    def cost(self) -> float:
        return sum(a.cost for a in self.attempts)


# --- chunking ------------------------------------------------------------------------------


def _count_tokens(text: str) -> int:
    from catalog.llm import litellm

    return int(litellm().token_counter(model="gpt-4o", text=text))


def _split_long(block: str, budget_tokens: int) -> list[str]:
    """A single message too large for one request, cut at line breaks (or hard)."""
    size = max(1000, budget_tokens * 3)  # characters: ~3+ per token in most languages
    pieces, rest = [], block
    while len(rest) > size:
        cut = rest.rfind("\n", 0, size)
        cut = cut if cut > size // 2 else size
        pieces.append(rest[:cut])
        rest = rest[cut:]
    return [*pieces, rest]


def chunk_transcript(
    blocks: list[str], budget_tokens: int, count: Callable[[str], int] = _count_tokens
) -> list[str]:
    """Group transcript blocks into as few parts as fit within `budget_tokens` each."""
    chunks: list[str] = []
    current: list[str] = []
    used = 0
    for block in blocks:
        # A block many times the budget is cut without counting it whole first: counting
        # a huge message holds the interpreter for seconds and needs no exact answer.
        tokens = count(block) if len(block) <= budget_tokens * 8 else budget_tokens + 1
        pieces = [block] if tokens <= budget_tokens else _split_long(block, budget_tokens)
        for piece in pieces:
            size = tokens if len(pieces) == 1 else count(piece)
            if current and used + size > budget_tokens:
                chunks.append("\n\n".join(current))
                current, used = [], 0
            current.append(piece)
            used += size
    if current:
        chunks.append("\n\n".join(current))
    return chunks


# Tokens a save_memory reply may take: a paragraph and a score of one-line edits (never
# the whole memory). A small model that rambles is cut off early; a session that teaches
# more than that is cut into parts (a cut-off reply is asked again with smaller parts).
REPLY_TOKENS = 1_000


def reply_budget(settings: MemorySettings) -> int:
    """Tokens a save_memory reply may need: the history entry and the edits."""
    return min(REPLY_TOKENS, settings.history_entry_max_chars // 3 + 400)


def rewrite_budget(settings: MemorySettings, memory_text: str) -> int:
    """Tokens a /tidy reply may need: the whole new memory and a sentence."""
    memory_tokens = _count_tokens(memory_text) if memory_text else 0
    most = (settings.memory_max_chars + settings.history_entry_max_chars) // 3
    return min(int(memory_tokens * 1.5) + 1_000, most)


def transcript_budget(
    catalog: Catalog, chain: Chain, settings: MemorySettings, memory_text: str, shrink: int = 0
) -> int:
    """Tokens of transcript one request may carry on the chain's first model, halved
    `shrink` times after a model ran out of context."""
    head = chain.models[0] if chain.models else None
    pricing = catalog.pricing(head) if head is not None else None
    window = pricing.context_window if pricing and pricing.context_window else 32_000
    memory_tokens = _count_tokens(memory_text) if memory_text else 0
    reserved = 500 + memory_tokens + reply_budget(settings)
    return max(300, int(window * 0.9) - reserved) >> shrink


def _window(catalog: Catalog, model: str) -> int | None:
    pricing = catalog.pricing(catalog.get(model)) if model in catalog else None
    return pricing.context_window if pricing else None


# --- consolidation -------------------------------------------------------------------------


def review_rule_for(store: MemoryStore, catalog: Catalog, model: str) -> ReviewRule:
    """Whether `model`'s change waits for the user (memory.consolidation.trust), its record
    read from the consolidation log."""
    record = records(read_records(store)).get(model)
    return review_rule(model, store.settings, catalog, record)


def _segment_time(journal: Journal, segment: Segment) -> datetime:
    for message in journal.segment_messages(segment):
        try:
            when = datetime.fromisoformat(str(message.get("time")))
            return (when if when.tzinfo else when.replace(tzinfo=UTC)).astimezone()
        except (ValueError, OverflowError, OSError):  # unreadable, or past the calendar
            continue
    return datetime.now().astimezone()


def consolidation_chain(
    catalog: Catalog, settings: MemorySettings, chat_model: str | None = None
) -> tuple[Chain | None, str]:
    """The chain that writes memory (see catalog.chains), or None and the reason none can."""
    try:
        plan = consolidation_plan(catalog, settings.consolidation_model or None, chat_model)
    except UnknownModelError:
        return None, (
            f"the consolidation model '{settings.consolidation_model}' is not in "
            "the catalog; fix [memory] consolidation_model in config.toml"
        )
    return (plan.chain, "") if plan.chain.models else (None, plan.fix)


def _policy(catalog: Catalog, settings: MemorySettings, policy: RetryPolicy | None) -> RetryPolicy:
    base = policy or RetryPolicy.from_config(catalog.config.transport)
    # A consolidation that times out moves to the next model rather than waiting again.
    return replace(
        base,
        attempt_deadline=min(base.attempt_deadline, settings.attempt_deadline),
        retry_on=base.retry_on - {Kind.TIMEOUT},
    )


async def consolidate(
    store: MemoryStore,
    catalog: Catalog,
    journal: Journal,
    segment: Segment,
    *,
    policy: RetryPolicy | None = None,
    on_attempt: Callable[[Attempt], None] | None = None,
    stream: bool = False,
    chat_model: str | None = None,
    max_parts: int | None = None,
) -> Consolidation:
    """Consolidate one pending segment into MEMORY.md and HISTORY.md, or leave it pending.
    With `max_parts`, a session needing more requests than that is left pending with an
    estimate for the user to confirm. Reading, counting and cutting the transcript run in
    a thread: a huge session never stalls the caller's event loop."""
    settings = store.settings
    started = time.monotonic()
    attempts: list[Attempt] = []
    claim = store.sessions_dir / f".{journal.id}.claim"
    with locked(claim, blocking=False) as mine:
        if not mine:
            return Consolidation(journal.id, segment, False, None, (), BUSY, 0.0)
        journal = await asyncio.to_thread(store.find_session, journal.id)  # as on disk now
        if segment not in journal.pending:
            return Consolidation(journal.id, segment, True, None, (), "already saved", 0.0)
        from memory.consolidation.review import proposal_for, propose

        if proposal_for(store, journal.id, segment) is not None:
            return Consolidation(
                journal.id, segment, False, None, (), AWAITING_REVIEW, 0.0, proposed=True
            )

        def record(attempt: Attempt) -> None:
            attempts.append(attempt)
            store.log(LogRecord.line(journal.id, str(segment), attempt))
            if on_attempt is not None:
                on_attempt(attempt)

        chain, reason = consolidation_chain(catalog, settings, chat_model)
        if chain is None:
            journal.mark_failed(segment, reason)
            return Consolidation(journal.id, segment, False, None, (), reason, 0.0)
        head = chain.models[0].id
        problem = store.memory_problem()
        if problem is not None:  # nothing could be saved: no model is asked
            journal.mark_failed(segment, problem)
            return Consolidation(journal.id, segment, False, None, (), problem, 0.0)
        retry = _policy(catalog, settings, policy)
        said = journal.segment_messages(segment)
        when = _segment_time(journal, segment)
        began = session_started(journal.id) or when  # imported sessions: their own start
        health = store.health()
        if max_parts is not None:  # a session already found too long is not measured again
            known = await asyncio.to_thread(
                _known_estimate, store, catalog, chain, settings, journal, segment, said, max_parts
            )
            if known:
                return Consolidation(
                    journal.id, segment, False, None, (), known, 0.0, estimate=known
                )
        # Credentials said in the chat never leave for a model (the journal keeps them).
        blocks = await asyncio.to_thread(lambda: [redact(b) for b in transcript_lines(said)])
        reason, shrink, edits, first = "", 0, 0, True
        while edits < EDIT_ROUNDS and shrink <= MAX_SHRINK:
            base = store.read_memory()
            memory_text = base.text
            # Who wrote each line, and when: the user's lines and newer facts are guarded.
            theirs, newer = await asyncio.to_thread(authorship, store, began)
            context = Context(said, when, settings.memory_max_chars, theirs, newer)

            def cut(text: str = memory_text, shrink: int = shrink) -> list[str]:
                # Counting tokens takes seconds on a long session: never on the loop.
                budget = transcript_budget(catalog, chain, settings, text, shrink)
                return chunk_transcript(blocks, budget)

            chunks = await asyncio.to_thread(cut)
            if first and max_parts is not None and len(chunks) > max_parts:
                estimate = _estimate(
                    catalog, head, len(chunks), sum(len(c) for c in chunks), memory_text
                )
                _remember_estimate(journal, segment, head, estimate)
                return Consolidation(
                    journal.id, segment, False, None, (), estimate, 0.0, estimate=estimate
                )
            first = False
            entry, model, cut_off = "", None, False
            for part, chunk in enumerate(chunks, start=1):
                messages = consolidation_messages(
                    memory_text,
                    chunk,
                    session_id=journal.id,
                    budget=settings.memory_max_chars,
                    part=part,
                    parts=len(chunks),
                    draft_entry=entry,
                )

                def accept(
                    reply: Reply, current: str = memory_text, context: Context = context
                ) -> SavedMemory:
                    window = _window(catalog, reply.model)
                    return parse_save_memory(reply, current, settings, window, context=context)

                result = await complete(
                    catalog,
                    head,
                    messages,
                    tools=[SAVE_MEMORY_TOOL],
                    tool_choice=SAVE_MEMORY_CHOICE,
                    policy=retry,
                    on_attempt=record,
                    stream=stream,
                    chain=chain,
                    schema=SAVE_MEMORY_SCHEMA,
                    max_tokens=reply_budget(settings),
                    health=health,
                    hedge=settings.hedge,
                    accept=accept,
                    # The chat comes first: at a local server that answers one request
                    # at a time, this request gives way to a chat turn and is sent again.
                    background=True,
                )
                if not result.ok:
                    reason = result.reason
                    cut_off = any(a.kind is Kind.CONTEXT_WINDOW for a in result.attempts)
                    break
                saved: SavedMemory = result.value
                entry, memory_text, model = saved.history_entry, saved.memory_update, result.model
            else:
                saved = SavedMemory(entry, memory_text)
                rule = await asyncio.to_thread(review_rule_for, store, catalog, model or head)
                if rule.before:
                    await asyncio.to_thread(
                        propose,
                        store,
                        journal.id,
                        segment,
                        entry,
                        memory_text,
                        base,
                        model or head,
                        when,
                    )
                    return Consolidation(
                        journal.id,
                        segment,
                        False,
                        model,
                        tuple(attempts),
                        AWAITING_REVIEW,
                        time.monotonic() - started,
                        format_entry(when, entry),
                        proposed=True,
                    )
                if await asyncio.to_thread(
                    commit, store, journal, segment, saved, base, model or head, when
                ):
                    return Consolidation(
                        journal.id,
                        segment,
                        True,
                        model,
                        tuple(attempts),
                        "",
                        time.monotonic() - started,
                        format_entry(when, entry),
                    )
                reason = "MEMORY.md changed while this session was being saved"
                edits += 1
                continue
            if not cut_off:
                break
            shrink += 1  # a model ran out of room: the same walk with smaller parts
        asked = [a for a in attempts if a.outcome is not Outcome.SKIPPED]
        rejected = bool(asked) and all(a.outcome is Outcome.REJECTED for a in asked)
        if rejected and base.problem:  # the same refusals, and a file Kept cannot read well
            reason += f". MEMORY.md may be the cause: {base.problem}"
        journal.mark_failed(segment, reason, rejected=rejected)
        return Consolidation(
            journal.id, segment, False, None, tuple(attempts), reason, time.monotonic() - started
        )


async def _after_the_other(
    store: MemoryStore, journal: Journal, segment: Segment
) -> Consolidation | None:
    """Another Kept process is saving this session: wait for it and report what it did,
    so two overlapping runs both see the session saved (or both see it still pending).
    None when it did nothing to this segment: the caller goes ahead."""
    started = time.monotonic()
    claim = store.sessions_dir / f".{journal.id}.claim"

    def wait() -> tuple[int, Journal]:
        before = len(store.find_session(journal.id).failures.get(segment, []))
        with locked(claim):
            pass
        return before, store.find_session(journal.id)

    try:
        before, journal = await asyncio.to_thread(wait)
    except LookupError:
        return None
    elapsed = time.monotonic() - started
    if segment not in journal.pending:
        return Consolidation(
            journal.id, segment, True, None, (), "saved by another Kept process", elapsed
        )
    if len(journal.failures.get(segment, [])) > before:
        return Consolidation(
            journal.id,
            segment,
            False,
            None,
            (),
            "another Kept process tried to save it at the same time and "
            "could not; it stays pending",
            elapsed,
        )
    return None


def _estimate(catalog: Catalog, head: str, parts: int, chars: int, memory_text: str) -> str:
    """What saving a long session would take, in a sentence (rough: ~3 characters a token,
    each request carrying the memory in and out)."""
    memory_tokens = len(memory_text) // 3 + 500
    tokens_in = chars // 3 + parts * (memory_tokens + 700)
    tokens_out = parts * memory_tokens
    pricing = catalog.pricing(catalog.get(head))
    cost = f", about ${pricing.cost(tokens_in, tokens_out):.2f} on {head}" if pricing else ""
    return (
        f"saving it needs {parts} requests (about {tokens_in + tokens_out:,} "
        f"tokens{cost}, more if a fallback answers); confirm to go ahead"
    )


# Beyond this many characters, a session's requests are counted from its size: tokenising
# 19 MB held a core for minutes, and the estimate is rough anyway (~3 characters a token).
COUNT_TOKENS_UP_TO = 1_000_000
# The estimates made this run, by journal content (path, size, mtime), segment and model:
# the automatic retry every minute asks again, and an unchanged session has the same answer.
_ESTIMATES: dict[tuple[str, int, int, str, str], str] = {}


def _content_key(
    journal: Journal, segment: Segment, head: str
) -> tuple[str, int, int, str, str] | None:
    try:
        stat = journal.path.stat()
    except OSError:
        return None
    return (str(journal.path), stat.st_size, stat.st_mtime_ns, str(segment), head)


def _remember_estimate(journal: Journal, segment: Segment, head: str, estimate: str) -> None:
    key = _content_key(journal, segment, head)
    if key is not None:
        if len(_ESTIMATES) > 256:
            _ESTIMATES.clear()
        _ESTIMATES[key] = estimate


def _known_estimate(
    store: MemoryStore,
    catalog: Catalog,
    chain: Chain,
    settings: MemorySettings,
    journal: Journal,
    segment: Segment,
    said: list[dict[str, Any]],
    max_parts: int,
) -> str:
    """The estimate of a session too long to save unasked, without tokenising it: the one
    made before for the same content, or, for a huge session, one from its size. Empty
    when the session must be measured (by tokens) or is short enough."""
    head = chain.models[0].id
    key = _content_key(journal, segment, head)
    if key is not None and key in _ESTIMATES:
        return _ESTIMATES[key]
    chars = sum(len(str(m.get("content") or "")) for m in said)
    if chars <= COUNT_TOKENS_UP_TO:
        return ""
    memory_text = store.read_memory().text
    budget = transcript_budget(catalog, chain, settings, memory_text, 0)
    parts = -(-chars // max(1, budget * 3))
    if parts <= max_parts:
        return ""
    estimate = _estimate(catalog, head, parts, chars, memory_text)
    _remember_estimate(journal, segment, head, estimate)
    return estimate


def held(journal: Journal, segment: Segment) -> bool:
    """Refused by every model HOLD_AFTER times in a row: not retried on a timer any more
    (it would cost the same again); the user is asked, and may retry it by hand."""
    last = journal.failures.get(segment, [])[-HOLD_AFTER:]
    return len(last) == HOLD_AFTER and all(f.rejected for f in last)


def next_retry(journal: Journal, segment: Segment) -> datetime | None:
    """When a failed segment is due again (None: never failed, due now)."""
    failures = journal.failures.get(segment, [])
    if not failures:
        return None
    delay = RETRY_DELAYS[min(len(failures), len(RETRY_DELAYS)) - 1]
    try:
        last = datetime.fromisoformat(failures[-1].time)
    except ValueError:
        return None
    return last + timedelta(seconds=delay)


def retry_note(journal: Journal, segment: Segment, now: datetime | None = None) -> str:
    """When a pending part is tried again, as every surface says it: "next retry after
    14:05" (with the date when that is not today, local time), or "due now"."""
    due = next_retry(journal, segment)
    if due is None:
        return "due now"
    local, today = due.astimezone(), (now or datetime.now(UTC)).astimezone()
    shape = "%H:%M" if local.date() == today.date() else "%Y-%m-%d %H:%M"
    return f"next retry after {local.strftime(shape)}"


async def consolidate_pending(
    store: MemoryStore,
    catalog: Catalog,
    ids: list[str] | None = None,
    *,
    only_due: bool = False,
    policy: RetryPolicy | None = None,
    on_attempt: Callable[[Attempt], None] | None = None,
    stream: bool = False,
    chat_model: str | None = None,
    include_held: bool = True,
    max_parts: int | None = None,
    on_result: Callable[[Consolidation], None] | None = None,
) -> list[Consolidation]:
    """Consolidate the pending segments of the given sessions, or of all pending ones,
    oldest first (session ids begin with their start time, imported ones too). Each saved
    segment is committed before the next begins, so an interrupted run loses nothing and
    the next one goes on where it stopped. Automatic runs pass `include_held=False` to
    leave the sessions every model keeps refusing to the user."""
    from memory.consolidation.review import proposal_for

    def prepare() -> list[Journal]:
        recover(store)
        for journal in store.open_sessions():
            store.settle(journal)  # closed with nothing left to save
        return [store.find_session(i) for i in ids] if ids else store.pending_sessions()

    journals = await asyncio.to_thread(prepare)  # reading every journal takes time
    now = datetime.now(UTC)
    results = []
    for journal in journals:
        for segment in list(journal.pending):
            if proposal_for(store, journal.id, segment) is not None:
                continue  # it waits for the user's decision, not for a model
            due = next_retry(journal, segment)
            if only_due and due is not None and due > now:
                continue
            if not include_held and held(journal, segment):
                continue
            try:
                result = await consolidate(
                    store,
                    catalog,
                    journal,
                    segment,
                    policy=policy,
                    on_attempt=on_attempt,
                    stream=stream,
                    max_parts=max_parts,
                    chat_model=chat_model,
                )
            except Exception as exc:  # this session's failure; the next one goes on
                result = _failed(journal, segment, f"{type(exc).__name__}: {exc}")
            results.append(result)
            if on_result is not None and result.reason != BUSY:  # BUSY: reported below
                on_result(result)
        with contextlib.suppress(LookupError, OSError):
            await asyncio.to_thread(_settle, store, journal.id)
    # Sessions another Kept process was saving meanwhile: once it is done, report what it
    # did, so overlapping runs both see the truth; go ahead if it did not touch them.
    for index, result in enumerate(results):
        if result.reason != BUSY or result.segment is None:
            continue
        journal = next(j for j in journals if j.id == result.session)
        after = await _after_the_other(store, journal, result.segment)
        if after is None:
            try:
                after = await consolidate(
                    store,
                    catalog,
                    journal,
                    result.segment,
                    policy=policy,
                    on_attempt=on_attempt,
                    stream=stream,
                    max_parts=max_parts,
                    chat_model=chat_model,
                )
            except Exception as exc:
                after = _failed(journal, result.segment, f"{type(exc).__name__}: {exc}")
        results[index] = after
        if on_result is not None:
            on_result(after)
    await asyncio.to_thread(store.sweep_locks)
    return results


def _settle(store: MemoryStore, session_id: str) -> None:
    store.settle(store.find_session(session_id))


def _failed(journal: Journal, segment: Segment, reason: str) -> Consolidation:
    """A consolidation that broke off: recorded in the journal when the disk allows it, so
    the session is retried later like any other failure."""
    reason = clean_text(" ".join(reason.split()))[:500]
    with contextlib.suppress(OSError):
        journal.mark_failed(segment, reason)
    return Consolidation(journal.id, segment, False, None, (), reason, 0.0)


@dataclass(frozen=True)
class Estimate:
    """What consolidating the pending sessions would take, before it is done."""

    sessions: int
    segments: int
    messages: int
    input_tokens: int
    output_tokens: int
    model: str | None  # the chain's first model, whose prices are used
    cost: float | None  # None: no price known for that model


def estimate_pending(
    store: MemoryStore, catalog: Catalog, chat_model: str | None = None
) -> Estimate:
    """A rough figure (about 4 characters a token; memory taken at half its budget or its
    size now, whichever is more), made without a request or a tokenizer."""
    from memory.consolidation.review import proposals
    from memory.sessions.pending import pending

    settings = store.settings
    memory_tokens = max(len(store.read_memory().text), settings.memory_max_chars // 2) // 4
    sessions = segments = messages = tokens_in = tokens_out = 0
    # The journals' marks and sizes, not their messages: 10,000 imported sessions are
    # counted in a fraction of a second (memory.sessions.pending).
    proposed = {(p.session, p.segment) for p in proposals(store)}
    for session in pending(store):
        waiting = [part for part in session.parts if (session.id, part.segment) not in proposed]
        if not waiting:
            continue
        sessions += 1
        for part in waiting:
            segments += 1
            messages += part.messages
            tokens_in += 600 + memory_tokens + part.chars // 4
            tokens_out += memory_tokens + 150
    chain, _ = consolidation_chain(catalog, settings, chat_model)
    head = chain.models[0] if chain is not None and chain.models else None
    pricing = catalog.pricing(head) if head is not None else None
    cost = pricing.cost(tokens_in, tokens_out) if pricing is not None else None
    return Estimate(
        sessions,
        segments,
        messages,
        tokens_in,
        tokens_out,
        head.id if head is not None else None,
        cost,
    )
