"""Running the eval: each persona replayed into a throwaway data folder through the real
consolidation, then each question asked through the real chat turn, `model` alone.
"""

from __future__ import annotations

import asyncio
import re
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from datetime import UTC
from pathlib import Path
from typing import TYPE_CHECKING

from memory.consolidation.outcome import Status
from memory.eval.dataset import Dataset, Persona, Question
from memory.eval.report import Answer, PersonaReport, Report, SessionResult
from memory.eval.score import ask_judge, memory_scores, strictly_right
from memory.settings import MemorySettings, Review

if TYPE_CHECKING:
    from catalog import Catalog, RetryPolicy
    from memory.consolidation.run import Consolidation
    from memory.data.store import MemoryStore


def pinned(catalog: Catalog, model: str) -> Catalog:
    """A catalog holding only `model`, with no fallback: every answer and every save in the
    eval is that model's own, never a fallback's. Raises UnknownModelError."""
    from catalog import Catalog
    from catalog.config import CatalogConfig

    entry = replace(catalog.get(model), fallback=None)
    config = CatalogConfig(
        gateway_urls=dict(catalog.config.gateway_urls),
        transport=dict(catalog.config.transport),
        broken_gateways=dict(catalog.config.broken_gateways),
    )
    return Catalog((entry,), config, catalog.keys)


def cannot_answer(catalog: Catalog, model: str, *, probe: bool = True) -> str:
    """ "" when `model` can be asked, else the sentence why not (no key, unknown model, no
    server answering at a keyless gateway's address), before any request is paid for."""
    from catalog import UnknownModelError

    try:
        entry = catalog.get(model)
    except UnknownModelError as exc:
        return str(exc)
    route = catalog.route(entry)
    if route.problem:
        return f"{model} cannot be asked: {route.problem.rstrip('.')}."
    if probe and not route.gateway.needs_key and route.api_base:
        from catalog.probe import reachable

        problem = reachable(route.api_base)
        if problem:
            return f"{model} cannot be asked: {problem.rstrip('.')}."
    return ""


def _replay(store: MemoryStore, persona: Persona, model: str) -> list[str]:
    """The persona's MEMORY.md and /remember lines as the user's own versions, then each
    session as an ordinary closed journal, pending, with the dataset's times; their ids,
    oldest first."""
    from memory.sessions import journal as journals

    store.ensure()
    if persona.memory_seed:
        seed = "\n".join(persona.memory_seed) + "\n"
        store.save_edit(seed, store.read_memory().digest)
    for line in persona.remember:
        store.remember(line)
    ids = []
    for index, session in enumerate(persona.sessions):
        # Ids begin with the session's time, so consolidation takes them oldest first.
        session_id = session.time.astimezone(UTC).strftime("%Y%m%d-%H%M%S-") + f"{index:06x}"
        journal = journals.create(store.sessions_dir, model, session_id)
        for message in session.journal_messages():
            journal.append(message)
        journal.mark_pending(close=True)
        ids.append(session_id)
    return ids


def _accept_held(store: MemoryStore, result: Consolidation) -> Consolidation:
    """A change that waits for review (a line Kept could not check by itself) accepted, as
    a user who accepts every review would: the next session builds on it."""
    from memory.consolidation.review import accept, proposal_for

    segment = result.segment
    proposal = proposal_for(store, result.session, segment) if segment and result.proposed else None
    if proposal is None:
        return result
    accept(store, proposal)
    return replace(result, status=Status.SAVED)


Progress = Callable[[str], None]


@dataclass(frozen=True)
class Askers:
    """Who answers a persona's questions, `model` from `catalog`, and who grades the
    answers, `judge` from `judges` (each catalog `pinned` to its model), with one policy."""

    catalog: Catalog
    model: str
    policy: RetryPolicy | None = None
    judge: str | None = None
    judges: Catalog | None = None


