"""`kept eval memory` on the shipped personas: a baseline pair on the fake provider (an
oracle that consolidates and answers perfectly, and a lossy one that only ever adds), and
SmolLM2-135M on llama.cpp's server when `make llama` has been run, beside them.

The baseline pair bounds the scale: the oracle is what a perfect model scores through
Kept's real consolidation and chat code, the lossy one what is lost by a model that never
replaces or forgets a fact. SmolLM2 runs persona by persona and stops after the first whose
pace says the whole set would take more than about five minutes here.
"""

from __future__ import annotations

import asyncio
import tempfile
import time
import tomllib
from dataclasses import replace
from pathlib import Path

from catalog import Catalog, KeyStore
from catalog.config import parse_catalog_config
from memory.eval import SHIPPED, Category, Dataset, Report, load_dataset, run_eval
from tests.fakes.oracle import FIXTURE, Oracle, evaluate
from tests.fakes.provider import FakeProvider
from tests.llama_server import MODEL_ALIAS, LlamaServer, why_unavailable

BUDGET = 300.0  # seconds of SmolLM2 before the bench settles for the personas done


def _fake(dataset: Dataset, *, lossy: bool) -> Report:
    with FakeProvider() as fake:
        return asyncio.run(evaluate(fake, dataset, Oracle(dataset, lossy=lossy)))


def _smollm2(dataset: Dataset) -> tuple[Report | None, str]:
    """SmolLM2's report on as many personas as fit the budget, and a note on what ran."""
    problem = why_unavailable()
    if problem:
        return None, f"SmolLM2 skipped: {problem}"
    log = Path(tempfile.gettempdir()) / "kept-bench-llama.log"
    reports: list[Report] = []
    started = time.monotonic()
    with LlamaServer(log=log) as server:
        config = parse_catalog_config(tomllib.loads(server.config()))
        catalog = Catalog(config=config, keys=KeyStore(environ={}))
        for persona in dataset.personas:
            one = dataset.only([persona.name])
            reports.append(asyncio.run(run_eval(one, catalog, MODEL_ALIAS)))
            spent = time.monotonic() - started
            left = spent / len(reports) * (len(dataset.personas) - len(reports))
            if len(reports) < len(dataset.personas) and spent + left > BUDGET:
                break
    merged = replace(
        reports[0],
        personas=tuple(p for r in reports for p in r.personas),
        seconds=sum(r.seconds for r in reports),
    )
    done = len(merged.personas)
    note = f"SmolLM2-135M-Instruct Q4_1, n_ctx {server.n_ctx}, 2 threads"
    if done < len(dataset.personas):
        whole = merged.seconds / done * len(dataset.personas) / 60
        note += (
            f"; {done} of {len(dataset.personas)} personas "
            f"({', '.join(p.name for p in merged.personas)}): the whole set would take "
            f"about {whole:.0f} min here"
        )
    return merged, note


def _row(name: str, values: list[str]) -> str:
    return f"   {name:<24}" + "".join(f"{v:>18}" for v in values)


def _percent(part: float) -> str:
    return f"{part:.0%}"


def _share(pair: tuple[int, int]) -> str:
    return f"{pair[0]}/{pair[1]}" if pair[1] else "—"


def _table(reports: list[tuple[str, Report]]) -> None:
    print(_row("", [name for name, _ in reports]))
    scores = [{c.category: c for c in r.categories()} for _, r in reports]
    for category in [*(c.value for c in Category), "all"]:
        cells = [s.get(category) for s in scores]
        values = [_percent(c.strict) if c else "—" for c in cells]
        asked = next((c.questions for c in cells if c), 0)
        print(_row(f"{category} ({asked})", values))
    print(_row("own lines kept", [_share(r.user_lines) for _, r in reports]))
    print(_row("new lines grounded", [_share(r.grounded) for _, r in reports]))
    print(
        _row(
            "sessions saved",
            [f"{sum(s.saved for s in r.sessions)}/{len(r.sessions)}" for _, r in reports],
        )
    )
    print(
        _row(
            "replies refused",
            [str(sum(len(s.refused) for s in r.sessions)) for _, r in reports],
        )
    )
    everything = [r.categories()[-1] if r.answers else None for _, r in reports]
    print(
        _row("tokens per answer", [f"{c.tokens_per_answer:,.0f}" if c else "—" for c in everything])
    )
    print(_row("s per answer", [f"{c.seconds_per_answer:.2f}" if c else "—" for c in everything]))
    print(_row("s consolidating", [f"{r.consolidation_seconds:.1f}" for _, r in reports]))
    print(_row("s in all", [f"{r.seconds:.1f}" for _, r in reports]))


def main() -> None:
    dataset = load_dataset(SHIPPED if SHIPPED.exists() else FIXTURE)
    sessions = sum(len(p.sessions) for p in dataset.personas)
    questions = sum(len(p.questions) for p in dataset.personas)
    print(
        f"   {dataset.name}: {len(dataset.personas)} personas, {sessions} sessions, "
        f"{questions} questions; strict accuracy per category (questions)"
    )
    columns = [("oracle (fake)", _fake(dataset, lossy=False))]
    columns.append(("adds only (fake)", _fake(dataset, lossy=True)))
    smol, note = _smollm2(dataset)
    if smol is not None:
        columns.append(("SmolLM2-135M", smol))
    _table(columns)
    print(f"   {note}")
    trouble = next((s for s in smol.sessions if s.refused or not s.saved), None) if smol else None
    if trouble is not None:
        why = trouble.refused[0] if trouble.refused else trouble.reason
        print(f"      e.g. {why[:110]}")
