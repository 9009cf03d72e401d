"""What consolidating would take, before it is done: the sentence a long session's user
confirms, and the rough figure for every pending session."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from catalog import Catalog, Chain
from memory.consolidation.chain import consolidation_chain
from memory.consolidation.chunks import transcript_budget
from memory.data.store import MemoryStore
from memory.message import Message
from memory.sessions.journal import Journal, Segment

# A session needing more requests than this is not consolidated unasked: the user sees the
# estimate first (a single 10 MB message can take a dozen requests).
ASK_ABOVE_PARTS = 5
# Beyond this many characters, a session's requests are counted from its size: tokenising
# 19 MB held a core for minutes, and the estimate is rough anyway (~3 characters a token).
COUNT_TOKENS_UP_TO = 1_000_000
# The estimates made this run, by journal content (path, size, mtime), segment and model:
# the automatic retry every minute asks again, and an unchanged session has the same answer.
_ESTIMATES: dict[tuple[str, int, int, str, str], str] = {}


def parts_estimate(catalog: Catalog, head: str, parts: int, chars: int, memory_text: str) -> str:
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


def _content_key(
    journal: Journal, segment: Segment, head: str
) -> tuple[str, int, int, str, str] | None:
    try:
        stat = journal.path.stat()
    except OSError:
        return None
    return (str(journal.path), stat.st_size, stat.st_mtime_ns, str(segment), head)


def remember_estimate(journal: Journal, segment: Segment, head: str, estimate: str) -> None:
    key = _content_key(journal, segment, head)
    if key is not None:
        if len(_ESTIMATES) > 256:
            _ESTIMATES.clear()
        _ESTIMATES[key] = estimate


@dataclass(frozen=True)
class Measure:
    """A session to be measured against the parts one run may send unasked."""

    store: MemoryStore
    catalog: Catalog
    chain: Chain
    journal: Journal
    segment: Segment
    max_parts: int


def known_estimate(measure: Measure, said: Sequence[Message]) -> str:
    """The estimate of a session too long to save unasked, without tokenising it: the one
    made before for the same content, or, for a huge session, one from its size. Empty
    when the session must be measured (by tokens) or is short enough."""
    head = measure.chain.models[0].id
    key = _content_key(measure.journal, measure.segment, head)
    if key is not None and key in _ESTIMATES:
        return _ESTIMATES[key]
    chars = sum(len(str(m.get("content") or "")) for m in said)
    if chars <= COUNT_TOKENS_UP_TO:
        return ""
    store = measure.store
    memory_text = store.read_memory().text
    budget = transcript_budget(measure.catalog, measure.chain, store.settings, memory_text, 0)
    parts = -(-chars // max(1, budget * 3))
    if parts <= measure.max_parts:
        return ""
    estimate = parts_estimate(measure.catalog, head, parts, chars, memory_text)
    remember_estimate(measure.journal, measure.segment, head, estimate)
    return estimate


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
    chain = consolidation_chain(catalog, settings, chat_model).chain
    head = chain.models[0] if chain is not None and chain.models else None
    pricing = catalog.pricing(head) if head is not None else None
    cost = pricing.cost(tokens_in, tokens_out) if pricing is not None else None
    return Estimate(
        sessions=sessions,
        segments=segments,
        messages=messages,
        input_tokens=tokens_in,
        output_tokens=tokens_out,
        model=head.id if head is not None else None,
        cost=cost,
    )