async def eval_persona(
    persona: Persona,
    askers: Askers,
    root: Path,
    *,
    settings: MemorySettings | None = None,
    on_progress: Progress | None = None,
) -> PersonaReport:
    """Replay one persona into a fresh data folder at `root`, ask its questions, score them."""
    from memory.consolidation.run import consolidate_pending
    from memory.data.store import MemoryStore

    catalog, model, policy = askers.catalog, askers.model, askers.policy
    say = on_progress or (lambda _line: None)
    base = settings or MemorySettings()
    # Every change is saved, whichever model makes it: the eval measures what would be
    # kept, and nobody is there to review it; a line Kept could not check is accepted.
    trusting = replace(base, review=Review.AFTER, review_by_model={}, consolidation_model=model)
    store = MemoryStore(root, trusting)
    ids = await asyncio.to_thread(_replay, store, persona, model)
    started = time.monotonic()
    done = 0

    def saved(result: Consolidation) -> None:
        nonlocal done
        done += 1
        how = "saved" if result.saved else f"pending ({result.reason.rstrip('.')})"
        say(f"{persona.name}: session {done}/{len(persona.sessions)} {how}")

    results = []
    for session_id in ids:  # one at a time: a change accepted is there for the next
        (result,) = await consolidate_pending(
            store, catalog, policy=policy, chat_model=model, ids=[session_id]
        )
        result = await asyncio.to_thread(_accept_held, store, result)
        saved(result)
        results.append(result)
    consolidation_seconds = time.monotonic() - started
    sessions = tuple(_session_result(r) for r in results)
    answers = []
    for number, question in enumerate(persona.questions, start=1):
        answers.append(await _ask(store, askers, persona, question))
        say(f"{persona.name}: question {number}/{len(persona.questions)}")
    memory = (await asyncio.to_thread(store.read_memory)).text
    return memory_scores(persona, memory, sessions, tuple(answers), consolidation_seconds)


def _session_result(result: Consolidation) -> SessionResult:
    from catalog import Outcome

    return SessionResult(
        result.session,
        result.saved,
        result.model,
        result.reason,
        result.elapsed,
        sum(a.prompt_tokens + a.completion_tokens for a in result.attempts),
        result.cost,
        tuple(a.reason for a in result.attempts if a.outcome is Outcome.REJECTED),
    )


async def _ask(store: MemoryStore, askers: Askers, persona: Persona, question: Question) -> Answer:
    """One question in a fresh private session: the real chat turn, whose journal is gone
    afterwards, so no later question's search finds an earlier question or answer."""
    from memory.chat.turn import answer
    from memory.sessions.live import LiveSession

    catalog, model, policy, judge = askers.catalog, askers.model, askers.policy, askers.judge
    now = persona.now
    session = await asyncio.to_thread(LiveSession.start, store, model, private=True)
    try:
        session.append({"role": "user", "content": question.question, "time": now.isoformat()})
        started = time.monotonic()
        turn = await answer(session, catalog, model, policy=policy, now=now)
        seconds = time.monotonic() - started
    finally:
        await asyncio.to_thread(session.close)
    judged, judge_cost = None, 0.0
    if judge is not None and askers.judges is not None:
        if turn.ok:
            judged, judge_cost = await ask_judge(askers.judges, judge, question, turn.text, policy)
        else:
            judged = False
    return Answer(
        persona.name,
        question.question,
        question.category,
        question.answer,
        turn.text,
        turn.ok,
        turn.ok and strictly_right(turn.text, question),
        judged,
        turn.model,
        turn.prompt_tokens + turn.completion_tokens,
        turn.cost,
        seconds,
        len(turn.searches),
        "" if turn.ok else turn.reason,
        judge_cost,
    )


async def run_eval(
    dataset: Dataset,
    catalog: Catalog,
    model: str,
    *,
    settings: MemorySettings | None = None,
    judge: str | None = None,
    policy: RetryPolicy | None = None,
    workdir: Path | None = None,
    on_progress: Progress | None = None,
) -> Report:
    """Every persona of `dataset`, each in a throwaway data folder (under `workdir` when
    given, kept there; else a temporary one, removed), `model` consolidating and answering
    alone, `judge` (when given) grading. A persona for which the model saved nothing and
    answered nothing ends the run there (`nothing_answered` says why). Raises
    UnknownModelError for an unknown model."""
    started = time.monotonic()
    own = pinned(catalog, model)
    graders = pinned(catalog, judge) if judge is not None else None
    reports = []
    with tempfile.TemporaryDirectory(prefix="kept-eval-") as scratch:
        base = workdir or Path(scratch)
        for index, persona in enumerate(dataset.personas, start=1):
            root = base / f"{index:03d}-{_safe(persona.name)}"
            reports.append(
                await eval_persona(
                    persona,
                    Askers(own, model, policy, judge, graders),
                    root,
                    settings=settings,
                    on_progress=on_progress,
                )
            )
            done = reports[-1]
            if not any(s.saved for s in done.sessions) and not any(a.ok for a in done.answers):
                break  # the model answered nothing at all: the next personas would not fare better
    return Report(
        dataset.name,
        dataset.source,
        model,
        judge,
        tuple(reports),
        time.monotonic() - started,
    )


def _safe(name: str) -> str:
    return re.sub(r"[^\w.-]+", "-", name)[:40] or "persona"
